'use strict'
// HTTP: each server variant runs in its own child process on 127.0.0.1; autocannon runs in
// this process. Both share the machine's cores, which caps absolute numbers (stated in the
// report); the ratio to the same framework without auth is the figure that matters.

const path = require('node:path')
const http = require('node:http')
const { fork } = require('node:child_process')
const autocannon = require('autocannon')
const { progress } = require('../lib/progress')
const { summarize, pairedRatio } = require('../lib/stats')
const { loadExpressAdapter } = require('../lib/ours')

const VARIANTS = [
  { framework: 'node', auth: 'none', label: 'node:http, no auth' },
  { framework: 'node', auth: 'auth-shield', label: 'node:http + auth-shield' },
  { framework: 'node', auth: 'fast-jwt', label: 'node:http + fast-jwt chain' },
  { framework: 'express', auth: 'none', label: 'Express 5, no auth' },
  { framework: 'express', auth: 'auth-shield', label: 'Express 5 + auth-shield/express middleware' },
  { framework: 'express', auth: 'auth-shield-direct', label: 'Express 5 + auth-shield (3-line middleware)' },
  { framework: 'express', auth: 'fast-jwt', label: 'Express 5 + fast-jwt chain' },
  { framework: 'express', auth: 'express-jwt-keyobject', label: 'Express 5 + express-jwt (KeyObject) + chain' },
  { framework: 'express', auth: 'passport-jwt-keyobject', label: 'Express 5 + passport-jwt (KeyObject) + chain' },
  { framework: 'express', auth: 'express-jwt-string', label: 'Express 5 + express-jwt (string secret) + chain' },
  { framework: 'fastify', auth: 'none', label: 'Fastify 5, no auth' },
  { framework: 'fastify', auth: 'auth-shield', label: 'Fastify 5 + auth-shield/fastify plugin' },
  { framework: 'fastify', auth: 'auth-shield-direct', label: 'Fastify 5 + auth-shield (3-line onRequest hook)' },
]

function idOf(v) {
  return `${v.framework}:${v.auth}`
}

function startServer(variant, fx) {
  const arg = JSON.stringify({ framework: variant.framework, auth: variant.auth, secret: fx.secret, config: fx.config })
  const child = fork(path.join(__dirname, '..', 'http', 'server.js'), [arg], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  return new Promise((resolve, reject) => {
    child.once('message', ({ port }) => resolve({ child, port }))
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`${variant.label} server exited early (code ${code})`)))
  })
}

function get(port, headers) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', headers, agent: false }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode))
    })
    req.on('error', reject)
  })
}

// Every authenticated variant must answer 200 to the valid token and refuse the bad ones.
async function sanityCheck(variant, port, fx) {
  const headers = (token) => ({ authorization: `Bearer ${token}`, 'x-tenant-id': fx.tenantHeader })
  const ok = await get(port, headers(fx.token))
  if (ok !== 200) throw new Error(`sanity check: ${variant.label} answers ${ok} to the valid token`)
  if (variant.auth === 'none') return
  for (const [name, token] of Object.entries(fx.rejects)) {
    const status = await get(port, headers(token))
    if (status < 400) throw new Error(`sanity check: ${variant.label} answers ${status} to the ${name} token`)
  }
}

/** The server's CPU time so far (user + system, µs), asked over IPC. */
function cpuOf(child) {
  return new Promise((resolve) => {
    child.once('message', ({ cpuUs }) => resolve(cpuUs))
    child.send('cpu')
  })
}

function load(port, fx, { durationSec, connections }) {
  return autocannon({
    url: `http://127.0.0.1:${port}/`,
    connections,
    duration: durationSec,
    headers: { authorization: fx.authorization, 'x-tenant-id': fx.tenantHeader },
  })
}

function summarizeLoad(label, result, cpuUs) {
  if (result.errors || result.non2xx || result.timeouts) {
    throw new Error(`${label}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx under load`)
  }
  const served = result.requests.total
  return {
    rps: served / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    // The server's own CPU per request: less swayed than req/s by the load generator sharing
    // the cores.
    cpuUsPerRequest: served > 0 ? cpuUs / served : 0,
  }
}

async function runHttp(fx, { rounds, durationSec, warmupSec, connections }) {
  const adapter = loadExpressAdapter()
  const variants = VARIANTS.map((v) =>
    v.framework === 'express' && v.auth === 'auth-shield' && !adapter.available
      ? { ...v, label: `Express 5 + auth-shield (${adapter.reason}; direct call)` }
      : v,
  )
  const servers = new Map()
  try {
    progress('http: starting servers')
    const started = await Promise.allSettled(variants.map((v) => startServer(v, fx)))
    started.forEach((s, i) => s.status === 'fulfilled' && servers.set(idOf(variants[i]), s.value))
    const failed = started.find((s) => s.status === 'rejected')
    if (failed) throw failed.reason
    for (const v of variants) await sanityCheck(v, servers.get(idOf(v)).port, fx)
    for (const v of variants) {
      progress(`http: warming up ${v.label}`)
      await load(servers.get(idOf(v)).port, fx, { durationSec: warmupSec, connections })
    }
    const samples = Object.fromEntries(variants.map((v) => [idOf(v), []]))
    for (let round = 0; round < rounds; round++) {
      for (let k = 0; k < variants.length; k++) {
        const v = variants[(k + round) % variants.length]
        progress(`http: round ${round + 1}/${rounds} ${v.label}`)
        const { port, child } = servers.get(idOf(v))
        const before = await cpuOf(child)
        const result = await load(port, fx, { durationSec, connections })
        const after = await cpuOf(child)
        samples[idOf(v)].push(summarizeLoad(v.label, result, after - before))
      }
    }
    // The adapter against a three-line middleware around `authenticate` in the same framework:
    // points of no-auth req/s (and of the CPU share) it loses, paired within each round.
    const share = (id, framework, field) =>
      samples[id].map((s, round) => (field === 'rps' ? s.rps / samples[`${framework}:none`][round].rps : samples[`${framework}:none`][round].cpuUsPerRequest / s.cpuUsPerRequest))
    const adapterGaps = ['express', 'fastify']
      .filter((f) => samples[`${f}:auth-shield`] && samples[`${f}:auth-shield-direct`])
      .map((framework) => {
        const points = (field) => {
          const adapter = share(`${framework}:auth-shield`, framework, field)
          const direct = share(`${framework}:auth-shield-direct`, framework, field)
          return summarize(adapter.map((a, round) => (direct[round] - a) * 100))
        }
        return { framework, rpsPoints: points('rps'), cpuPoints: points('cpu') }
      })
    return {
      adapterGaps,
      title: `HTTP (autocannon, ${connections} connections, ${durationSec} s per sample, loopback)`,
      rows: variants.map((v) => {
        const own = samples[idOf(v)].map((s) => s.rps)
        const bare = samples[`${v.framework}:none`].map((s) => s.rps)
        const cpu = samples[idOf(v)].map((s) => s.cpuUsPerRequest)
        const bareCpu = samples[`${v.framework}:none`].map((s) => s.cpuUsPerRequest)
        return {
          id: idOf(v),
          label: v.label,
          framework: v.framework,
          auth: v.auth,
          rps: summarize(own),
          p50Ms: summarize(samples[idOf(v)].map((s) => s.p50)),
          p99Ms: summarize(samples[idOf(v)].map((s) => s.p99)),
          // share of the same framework's no-auth throughput, paired within each round
          ofNoAuth: pairedRatio(own, bare),
          cpuUsPerRequest: summarize(cpu),
          // no-auth CPU per request ÷ this one's, paired within each round: the share of no-auth
          // req/s a CPU-bound server would keep
          cpuShareOfNoAuth: pairedRatio(bareCpu, cpu),
          samples: samples[idOf(v)],
        }
      }),
    }
  } finally {
    for (const { child } of servers.values()) child.kill()
  }
}

module.exports = { runHttp, VARIANTS }
