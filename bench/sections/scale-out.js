'use strict'
// Scale-out: node:http and Express with auth-shield's limits in memory (the default) against
// the same servers with limits shared through Redis (auth-shield/redis, a redis-server of the
// bench's own on loopback). A steady workload: 50 identities, each connection cycling through
// them. Reports req/s with the store as a share of in-memory (paired per round), the server's CPU
// time per request (and in-memory's as a share of it: the throughput share a CPU-bound server
// keeps, steadier than req/s on a busy machine), and the share of requests that waited for
// Redis during the measured runs (after a warm-up, so each identity's first lease is already
// held), and the store's Redis round trips per 1,000 requests. node:http also runs with the store
// on a Redis Cluster (3 masters + 3 replicas on loopback, node-redis createCluster) when
// redis-cli can build one. Skipped, with one line, without redis-server.

const path = require('node:path')
const http = require('node:http')
const { fork } = require('node:child_process')
const autocannon = require('autocannon')
const { progress } = require('../lib/progress')
const { summarize, pairedRatio } = require('../lib/stats')
const { redisAvailable, startRedis } = require('../../__test__/support/redis-server')
const { startCluster } = require('../../__test__/support/redis-topologies')

const IDENTITIES = 50
const VARIANTS = [
  { framework: 'node', store: false, label: 'node:http + auth-shield, limits in memory' },
  { framework: 'node', store: true, label: 'node:http + auth-shield, limits in Redis' },
  { framework: 'node', store: true, cluster: true, label: 'node:http + auth-shield, limits in Redis Cluster (3 masters)' },
  { framework: 'express', store: false, label: 'Express 5 + auth-shield/express, limits in memory' },
  { framework: 'express', store: true, label: 'Express 5 + auth-shield/express, limits in Redis' },
]
const idOf = (v) => `${v.framework}:${v.cluster ? 'cluster' : v.store ? 'redis' : 'memory'}`

/**
 * The variants in the order of one round. The two servers of a framework run back to back, so
 * each paired ratio compares samples taken under the same machine load (on a shared machine the
 * same server's CPU per request drifts by a third within a minute), and which of the two runs
 * first, and which framework, alternates from round to round so a steady drift cancels out.
 */
function roundOrder(round, variants) {
  const frameworks = round % 2 === 0 ? ['node', 'express'] : ['express', 'node']
  const reversed = Math.floor(round / 2) % 2 === 1
  return frameworks.flatMap((f) => {
    const own = variants.filter((v) => v.framework === f)
    return reversed ? own.reverse() : own
  })
}

function startServer(variant, fx, redisUrl, cluster) {
  const arg = JSON.stringify({ framework: variant.framework, store: variant.store, redisUrl, cluster: variant.cluster ? cluster.rootNodes : undefined, config: fx.config })
  const child = fork(path.join(__dirname, '..', 'http', 'scale-out-server.js'), [arg], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] })
  return new Promise((resolve, reject) => {
    child.once('message', ({ port }) => resolve({ child, port }))
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`${variant.label} server exited early (code ${code})`)))
  })
}

function stats(child) {
  return new Promise((resolve) => {
    child.once('message', resolve)
    child.send('stats')
  })
}

/** One request per identity, one after another: a steady workload's identities are known. */
async function prime(port, requests) {
  for (const r of requests) {
    await new Promise((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/', headers: r.headers, agent: false }, (res) => {
        res.resume()
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`priming answered ${res.statusCode}`))))
      })
      req.on('error', reject)
    })
  }
}

function load(port, requests, { durationSec, connections }) {
  return autocannon({ url: `http://127.0.0.1:${port}/`, connections, duration: durationSec, requests })
}

async function runScaleOut(native, fx, { rounds, durationSec, warmupSec, connections }) {
  if (!redisAvailable()) return { skipped: 'redis-server not found (apt-get install redis-server, or set REDIS_SERVER)' }
  const signer = new native.Authenticator(fx.config)
  const requests = Array.from({ length: IDENTITIES }, (_, i) => ({
    method: 'GET',
    headers: {
      authorization: `Bearer ${signer.signAccessToken({ sub: `user-${i}`, tenant_id: 'acme' })}`,
      'x-tenant-id': fx.tenantHeader,
    },
  }))
  const redis = await startRedis()
  const servers = new Map()
  let cluster = null
  try {
    progress('scale-out: starting a Redis Cluster')
    cluster = await startCluster()
  } catch (err) {
    progress(`scale-out: no Redis Cluster (${err.message.split('\n')[0]}): its row is left out`)
  }
  const variants = VARIANTS.filter((v) => !v.cluster || cluster !== null)
  try {
    progress('scale-out: starting servers')
    for (const v of variants) servers.set(idOf(v), await startServer(v, fx, redis.url, cluster))
    for (const v of variants) {
      progress(`scale-out: warming up ${v.label}`)
      await prime(servers.get(idOf(v)).port, requests)
      await load(servers.get(idOf(v)).port, requests, { durationSec: warmupSec, connections })
    }
    const samples = Object.fromEntries(variants.map((v) => [idOf(v), []]))
    for (let round = 0; round < rounds; round++) {
      for (const v of roundOrder(round, variants)) {
        progress(`scale-out: round ${round + 1}/${rounds} ${v.label}`)
        const { child, port } = servers.get(idOf(v))
        const before = await stats(child)
        const result = await load(port, requests, { durationSec, connections })
        const after = await stats(child)
        if (result.errors || result.timeouts || result.non2xx) {
          throw new Error(`${v.label}: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx under load`)
        }
        const served = after.requests - before.requests
        samples[idOf(v)].push({
          rps: result.requests.total / result.duration,
          p50: result.latency.p50,
          p99: result.latency.p99,
          waitedShare: served > 0 ? (after.waited - before.waited) / served : 0,
          // The store's Redis round trips (renewal batches, recoveries) per 1,000 requests.
          roundTripsPerThousand: served > 0 ? (1000 * (after.roundTrips - before.roundTrips)) / served : 0,
          // Server CPU per request: what the store costs the server, less swayed by a busy
          // machine than req/s (which also measures autocannon and redis-server's share).
          cpuUsPerRequest: served > 0 ? (after.cpuUs - before.cpuUs) / served : 0,
        })
      }
    }
    return {
      title: `Scale-out (autocannon, ${connections} connections, ${IDENTITIES} identities, ${durationSec} s per sample, redis-server on loopback)`,
      rows: variants.map((v) => {
        const own = samples[idOf(v)]
        const memory = samples[`${v.framework}:memory`]
        return {
          id: idOf(v),
          label: v.label,
          framework: v.framework,
          store: v.store,
          cluster: v.cluster === true,
          rps: summarize(own.map((s) => s.rps)),
          p50Ms: summarize(own.map((s) => s.p50)),
          p99Ms: summarize(own.map((s) => s.p99)),
          ofMemory: pairedRatio(own.map((s) => s.rps), memory.map((s) => s.rps)),
          waitedShare: summarize(own.map((s) => s.waitedShare)),
          roundTripsPerThousand: summarize(own.map((s) => s.roundTripsPerThousand)),
          cpuUsPerRequest: summarize(own.map((s) => s.cpuUsPerRequest)),
          // In-memory CPU per request ÷ this one's: the req/s share a CPU-bound server would keep.
          cpuShareOfMemory: pairedRatio(memory.map((s) => s.cpuUsPerRequest), own.map((s) => s.cpuUsPerRequest)),
          samples: own,
        }
      }),
    }
  } finally {
    for (const { child } of servers.values()) child.kill()
    await redis.stop()
    if (cluster !== null) await cluster.stop()
  }
}

module.exports = { runScaleOut }
