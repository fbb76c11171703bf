'use strict'

// Revocations of introspected (opaque) tokens shared through a real redis-server (issue 36 §1:
// "Revocation (revokeToken, revokeSubject, the Redis feed) applies to introspected tokens too").
// Two apps stand for two processes: each its own Express middleware, its own trusted issuers
// introspecting a real oidc-provider's opaque tokens, its own Redis connection, rate-limit store
// and RevocationFeed on one prefix. A revokes a token by its jti (the `sha256:` id both apps derive
// from the token) or its subject; B refuses it, whether B had it cached or never saw it, and a
// process C started afterwards loads the set. Every pair of engines (native/js for A and B).

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const { createClient } = require('redis')
const authShield = require('../../adapters/express')
const { createTrustedIssuers } = require('../../lib/jwks/index')
const { createRedisStore, RevocationFeed } = require('../../lib/store/index')
const { listen, get } = require('../support/http')
const { redisSkip, startRedis } = require('../support/redis-server')
const { startOpaqueProvider } = require('./provider')

const RESOURCE = 'https://orders.api.example/'
const bearer = (token) => ({ authorization: `Bearer ${token}` })
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves once `check()` resolves true; fails after `ms`. */
async function eventually(check, ms, what) {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`not within ${ms} ms: ${what}`)
    await sleep(10)
  }
}

const unhandled = []
const onUnhandled = (reason) => unhandled.push(reason)

describe('introspected tokens revoked through the Redis feed', { skip: redisSkip() }, () => {
  let op
  let redis
  before(async () => {
    process.on('unhandledRejection', onUnhandled)
    ;[op, redis] = await Promise.all([startOpaqueProvider({ resource: RESOURCE }), startRedis()])
  })
  after(async () => {
    process.off('unhandledRejection', onUnhandled)
    await Promise.all([op?.close(), redis?.stop()])
    assert.deepEqual(unhandled, [])
  })

  /** One "process": an app on /api answering { sub, jti, exp }, with its own client, store and feed on `prefix`. */
  async function process_(engine, prefix, cleanup) {
    const client = createClient({ url: redis.url })
    client.on('error', () => {})
    await client.connect()
    cleanup.push(() => client.destroy())
    const store = createRedisStore(client, { prefix: `${prefix}:limits:` })
    cleanup.push(() => store.close())
    const issuers = createTrustedIssuers([{ issuer: op.issuer, audience: RESOURCE, introspection: op.introspection() }])
    cleanup.push(() => issuers.close())
    const shield = authShield({}, { jwks: issuers, engine, store })
    const feed = new RevocationFeed(client, { prefix }).attach(shield.authenticator)
    cleanup.push(() => feed.close())
    await feed.start()
    const app = express()
    app.get('/api', shield, (req, res) => res.json({ sub: req.auth.sub, jti: req.auth.jti, exp: req.auth.exp }))
    const server = await listen(http.createServer(app))
    cleanup.push(() => server.close())
    const ask = async (token) => {
      const r = await get(`${server.base}/api`, bearer(token))
      return r.status === 200 ? r.json : r.json.code
    }
    return { authenticator: shield.authenticator, feed, ask }
  }

  for (const [engineA, engineB] of [
    ['native', 'native'],
    ['js', 'js'],
    ['native', 'js'],
    ['js', 'native'],
  ]) {
    it(`A (${engineA}) revokes an introspected token's jti, then its subject; B (${engineB}) refuses them, cached or not`, async () => {
      const cleanup = []
      try {
        const prefix = `introspected-${engineA}-${engineB}`
        const a = await process_(engineA, prefix, cleanup)
        const b = await process_(engineB, prefix, cleanup)
        const [seen, unseen, other] = await Promise.all([op.token('read:orders'), op.token('read:orders'), op.token('read:orders')])
        const passA = await a.ask(seen)
        assert.equal(passA.sub, 'orders-client', JSON.stringify(passA))
        // Both apps derive the same id from the token: B's cached pass says the same jti.
        assert.equal((await b.ask(seen)).jti, passA.jti)
        assert.equal((await b.ask(other)).sub, 'orders-client')

        // By jti, through A's feed: enforced by A at once, by B once the feed delivers it.
        assert.equal(await a.authenticator.revokeToken(passA.jti, passA.exp, { iss: op.issuer }), 'delivered')
        assert.equal(await a.ask(seen), 'token_revoked')
        await eventually(async () => (await b.ask(seen)) === 'token_revoked', 3000, 'B refuses the cached token A revoked')
        assert.equal((await b.ask(other)).sub, 'orders-client')

        // A token B never introspected, revoked by A: once B's feed applied it, B's first look
        // at the token is a refusal (the revocation is checked on the introspected answer).
        const passUnseen = await a.ask(unseen)
        const applied = b.feed.stats().applied
        assert.equal(await a.authenticator.revokeToken(passUnseen.jti, passUnseen.exp, { iss: op.issuer }), 'delivered')
        await eventually(() => b.feed.stats().applied > applied, 3000, "B's feed applies the revocation")
        assert.equal(await b.ask(unseen), 'token_revoked')

        // By subject (the client id of a client_credentials token), through A's feed.
        await a.authenticator.revokeSubject('orders-client', { iss: op.issuer, issuedBeforeSec: Math.floor(Date.now() / 1000) + 1 })
        await eventually(async () => (await b.ask(other)) === 'token_revoked', 3000, 'B refuses the subject A revoked')
        assert.equal(await a.ask(other), 'token_revoked')

        // A process started now (B's engine) loads the set: its first look at each is a refusal,
        // a token of the subject issued after the cut-off passes.
        const c = await process_(engineB, prefix, cleanup)
        for (const token of [seen, unseen, other]) assert.equal(await c.ask(token), 'token_revoked')
        await sleep(1100)
        assert.equal((await c.ask(await op.token('read:orders'))).sub, 'orders-client')
      } finally {
        for (const done of cleanup.reverse()) await done()
      }
    })
  }
})
