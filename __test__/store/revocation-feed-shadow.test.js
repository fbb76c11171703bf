'use strict'

// A RevocationFeed attached to the authenticator of a middleware in shadow mode
// (docs/middleware.md 'Shadow mode', docs/revocation.md): that authenticator is the served
// engine's ShadowedAuthenticator (lib/http/engine.js), and the feed reaches it through the
// store seam (base/store-seam.js revocationWriter), never by replacing its methods. A revocation
// another process writes, and one this process writes, must reach both engines once: the served
// engine refuses the token, the comparison finds no mismatch, and both hold the same count.

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const { createClient } = require('redis')
const authShield = require('../../adapters/express')
const native = require('../..')
const js = require('../../js')
const { RevocationFeed } = require('../../lib/store/revocations')
const { redisSkip, startRedis } = require('../support/redis-server')
const { listen, get } = require('../support/http')
const { rawToken } = require('../support/tokens')

const SECRET = 'revocation-shadow-secret-0123456789abcdef'
const CONFIG = { accessSecret: SECRET, rateLimitMax: 0 }
const now = () => Math.floor(Date.now() / 1000)
const bearer = (token) => ({ authorization: `Bearer ${token}` })
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

describe('a revocation feed on a shadow-mode middleware', { skip: redisSkip() }, () => {
  let redis
  before(async () => {
    redis = await startRedis()
  })
  after(async () => {
    await redis.stop()
  })

  for (const [served, other] of [
    ['native', js],
    ['js', native],
  ]) {
    test(`served ${served}: revocations through the feed, from another process and from this one, reach both engines once (0 mismatches)`, async () => {
      const prefix = `shadow:${served}`
      const clients = [await connect(redis), await connect(redis)]
      const shield = authShield(CONFIG, { engine: served, shadow: true })
      const app = express()
      app.use('/api', shield, (req, res) => res.json({ sub: req.user.userId }))
      const server = await listen(http.createServer(app))
      // This process: the middleware's authenticator. The other process: a plain authenticator of the other engine.
      const here = new RevocationFeed(clients[0], { prefix }).attach(shield.authenticator)
      const elsewhere = new RevocationFeed(clients[1], { prefix })
      const remote = new other.Authenticator(CONFIG)
      elsewhere.attach(remote)
      try {
        await here.start()
        await elsewhere.start()
        const token = (jti, sub) => rawToken({ alg: 'HS256', typ: 'JWT' }, { jti, sub, iat: now() - 10, exp: now() + 600, type: 'access' }, SECRET)
        const [t1, t2, t3, t4] = [token('j1', 'u1'), token('j2', 'u2'), token('j3', 'u3'), token('j4', 'u4')]
        for (const t of [t1, t2, t3, t4]) assert.equal((await get(`${server.base}/api`, bearer(t))).status, 200)

        // Another process revokes a token and a subject: applied here from the stream.
        assert.equal(await remote.revokeToken('j1', now() + 600), 'delivered')
        assert.equal(await remote.revokeSubject('u2'), 'delivered')
        await eventually(() => here.stats().applied >= 2, 5000, 'the other process\'s revocations applied here')

        // This process revokes through the middleware's authenticator: a Promise, as without shadow mode.
        const answer = shield.authenticator.revokeToken('j3', now() + 600)
        assert.ok(answer instanceof Promise)
        assert.equal(await answer, 'delivered')
        assert.equal(await shield.authenticator.revokeSubject('u4'), 'delivered')
        await eventually(() => elsewhere.stats().applied >= 2, 5000, 'this process\'s revocations applied in the other one')

        for (const t of [t1, t2, t3, t4]) {
          const res = await get(`${server.base}/api`, bearer(t))
          assert.equal(res.status, 401)
          assert.equal(res.json.code, 'token_revoked')
        }
        for (const t of [t3, t4]) assert.equal(remote.authenticate(`Bearer ${t}`).errorCode, 'token_revoked')
        const stats = shield.stats()
        assert.equal(stats.requests, 8)
        assert.equal(stats.mismatches, 0)
        // Each engine holds each revocation once (the feed's call reached the shadow engine once).
        const shadowAuthenticator = shield.decision.engine.shadowAuthenticator
        assert.equal(shield.authenticator.revocationCount, 4)
        assert.equal(shadowAuthenticator.revocationCount, 4)

        // close() gives the methods back: plain results again, in both engines.
        await here.close()
        assert.equal(shield.authenticator.revokeToken('j5', now() + 600), undefined)
        assert.equal(shadowAuthenticator.revocationCount, 5)
      } finally {
        await here.close()
        await elsewhere.close()
        await server.close()
        await Promise.all(clients.map((c) => c.quit().catch(() => {})))
      }
    })

    test(`served ${served}: a stale feed with onStale 'closed' refuses in both engines (503, 0 mismatches; was: every request a mismatch)`, async () => {
      const lost = await startRedis()
      const client = await connect(lost)
      const shield = authShield(CONFIG, { engine: served, shadow: true })
      const app = express()
      app.use('/api', shield, (req, res) => res.json({ sub: req.user.userId }))
      const server = await listen(http.createServer(app))
      const feed = new RevocationFeed(client, { prefix: `stale:${served}`, onStale: 'closed', maxRevocationLagMs: 200, commandTimeoutMs: 100, onError() {} }).attach(shield.authenticator)
      try {
        await feed.start()
        const t = rawToken({ alg: 'HS256', typ: 'JWT' }, { jti: 'j', sub: 'u', iat: now() - 10, exp: now() + 600, type: 'access' }, SECRET)
        assert.equal((await get(`${server.base}/api`, bearer(t))).status, 200)
        await lost.kill()
        await eventually(() => feed.stale, 5000, 'the feed stale')
        const res = await get(`${server.base}/api`, bearer(t))
        assert.equal(res.status, 503)
        assert.equal(res.json.code, 'revocation_unavailable')
        assert.equal(shield.decision.engine.shadowAuthenticator.revocationUnavailable, true)
        assert.deepEqual(shield.stats().mismatchesByField, {})
        assert.equal(shield.stats().mismatches, 0)
      } finally {
        await feed.close()
        await server.close()
        await client.disconnect().catch(() => {})
        await lost.stop().catch(() => {})
      }
    })
  }
})
