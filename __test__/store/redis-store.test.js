'use strict'

// auth-shield/redis against a real redis-server (started by the test on a loopback port), with
// node-redis and ioredis, both engines: the shared limit through the Express middleware (one
// round trip for a new identity, none for a steady one, the exact capacity), strict mode,
// store.consume (verdicts, bad input, NOSCRIPT, idle expiry), and an outage: SIGKILL mid-run,
// local fallback, recovery after restart, no stuck request and no unhandled rejection.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { once } = require('node:events')
const express = require('express')
const Fastify = require('fastify')
const authShield = require('../../adapters/express')
const authShieldPlugin = require('../../adapters/fastify')
const native = require('../..')
const js = require('../../js')
const { createRedisStore } = require('../../lib/store/index')
const { redisSkip, startRedis } = require('../support/redis-server')
const { CLIENT_KINDS, connectClient } = require('../support/redis-clients')
const { token } = require('../support/tokens')
const { listen, get } = require('../support/http')
const { plumbing } = require('../support/store-seam')

const SECRET = 'redis-store-test-secret-0123456789abcdef'
const NOW = Math.floor(Date.now() / 1000)
const bearer = (sub) => `Bearer ${token({ sub, exp: NOW + 600 }, SECRET)}`
const ENGINES = [
  ['native', native.Authenticator],
  ['js', js.Authenticator],
]

const unhandled = []
process.on('unhandledRejection', (err) => unhandled.push(err))

describe('auth-shield/redis with a real redis-server', { skip: redisSkip() }, () => {
  let redis
  before(async () => (redis = await startRedis()))
  after(async () => {
    await redis.stop()
    assert.deepEqual(unhandled, [], 'no unhandled rejection')
  })

  for (const kind of CLIENT_KINDS) {
    for (const [engine, Authenticator] of ENGINES) {
      describe(`${kind}, ${engine} engine`, () => {
        let conn, store, server, auth
        before(async () => {
          conn = await connectClient(kind, redis.url)
          store = createRedisStore(conn.client, { prefix: `t:${kind}:${engine}:`, lease: 5 })
          auth = new Authenticator({ accessSecret: SECRET, rateLimitMax: 20, rateLimitRefillPerSec: 0.001 })
          const app = express()
          app.get('/api', authShield(auth, { store }), (req, res) => res.json({ userId: req.user.userId }))
          server = await listen(http.createServer(app))
        })
        after(async () => {
          await server.close()
          await store.close()
          await conn.close()
        })

        it('names the client kind', () => assert.equal(store.clientKind, kind))

        it('admits exactly the capacity of the shared bucket, waiting once for a new identity', async () => {
          const before = store.stats.recoveries
          const first = await get(`${server.base}/api`, { authorization: bearer('alice') })
          assert.equal(first.status, 200)
          assert.equal(store.stats.recoveries - before, 1)
          let admitted = 1
          let refused
          for (let i = 0; i < 40; i++) {
            const res = await get(`${server.base}/api`, { authorization: bearer('alice') })
            if (res.status === 200) admitted++
            else refused = res
          }
          assert.equal(admitted, 20)
          assert.equal(refused.status, 429)
          assert.equal(refused.json.code, 'rate_limited')
          assert.ok(Number(refused.headers['retry-after']) > 0)
          // The bucket lives in Redis, expiring when it would be full again.
          const pttl = Number(await conn.command(['PTTL', `t:${kind}:${engine}:rl:20/0.001::alice`]))
          assert.ok(pttl > 1000, `PTTL ${pttl}`)
        })

        it('does not wait for Redis on the steady requests of a known identity', async () => {
          await get(`${server.base}/api`, { authorization: bearer('bob') })
          const before = store.stats.recoveries
          for (let i = 0; i < 15; i++) {
            assert.equal((await get(`${server.base}/api`, { authorization: bearer('bob') })).status, 200)
            await new Promise((r) => setTimeout(r, 25)) // room for the background renewal
          }
          assert.equal(store.stats.recoveries - before, 0)
        })

        it('store.consume shares a bucket, all or nothing, and survives a script cache flush', async () => {
          const limit = { capacity: 3, refillPerSec: 0.001 }
          const key = `login:${kind}:${engine}`
          assert.deepEqual(await store.consume(key, 2, limit), { allowed: true, remaining: 1, retryAfterMs: 0 })
          await conn.command(['SCRIPT', 'FLUSH'])
          const refused = await store.consume(key, 2, limit)
          assert.equal(refused.allowed, false)
          assert.equal(refused.remaining, 1)
          assert.ok(refused.retryAfterMs > 900_000, String(refused.retryAfterMs))
          assert.deepEqual(await store.consume(key, 1, limit), { allowed: true, remaining: 0, retryAfterMs: 0 })
        })

        it('store.consume rejects bad input with coded errors and never throws synchronously', async () => {
          const limit = { capacity: 3, refillPerSec: 1 }
          for (const [args, code] of [
            [[42, 1, limit], 'ERR_INVALID_ARG_TYPE'],
            [['k', 0, limit], 'ERR_OUT_OF_RANGE'],
            [['k', 4, limit], 'ERR_OUT_OF_RANGE'],
            [['k', 1, { capacity: 0, refillPerSec: 1 }], 'ERR_OUT_OF_RANGE'],
            [['k', 1], 'ERR_INVALID_ARG_TYPE'],
            [['x'.repeat(1025), 1, limit], 'ERR_OUT_OF_RANGE'],
          ]) {
            let p
            assert.doesNotThrow(() => (p = store.consume(...args)))
            await assert.rejects(p, { code })
          }
        })
      })
    }
  }

  it('strict mode takes one round trip per request and still admits exactly the capacity', async () => {
    const conn = await connectClient('node-redis', redis.url)
    const store = createRedisStore(conn.client, { prefix: 'strict:', strict: true })
    const auth = new native.Authenticator({ accessSecret: SECRET, rateLimitMax: 5, rateLimitRefillPerSec: 0.001 })
    const app = express()
    app.get('/login', authShield(auth, { store }), (req, res) => res.json({ ok: true }))
    const server = await listen(http.createServer(app))
    try {
      const statuses = []
      for (let i = 0; i < 8; i++) statuses.push((await get(`${server.base}/login`, { authorization: bearer('carol') })).status)
      assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429, 429, 429])
      // Five grants, each fetched by the request that used it; refusals are remembered locally.
      assert.equal(store.stats.recoveries, 6)
    } finally {
      await server.close()
      await store.close()
      await conn.close()
    }
  })

  it('the Fastify plugin takes the same store option and shares the same bucket', async () => {
    const conn = await connectClient('node-redis', redis.url)
    const store = createRedisStore(conn.client, { prefix: 'fastify:' })
    const app = Fastify()
    await app.register(authShieldPlugin, { config: { accessSecret: SECRET, rateLimitMax: 3, rateLimitRefillPerSec: 0.001 }, store })
    app.get('/api', async (request) => ({ userId: request.user.userId }))
    await app.ready()
    const server = await listen(app.server)
    try {
      const statuses = []
      for (let i = 0; i < 5; i++) statuses.push((await get(`${server.base}/api`, { authorization: bearer('frank') })).status)
      assert.deepEqual(statuses, [200, 200, 200, 429, 429])
      // The first request waited; with a lease of 1 (capacity 3) the next may too.
      assert.ok(store.stats.recoveries >= 1)
    } finally {
      await server.close()
      await app.close()
      await store.close()
      await conn.close()
    }
  })

  it('holds at most maxKeys identities under a flood of new ones, serving each after one round trip', async () => {
    const conn = await connectClient('ioredis', redis.url)
    const store = createRedisStore(conn.client, { prefix: 'flood:', maxKeys: 200 })
    const auth = new native.Authenticator({ accessSecret: SECRET, rateLimitMax: 10, rateLimitRefillPerSec: 1 })
    store.attach(auth)
    try {
      let served = 0
      for (let i = 0; i < 1500; i++) {
        const h = bearer(`flood-${i}`)
        let r = auth.authenticate(h)
        assert.equal(r.errorCode, 'rate_limit_pending')
        await store.flush()
        r = auth.authenticate(h)
        if (r.authenticated) served++
        assert.ok(plumbing(auth).sharedLimitKeys <= 200, `${plumbing(auth).sharedLimitKeys} identities held`)
      }
      assert.equal(served, 1500)
    } finally {
      await store.close()
      await conn.close()
    }
  })

  it('rejects options it does not know and values out of range at construction', async () => {
    const conn = await connectClient('ioredis', redis.url)
    try {
      assert.throws(() => createRedisStore(conn.client, { leese: 3 }), { code: 'ERR_INVALID_ARG_TYPE', message: 'options.leese is not a known option' })
      assert.throws(() => createRedisStore(conn.client, { outageShare: 0 }), { code: 'ERR_OUT_OF_RANGE' })
      assert.throws(() => createRedisStore(conn.client, { commandTimeoutMs: 1.5 }), { code: 'ERR_OUT_OF_RANGE' })
      assert.throws(() => createRedisStore({}, {}), { code: 'ERR_INVALID_ARG_TYPE' })
      assert.throws(() => authShield({ accessSecret: SECRET }, { store: {} }), { code: 'ERR_INVALID_ARG_TYPE' })
      const store = createRedisStore(conn.client)
      assert.throws(() => authShield({ accessSecret: SECRET }, { store, shadow: true }), { code: 'ERR_INVALID_ARG_TYPE', message: 'options.store cannot be combined with shadow' })
      await store.close()
    } finally {
      await conn.close()
    }
  })
})

describe('auth-shield/redis through an outage (SIGKILL, restart)', { skip: redisSkip() }, () => {
  for (const kind of CLIENT_KINDS) {
    for (const [engine, Authenticator] of ENGINES) {
      it(`falls back to the local share and recovers (${kind}, ${engine} engine)`, async () => {
        const redis = await startRedis()
        const conn = await connectClient(kind, redis.url)
        const store = createRedisStore(conn.client, { lease: 2, commandTimeoutMs: 200, retryIntervalMs: 100, outageShare: 0.5 })
        const events = []
        store.on('outage', () => events.push('outage'))
        store.on('recovered', () => events.push('recovered'))
        const auth = new Authenticator({ accessSecret: SECRET, rateLimitMax: 1000, rateLimitRefillPerSec: 100 })
        const app = express()
        app.get('/api', authShield(auth, { store }), (req, res) => res.json({ ok: true }))
        const server = await listen(http.createServer(app))
        const ask = async (sub) => {
          const started = Date.now()
          const res = await get(`${server.base}/api`, { authorization: bearer(sub) })
          return { status: res.status, ms: Date.now() - started }
        }
        try {
          assert.equal((await ask('dave')).status, 200)
          assert.equal(store.available, true)
          await redis.kill()
          // Known and new identities alike keep being served, each request within a time-out.
          const during = []
          for (let i = 0; i < 20; i++) during.push(await ask(i % 2 ? 'dave' : `new-${i}`))
          assert.deepEqual(during.map((r) => r.status), Array(20).fill(200))
          assert.ok(Math.max(...during.map((r) => r.ms)) < 2000, 'no stuck request')
          assert.equal(store.available, false)
          assert.ok(store.stats.fallbackGrants > 0)
          await assert.rejects(store.consume('k', 1, { capacity: 2, refillPerSec: 1 }), { code: 'ERR_AUTH_SHIELD_STORE_UNAVAILABLE' })
          // Listening before the restart: the store may find Redis again before restart() returns.
          const recovered = once(store, 'recovered')
          await redis.restart()
          await Promise.race([recovered, new Promise((_, reject) => setTimeout(() => reject(new Error('no recovery within 10 s')), 10_000).unref())])
          assert.equal(store.available, true)
          const trips = store.stats.roundTrips
          assert.equal((await ask('erin')).status, 200)
          assert.ok(store.stats.roundTrips > trips, 'leases come from Redis again')
          assert.deepEqual(await store.consume('k', 1, { capacity: 2, refillPerSec: 1 }), { allowed: true, remaining: 1, retryAfterMs: 0 })
          assert.deepEqual(events, ['outage', 'recovered'])
        } finally {
          await server.close()
          await store.close()
          await conn.close()
          await redis.stop()
        }
      })
    }
  }
})
