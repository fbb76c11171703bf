'use strict'

// Every client major docs/scale-out.md names (node-redis 4, 5 and 6, ioredis 5 and 6; aliased
// dev dependencies, __test__/support/redis-clients.js CLIENT_MAJORS) through a Redis Cluster
// failover: one cluster (3 masters + 3 replicas, __test__/support/redis-topologies.js) shared by
// the clients, each with its own store prefix, all on the master that is then killed. For each
// major: the store leaves its fallback within HEAL_MS of the promotion (the bound of
// docs/scale-out.md, "Failover"), and a revocation its feed writes after the promotion reaches a
// follower process of every major. One Redis (not a cluster): every major's store and feed work.
// node-redis 5 never healed before lib/store/commands.js asked
// for a refresh the way every major understands (its `rediscover()` wants an argument; the
// TypeError was swallowed).

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { startCluster, topologySkip } = require('../support/redis-topologies')
const { startRedis } = require('../support/redis-server')
const { CLIENT_MAJORS, connectClient } = require('../support/redis-clients')
const { follower, untilRevokedEverywhere, sleep } = require('../support/topology-run')
const { token } = require('../support/tokens')
const { createRedisStore, createDpopReplayStore } = require('../../lib/store/index')
const { RevocationFeed } = require('../../lib/store/revocations')
const { slotOf } = require('../../lib/store/key-layout')

const SECRET = 'redis-cluster-clients-secret-0123456789abcdef'
const CONFIG = { accessSecret: SECRET, rateLimitMax: 1000, rateLimitRefillPerSec: 1000 }
const ENGINES = { native: require('../..'), js: require('../../js') }
const MAJORS = Object.keys(CLIENT_MAJORS)
// docs/scale-out.md, "Failover": the store is back on Redis within this of the promotion, with
// commandTimeoutMs 300 and retryIntervalMs 100 (a failed command asks for a new slot map at once,
// then at most every 250 ms; the probe follows).
const HEAL_MS = 5000
const STORE_OPTIONS = { commandTimeoutMs: 300, retryIntervalMs: 100 }
const FEED_OPTIONS = { prefix: 'mx-rev', commandTimeoutMs: 1000, maxRevocationLagMs: 2000 }

const bearer = (sub, extra = {}) => `Bearer ${token({ sub, exp: Math.floor(Date.now() / 1000) + 600, ...extra }, SECRET)}`

const unhandled = []
const onUnhandled = (err) => unhandled.push(err)

describe('Redis Cluster failover with every client major', { skip: topologySkip() }, () => {
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

  it('one Redis: every major\'s store grants from Redis and its feed delivers a revocation another major reads', async () => {
    const redis = await startRedis()
    const conns = []
    try {
      const feeds = []
      for (const major of MAJORS) {
        const conn = await connectClient(major, redis.url)
        conns.push(conn)
        const store = createRedisStore(conn.client, { ...STORE_OPTIONS, prefix: `one-${major}:` })
        assert.equal(store.topology, 'single', major)
        assert.equal((await store.consume('k', 1, { capacity: 1, refillPerSec: 1 })).allowed, true, major)
        assert.equal((await store.consume('k', 1, { capacity: 1, refillPerSec: 1 })).allowed, false, major)
        assert.equal(store.metrics().failedRoundTrips, 0, major)
        await store.close()
        const auth = new ENGINES.js.Authenticator({ accessSecret: SECRET })
        const feed = new RevocationFeed(conn.client, { ...FEED_OPTIONS, prefix: 'one-rev' }).attach(auth)
        await feed.start()
        feeds.push({ major, feed, auth })
      }
      const exp = Math.floor(Date.now() / 1000) + 600
      for (const { major, feed } of feeds) assert.equal(await feed.revokeToken(`one-${major}`, exp), 'delivered', major)
      for (const { major, auth } of feeds) {
        for (const writer of MAJORS) {
          const t = bearer('one-user', { jti: `one-${writer}` })
          const deadline = Date.now() + 5000
          while (auth.authenticate(t).errorCode !== 'token_revoked' && Date.now() < deadline) await sleep(20)
          assert.equal(auth.authenticate(t).errorCode, 'token_revoked', `${major} reads ${writer}'s revocation`)
        }
      }
      for (const { feed } of feeds) await feed.close()
    } finally {
      for (const c of conns) await c.close()
      await redis.stop()
    }
  })

  it('slotOf (lib/store/key-layout.js) is CLUSTER KEYSLOT', async () => {
    for (const key of ['foo', '123456789', '{user1000}.following', 'a{}b', '{}{x}', '{a}{b}', 'é-ключ', '{mx-rev}:stream', 'x'.repeat(300)]) {
      assert.equal(slotOf(key), await cluster.slotOf(key), key)
    }
  })

  it('a master killed: every major\'s store leaves its fallback within HEAL_MS of the promotion, and revocations written after it reach a follower of every major', async (t) => {
    const revSlot = slotOf(`{${FEED_OPTIONS.prefix}}:stream`)
    const victim = await cluster.masterOf(revSlot)
    // A store prefix per major, its hash tag on the master that holds the revocations: one kill
    // takes every store and every feed down at once.
    const prefixOn = async (major) => {
      for (let i = 0; ; i++) {
        const prefix = `{mx-${major}-${i}}:`
        if ((await cluster.masterOf(slotOf(prefix))) === victim) return prefix
      }
    }
    const followers = await Promise.all(MAJORS.map((kind, i) => follower({ target: { cluster: cluster.rootNodes }, kind, engine: i % 2 ? 'js' : 'native', config: { accessSecret: SECRET }, feedOptions: FEED_OPTIONS })))
    const clients = []
    let running = true
    try {
      for (const [i, major] of MAJORS.entries()) {
        const conn = await connectClient(major, { cluster: cluster.rootNodes })
        const store = createRedisStore(conn.client, { ...STORE_OPTIONS, prefix: await prefixOn(major) })
        // A DPoP replay store on a client of its own (no store refreshing its slot map for it).
        const dpopConn = await connectClient(major, { cluster: cluster.rootNodes })
        const dpop = createDpopReplayStore(dpopConn.client, { commandTimeoutMs: 300, prefix: await prefixOn(`dpop-${major}`) })
        const clientErrors = []
        store.on('clientError', (err) => clientErrors.push(err))
        const auth = new ENGINES[i % 2 ? 'native' : 'js'].Authenticator(CONFIG)
        store.attach(auth)
        const feedErrors = []
        const feed = new RevocationFeed(conn.client, { ...FEED_OPTIONS, onError: (err) => feedErrors.push(err) }).attach(auth)
        await feed.start()
        clients.push({ major, conn, dpopConn, dpop, store, auth, feed, clientErrors, feedErrors })
      }
      // Traffic on every store, so each finds the outage and its end by itself.
      const traffic = Promise.all(
        clients.map(async (c) => {
          for (let n = 0; running; n++) {
            c.auth.authenticate(bearer(`mx-${n % 50}`))
            await sleep(10)
          }
        }),
      )
      await sleep(300)
      for (const c of clients) assert.equal(c.store.available, true, `${c.major}: on Redis before the kill`)
      const exp = Math.floor(Date.now() / 1000) + 600
      for (const c of clients) assert.equal(await c.feed.revokeToken(`mx-before-${c.major}`, exp), 'delivered')
      for (const c of clients) await untilRevokedEverywhere(followers, bearer('mx-user', { jti: `mx-before-${c.major}` }).slice(7), 5000, `revoked by ${c.major} before the kill`)

      const killedAt = Date.now()
      const killed = await cluster.killMasterOf(revSlot)
      const promotedAt = Date.now()
      // The DPoP replay stores: each admits a fresh proof again within HEAL_MS of the promotion.
      const dpopHealing = Promise.all(
        clients.map(async (c) => {
          const deadline = promotedAt + HEAL_MS + 2000
          for (let i = 0; Date.now() < deadline; i++) {
            const verdict = await c.dpop.admit(`${i}`.padStart(64, 'a'), 60_000).catch(() => 'failed')
            if (verdict === 'fresh') return { major: c.major, ms: Date.now() - promotedAt }
            await sleep(50)
          }
          return { major: c.major, ms: Infinity }
        }),
      )
      // Every store lost Redis and is back on it; measured from the promotion.
      const healed = await Promise.all(
        clients.map(async (c) => {
          const deadline = promotedAt + HEAL_MS + 2000
          while (Date.now() < deadline && (c.store.metrics().outages === 0 || c.store.metrics().fallback)) await sleep(20)
          return { major: c.major, ms: Date.now() - promotedAt, metrics: c.store.metrics() }
        }),
      )
      const dpopHealed = await dpopHealing
      // After the promotion: each feed writes, every follower (every major) enforces.
      const after = Date.now()
      const delivered = await Promise.all(clients.map((c) => c.feed.revokeToken(`mx-after-${c.major}`, exp)))
      const reached = await Promise.allSettled(clients.map((c) => untilRevokedEverywhere(followers, bearer('mx-user', { jti: `mx-after-${c.major}` }).slice(7), 10_000, `revoked by ${c.major} after the promotion`)))
      const reachedMs = Date.now() - after
      t.diagnostic(`killed :${killed}; replica serving after ${promotedAt - killedAt} ms; back on Redis after the promotion: ${healed.map((h) => `${h.major} ${h.metrics.fallback ? 'not' : `${h.ms} ms`}`).join(', ')}; DPoP replay admitting: ${dpopHealed.map((d) => `${d.major} ${d.ms} ms`).join(', ')}; revocations after it: ${delivered.join('/')}, ${reached.filter((r) => r.status === 'fulfilled').length} of ${clients.length} enforced by all ${followers.length} followers within ${reachedMs} ms`)
      for (const h of healed) {
        assert.ok(h.metrics.outages >= 1, `${h.major}: the store saw the outage (${JSON.stringify(h.metrics)})`)
        assert.equal(h.metrics.fallback, false, `${h.major}: still on its fallback ${h.ms} ms after the promotion (${JSON.stringify(h.metrics)})`)
        assert.ok(h.ms <= HEAL_MS, `${h.major}: back on Redis ${h.ms} ms after the promotion (bound ${HEAL_MS} ms)`)
      }
      for (const d of dpopHealed) assert.ok(d.ms <= HEAL_MS, `${d.major}: the DPoP replay store admits again ${d.ms} ms after the promotion (bound ${HEAL_MS} ms)`)
      for (const r of reached) if (r.status === 'rejected') throw r.reason
      for (const c of clients) {
        assert.deepEqual(c.clientErrors, [], `${c.major}: no client API error`)
        assert.deepEqual(c.feedErrors.filter((e) => e.code === 'ERR_AUTH_SHIELD_STORE_CLIENT'), [], `${c.major}: no client API error in the feed`)
      }
      running = false
      await traffic
    } finally {
      running = false
      for (const c of clients) {
        await c.feed.close()
        await c.store.close()
        await c.conn.close()
        await c.dpopConn.close()
      }
      const codes = await Promise.all(followers.map((f) => f.stop()))
      assert.deepEqual(codes, MAJORS.map(() => 0), 'every follower exits cleanly')
    }
  })
})
