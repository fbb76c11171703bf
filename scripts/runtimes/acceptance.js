#!/usr/bin/env node
'use strict'

// The runtime acceptance (issue 37): every runtime the docs name serves the Fetch cases of
// __test__/runtimes/cases.js on 127.0.0.1, and each answer is compared with Node's for the same
// request (status, code, WWW-Authenticate, RateLimit-*, Retry-After).
//
//   Bun, Bun's musl build (the linux-x64-musl binary) and Deno run __test__/runtimes/server.mjs:
//   auth-shield/fetch over the native engine and over auth-shield/js; Node's reference is the
//   same fetch-app.mjs in this process.
//   workerd runs auth-shield/js bundled (engine-app.mjs): by plain esbuild (no plugin) and by
//   wrangler's bundler, each at the current compatibility date and at 2024-09-23 (the first of
//   nodejs_compat v2); Node's reference is engine-app.mjs unbundled, and Node also runs the
//   esbuild bundle itself.
//
// Run by scripts/runtimes/acceptance.sh, which installs the runtimes and exports their paths
// (BUN, BUN_MUSL with MUSL_LOADER and MUSL_LIBRARY_PATH, DENO, WORKERD, ESBUILD, WRANGLER, NODE22). Prints one line per target and closes with
// "runtimes: N passed, N failed" (one per case and target); exits non-zero on any difference.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync, execFileSync } = require('node:child_process')
const { pathToFileURL } = require('node:url')
const { CONFIG, cases } = require('../../__test__/runtimes/cases.js')

const root = path.join(__dirname, '..', '..')
const appDir = path.join(root, '__test__', 'runtimes')
// Compared as answered; the two time-derived ones (seconds to wait) within one second, as the
// runtimes read their clocks a few milliseconds apart.
const COMPARED = ['www-authenticate', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-policy', 'x-ratelimit-limit', 'x-ratelimit-remaining']
const ROUNDED = ['ratelimit-reset', 'retry-after', 'x-ratelimit-reset']
const OLD_COMPAT_DATE = '2024-09-23'
// workerd's node:crypto verify() refuses a KeyObject inside its options object ({ key,
// dsaEncoding: 'ieee-p1363' }: ERR_INVALID_ARG_TYPE), which the JS engine uses for ECDSA: a
// DPoP proof (ES256 here) is refused there, fail closed, as invalid_dpop_proof (docs/packaging.md).
const WORKERD_KNOWN = {
  'DPoP-bound token with a proof': { answer: [401, 'invalid_dpop_proof'], reason: 'workerd cannot verify an ECDSA proof (node:crypto verify with dsaEncoding)' },
  'DPoP proof replayed': { answer: [401, 'invalid_dpop_proof'], reason: 'workerd cannot verify an ECDSA proof (node:crypto verify with dsaEncoding)' },
}

let passed = 0
let failed = 0

async function answerOf(response) {
  const text = await response.text()
  let code
  try {
    code = JSON.parse(text).code
  } catch {
    code = `(not JSON: ${text.slice(0, 80)})`
  }
  const headers = {}
  for (const name of [...COMPARED, ...ROUNDED]) {
    const value = response.headers.get(name)
    if (value !== null) headers[name] = value
  }
  return { status: response.status, code, headers }
}

function sameAnswer(got, want) {
  assert.equal(got.status, want.status, 'status')
  assert.equal(got.code, want.code, 'code')
  assert.deepEqual(Object.keys(got.headers).sort(), Object.keys(want.headers).sort(), 'header names')
  for (const name of COMPARED) assert.equal(got.headers[name], want.headers[name], name)
  for (const name of ROUNDED) {
    if (want.headers[name] === undefined) continue
    const delta = Math.abs(Number(got.headers[name]) - Number(want.headers[name]))
    assert.ok(delta <= 1, `${name}: ${got.headers[name]} vs ${want.headers[name]}`)
  }
}

/**
 * Sends the cases for `url` to `runtime(request)` (by default over HTTP to the runtime's server)
 * and to `reference(request)` (Node, fresh state), and compares every answer; Node's own answers
 * are checked against what each case names (expectMeaning).
 */
async function compare(target, url, reference, runtime = (request) => fetch(request), known = {}) {
  const theirs = []
  for (const c of cases(url)) theirs.push({ name: c.name, answer: await answerOf(await runtime(new Request(url, { headers: c.headers }))) })
  const ours = []
  for (const c of cases(url)) ours.push(await answerOf(await reference(new Request(url, { headers: c.headers }))))
  const bad = []
  let knownCount = 0
  theirs.forEach(({ name, answer }, i) => {
    try {
      if (known[name]) {
        // A documented gap of this runtime: its answer must still be the documented refusal
        // (never a pass), and the day it matches Node this fails, so the docs get updated.
        assert.deepEqual([answer.status, answer.code], known[name].answer, `known difference: ${known[name].reason}`)
        assert.notEqual(ours[i].code, answer.code, `'${name}' now matches Node: drop it from the known differences`)
        knownCount++
        passed++
        return
      }
      sameAnswer(answer, ours[i])
      passed++
    } catch (error) {
      failed++
      bad.push(`  ${name}: ${error.message}\n    ${target}: ${JSON.stringify(answer)}\n    Node: ${JSON.stringify(ours[i])}`)
    }
  })
  expectMeaning(ours)
  const note = knownCount ? ` (${knownCount} of them the known, documented refusal)` : ''
  console.log(`runtimes: ${target}: ${theirs.length - bad.length}/${theirs.length} answers as Node's${note}`)
  for (const line of bad) console.log(line)
}

// Node's answers themselves, so a case that silently stopped testing what it names fails here.
const MEANING = {
  'valid HS256': [200],
  'valid RS256 (inline JWK)': [200],
  'tampered signature': [401, 'invalid_signature'],
  'missing credentials': [401, 'missing_authorization'],
  'malformed header': [401, 'invalid_authorization_format'],
  expired: [401, 'token_expired'],
  'insufficient scope': [403, 'insufficient_scope'],
  'rate limit: 1st of 2': [200],
  'rate limit: 2nd of 2': [200],
  'rate limit: 3rd, limited': [429, 'rate_limited'],
  'DPoP-bound token with a proof': [200],
  'DPoP proof replayed': [401, 'dpop_proof_replayed'],
  'DPoP-bound token as Bearer': [401, 'dpop_bound_token_as_bearer'],
}
let meaningChecked = new Set()
function expectMeaning(answers) {
  const names = cases('http://127.0.0.1/').map((c) => c.name)
  answers.forEach((answer, i) => {
    const [status, code] = MEANING[names[i]]
    const key = `${names[i]}:${answer.headers['www-authenticate'] !== undefined}`
    if (meaningChecked.has(key)) return
    meaningChecked.add(key)
    assert.equal(answer.status, status, `Node's answer to '${names[i]}'`)
    if (code !== undefined) assert.equal(answer.code, code, `Node's answer to '${names[i]}'`)
  })
}

/** Starts `command`, waits for `listening <port>` (or for `port` to accept), returns { url, stop }. */
async function start(command, lazyArgs, { env, port } = {}) {
  const args = lazyArgs.map((arg) => (typeof arg === 'function' ? arg() : arg))
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(`exited ${code ?? signal}`)))
  const listening = new Promise((resolve) => {
    child.stdout.on('data', (chunk) => {
      output += chunk
      const match = /listening (\d+)/.exec(output)
      if (match) resolve(Number(match[1]))
    })
  })
  child.stderr.on('data', (chunk) => (output += chunk))
  const ready = port === undefined ? listening : waitForPort(port)
  const timeout = new Promise((resolve) => setTimeout(resolve, 30000, 'timed out'))
  const result = await Promise.race([ready, exited, timeout])
  if (typeof result !== 'number') {
    child.kill('SIGKILL')
    throw new Error(`${path.basename(command)} ${args.join(' ')}: ${result}\n${output}`)
  }
  return {
    url: `http://127.0.0.1:${result}/check`,
    output: () => output,
    stop: () => new Promise((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', resolve), child.kill('SIGTERM')))),
  }
}

async function waitForPort(port) {
  for (;;) {
    const open = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)))
      socket.on('error', () => resolve(false))
    })
    if (open) return port
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
    server.on('error', reject)
  })
}

async function withServer(target, command, args, options, reference, known) {
  await attempt(target, async () => {
    const server = await start(command, args, options)
    try {
      await compare(target, server.url, reference, undefined, known)
    } finally {
      await server.stop()
    }
  })
}

/** Runs one target; a target that cannot start (bundle, load, listen) fails all its cases, and the others still run. */
async function attempt(target, run) {
  try {
    await run()
  } catch (error) {
    const count = cases('http://127.0.0.1/').length
    failed += count
    console.log(`runtimes: ${target}: did not run (${count} cases failed):\n  ${String(error.stack || error).split('\n').slice(0, 12).join('\n  ')}`)
  }
}

// --- Bun and Deno: auth-shield/fetch, both engines ----------------------------------------------
const MUSL_BINARY = path.join(root, 'npm', 'linux-x64-musl', 'auth-shield.linux-x64-musl.node')

async function bunAndDeno(only) {
  const { fetchApp } = await import(pathToFileURL(path.join(appDir, 'fetch-app.mjs')))
  const shield = { createVerifier: require('../../adapters/fetch.js').createVerifier, JsAuthenticator: require('../../js').Authenticator }
  const muslRun = ['--library-path', process.env.MUSL_LIBRARY_PATH, process.env.BUN_MUSL]
  const runtimes = [
    { key: 'bun', name: 'Bun', command: process.env.BUN, args: ['run', 'server.mjs'] },
    // --allow-ffi: Deno loads a Node-API addon only with it; nothing else beyond reading the
    // package, its environment and the loopback socket.
    { key: 'deno', name: 'Deno', command: process.env.DENO, args: ['run', '--allow-ffi', '--allow-env', '--allow-read', '--allow-net=127.0.0.1', 'server.mjs'] },
    // Bun's musl build, started by musl 1.2.5's loader (scripts/runtimes/tools.sh says why that
    // one), loading the linux-x64-musl binary: it refuses a glibc one. binding.js picks the
    // binary from the host's /usr/bin/ldd, glibc's here: NAPI_RS_NATIVE_LIBRARY_PATH names it.
    {
      key: 'bun-musl',
      name: `Bun (musl build, musl ${muslVersion()})`,
      command: process.env.MUSL_LOADER,
      args: [...muslRun, 'run', 'server.mjs'],
      version: [...muslRun, '--version'],
      env: { NAPI_RS_NATIVE_LIBRARY_PATH: MUSL_BINARY },
    },
  ]
  for (const runtime of runtimes) {
    if (only && !only.includes(runtime.key)) continue
    const version = runtimeVersion(runtime.command, runtime.version ?? ['--version'])
    for (const engine of ['native', 'js']) {
      const env = { ...runtime.env, AUTH_SHIELD_CASES_CONFIG: JSON.stringify(CONFIG), AUTH_SHIELD_ENGINE: engine }
      const args = [...runtime.args.slice(0, -1), path.join(appDir, runtime.args.at(-1))]
      // A fresh Node verifier per target: rate-limit and replay state start empty on both sides.
      let reference
      await withServer(`${runtime.name} ${version}, auth-shield/fetch, ${engine} engine`, runtime.command, args, { env }, (request) => {
        reference ??= fetchApp(shield, CONFIG, engine, new URL(request.url).origin)
        return reference(request)
      })
    }
  }
}

/** The first line `--version` prints; what went wrong if it fails (its servers then fail too). */
function runtimeVersion(command, args) {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim().split('\n')[0].replace(/^deno /, '')
  } catch (error) {
    return `(--version failed: ${error.signal ?? `exit ${error.status}`})`
  }
}

/** The version musl's loader prints when run with no arguments ("Version 1.2.5"). */
function muslVersion() {
  const { stderr } = spawnSync(process.env.MUSL_LOADER, [], { encoding: 'utf8' })
  return /Version (\S+)/.exec(stderr ?? '')?.[1] ?? 'unknown'
}

// --- workerd: the JS engine bundled -----------------------------------------------------------
/** A project that depends on auth-shield (this checkout, linked) and imports auth-shield/js. */
function workerProject(dir) {
  fs.mkdirSync(path.join(dir, 'node_modules'), { recursive: true })
  fs.symlinkSync(root, path.join(dir, 'node_modules', 'auth-shield'))
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'worker', private: true, type: 'module' }))
  fs.copyFileSync(path.join(appDir, 'engine-app.mjs'), path.join(dir, 'engine-app.mjs'))
  fs.writeFileSync(
    path.join(dir, 'worker.mjs'),
    [
      "import { Authenticator } from 'auth-shield/js'",
      "import { engineApp } from './engine-app.mjs'",
      `const handler = engineApp(Authenticator, ${JSON.stringify(CONFIG)})`,
      'export default { fetch: (request) => handler(request) }',
      '',
    ].join('\n'),
  )
}

function esbuildBundle(dir) {
  // What a user types: no plugin, no alias, node: built-ins left to the runtime.
  execFileSync(process.env.ESBUILD, ['worker.mjs', '--bundle', '--format=esm', '--platform=node', '--outfile=dist-esbuild/worker.mjs', '--log-level=warning'], { cwd: dir, stdio: 'inherit' })
  return path.join(dir, 'dist-esbuild', 'worker.mjs')
}

function wranglerBundle(dir, date) {
  const out = `dist-wrangler-${date}`
  fs.writeFileSync(path.join(dir, 'wrangler.json'), JSON.stringify({ name: 'auth-shield-acceptance', main: 'worker.mjs', compatibility_date: date, compatibility_flags: ['nodejs_compat'] }))
  // --dry-run: wrangler's own bundler (esbuild with its plugins), no account, nothing deployed.
  execFileSync(process.env.NODE22, [process.env.WRANGLER, 'deploy', '--dry-run', '--outdir', out], {
    cwd: dir,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: 'true', WRANGLER_LOG_PATH: path.join(dir, 'wrangler-logs') },
  })
  return path.join(dir, out, 'worker.js')
}

function workerdConfig(dir, bundle, date, port, name) {
  const file = path.join(dir, `${name}.capnp`)
  fs.writeFileSync(
    file,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [ (name = "main", worker = .worker) ],
  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],
);
const worker :Workerd.Worker = (
  modules = [ (name = "worker.mjs", esModule = embed "${path.relative(dir, bundle)}") ],
  compatibilityDate = "${date}",
  compatibilityFlags = ["nodejs_compat"],
);
`,
  )
  return file
}

async function workerd() {
  const { engineApp } = await import(pathToFileURL(path.join(appDir, 'engine-app.mjs')))
  const { Authenticator } = require('../../js')
  const current = /(\d{4}-\d\d-\d\d)/.exec(execFileSync(process.env.WORKERD, ['--version'], { encoding: 'utf8' }))[1]
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-shield-workerd-'))
  try {
    workerProject(dir)
    const plain = esbuildBundle(dir)
    // Node runs the same bundle: what differs in workerd is then the runtime, not the bundling.
    const inNode = 'Node, the esbuild bundle of auth-shield/js'
    await attempt(inNode, async () => {
      const bundled = (await import(pathToFileURL(plain))).default
      await compare(inNode, 'http://127.0.0.1:1/check', freshReference(engineApp, Authenticator), (request) => bundled.fetch(request))
    })
    for (const date of [current, OLD_COMPAT_DATE]) {
      for (const [bundler, bundle] of [['esbuild', () => plain], ['wrangler', () => wranglerBundle(dir, date)]]) {
        const port = await freePort()
        await withServer(`workerd ${current}, compatibility date ${date}, auth-shield/js bundled by ${bundler}`, process.env.WORKERD, ['serve', () => workerdConfig(dir, bundle(), date, port, `${bundler}-${date}`)], { port }, freshReference(engineApp, Authenticator), WORKERD_KNOWN)
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** engineApp over the unbundled auth-shield/js, built at its first request. */
function freshReference(engineApp, Authenticator) {
  let reference
  return (request) => {
    reference ??= engineApp(Authenticator, CONFIG)
    return reference(request)
  }
}

async function main() {
  const only = process.argv.slice(2)
  for (const name of ['BUN', 'BUN_MUSL', 'MUSL_LOADER', 'MUSL_LIBRARY_PATH', 'DENO', 'WORKERD', 'ESBUILD', 'WRANGLER', 'NODE22']) {
    if (!process.env[name]) throw new Error(`${name} is not set: run scripts/runtimes/acceptance.sh`)
  }
  if (only.length === 0 || only.some((key) => ['bun', 'deno', 'bun-musl'].includes(key))) await bunAndDeno(only.length ? only : null)
  if (only.length === 0 || only.includes('workerd')) await workerd()
  console.log(`runtimes: ${passed} passed, ${failed} failed`)
  process.exitCode = failed === 0 ? 0 : 1
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
