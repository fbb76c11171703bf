'use strict'

// A RevocationFeed attached to the `authenticator` of an `expressjwt` middleware with a secret
// getter (lib/http/keyed-authenticator.js: one engine per key the getter returns). Before, attach
// refused it (TypeError: not an Authenticator), so such an app could not share revocations at all.
// Now the feed reaches every key's engine, those made after a revocation too: a revocation another
// process writes refuses the token whichever key signed it, one made here returns the feed's
// Promise and reaches the other process, and a stale feed with onStale 'closed' makes every
// key's engine answer 503. Real redis-server, real Express, both engines.

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const jsonwebtoken = require('jsonwebtoken')
const { createClient } = require('redis')
const { expressjwt } = require('../../adapters/express')
const native = require('../..')
const js = require('../../js')
const { RevocationFeed } = require('../../lib/store/revocations')
const { revocationSeam } = require('../../base/store-seam')
const { redisSkip, startRedis } = require('../support/redis-server')
const { listen, request } = require('../support/http')

const KEYS = { a: 'tenant-a-feed-secret-0123456789abcdef', b: 'tenant-b-feed-secret-0123456789abcdef', c: 'tenant-c-feed-secret-0123456789abcdef' }
const now = () => Math.floor(Date.now() / 1000)
const sign = (tenant, claims) => jsonwebtoken.sign({ sub: 'alice', iss: tenant, iat: now() - 10, exp: now() + 600, ...claims }, KEYS[tenant])
const secret = (req, token) => KEYS[token.payload.iss]
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function eventually(check, ms, what) {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`not within ${ms} ms: ${what}`)
    await sleep(5)
  }
}

async function connect(redis) {
  const c = createClient({ url: redis.url, socket: { reconnectStrategy: () => 50 } })
  c.on('error', () => {})
  await c.connect()
  return c
}

describe("a revocation feed on an expressjwt secret getter's authenticator", { skip: redisSkip() }, () => {
  let redis
  before(async () => {
    redis = await startRedis()
  })
  after(async () => {
    await redis.stop()
  })

  for (const [engine, other] of [
    ['native', js],
    ['js', native],
  ]) {
    test(`${engine}: every key's engine, made before or after, takes the feed's revocations (was: attach threw)`, async () => {
      const prefix = `keyed:${engine}`
      const clients = [await connect(redis), await connect(redis)]
      const mw = expressjwt({ secret, algorithms: ['HS256'], engine })
      const app = express()
      app.get('/orders', mw, (req, res) => res.json({ sub: req.auth.sub }))
      app.use((err, req, res, next) => res.status(err.status || 500).json({ errorCode: err.errorCode }))
      const server = await listen(http.createServer(app))
      const get = (t) => request(`${server.base}/orders`, { headers: { authorization: `Bearer ${t}` } }).then((r) => [r.status, r.json.errorCode ?? r.json.sub])
      const here = new RevocationFeed(clients[0], { prefix }).attach(mw.authenticator)
      const remote = new other.Authenticator({ accessSecret: KEYS.a, rateLimitMax: 0 })
      const elsewhere = new RevocationFeed(clients[1], { prefix }).attach(remote)
      try {
        await here.start()
        await elsewhere.start()
        const [ta, tb, tbob] = [sign('a', { jti: 'ja' }), sign('b', { jti: 'jb' }), sign('b', { sub: 'bob' })]
        assert.deepEqual(await get(ta), [200, 'alice'])
        // Key a's engine exists; key b's is made after the revocations.
        assert.equal(await remote.revokeToken('ja', now() + 600, { iss: 'a' }), 'delivered')
        assert.equal(await remote.revokeSubject('bob', { iss: 'b' }), 'delivered')
        await eventually(() => here.stats().applied >= 2, 5000, "the other process's revocations applied here")
        assert.deepEqual(await get(ta), [401, 'token_revoked'])
        assert.deepEqual(await get(tbob), [401, 'token_revoked'])
        assert.deepEqual(await get(tb), [200, 'alice'])

        // Made here: the feed's Promise, enforced at once by every key's engine, and elsewhere.
        const answer = mw.authenticator.revokeToken('jb', now() + 600, { iss: 'b' })
        assert.ok(answer instanceof Promise)
        assert.deepEqual(await get(tb), [401, 'token_revoked'])
        assert.equal(await answer, 'delivered')
        await eventually(() => elsewhere.stats().applied >= 1, 5000, "this process's revocation applied in the other one")
        assert.equal(remote.authenticate(`Bearer ${jsonwebtoken.sign({ sub: 'x', jti: 'jb', iss: 'b', exp: now() + 600 }, KEYS.a)}`).errorCode, 'token_revoked')
        // Arguments an engine refuses still throw at once, before anything is written.
        assert.throws(() => mw.authenticator.revokeToken('', now() + 60), /jti must not be empty/)

        // A stale feed with onStale 'closed' reaches every key's engine, one made later too.
        revocationSeam(mw.authenticator).setRevocationUnavailable(mw.authenticator, true)
        assert.deepEqual(await get(sign('a', { jti: 'other' })), [503, 'revocation_unavailable'])
        assert.deepEqual(await get(sign('c', { jti: 'new-key' })), [503, 'revocation_unavailable'])
        revocationSeam(mw.authenticator).setRevocationUnavailable(mw.authenticator, false)
        assert.deepEqual(await get(sign('c', { jti: 'new-key' })), [200, 'alice'])

        // close() gives the plain methods back.
        await here.close()
        assert.equal(mw.authenticator.revokeToken('jc', now() + 600, { iss: 'c' }), undefined)
        assert.deepEqual(await get(sign('c', { jti: 'jc' })), [401, 'token_revoked'])
      } finally {
        await here.close()
        await elsewhere.close()
        await server.close()
        await Promise.all(clients.map((c) => c.quit().catch(() => {})))
      }
    })
  }
})
