'use strict'

// Parallel requests of one identity with a Redis store (issue 22 §2): requests that find no
// credit wait for the lease already in flight, and when it covers fewer than them the store
// fetches more, so none is answered `503 rate_limit_pending` while redis-server is healthy;
// and the limit still holds (nothing is admitted beyond what the shared bucket granted).
// Against a real redis-server, node-redis and ioredis, both engines, Express (and Fastify once).

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
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
const { listen } = require('../support/http')

const SECRET = 'redis-burst-test-secret-0123456789abcdef'
const NOW = Math.floor(Date.now() / 1000)
const bearer = (sub) => `Bearer ${token({ sub, exp: NOW + 600 }, SECRET)}`
const ENGINES = [
  ['native', native.Authenticator],
  ['js', js.Authenticator],
]
// "Never refill" within a test: 0.001 token/s adds less than one token in 900 s.
const LIMIT = { rateLimitMax: 100, rateLimitRefillPerSec: 0.001 }
// A loaded 2-core machine must not turn a slow answer into an outage (and its local fallback,
// which would admit from a bucket of its own): the test is about a healthy redis-server.
const STORE_OPTIONS = { commandTimeoutMs: 10_000 }

const unhandled = []
process.on('unhandledRejection', (err) => unhandled.push(err))

/**
 * GETs `${base}/api` once per entry of `headers`, `concurrency` at a time over keep-alive
 * sockets; resolves to the responses' `{ status, retryAfter }` in order.
 */
async function getAll(base, headers, concurrency) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  try {
    return await Promise.all(
      headers.map(
        (authorization) =>
          new Promise((resolve, reject) => {
            const req = http.get(`${base}/api`, { agent, headers: { authorization } }, (res) => {
              res.resume()
              res.on('end', () => resolve({ status: res.statusCode, retryAfter: res.headers['retry-after'] }))
            })
            req.on('error', reject)
          }),
      ),
    )
  } finally {
    agent.destroy()
  }
}

/** `{ 200: n, 429: m, … }` of `responses`. */
function tally(responses) {
  const counts = {}
  for (const { status } of responses) counts[status] = (counts[status] || 0) + 1
  return counts
}

describe('parallel requests of one identity with a Redis store', { skip: redisSkip() }, () => {
  let redis
  before(async () => (redis = await startRedis()))
  after(async () => {
    await redis.stop()
    assert.deepEqual(unhandled, [], 'no unhandled rejection')
  })

  for (const kind of CLIENT_KINDS) {
    for (const [engine, Authenticator] of ENGINES) {
      describe(`${kind}, ${engine} engine, Express`, () => {
        let conn, store, server
        before(async () => {
          conn = await connectClient(kind, redis.url)
          store = createRedisStore(conn.client, { ...STORE_OPTIONS, prefix: `burst:${kind}:${engine}:` })
          const auth = new Authenticator({ accessSecret: SECRET, ...LIMIT })
          // The same limit refilled far faster than any burst here can spend it.
          const roomy = new Authenticator({ accessSecret: SECRET, rateLimitMax: 100, rateLimitRefillPerSec: 1e6 })
          store.attach(roomy, { name: 'roomy' })
          const app = express()
          app.get('/api', authShield(auth, { store }), (req, res) => res.json({ userId: req.user.userId }))
          app.get('/roomy/api', authShield(roomy, { store }), (req, res) => res.json({ userId: req.user.userId }))
          server = await listen(http.createServer(app))
        })
        after(async () => {
          await server.close()
          await store.close()
          await conn.close()
        })

        it('a known user under the limit: 300 requests, 30 in parallel, all admitted', async () => {
          const roomy = `${server.base}/roomy`
          assert.deepEqual(tally(await getAll(roomy, [bearer('steady')], 1)), { 200: 1 })
          assert.deepEqual(tally(await getAll(roomy, Array(300).fill(bearer('steady')), 30)), { 200: 300 })
          assert.equal(store.stats.outages, 0)
        })

        it('a known user: 30 parallel requests are never 503, and admissions stop at the limit', async () => {
          const warm = await getAll(server.base, [bearer('known')], 1)
          assert.deepEqual(tally(warm), { 200: 1 })
          const responses = await getAll(server.base, Array(300).fill(bearer('known')), 30)
          const counts = tally(responses)
          assert.equal(counts[503] || 0, 0, `503s: ${JSON.stringify(counts)}`)
          // The shared bucket holds 100 and (nearly) never refills: the warm-up took one.
          assert.equal(counts[200], 99, JSON.stringify(counts))
          assert.equal(counts[429], 201, JSON.stringify(counts))
          assert.equal(store.stats.outages, 0)
          assert.equal(store.stats.fallbackGrants, 0)
        })

        it('fresh users: 20 parallel requests each, under the limit, are all admitted', async () => {
          const headers = []
          for (let u = 0; u < 20; u++) for (let i = 0; i < 20; i++) headers.push(bearer(`fresh-${u}`))
          const responses = await getAll(server.base, headers, 20)
          assert.deepEqual(tally(responses), { 200: 400 })
          assert.equal(store.stats.outages, 0)
        })
      })
    }
  }

  for (const [engine, Authenticator] of ENGINES) {
    it(`strict mode: each parallel request gets its own token, none is 503 (node-redis, ${engine} engine)`, async () => {
      const conn = await connectClient('node-redis', redis.url)
      const store = createRedisStore(conn.client, { ...STORE_OPTIONS, prefix: `strict:${engine}:`, strict: true })
      const auth = new Authenticator({ accessSecret: SECRET, rateLimitMax: 20, rateLimitRefillPerSec: 0.001 })
      const app = express()
      app.get('/api', authShield(auth, { store }), (req, res) => res.json({ ok: true }))
      const server = await listen(http.createServer(app))
      try {
        const counts = tally(await getAll(server.base, Array(50).fill(bearer('strict')), 25))
        assert.deepEqual(counts, { 200: 20, 429: 30 })
      } finally {
        await server.close()
        await store.close()
        await conn.close()
      }
    })
  }

  for (const [engine, Authenticator] of ENGINES) {
    it(`past maxKeys waiting requests the 503 comes at once, with Retry-After (ioredis, ${engine} engine)`, async () => {
      const conn = await connectClient('ioredis', redis.url)
      const admin = await connectClient('node-redis', redis.url)
      // At most 2 requests wait in the store's recovery.
      const store = createRedisStore(conn.client, { ...STORE_OPTIONS, prefix: `full:${engine}:`, maxKeys: 2 })
      const auth = new Authenticator({ accessSecret: SECRET, ...LIMIT })
      const app = express()
      app.get('/api', authShield(auth, { store }), (req, res) => res.json({ ok: true }))
      const server = await listen(http.createServer(app))
      try {
        // Redis holds every command for 3 s: the first fetch cannot come back meanwhile.
        await admin.command(['CLIENT', 'PAUSE', '3000', 'ALL'])
        const responses = await getAll(server.base, Array(12).fill(bearer('queued')), 12)
        assert.deepEqual(tally(responses), { 200: 2, 503: 10 })
        for (const r of responses) if (r.status === 503) assert.equal(r.retryAfter, '1')
        assert.equal(store.stats.outages, 0)
      } finally {
        await server.close()
        await store.close()
        await admin.close()
        await conn.close()
      }
    })
  }

  for (const kind of CLIENT_KINDS) {
    it(`with Redis down, parallel requests are answered from the fallback, none is 503 (${kind}, both engines)`, async () => {
      const down = await startRedis()
      const conn = await connectClient(kind, down.url)
      const servers = []
      try {
        for (const [engine, Authenticator] of ENGINES) {
          const store = createRedisStore(conn.client, { prefix: `down:${engine}:`, commandTimeoutMs: 300, retryIntervalMs: 60_000 })
          const auth = new Authenticator({ accessSecret: SECRET, ...LIMIT })
          const app = express()
          app.get('/api', authShield(auth, { store }), (req, res) => res.json({ ok: true }))
          servers.push({ engine, store, server: await listen(http.createServer(app)) })
        }
        await down.kill()
        for (const { engine, store, server } of servers) {
          // The fallback bucket holds the whole limit (outageShare 1): 100 of 130.
          const counts = tally(await getAll(server.base, Array(130).fill(bearer('offline')), 30))
          assert.deepEqual(counts, { 200: 100, 429: 30 }, engine)
          assert.equal(store.available, false)
        }
      } finally {
        for (const { store, server } of servers) {
          await server.close()
          await store.close()
        }
        await conn.close()
        await down.stop()
      }
    })
  }

  it('the Fastify plugin: a fresh user, 20 parallel requests, none is 503 (ioredis)', async () => {
    const conn = await connectClient('ioredis', redis.url)
    const store = createRedisStore(conn.client, { ...STORE_OPTIONS, prefix: 'burst-fastify:' })
    const app = Fastify()
    await app.register(authShieldPlugin, { config: { accessSecret: SECRET, ...LIMIT }, store })
    app.get('/api', async (request) => ({ userId: request.user.userId }))
    await app.ready()
    const server = await listen(app.server)
    try {
      const counts = tally(await getAll(server.base, Array(130).fill(bearer('fastify-user')), 20))
      assert.deepEqual(counts, { 200: 100, 429: 30 })
    } finally {
      await server.close()
      await store.close()
      await conn.close()
    }
  })
})
