'use strict'

// Shared limits and revocations behind Sentinel (1 master, 1 replica, 3 sentinels on loopback,
// started here: __test__/support/redis-topologies.js), with node-redis' createSentinel and
// ioredis' `sentinels` option, in both engines (docs/scale-out.md, "Sentinel"): the store and the
// feed recognise both clients, and a forced failover (SENTINEL FAILOVER) mid-run keeps the
// documented bounds and every revocation made before and after it.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { startSentinel, topologySkip } = require('../support/redis-topologies')
const { CLIENT_KINDS, connectClient } = require('../support/redis-clients')
const { sharedLimitRun, follower, untilRevokedEverywhere, propagation, quantile, sleep } = require('../support/topology-run')
const { token } = require('../support/tokens')
const { createRedisStore } = require('../../lib/store/index')
const { RevocationFeed } = require('../../lib/store/revocations')

const SECRET = 'redis-sentinel-test-secret-0123456789abcdef'
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

describe('Sentinel: 1 master, 1 replica, 3 sentinels', { skip: topologySkip() }, () => {
  let setup
  let target
  before(async () => {
    process.on('unhandledRejection', onUnhandled)
    setup = await startSentinel()
    target = { sentinel: { name: setup.name, sentinels: setup.sentinelNodes } }
  })
  after(async () => {
    process.off('unhandledRejection', onUnhandled)
    if (setup) await setup.stop()
    assert.deepEqual(unhandled, [])
  })

  for (const kind of CLIENT_KINDS) {
    it(`recognises the ${kind} Sentinel client: leases, consume and the feed`, async () => {
      const conn = await connectClient(kind, target)
      try {
        const store = createRedisStore(conn.client, { prefix: `sent-${kind}:` })
        assert.equal(store.clientKind, kind)
        assert.equal(store.topology, 'sentinel')
        const auth = new ENGINES.js.Authenticator({ ...CONFIG, rateLimitMax: 100, rateLimitRefill: 10 })
        store.attach(auth)
        assert.equal(auth.authenticate(bearer('one')).errorCode, 'rate_limit_pending')
        await store.flush()
        assert.equal(auth.authenticate(bearer('one')).authenticated, true)
        assert.equal((await store.consume('k', 1, { capacity: 1, refillPerSec: 1 })).allowed, true)
        assert.equal((await store.consume('k', 1, { capacity: 1, refillPerSec: 1 })).allowed, false)
        assert.equal(store.stats.fallbackGrants, 0)
        const feed = new RevocationFeed(conn.client, { prefix: `sent-${kind}` }).attach(auth)
        await feed.start()
        assert.equal(await auth.revokeToken('sent-1', Math.floor(Date.now() / 1000) + 600), 'delivered')
        assert.equal(auth.authenticate(bearer('one', { jti: 'sent-1' })).errorCode, 'token_revoked')
        await feed.close()
        await store.close()
      } finally {
        await conn.close()
      }
    })
  }

  it('a forced failover (SENTINEL FAILOVER) mid-run: bounds hold, revocations made before and after are enforced everywhere', async (t) => {
    const feedOptions = { prefix: 'sfo-rev', commandTimeoutMs: 1000, maxRevocationLagMs: 2000 }
    const followers = await Promise.all(MIX.map((m) => follower({ target, ...m, config: CONFIG, feedOptions })))
    const conn = await connectClient('ioredis', target)
    const feed = new RevocationFeed(conn.client, feedOptions).attach(new ENGINES.native.Authenticator(CONFIG))
    try {
      await feed.start()
      const latencies = await propagation(feed, followers, 30, 'sprop')
      t.diagnostic(`propagation to 4 followers (every client × engine) over ${latencies.length} reads: p50 ${quantile(latencies, 0.5)} ms, p99 ${quantile(latencies, 0.99)} ms`)
      const exp = Math.floor(Date.now() / 1000) + 600
      const tokenA = bearer('sfo-user', { jti: 'sfo-a' }).slice(7)
      const tokenB = bearer('sfo-user', { jti: 'sfo-b' }).slice(7)
      let promoted
      let tookMs
      const run = await sharedLimitRun({
        mix: MIX,
        url: target,
        prefix: 'sfo:',
        lease: LEASE,
        secret: SECRET,
        max: MAX,
        refill: REFILL,
        durationMs: 6000,
        authorization: bearer('sfo-shared'),
        storeOptions: { timeoutMs: 300, retryIntervalMs: 100, outageShare: SHARE },
        during: async () => {
          await sleep(800)
          assert.equal(await feed.revokeToken('sfo-a', exp), 'delivered')
          await untilRevokedEverywhere(followers, tokenA, 5000, 'revoked before the failover')
          const started = Date.now()
          promoted = await setup.failover()
          tookMs = Date.now() - started
          await feed.revokeToken('sfo-b', exp)
        },
      })
      await untilRevokedEverywhere(followers, tokenA, 10_000, 'revoked before the failover, after it')
      await untilRevokedEverywhere(followers, tokenB, 10_000, 'revoked after the failover')
      const n = MIX.length
      const bound = MAX + REFILL * run.elapsedSec + n * LEASE + n * SHARE * (MAX + REFILL * run.elapsedSec) + n * LEASE
      t.diagnostic(`new master :${promoted} after ${tookMs} ms; admitted ${run.admitted} in ${run.elapsedSec.toFixed(2)} s (bound ${bound.toFixed(1)}); outages ${run.results.map((r) => r.outages).join('/')}, admitted while down ${run.results.map((r) => r.admittedWhileDown).join('/')}`)
      assert.ok(run.admitted <= bound, `admitted ${run.admitted} > bound ${bound.toFixed(1)} (${JSON.stringify(run.results)})`)
      assert.ok(run.admitted >= MAX, `admitted ${run.admitted} < capacity ${MAX}`)
      for (const r of run.results) {
        assert.ok(r.admitted > r.admittedWhileDown, `nothing served from Redis: ${JSON.stringify(r)}`)
        assert.equal(r.outages, r.recoveries, `every outage ended: ${JSON.stringify(r)}`)
      }
    } finally {
      const codes = await Promise.all(followers.map((f) => f.stop()))
      await feed.close()
      await conn.close()
      assert.deepEqual(codes, [0, 0, 0, 0], 'every follower exits cleanly')
    }
  })
})
