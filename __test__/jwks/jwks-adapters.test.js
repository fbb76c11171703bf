'use strict'

// A remote JWKS behind the adapters, end to end on loopback: tokens signed by jose (no code of
// ours) for every supported algorithm, with keys served by a real JWKS server, authenticate
// through auth-shield/express with both engines and through the Fastify plugin; a rotated key
// authenticates after one refetch; a flood of random kids costs at most one fetch per cooldown;
// a broken document leaves the keys in force.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { randomUUID } = require('node:crypto')
const express = require('express')
const Fastify = require('fastify')
const jose = require('jose')
const authShield = require('../../adapters/express')
const authShieldPlugin = require('../../adapters/fastify')
const { createRemoteJwks } = require('../../lib/jwks/index')
const { listen, get } = require('../support/http')
const { startJwksServer, keyPair } = require('../support/jwks-server')

const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

const ALGS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'EdDSA', 'Ed25519']
const ISSUER = 'https://idp.test/'
const pairs = Object.fromEntries(ALGS.map((alg) => [alg, keyPair(alg, `kid-${alg}`)]))
const DOCUMENT = { keys: ALGS.map((alg) => pairs[alg].jwk) }

/** A token jose signs with `pair`'s private key, naming `kid` (the pair's own by default). */
function joseToken(pair, { sub = 'user-1', kid = pair.kid } = {}) {
  return new jose.SignJWT({ email: `${sub}@example.com` })
    .setProtectedHeader({ alg: pair.alg, kid, typ: 'JWT' })
    .setSubject(sub)
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(pair.privateKey)
}

async function expressApp(source, options) {
  const app = express()
  const mw = authShield({ issuer: ISSUER }, { jwks: source, ...options })
  // Counts requests as they reach the middleware (which runs in the same tick).
  const arrivals = { count: 0 }
  app.get(
    '/api',
    (req, res, next) => {
      arrivals.count++
      next()
    },
    mw,
    (req, res) => res.json({ userId: req.user.userId, email: req.user.email }),
  )
  const server = await listen(http.createServer(app))
  return { server, mw, arrivals }
}

const bearer = (token) => ({ authorization: `Bearer ${token}` })

for (const engine of ['native', 'js']) {
  describe(`a remote JWKS through auth-shield/express (${engine} engine)`, () => {
    let jwksServer
    let source
    let app
    before(async () => {
      jwksServer = await startJwksServer()
      jwksServer.serve(DOCUMENT)
      source = createRemoteJwks(jwksServer.url, { cooldownMs: 0 })
      await source.ready()
      app = await expressApp(source, { engine })
    })
    after(async () => {
      source.close()
      await app.server.close()
      await jwksServer.close()
      assert.deepEqual(unhandled, [])
    })

    for (const alg of ALGS) {
      it(`authenticates a ${alg} token signed by jose with a key from the JWKS`, async () => {
        const res = await get(`${app.server.base}/api`, bearer(await joseToken(pairs[alg], { sub: `u-${alg}` })))
        assert.equal(res.status, 200, res.body)
        assert.deepEqual(res.json, { userId: `u-${alg}`, email: `u-${alg}@example.com` })
      })
    }

    it('never takes a key from the token: jku, x5u and an embedded jwk offering the signer\'s key are ignored, their URL never fetched', async () => {
      const evil = await startJwksServer()
      const attacker = keyPair('ES256', 'attacker')
      evil.serve({ keys: [attacker.jwk] })
      try {
        const forged = (kid) =>
          new jose.SignJWT({})
            .setProtectedHeader({ alg: 'ES256', kid, typ: 'JWT', jku: evil.url, x5u: evil.url, jwk: { kty: attacker.jwk.kty, crv: attacker.jwk.crv, x: attacker.jwk.x, y: attacker.jwk.y } })
            .setSubject('admin')
            .setIssuer(ISSUER)
            .setExpirationTime('10m')
            .sign(attacker.privateKey)
        // Under our kid: our key checks the signature, and refuses it.
        const underOurs = await get(`${app.server.base}/api`, bearer(await forged(pairs.ES256.kid)))
        assert.equal(underOurs.status, 401)
        assert.equal(underOurs.json.code, 'invalid_signature')
        // Under the attacker's kid: our own JWKS is refetched (an unknown kid), never theirs.
        const start = jwksServer.fetches
        const underTheirs = await get(`${app.server.base}/api`, bearer(await forged('attacker')))
        assert.equal(underTheirs.json.code, 'unknown_key')
        assert.equal(jwksServer.fetches, start + 1)
        assert.equal(evil.fetches, 0)
      } finally {
        await evil.close()
      }
    })

    it('refuses a token signed by a key the JWKS does not hold', async () => {
      const stranger = keyPair('ES256', 'kid-ES256')
      const res = await get(`${app.server.base}/api`, bearer(await joseToken(stranger)))
      assert.equal(res.status, 401)
      assert.equal(res.json.code, 'invalid_signature')
    })

    it('authenticates a token of a rotated-in key after one refetch; the rotated-out key is gone', async () => {
      const next = keyPair('ES256', `rotated-${engine}`)
      const old = pairs.ES256
      jwksServer.serve({ keys: [...DOCUMENT.keys.filter((k) => k.kid !== old.kid), next.jwk] })
      const start = jwksServer.fetches
      const res = await get(`${app.server.base}/api`, bearer(await joseToken(next, { sub: 'rotated' })))
      assert.equal(res.status, 200, res.body)
      assert.equal(res.json.userId, 'rotated')
      assert.equal(jwksServer.fetches, start + 1)
      // The old kid is unknown now: its refresh changes nothing, the failure stands.
      const gone = await get(`${app.server.base}/api`, bearer(await joseToken(old)))
      assert.equal(gone.status, 401)
      assert.equal(gone.json.code, 'unknown_key')
      jwksServer.serve(DOCUMENT)
      assert.equal(await source.refresh(), true)
    })

    it('keeps the keys in force when the refetched document is broken', async () => {
      const broken = [
        (req, res) => res.end('not json'),
        (req, res) => res.writeHead(500).end(),
        (req, res) => res.end(JSON.stringify({ keys: [keyPair('RS256', 'weak', { modulusLength: 1024 }).jwk] })),
        (req, res) => res.end(JSON.stringify({ keys: [pairs.EdDSA.jwk, { kty: 'XYZ', kid: 'x' }] })),
        (req, res) => res.end(JSON.stringify({ keys: [pairs.EdDSA.jwk, pairs.EdDSA.jwk] })),
      ]
      for (const answer of broken) {
        jwksServer.answer(answer)
        const unknown = await get(`${app.server.base}/api`, bearer(await joseToken(pairs.EdDSA, { kid: 'not-there' })))
        assert.equal(unknown.json.code, 'unknown_key')
        assert.equal(source.lastError.code.startsWith('ERR_AUTH_SHIELD_JWKS_'), true)
        const good = await get(`${app.server.base}/api`, bearer(await joseToken(pairs.EdDSA)))
        assert.equal(good.status, 200, good.body)
      }
      jwksServer.serve(DOCUMENT)
    })

    it('shares one refetch among concurrent requests with unknown kids', async () => {
      const start = jwksServer.fetches
      const release = jwksServer.hold()
      const tokens = await Promise.all(Array.from({ length: 50 }, () => joseToken(pairs.ES384, { kid: randomUUID() })))
      const arrived = app.arrivals.count
      const pending = tokens.map((t) => get(`${app.server.base}/api`, bearer(t)))
      // Every request has failed once and is waiting on the one fetch the server holds.
      while (app.arrivals.count < arrived + tokens.length || jwksServer.fetches === start) {
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      release()
      const answers = await Promise.all(pending)
      assert.ok(answers.every((r) => r.status === 401 && r.json.code === 'unknown_key'))
      assert.equal(jwksServer.fetches, start + 1)
    })
  })
}

describe('a flood of random kids (cooldown)', () => {
  let jwksServer
  before(async () => {
    jwksServer = await startJwksServer()
    jwksServer.serve(DOCUMENT)
  })
  after(() => jwksServer.close())

  it('costs no fetch within the cooldown of the last one', async () => {
    const source = createRemoteJwks(jwksServer.url, { cooldownMs: 60_000 })
    await source.ready()
    const { server } = await expressApp(source)
    const start = jwksServer.fetches
    const tokens = await Promise.all(Array.from({ length: 300 }, () => joseToken(pairs.EdDSA, { kid: randomUUID() })))
    const answers = await Promise.all(tokens.map((t) => get(`${server.base}/api`, bearer(t))))
    assert.ok(answers.every((r) => r.json.code === 'unknown_key'))
    assert.equal(jwksServer.fetches, start)
    // Known keys are unaffected.
    assert.equal((await get(`${server.base}/api`, bearer(await joseToken(pairs.EdDSA)))).status, 200)
    source.close()
    await server.close()
  })

  it('fetches at most once per cooldown while the flood lasts', async () => {
    const cooldownMs = 200
    const start = jwksServer.fetches
    const t0 = Date.now()
    const source = createRemoteJwks(jwksServer.url, { cooldownMs })
    await source.ready()
    const { server } = await expressApp(source)
    const tokens = await Promise.all(Array.from({ length: 40 }, () => joseToken(pairs.ES256, { kid: randomUUID() })))
    for (let wave = 0; wave < 10; wave++) {
      await Promise.all(tokens.map((t) => get(`${server.base}/api`, bearer(t))))
    }
    const elapsed = Date.now() - t0
    // The first fetch, then at most one per started cooldown period.
    const fetches = jwksServer.fetches - start
    assert.ok(fetches <= 1 + Math.ceil(elapsed / cooldownMs), `${fetches} fetches in ${elapsed} ms`)
    source.close()
    await server.close()
  })
})

describe('a remote JWKS through the Fastify plugin', () => {
  let jwksServer
  let source
  let app
  let base
  before(async () => {
    jwksServer = await startJwksServer()
    jwksServer.serve({ keys: [pairs.EdDSA.jwk] })
    source = createRemoteJwks(jwksServer.url, { cooldownMs: 0 })
    await source.ready()
    app = Fastify()
    await app.register(authShieldPlugin, { config: { issuer: ISSUER }, jwks: source, shadow: true })
    app.get('/api', async (request) => ({ userId: request.user.userId }))
    await app.ready()
    base = (await listen(app.server)).base
  })
  after(async () => {
    source.close()
    await app.close()
    await jwksServer.close()
  })

  it('authenticates, and after a rotation authenticates the new key in both engines (shadow mode)', async () => {
    assert.equal((await get(`${base}/api`, bearer(await joseToken(pairs.EdDSA)))).status, 200)
    const next = keyPair('PS256', 'fastify-next')
    jwksServer.serve({ keys: [pairs.EdDSA.jwk, next.jwk] })
    const res = await get(`${base}/api`, bearer(await joseToken(next, { sub: 'next' })))
    assert.equal(res.status, 200, res.body)
    assert.deepEqual(res.json, { userId: 'next' })
    const stats = app.authShield.stats()
    assert.equal(stats.shadow, true)
    assert.equal(stats.mismatches, 0)
  })
})

describe('the jwks option', () => {
  it('refuses a value that is not a source', () => {
    assert.throws(() => authShield({ issuer: ISSUER }, { jwks: { refresh() {} } }), { name: 'TypeError', message: /createRemoteJwks/ })
  })

  it('builds the middleware before the source has any key (no ERR_AUTH_SHIELD_JWKS_NOT_READY)', async () => {
    const jwksServer = await startJwksServer()
    const release = jwksServer.hold()
    const source = createRemoteJwks(jwksServer.url)
    assert.equal(source.keys, null)
    for (const engine of ['native', 'js']) assert.equal(typeof authShield({ issuer: ISSUER }, { jwks: source, engine }), 'function')
    source.close()
    release()
    await jwksServer.close()
  })
})
