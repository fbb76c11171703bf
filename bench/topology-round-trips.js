'use strict'

// Redis round trips per 1,000 requests on each topology (docs/scale-out.md, "Topologies"), and
// what `WAIT 1` after each revocation write would cost. Starts its own one Redis, Sentinel setup
// (1 master, 1 replica, 3 sentinels) and Redis Cluster (3 masters + 3 replicas) on loopback
// (__test__/support/redis-topologies.js). For each topology and client: one process, the native
// engine, 50 identities (`rateLimitMax` 1000, refill 1000/s, default lease 100) authenticated at
// a steady `--rate` requests per second for `--seconds`, after one warm-up pass; counts the
// store's round trips. Then 200 revocation writes (the feed's write script) one after another,
// alone and each followed by `WAIT 1 1000`, on the master that holds the feed's keys.
//
//   node bench/topology-round-trips.js [--rate=2000] [--seconds=5]

const { startRedis } = require('../__test__/support/redis-server')
const { startCluster, startSentinel } = require('../__test__/support/redis-topologies')
const { connectClient } = require('../__test__/support/redis-clients')
const { createRedisStore } = require('../lib/store/index')
const { WRITE } = require('../lib/store/revocation-scripts')
const { revocationKeys } = require('../lib/store/key-layout')

const arg = (name, dflt) => Number((process.argv.find((a) => a.startsWith(`--${name}=`)) || '').split('=')[1] || dflt)
const RATE = arg('rate', 2000)
const SECONDS = arg('seconds', 5)
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

async function main() {
  const fmt = (n) => n.toFixed(2)
  const setups = [
    ['one Redis', 'single', async () => { const r = await startRedis(); return { target: r.url, stop: r.stop, replicated: false } }],
    ['Sentinel', 'sentinel', async () => { const s = await startSentinel(); return { target: { sentinel: { name: s.name, sentinels: s.sentinelNodes } }, stop: s.stop, replicated: true } }],
    ['Redis Cluster', 'cluster', async () => { const c = await startCluster(); return { target: { cluster: c.rootNodes }, stop: c.stop, replicated: true } }],
  ]
  console.log(`${IDENTITIES} identities, ${RATE} req/s for ${SECONDS} s, native engine, one process`)
  for (const [label, topology, start] of setups) {
    const setup = await start()
    try {
      for (const kind of ['node-redis', 'ioredis']) {
        const r = await roundTrips(kind, setup.target, topology)
        console.log(`${label}, ${kind}: ${fmt(r.perThousand)} round trips / 1,000 requests (${r.requests} requests, ${r.refused} refused, ${r.fallbackGrants} fallback grants)`)
      }
      if (setup.replicated) {
        const w = await waitCost(setup.target, topology)
        console.log(`${label}, revocation write: p50 ${fmt(w.alone.p50)} ms, p99 ${fmt(w.alone.p99)} ms; with WAIT 1: p50 ${fmt(w.withWait.p50)} ms, p99 ${fmt(w.withWait.p99)} ms`)
      }
    } finally {
      await setup.stop()
    }
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
