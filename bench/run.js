#!/usr/bin/env node
'use strict'
// `npm run bench` — see bench/README.md for the method.
//   --quick            fewer, shorter rounds (CI; under a minute)
//   --only=a,b         sections: per-call, verify, keys, http, scale-out, helpers, metrics, introspection
//   --out=DIR          where to write the JSON and SVG (default bench/results)

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { loadNative, loadJsEngine, ROOT } = require('./lib/ours')
const { createFixtures } = require('./lib/fixtures')
const { describeEnvironment } = require('./lib/env')
const { progressDone } = require('./lib/progress')
const { renderTimed, renderHttp, renderScaleOut, renderTargets } = require('./lib/table')
const { renderChart } = require('./lib/svg')
const { formatTime, formatRatio, formatPercent } = require('./lib/format')
const { runPerCall } = require('./sections/per-call')
const { runTrustedIssuers } = require('./sections/trusted-issuers')
const { runVerifyOnly } = require('./sections/verify-only')
const { runHttp } = require('./sections/http')
const { runArgon2, runUuid } = require('./sections/helpers')
const { runScaleOut } = require('./sections/scale-out')
const { runKeys } = require('./sections/keys')
const { runMetrics } = require('./sections/metrics')
const { runIntrospection } = require('./sections/introspection')

const SECTIONS = ['per-call', 'verify', 'keys', 'http', 'scale-out', 'helpers', 'metrics', 'introspection']

const MODES = {
  full: {
    micro: { rounds: 9, sampleMs: 200, warmupMs: 500 },
    argon2: { rounds: 5, sampleMs: 300, warmupMs: 0 },
    http: { rounds: 3, durationSec: 5, warmupSec: 1, connections: 50 },
    scaleOut: { rounds: 6, durationSec: 3, warmupSec: 1, connections: 50 },
  },
  quick: {
    micro: { rounds: 5, sampleMs: 40, warmupMs: 100 },
    argon2: { rounds: 2, sampleMs: 60, warmupMs: 0 },
    http: { rounds: 1, durationSec: 1, warmupSec: 0.5, connections: 50 },
    scaleOut: { rounds: 1, durationSec: 1, warmupSec: 0.5, connections: 50 },
  },
}

function parseArgs(argv) {
  const args = { mode: 'full', only: SECTIONS, out: path.join(__dirname, 'results') }
  for (const arg of argv) {
    if (arg === '--quick') args.mode = 'quick'
    else if (arg.startsWith('--only=')) args.only = arg.slice(7).split(',')
    else if (arg.startsWith('--out=')) args.out = path.resolve(arg.slice(6))
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write('usage: npm run bench -- [--quick] [--only=per-call,verify,keys,http,scale-out,helpers,metrics,introspection] [--out=DIR]\n')
      process.exit(0)
    } else throw new Error(`unknown argument ${arg} (try --help)`)
  }
  for (const s of args.only) if (!SECTIONS.includes(s)) throw new Error(`unknown section ${s}; known: ${SECTIONS.join(', ')}`)
  return args
}

// The targets of issue 5, evaluated on whatever this run measured.
function evaluateTargets(sections) {
  const targets = []
  const perCall = sections.perCall
  if (perCall) {
    const ours = perCall.rows.find((r) => r.id === 'native-authenticate')
    const fast = perCall.rows.find((r) => r.id === 'chain-fast-jwt')
    targets.push({ name: 'authenticate per call', measured: formatTime(ours.nsPerOp.median), goal: '≤ 1.50 µs', met: ours.nsPerOp.median <= 1500 })
    targets.push({ name: 'vs fast-jwt equal-work chain', measured: `${formatRatio(fast.vsBaseline.median)} (its time ÷ ours)`, goal: '≥ 4.5×', met: fast.vsBaseline.median >= 4.5 })
    const jsVsFast = perCall.jsEngineVsFastJwtChain
    if (jsVsFast) {
      targets.push({ name: 'JS engine authenticate vs fast-jwt chain', measured: `${formatRatio(jsVsFast.median)} (its time ÷ the chain's)`, goal: '≤ 1×', met: jsVsFast.median <= 1 })
    }
    // Issue 11: the bare verify and the reused-config one-shot cost about what authenticate does.
    for (const [id, name, goal] of [
      ['native-verify-access', 'verifyAccessToken vs authenticate', 1.1],
      ['native-one-shot', 'authenticateRequest (reused config) vs authenticate', 1.2],
    ]) {
      const row = perCall.rows.find((r) => r.id === id)
      targets.push({ name, measured: `${formatRatio(row.vsBaseline.median)} (its time ÷ authenticate)`, goal: `≤ ${goal}×`, met: row.vsBaseline.median <= goal })
    }
  }
  // Issue 25: ten trusted issuers cost at most 5 % more than one (the token of the tenth).
  for (const [alg, r] of Object.entries(sections.trustedIssuers ? sections.trustedIssuers.tenVsOne : {})) {
    targets.push({ name: `authenticate, 10 trusted issuers vs 1 (${alg})`, measured: `${formatRatio(r.median)} (ten's time ÷ one's)`, goal: '≤ 1.05×', met: r.median <= 1.05 })
  }
  // Issue 36: a cached introspected token costs at most 1.5× a JWT of the same claims; a miss
  // adds at most 0.2 ms to the introspection round trip.
  if (sections.introspection) {
    for (const [engine, r] of Object.entries(sections.introspection.opaqueVsJwt)) {
      targets.push({ name: `${engine}: cached opaque token vs JWT of the same claims`, measured: `${formatRatio(r.median)} (opaque's time ÷ JWT's)`, goal: '≤ 1.5×', met: r.median <= 1.5 })
    }
    const o = sections.introspection.missOverheadNs
    targets.push({ name: 'introspection cache miss, overhead over the round trip', measured: formatTime(o.median), goal: '≤ 0.2 ms', met: o.median <= 200_000 })
  }
  if (sections.verifyOnly) {
    const r = sections.verifyOnly.cachedVerifyVsFusedCall
    targets.push({ name: 'full chain vs fast-jwt cached verify', measured: `${formatRatio(r.median)} (its time ÷ ours)`, goal: '> 1×', met: r.median > 1 })
  }
  // Issue 13: asymmetric keys, uncached against the fastest JS chain, and a cache hit against
  // the HS256 authenticate time.
  for (const { alg, authenticate } of sections.keys || []) {
    const faster = { ES256: 1.2, EdDSA: 1.2, RS256: 1, PS256: null }[alg]
    const r = authenticate.fastestJsVsUncached
    if (faster !== null) {
      targets.push({
        name: `${alg} authenticate (cache off) vs fastest JS chain (${authenticate.fastestJs})`,
        measured: `${formatRatio(r.median)} (its time ÷ ours)`,
        goal: `≥ ${faster}×`,
        met: r.median >= faster,
      })
    }
    const hit = authenticate.cachedVsHs256
    targets.push({ name: `${alg} authenticate, cache hit vs HS256 authenticate`, measured: `${formatRatio(hit.median)} (its time ÷ HS256's)`, goal: '≤ 1.5×', met: hit.median <= 1.5 })
  }
  if (sections.http) {
    for (const [framework, goal] of [['node', 0.75], ['express', 0.9]]) {
      const row = sections.http.rows.find((r) => r.framework === framework && r.auth === 'auth-shield')
      targets.push({ name: `${framework === 'node' ? 'node:http' : 'Express'} + auth-shield, share of no-auth req/s`, measured: formatPercent(row.ofNoAuth.median), goal: `≥ ${formatPercent(goal)}`, met: row.ofNoAuth.median >= goal })
    }
    // Issue 24: an adapter costs about what a three-line middleware around `authenticate` does.
    for (const gap of sections.http.adapterGaps || []) {
      const name = gap.framework === 'express' ? 'Express adapter' : 'Fastify plugin'
      for (const [what, points] of [['req/s', gap.rpsPoints], ['CPU share', gap.cpuPoints]]) {
        targets.push({ name: `${name} vs 3-line middleware, points of no-auth ${what} lost`, measured: `${points.median.toFixed(1)} points`, goal: '≤ 3 points', met: points.median <= 3 })
      }
    }
  }
  // Issue 27: metrics at no per-request cost, snapshots cheap to collect.
  if (sections.metrics) {
    for (const [engine, r] of Object.entries(sections.metrics.timedVsCounted)) {
      targets.push({ name: `${engine} authenticate, duration histogram on vs off`, measured: `${formatRatio(r.median)} (${formatRatio(r.min)}–${formatRatio(r.max)})`, goal: '≤ 1.02×', met: r.median <= 1.02 })
    }
    for (const row of sections.metrics.snapshot.rows) {
      if (!/-otel-callback-10$|-prometheus-10$/.test(row.id)) continue
      targets.push({ name: `${row.label}`, measured: formatTime(row.nsPerOp.median), goal: '≤ 50 µs', met: row.nsPerOp.median <= 50000 })
    }
  }
  const scaleOut = sections.scaleOut
  if (scaleOut && !scaleOut.skipped) {
    for (const framework of ['node', 'express']) {
      const row = scaleOut.rows.find((r) => r.framework === framework && r.store && !r.cluster)
      const name = framework === 'node' ? 'node:http' : 'Express'
      targets.push({ name: `${name} + Redis store, share of in-memory req/s`, measured: formatPercent(row.ofMemory.median), goal: '≥ 90 %', met: row.ofMemory.median >= 0.9 })
      targets.push({ name: `${name} + Redis store, in-memory server CPU/req ÷ its own`, measured: formatPercent(row.cpuShareOfMemory.median), goal: '≥ 90 %', met: row.cpuShareOfMemory.median >= 0.9 })
      targets.push({ name: `${name} + Redis store, requests that waited for Redis`, measured: `${(row.waitedShare.median * 100).toFixed(3)} %`, goal: '≤ 1 %', met: row.waitedShare.median <= 0.01 })
      const cluster = scaleOut.rows.find((r) => r.framework === framework && r.cluster)
      if (cluster) {
        const gap = row.ofMemory.median - cluster.ofMemory.median
        targets.push({ name: `${name} + Redis Cluster store, share of in-memory req/s vs one Redis`, measured: `${formatPercent(cluster.ofMemory.median)} (${(gap * 100).toFixed(1)} points below)`, goal: '≤ 5 points below', met: gap <= 0.05 })
      }
    }
  }
  return targets
}

function writeAtomically(file, text) {
  fs.writeFileSync(`${file}.tmp`, text)
  fs.renameSync(`${file}.tmp`, file)
}

async function main() {
  const args = parseArgs(process.argv.slice(2))
  const mode = MODES[args.mode]
  const { native, addonPath, build } = loadNative()
  const jsEngine = loadJsEngine()
  const env = describeEnvironment({ root: ROOT, build, addonPath, mode: args.mode })
  const fx = createFixtures(native)

  const print = (text) => process.stdout.write(`${text}\n\n`)
  print(
    [
      `auth-shield ${env.authShield.version} (${env.authShield.commit}) benchmark, ${args.mode} mode`,
      `Node ${env.node} (V8 ${env.v8}) on ${env.platform}`,
      `CPU ${env.cpu}, ${env.cores} cores, ${env.memoryGiB} GiB, load average ${env.loadAverageAtStart.join(' ')}`,
      `addon ${env.authShield.addon} — build: ${env.authShield.build}`,
      `libraries: ${Object.entries(env.libraries).map(([n, v]) => `${n} ${v}`).join(', ')}`,
    ].join('\n'),
  )
  if (build.startsWith('debug')) print('WARNING: the addon is a debug build; its numbers are not representative. Build with `npm run build` first.')

  const sections = {}
  const ours = { native, jsEngine }
  if (args.only.includes('per-call')) {
    sections.perCall = await runPerCall(ours, fx, mode.micro)
    progressDone()
    const r = sections.perCall.stringSecretVsKeyObject
    print(
      `${renderTimed(sections.perCall)}\n  jsonwebtoken chain, string secret ÷ KeyObject: ${formatRatio(r.median)} ` +
        `(${formatRatio(r.min)}–${formatRatio(r.max)}): the cost of createPublicKey() on every call`,
    )
    const j = sections.perCall.jsEngineVsFastJwtChain
    if (j) {
      print(`  JS engine authenticate vs fast-jwt chain: ${formatRatio(j.median)} (${formatRatio(j.min)}–${formatRatio(j.max)}) its time ÷ the chain's; ≤ 1× is the goal`)
    }
    // Same run, its own interleaved rounds: 1 vs 10 trusted issuers (issue 25's ≤ 5 % budget).
    sections.trustedIssuers = await runTrustedIssuers(ours, fx, mode.micro)
    progressDone()
    print(renderTimed(sections.trustedIssuers))
    for (const [alg, r] of Object.entries(sections.trustedIssuers.tenVsOne)) {
      print(`  10 issuers ÷ 1, ${alg}: ${formatRatio(r.median)} (${formatRatio(r.min)}–${formatRatio(r.max)}); ≤ 1.05× is the goal`)
    }
  }
  if (args.only.includes('verify')) {
    sections.verifyOnly = await runVerifyOnly(ours, fx, mode.micro)
    progressDone()
    print(renderTimed(sections.verifyOnly))
  }
  if (args.only.includes('keys')) {
    sections.keys = await runKeys(ours, fx, mode.micro)
    progressDone()
    for (const { authenticate, verify } of sections.keys) print(`${renderTimed(authenticate)}\n\n${renderTimed(verify)}`)
  }
  if (args.only.includes('http')) {
    sections.http = await runHttp(fx, mode.http)
    progressDone()
    print(`${renderHttp(sections.http)}\n(autocannon and the server share this ${env.cores}-core machine; each server runs in its own process)`)
  }
  if (args.only.includes('scale-out')) {
    sections.scaleOut = await runScaleOut(native, fx, mode.scaleOut)
    progressDone()
    print(renderScaleOut(sections.scaleOut))
  }
  if (args.only.includes('helpers')) {
    sections.argon2 = await runArgon2(native, mode.argon2)
    progressDone()
    print(renderTimed(sections.argon2))
    sections.uuid = await runUuid(native, mode.micro)
    progressDone()
    print(sections.uuid.skipped ? `UUID v4: skipped — ${sections.uuid.skipped}` : renderTimed(sections.uuid))
  }

  if (args.only.includes('metrics')) {
    sections.metrics = await runMetrics(ours, fx, mode.micro)
    progressDone()
    print(`${renderTimed(sections.metrics.authenticate)}\n\n${renderTimed(sections.metrics.snapshot)}`)
  }

  if (args.only.includes('introspection')) {
    sections.introspection = await runIntrospection(ours, fx, mode.micro)
    progressDone()
    print(renderTimed(sections.introspection))
    const o = sections.introspection.missOverheadNs
    const l = sections.introspection.loopbackMissOverheadNs
    print(`  cache miss overhead over the round trip (fetch answering at once): ${formatTime(o.median)} (${formatTime(o.min)}–${formatTime(o.max)}); ≤ 0.2 ms is the goal`)
    print(`  the same against the loopback endpoint: ${formatTime(l.median)} (${l.min < 0 ? 'from below 0' : formatTime(l.min)}–${formatTime(l.max)}), within the round trip's own noise`)
  }

  const targets = evaluateTargets(sections)
  if (targets.length) print(renderTargets(targets, args.mode === 'quick'))
  env.loadAverageAtEnd = os.loadavg().map((x) => Number(x.toFixed(2)))
  if (env.loadAverageAtStart[0] > env.cores / 2 || env.loadAverageAtEnd[0] > env.cores * 1.5) {
    print(`note: load average ${env.loadAverageAtStart[0]} at start, ${env.loadAverageAtEnd[0]} at end on ${env.cores} cores: other work was running; prefer the ratios, or re-run on a quiet machine`)
  }

  const results = { env, settings: mode, sections, targets }
  fs.mkdirSync(args.out, { recursive: true })
  // Full runs replace the committed latest.*; quick runs (CI) write git-ignored quick.*.
  const stem = path.join(args.out, args.mode === 'full' ? 'latest' : 'quick')
  writeAtomically(`${stem}.json`, `${JSON.stringify(results, null, 2)}\n`)
  writeAtomically(`${stem}.svg`, renderChart(results))
  print(`wrote ${path.relative(process.cwd(), `${stem}.json`)} and ${path.relative(process.cwd(), `${stem}.svg`)}`)
}

main().catch((error) => {
  progressDone()
  process.stderr.write(`bench failed: ${error.stack || error}\n`)
  process.exitCode = 1
})
