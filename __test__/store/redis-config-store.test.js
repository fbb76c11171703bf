'use strict'

// `new Authenticator({ …, store })` (both engines) against a real redis-server, node-redis and
// ioredis: the authenticator attaches itself to the store as `store.attach(authenticator)` does,
// the middleware built on it waits in that store's recovery, the same store given to the
// middleware too is accepted and a different one refused, and bad values get coded errors.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const authShield = require('../../adapters/express')
const native = require('../..')
const js = require('../../js')
const { createRedisStore } = require('../../lib/store/index')
const { redisSkip, startRedis } = require('../support/redis-server')
const { CLIENT_KINDS, connectClient } = require('../support/redis-clients')
const { token } = require('../support/tokens')
const { listen, get } = require('../support/http')
const { plumbing } = require('../support/store-seam')

const SECRET = 'redis-config-store-test-secret-0123456789'
const NOW = Math.floor(Date.now() / 1000)
const bearer = (sub) => `Bearer ${token({ sub, exp: NOW + 600 }, SECRET)}`
const ENGINES = [
  ['native', native],
  ['js', js],
]

describe('the store option of new Authenticator, with a real redis-server', { skip: redisSkip() }, () => {
  let redis
  before(async () => (redis = await startRedis()))
  after(() => redis.stop())

  for (const kind of CLIENT_KINDS) {
    for (const [engine, m] of ENGINES) {
      it(`shares the limit through the store from construction (${kind}, ${engine} engine)`, async () => {
        const conn = await connectClient(kind, redis.url)
        const store = createRedisStore(conn.client, { prefix: `cfg:${kind}:${engine}:`, lease: 2 })
        try {
          const auth = new m.Authenticator({ accessSecret: SECRET, rateLimitMax: 3, rateLimitRefillPerSec: 0.001, store })
          const h = bearer('ada')
          assert.equal(auth.authenticate(h).errorCode, store.pendingCode)
          const verdicts = []
          for (let i = 0; i < 5; i++) {
            let r = auth.authenticate(h)
            if (r.errorCode === store.pendingCode) {
              await store.flush()
              r = auth.authenticate(h)
            }
            verdicts.push(r.authenticated ? 'ok' : r.errorCode)
          }
          assert.deepEqual(verdicts, ['ok', 'ok', 'ok', 'rate_limited', 'rate_limited'])
          assert.equal(plumbing(auth).sharedLimitKeys, 1)
          // The bucket is Redis's: a second process (here a second store and authenticator)
          // finds it empty.
          const other = createRedisStore(conn.client, { prefix: `cfg:${kind}:${engine}:`, lease: 2 })
          const second = new m.Authenticator({ accessSecret: SECRET, rateLimitMax: 3, rateLimitRefillPerSec: 0.001, store: other })
          second.authenticate(h)
          await other.flush()
          assert.equal(second.authenticate(h).errorCode, 'rate_limited')
          await other.close()
        } finally {
          await store.close()
          await conn.close()
        }
      })
    }
  }

  for (const [engine, m] of ENGINES) {
    it(`a middleware on an authenticator built with a store waits in that store's recovery (${engine} engine)`, async () => {
      const conn = await connectClient('node-redis', redis.url)
      const store = createRedisStore(conn.client, { prefix: `cfg-mw:${engine}:` })
      const auth = new m.Authenticator({ accessSecret: SECRET, rateLimitMax: 10, rateLimitRefillPerSec: 0.001, store })
      const app = express()
      // The same store in both places is one store; without options.store it is found too.
      app.get('/both', authShield(auth, { store }), (req, res) => res.json({ ok: true }))
      const app2 = express()
      app2.get('/config', authShield(auth), (req, res) => res.json({ ok: true }))
      const server = await listen(http.createServer(app))
      const server2 = await listen(http.createServer(app2))
      try {
        assert.equal((await get(`${server.base}/both`, { authorization: bearer('bob') })).status, 200)
        assert.equal(store.stats.recoveries, 1)
        assert.equal((await get(`${server2.base}/config`, { authorization: bearer('carl') })).status, 200)
        assert.equal(store.stats.recoveries, 2)
        assert.equal(plumbing(auth).sharedLimitKeys, 2)
      } finally {
        await server.close()
        await server2.close()
        await store.close()
        await conn.close()
      }
    })

    it(`refuses a different store in the middleware, and bad values, with coded errors (${engine} engine)`, async () => {
      const conn = await connectClient('ioredis', redis.url)
      const store = createRedisStore(conn.client, { prefix: `cfg-bad:${engine}:` })
      const other = createRedisStore(conn.client, { prefix: `cfg-bad2:${engine}:` })
      try {
        const auth = new m.Authenticator({ accessSecret: SECRET, store })
        assert.throws(() => authShield(auth, { store: other }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /another store/ })
        assert.throws(() => other.attach(auth), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: /another store/ })
        // A config object given to the middleware: the same store twice is fine, two are not.
        assert.equal(typeof authShield({ accessSecret: SECRET, store }, { store, engine }), 'function')
        assert.throws(() => authShield({ accessSecret: SECRET, store }, { store: other, engine }), {
          name: 'TypeError',
          code: 'ERR_INVALID_ARG_TYPE',
          message: 'config.store and options.store are different stores: give one',
        })
        for (const bad of [{}, 42, 'redis://localhost', { attach() {} }, []]) {
          assert.throws(() => new m.Authenticator({ accessSecret: SECRET, store: bad }), {
            name: 'TypeError',
            code: 'ERR_INVALID_ARG_TYPE',
            message: 'config.store must be a store from auth-shield/redis',
          })
        }
        // null and undefined mean no store: local buckets, no pending answer.
        for (const none of [null, undefined]) {
          const local = new m.Authenticator({ accessSecret: SECRET, store: none })
          assert.equal(local.authenticate(bearer('dan')).authenticated, true)
          assert.equal(plumbing(local).sharedLimitKeys, 0)
        }
        assert.throws(() => new m.Authenticator({ accessSecret: SECRET, rateLimitMax: 0, store }), { code: 'ERR_AUTH_SHIELD_SHARED_LIMIT' })
        // The store's options and the core's are read as usual: a misspelt option still fails.
        assert.throws(() => new m.Authenticator({ accessSecret: SECRET, store, rateLimtMax: 5 }), { code: 'ERR_INVALID_ARG_TYPE', message: 'config.rateLimtMax is not a known option' })
        // Only the constructor takes a store: shared authenticators and the one-shot refuse it.
        assert.throws(() => m.authenticateRequest(bearer('eve'), null, null, { accessSecret: SECRET, store }), {
          code: 'ERR_INVALID_ARG_TYPE',
          message: 'config.store is not a known option',
        })
        await other.close()
        assert.throws(() => new m.Authenticator({ accessSecret: SECRET, store: other }), { code: 'ERR_AUTH_SHIELD_STORE_CLOSED' })
      } finally {
        await store.close()
        await other.close()
        await conn.close()
      }
    })
  }
})
