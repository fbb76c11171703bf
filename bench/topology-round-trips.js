'use strict'

// Redis round trips per 1,000 requests on each topology (docs/scale-out.md, "Topologies"), and
// what `WAIT 1` after each revocation write would cost. Starts its own one Redis, Sentinel setup
// (1 master, 1 replica, 3 sentinels) and Redis Cluster (3 masters + 3 replicas) on loopback
// (__test__/support/redis-topologies.js). For each topology and client: one process, the native
// engine, 50 identities (`rateLimitMax` 1000, refill 1000/s, default lease 100) authenticated at
// a steady `--rate` requests per second for `--seconds`, after one warm-up pass; counts the
// store's round trips. With `--rounds=N` every topology stays up and each round measures them
// one after another (alternating the order), so a busy machine's swings reach all of them; the
// medians and ranges come last. Then 200 revocation writes (the feed's write script) one after
// another, alone and each followed by `WAIT 1 1000`, on the master that holds the feed's keys.
//
//   node bench/topology-round-trips.js [--rate=2000] [--seconds=5] [--rounds=1]

const { startRedis } = require('../__test__/support/redis-server')
const { startCluster, startSentinel } = require('../__test__/support/redis-topologies')
const { connectClient } = require('../__test__/support/redis-clients')
const { createRedisStore } = require('../lib/store/index')
const { WRITE } = require('../lib/store/revocation-scripts')
const { revocationKeys } = require('../lib/store/key-layout')

const arg = (name, dflt) => Number((process.argv.find((a) => a.startsWith(`--${name}=`)) || '').split('=')[1] || dflt)
const RATE = arg('rate', 2000)
const SECONDS = arg('seconds', 5)
const ROUNDS = arg('rounds', 1)
const IDENTITIES = 50
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function roundTrips(kind, target, topology) {
  const native = require('..')
  const conn = await connectClient(kind, target)
  try {
    const store = createRedisStore(conn.client, { prefix: `rt-${kind}-${topology}:` })
    const signer = new native.Authenticator({ accessSecret: 'round-trips-bench-secret-0123456789' })
    const auth = new native.Authenticator({ accessSecret: 'round-trips-bench-secret-0123456789', rateLimitMax: 1000, rateLimitRefill: 1000 })
    store.attach(auth)
    const headers = Array.from({ length: IDENTITIES }, (_, i) => `Bearer ${signer.signAccessToken({ sub: `user-${i}` })}`)
    for (const h of headers) if (auth.authenticate(h).errorCode === 'rate_limit_pending') await store.flush()
    const before = store.stats.roundTrips
    let requests = 0
    let refused = 0
    const tickMs = 10
    const perTick = (RATE * tickMs) / 1000
    const end = Date.now() + SECONDS * 1000
    let carry = 0
    while (Date.now() < end) {
      carry += perTick
      for (; carry >= 1; carry--) {
        const h = headers[requests % IDENTITIES]
        requests++
        let r = auth.authenticate(h)
        if (r.errorCode === 'rate_limit_pending') {
          await store.flush()
          r = auth.authenticate(h)
        }
        if (!r.authenticated) refused++
      }
      await sleep(tickMs)
    }
    const trips = store.stats.roundTrips - before
    await store.close()
    return { requests, refused, perThousand: (1000 * trips) / requests, fallbackGrants: store.stats.fallbackGrants }
  } finally {
    await conn.close()
  }
}

async function waitCost(target, topology) {
  const conn = await connectClient('node-redis', target)
  try {
    const keys = revocationKeys('wait-bench', topology)
    const send = (args) => (topology === 'cluster' ? conn.client.sendCommand(keys.tokens, false, args) : topology === 'sentinel' ? conn.client.sendCommand(false, args) : conn.client.sendCommand(args))
    const write = (i) => send(['EVAL', WRITE, '3', keys.tokens, keys.subjects, keys.stream, '100000', 't', JSON.stringify([null, `w-${i}`]), String(2e9)])
    const out = {}
    for (const withWait of [false, true]) {
      const samples = []
      for (let i = 0; i < 200; i++) {
        const t = process.hrtime.bigint()
        await write(i)
        if (withWait) {
          const acked = Number(await send(['WAIT', '1', '1000']))
          if (acked < 1) throw new Error('WAIT: no replica acknowledged')
        }
        samples.push(Number(process.hrtime.bigint() - t) / 1e6)
      }
      samples.sort((a, b) => a - b)
      out[withWait ? 'withWait' : 'alone'] = { p50: samples[99], p99: samples[197] }
    }
    return out
  } finally {
    await conn.close()
  }
}

/** Median and range of `values`, formatted. */
function spread(values, fmt) {
  const sorted = [...values].sort((a, b) => a - b)
  const median = sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2
  return sorted.length === 1 ? fmt(median) : `${fmt(median)} (${fmt(sorted[0])}–${fmt(sorted.at(-1))}, ${sorted.length} rounds)`
}

async function main() {
  const fmt = (n) => n.toFixed(2)
  const setups = [
    ['one Redis', 'single', async () => { const r = await startRedis(); return { target: r.url, stop: r.stop, replicated: false } }],
    ['Sentinel', 'sentinel', async () => { const s = await startSentinel(); return { target: { sentinel: { name: s.name, sentinels: s.sentinelNodes } }, stop: s.stop, replicated: true } }],
    ['Redis Cluster', 'cluster', async () => { const c = await startCluster(); return { target: { cluster: c.rootNodes }, stop: c.stop, replicated: true } }],
  ]
  console.log(`${IDENTITIES} identities, ${RATE} req/s for ${SECONDS} s, native engine, one process, ${ROUNDS} round(s), topologies interleaved within each round`)
  // Every topology is up for the whole run, and each round measures them one after another
  // (the order alternating from round to round): a load change on the machine hits all of them.
  const started = []
  try {
    for (const [label, topology, start] of setups) started.push({ label, topology, ...(await start()) })
    const results = new Map()
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? started : [...started].reverse()
      for (const setup of order) {
        for (const kind of ['node-redis', 'ioredis']) {
          const r = await roundTrips(kind, setup.target, setup.topology)
          const id = `${setup.label}, ${kind}`
          if (!results.has(id)) results.set(id, [])
          results.get(id).push(r)
          console.log(`round ${round + 1}: ${id}: ${fmt(r.perThousand)} round trips / 1,000 requests (${r.requests} requests, ${r.refused} refused, ${r.fallbackGrants} fallback grants)`)
        }
      }
    }
    console.log('median (min–max) round trips / 1,000 requests:')
    for (const [id, rs] of results) console.log(`  ${id}: ${spread(rs.map((r) => r.perThousand), fmt)}`)
    for (const setup of started) {
      if (!setup.replicated) continue
      const w = await waitCost(setup.target, setup.topology)
      console.log(`${setup.label}, revocation write: p50 ${fmt(w.alone.p50)} ms, p99 ${fmt(w.alone.p99)} ms; with WAIT 1: p50 ${fmt(w.withWait.p50)} ms, p99 ${fmt(w.withWait.p99)} ms`)
    }
  } finally {
    for (const setup of started) await setup.stop()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
