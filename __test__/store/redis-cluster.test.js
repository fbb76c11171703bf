'use strict'

// Shared limits and revocations on a real Redis Cluster (3 masters + 3 replicas on loopback,
// started here: __test__/support/redis-topologies.js), with node-redis' createCluster and ioredis'
// Cluster, in both engines (docs/scale-out.md, "Redis Cluster"): renewal batches split by shard
// (no CROSSSLOT), one limit held by 3 processes, revocations reaching 4 follower processes (one
// per client × engine; the p99 is reported, not asserted), a master killed mid-run and its
// replica promoted, and a slot migrated mid-run. One cluster for the whole file.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { startCluster, topologySkip } = require('../support/redis-topologies')
const { CLIENT_KINDS, connectClient } = require('../support/redis-clients')
const { sharedLimitRun, follower, untilRevokedEverywhere, propagation, quantile, sleep } = require('../support/topology-run')
const { token } = require('../support/tokens')
const { createRedisStore } = require('../../lib/store/index')
const { RevocationFeed } = require('../../lib/store/revocations')
const { SHARDS, shardOf } = require('../../lib/store/key-layout')

const SECRET = 'redis-cluster-test-secret-0123456789abcdef'
const CONFIG = { accessSecret: SECRET }
const ENGINES = { native: require('../..'), js: require('../../js') }
const MIX = [
  { kind: 'node-redis', engine: 'native' },
  { kind: 'ioredis', engine: 'js' },
  { kind: 'node-redis', engine: 'js' },
  { kind: 'ioredis', engine: 'native' },
]
const MAX = 200
const REFILL = 50
const LEASE = 10
const SHARE = 0.25

const bearer = (sub, extra = {}) => `Bearer ${token({ sub, exp: Math.floor(Date.now() / 1000) + 600, ...extra }, SECRET)}`

const unhandled = []
const onUnhandled = (err) => unhandled.push(err)

/**
 * The documented bound (docs/scale-out.md): max + refill·e + N·lease, plus while the slot was
 * unreachable each process's outage share of the limit, plus one lease per process for grants
 * a dying master acknowledged and never replicated.
 */
function failoverBound(n, elapsedSec) {
  return MAX + REFILL * elapsedSec + n * LEASE + n * SHARE * (MAX + REFILL * elapsedSec) + n * LEASE
}

describe('Redis Cluster: 3 masters + 3 replicas', { skip: topologySkip() }, () => {
  let cluster
  before(async () => {
    process.on('unhandledRejection', onUnhandled)
    cluster = await startCluster()
  })
  after(async () => {
    process.off('unhandledRejection', onUnhandled)
    if (cluster) await cluster.stop()
    assert.deepEqual(unhandled, [])
  })

  /** A subject whose bucket key (under `prefix`, limit MAX/REFILL) lands on the master serving `slot`, or any when slot is undefined. */
  async function subjectNear(prefix, slot, stem) {
    const wanted = slot === undefined ? undefined : await cluster.masterOf(slot)
    for (let shard = 0; shard < SHARDS; shard++) {
      const port = await cluster.masterOf(await cluster.slotOf(`${prefix}rl:{${MAX}/${REFILL}:${shard}}:`))
      if (wanted !== undefined && port !== wanted) continue
      for (let i = 0; i < 10_000; i++) if (shardOf(`:${stem}-${i}`) === shard) return { sub: `${stem}-${i}`, shard }
    }
    throw new Error('no shard on that master')
  }

  for (const kind of CLIENT_KINDS) {
    it(`recognises the ${kind} cluster client and renews 300 identities of every shard without CROSSSLOT`, async () => {
      const conn = await connectClient(kind, { cluster: cluster.rootNodes })
      try {
        const store = createRedisStore(conn.client, { prefix: `batch-${kind}:` })
        assert.equal(store.clientKind, kind)
        assert.equal(store.topology, 'cluster')
        const auth = new ENGINES.js.Authenticator({ ...CONFIG, rateLimitMax: 100, rateLimitRefill: 10 })
        store.attach(auth)
        const subs = Array.from({ length: 300 }, (_, i) => `batch-${i}`)
        for (const sub of subs) assert.equal(auth.authenticate(bearer(sub)).errorCode, 'rate_limit_pending')
        await store.flush()
        for (const sub of subs) assert.equal(auth.authenticate(bearer(sub)).authenticated, true, sub)
        assert.equal(store.stats.failedRoundTrips, 0)
        assert.equal(store.stats.fallbackGrants, 0)
        // 3 batches of 100, each split into at most SHARDS scripts (one slot each); a master
        // without the script yet answers NOSCRIPT, and EVAL loads it (one more round trip).
        assert.ok(store.stats.roundTrips <= 2 * 3 * SHARDS, `${store.stats.roundTrips} round trips`)
        // consume(): one key, its own slot.
        assert.equal((await store.consume('k', 1, { capacity: 1, refillPerSec: 1 })).allowed, true)
        assert.equal((await store.consume('k', 1, { capacity: 1, refillPerSec: 1 })).allowed, false)
        await store.close()
      } finally {
        await conn.close()
      }
    })
  }

  // Two runs of 3 processes, each mixing both clients and both engines.
  for (const [run, mix] of [[1, MIX.slice(0, 3)], [2, MIX.slice(1, 4)]]) {
    const what = mix.map((m) => `${m.kind}/${m.engine}`).join(', ')
    it(`3 processes hold one identity to its shared limit (${what})`, async (t) => {
      const { sub } = await subjectNear('procs:', undefined, `shared-${run}`)
      const result = await sharedLimitRun({ mix, url: { cluster: cluster.rootNodes }, prefix: 'procs:', lease: LEASE, secret: SECRET, max: MAX, refill: REFILL, durationMs: 1500, authorization: bearer(sub) })
      const bound = MAX + REFILL * result.elapsedSec + mix.length * LEASE
      t.diagnostic(`admitted ${result.admitted} in ${result.elapsedSec.toFixed(2)} s (capacity ${MAX}, bound ${bound.toFixed(1)})`)
      assert.ok(result.admitted >= MAX, `admitted ${result.admitted} < capacity ${MAX}`)
      assert.ok(result.admitted <= bound, `admitted ${result.admitted} > bound ${bound.toFixed(1)} (${JSON.stringify(result.results)})`)
      assert.ok(result.results.every((r) => r.admitted > 0), 'every process was served')
    })
  }

  /**
   * 4 follower processes (every client × engine) and a writer feed of `kind` (on `engine`) in
   * this process; `writer(kind, engine)` adds another writer on the same followers.
   */
  async function revocationSetup(prefix, kind, engine = 'native') {
    const feedOptions = { prefix, commandTimeoutMs: 1000, maxRevocationLagMs: 2000 }
    const followers = await Promise.all(MIX.map((m) => follower({ target: { cluster: cluster.rootNodes }, ...m, config: CONFIG, feedOptions })))
    const writers = []
    const writer = async (k, e) => {
      const conn = await connectClient(k, { cluster: cluster.rootNodes })
      const feed = new RevocationFeed(conn.client, feedOptions).attach(new ENGINES[e].Authenticator(CONFIG))
      writers.push({ conn, feed })
      await feed.start()
      return feed
    }
    const feed = await writer(kind, engine)
    const close = async () => {
      const codes = await Promise.all(followers.map((f) => f.stop()))
      for (const w of writers) {
        await w.feed.close()
        await w.conn.close()
      }
      assert.deepEqual(codes, [0, 0, 0, 0], 'every follower exits cleanly')
    }
    return { followers, feed, writer, close }
  }

  const figures = (l) => `p50 ${quantile(l, 0.5)} ms, p99 ${quantile(l, 0.99)} ms, max ${l.at(-1)} ms over ${l.length} reads`

  // The acceptance figure of docs/scale-out.md ("p99 within 50 ms"): reported, not asserted (a
  // timing on a shared machine); what is asserted is that every follower reads every entry.
  it('a revocation reaches 4 follower processes, every client × engine, from writers of both clients (propagation p99 reported)', async (t) => {
    const { followers, feed, writer, close } = await revocationSetup('prop-rev', 'ioredis', 'native')
    try {
      const second = await writer('node-redis', 'js')
      const byIoredis = await propagation(feed, followers, 50, 'prop-io')
      const byNodeRedis = await propagation(second, followers, 50, 'prop-nr')
      const all = [...byIoredis, ...byNodeRedis].sort((a, b) => a - b)
      t.diagnostic(`propagation, ioredis writer: ${figures(byIoredis)}; node-redis writer: ${figures(byNodeRedis)}; together: ${figures(all)}`)
      await untilRevokedEverywhere(followers, bearer('prop-user', { jti: 'prop-io-3' }).slice(7), 5000, 'a revoked token')
      await untilRevokedEverywhere(followers, bearer('prop-user', { jti: 'prop-nr-3' }).slice(7), 5000, 'a revoked token')
    } finally {
      await close()
    }
  })

  it('a master killed mid-run: its replica takes over; bounds hold, revocations made before and after are enforced everywhere', async (t) => {
    const revPrefix = 'fo-rev'
    const revSlot = await cluster.slotOf(`{${revPrefix}}:stream`)
    // The identity's shard on the master that also holds the revocations: one kill hits both.
    const { sub } = await subjectNear('fo:', revSlot, 'failover')
    const { followers, feed, close } = await revocationSetup(revPrefix, 'node-redis')
    try {
      const exp = Math.floor(Date.now() / 1000) + 600
      const tokenA = bearer('fo-user', { jti: 'fo-a' }).slice(7)
      const tokenB = bearer('fo-user', { jti: 'fo-b' }).slice(7)
      let killed
      let promotedAfterMs
      const run = await sharedLimitRun({
        mix: MIX,
        url: { cluster: cluster.rootNodes },
        prefix: 'fo:',
        lease: LEASE,
        secret: SECRET,
        max: MAX,
        refill: REFILL,
        durationMs: 7000,
        authorization: bearer(sub),
        storeOptions: { timeoutMs: 300, retryIntervalMs: 100, outageShare: SHARE },
        during: async () => {
          await sleep(800)
          assert.equal(await feed.revokeToken('fo-a', exp), 'delivered')
          await untilRevokedEverywhere(followers, tokenA, 5000, 'revoked before the kill')
          const started = Date.now()
          killed = await cluster.killMasterOf(revSlot)
          promotedAfterMs = Date.now() - started
          // Delivered once the feed's client finds the promoted replica (queued until then).
          await feed.revokeToken('fo-b', exp)
        },
      })
      await untilRevokedEverywhere(followers, tokenA, 10_000, 'revoked before the kill, after promotion')
      await untilRevokedEverywhere(followers, tokenB, 10_000, 'revoked after the kill')
      // Through the promoted replica: every follower reads every new entry.
      const after = await propagation(feed, followers, 30, 'fo-prop')
      const bound = failoverBound(MIX.length, run.elapsedSec)
      t.diagnostic(`propagation after the failover: ${figures(after)}`)
      t.diagnostic(`killed :${killed}, replica serving after ${promotedAfterMs} ms; admitted ${run.admitted} in ${run.elapsedSec.toFixed(2)} s (bound ${bound.toFixed(1)}); outages ${run.results.map((r) => r.outages).join('/')}, recoveries ${run.results.map((r) => r.recoveries).join('/')}, admitted while down ${run.results.map((r) => r.admittedWhileDown).join('/')}`)
      assert.ok(run.admitted <= bound, `admitted ${run.admitted} > bound ${bound.toFixed(1)} (${JSON.stringify(run.results)})`)
      assert.ok(run.admitted >= MAX, `admitted ${run.admitted} < capacity ${MAX}`)
      for (const r of run.results) {
        assert.ok(r.admitted > r.admittedWhileDown, `nothing served from Redis: ${JSON.stringify(r)}`)
        assert.equal(r.outages, r.recoveries, `every outage ended: ${JSON.stringify(r)}`)
      }
    } finally {
      await close()
    }
    await cluster.settled(30_000)
  })

  it('a slot migrated mid-run (MIGRATING/IMPORTING, MIGRATE, SETSLOT NODE): bounds hold, revocations still flow', async (t) => {
    const revPrefix = 'mig-rev'
    const revSlot = await cluster.slotOf(`{${revPrefix}}:stream`)
    const { sub, shard } = await subjectNear('mig:', undefined, 'migrate')
    const limitSlot = await cluster.slotOf(`mig:rl:{${MAX}/${REFILL}:${shard}}:`)
    const { followers, feed, close } = await revocationSetup(revPrefix, 'ioredis')
    try {
      const exp = Math.floor(Date.now() / 1000) + 600
      const tokenA = bearer('mig-user', { jti: 'mig-a' }).slice(7)
      const tokenB = bearer('mig-user', { jti: 'mig-b' }).slice(7)
      const moved = []
      const run = await sharedLimitRun({
        mix: MIX,
        url: { cluster: cluster.rootNodes },
        prefix: 'mig:',
        lease: LEASE,
        secret: SECRET,
        max: MAX,
        refill: REFILL,
        durationMs: 3000,
        authorization: bearer(sub),
        storeOptions: { timeoutMs: 300, retryIntervalMs: 100, outageShare: SHARE },
        during: async () => {
          await sleep(600)
          assert.equal(await feed.revokeToken('mig-a', exp), 'delivered')
          moved.push(await cluster.migrateSlot(limitSlot))
          if (revSlot !== limitSlot) moved.push(await cluster.migrateSlot(revSlot))
          assert.equal(await feed.revokeToken('mig-b', exp), 'delivered')
        },
      })
      await untilRevokedEverywhere(followers, tokenA, 10_000, 'revoked before the migration')
      await untilRevokedEverywhere(followers, tokenB, 10_000, 'revoked after the migration')
      const bound = failoverBound(MIX.length, run.elapsedSec)
      t.diagnostic(`slots ${limitSlot}, ${revSlot} moved to :${moved.join(', :')}; admitted ${run.admitted} in ${run.elapsedSec.toFixed(2)} s (bound ${bound.toFixed(1)}); outages ${run.results.map((r) => r.outages).join('/')}`)
      assert.ok(run.admitted <= bound, `admitted ${run.admitted} > bound ${bound.toFixed(1)} (${JSON.stringify(run.results)})`)
      assert.ok(run.admitted >= MAX, `admitted ${run.admitted} < capacity ${MAX}`)
    } finally {
      await close()
    }
  })
})
