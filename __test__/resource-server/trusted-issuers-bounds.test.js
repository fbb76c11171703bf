'use strict'

// Trusted issuers (lib/jwks/issuers.js, lib/jwks/discovery.js) at their edges, against loopback
// servers that publish metadata and key sets as an identity provider does, or misbehave: the
// RFC 8414 path-insertion form, a kid two issuers publish, documents over the byte cap, a
// provider that never answers, redirects, a plain-http jwks_uri, floods of unknown issuers and
// kids (fetches bounded by the cooldown), in both engines.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { generateKeyPairSync, randomUUID } = require('node:crypto')
const express = require('express')
const jose = require('jose')
const authShield = require('../../adapters/express')
const { createTrustedIssuers } = require('../../lib/jwks/index')
const { listen, get } = require('../support/http')

const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

const AUDIENCE = 'https://api.example/'
const bearer = (token) => ({ authorization: `Bearer ${token}` })

/** An RSA key pair as { privateJwk, publicJwk } under `kid`. */
function keyPair(kid) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return { kid, privateJwk: privateKey.export({ format: 'jwk' }), publicJwk: { ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' } }
}

// Each pair's private key imported once: a flood of 300 tokens imported it 300 times.
const signingKeys = new WeakMap()

async function mint(pair, iss) {
  if (!signingKeys.has(pair)) signingKeys.set(pair, await jose.importJWK(pair.privateJwk, 'RS256'))
  const now = Math.floor(Date.now() / 1000)
  return new jose.SignJWT({ jti: randomUUID() })
    .setProtectedHeader({ alg: 'RS256', kid: pair.kid })
    .setIssuer(iss)
    .setSubject('user-1')
    .setAudience(AUDIENCE)
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .sign(signingKeys.get(pair))
}

/**
 * A loopback identity provider whose answers the test sets: `routes[path] = (req, res, base)`.
 * Counts the requests of each path.
 */
async function idp() {
  const routes = {}
  const hits = {}
  const server = http.createServer((req, res) => {
    hits[req.url] = (hits[req.url] || 0) + 1
    const route = routes[req.url]
    if (route === undefined) {
      res.statusCode = 404
      return res.end()
    }
    route(req, res, base)
  })
  const { base, close } = await listen(server)
  const total = () => Object.values(hits).reduce((a, b) => a + b, 0)
  return { base, routes, hits, total, close }
}

const json = (body) => (req, res) => {
  res.setHeader('content-type', 'application/json')
  res.end(typeof body === 'function' ? JSON.stringify(body()) : JSON.stringify(body))
}

async function app(registry, engine) {
  const a = express().use('/api', authShield({ audience: AUDIENCE }, { jwks: registry, engine }), (req, res) => res.json({ iss: req.auth.iss }))
  return listen(http.createServer(a))
}

describe('trusted issuers at their edges', () => {
  let provider
  const pair = keyPair('path-key')

  before(async () => {
    provider = await idp()
  })

  after(async () => {
    await provider.close()
    assert.deepEqual(unhandled, [])
  })

  it('finds RFC 8414 metadata in its path-insertion form when there is no OpenID Connect document', async () => {
    const issuer = `${provider.base}/tenants/a`
    provider.routes['/.well-known/oauth-authorization-server/tenants/a'] = json({ issuer, jwks_uri: `${provider.base}/tenants/a/jwks` })
    provider.routes['/tenants/a/jwks'] = json({ keys: [pair.publicJwk] })
    const registry = createTrustedIssuers([issuer])
    try {
      await registry.ready()
      assert.equal(provider.hits['/tenants/a/.well-known/openid-configuration'], 1)
      assert.equal(registry.status()[0].jwksUri, `${provider.base}/tenants/a/jwks`)
      for (const engine of ['native', 'js']) {
        const server = await app(registry, engine)
        try {
          const ok = await get(`${server.base}/api`, bearer(await mint(pair, issuer)))
          assert.equal(ok.status, 200, ok.body)
          assert.equal(ok.json.iss, issuer)
        } finally {
          await server.close()
        }
      }
    } finally {
      registry.close()
    }
  })

  it('RFC 8414 at the root for an issuer without a path; an RFC 8414 document naming another issuer is refused (mix-up), its jwks_uri never fetched', async () => {
    provider.routes['/.well-known/oauth-authorization-server'] = json({ issuer: provider.base, jwks_uri: `${provider.base}/root/jwks` })
    provider.routes['/root/jwks'] = json({ keys: [pair.publicJwk] })
    const root = createTrustedIssuers([provider.base])
    try {
      await root.ready()
      assert.equal(provider.hits['/.well-known/openid-configuration'], 1)
      assert.equal(root.status()[0].jwksUri, `${provider.base}/root/jwks`)
      const server = await app(root, 'native')
      try {
        assert.equal((await get(`${server.base}/api`, bearer(await mint(pair, provider.base)))).status, 200)
      } finally {
        await server.close()
      }
    } finally {
      root.close()
    }
    const claimed = `${provider.base}/tenants/mixup`
    provider.routes['/.well-known/oauth-authorization-server/tenants/mixup'] = json({ issuer: `${provider.base}/tenants/a`, jwks_uri: `${provider.base}/mixup/jwks` })
    provider.routes['/mixup/jwks'] = json({ keys: [pair.publicJwk] })
    const mixup = createTrustedIssuers([claimed], { retryMinMs: 60_000, retryMaxMs: 60_000 })
    mixup.on('error', () => {})
    try {
      await assert.rejects(mixup.ready(), { code: 'ERR_AUTH_SHIELD_JWKS_DISCOVERY' })
      assert.equal(provider.hits['/mixup/jwks'], undefined, 'the jwks_uri of a mix-up document was fetched')
      assert.equal(mixup.keys, null)
    } finally {
      mixup.close()
    }
  })

  it('follows a jwks_uri on another origin (the documented policy: the metadata came from the issuer), and never the token’s jku', async () => {
    const keyHost = await idp()
    const issuer = `${provider.base}/cross`
    provider.routes['/cross/.well-known/openid-configuration'] = json({ issuer, jwks_uri: `${keyHost.base}/keys` })
    keyHost.routes['/keys'] = json({ keys: [pair.publicJwk] })
    const registry = createTrustedIssuers([issuer])
    try {
      await registry.ready()
      assert.equal(registry.status()[0].jwksUri, `${keyHost.base}/keys`)
      const server = await app(registry, 'native')
      try {
        assert.equal((await get(`${server.base}/api`, bearer(await mint(pair, issuer)))).status, 200)
        // A token naming its own key set: the header is never followed.
        const stranger = keyPair('jku-key')
        keyHost.routes['/attacker'] = json({ keys: [stranger.publicJwk] })
        const now = Math.floor(Date.now() / 1000)
        const withJku = await new jose.SignJWT({})
          .setProtectedHeader({ alg: 'RS256', kid: 'jku-key', jku: `${keyHost.base}/attacker` })
          .setIssuer(issuer)
          .setSubject('u')
          .setAudience(AUDIENCE)
          .setExpirationTime(now + 60)
          .sign(await jose.importJWK(stranger.privateJwk, 'RS256'))
        const r = await get(`${server.base}/api`, bearer(withJku))
        assert.equal(r.status, 401)
        assert.equal(r.json.code, 'unknown_key')
        assert.equal(keyHost.hits['/attacker'], undefined)
      } finally {
        await server.close()
      }
    } finally {
      registry.close()
      await keyHost.close()
    }
  })

  it('per issuer: its own audiences, its own algorithms, and a jwksUri that skips discovery', async () => {
    const issuer = `${provider.base}/per-issuer`
    provider.routes['/per-issuer/keys'] = json({ keys: [pair.publicJwk] })
    const other = `${provider.base}/es-only`
    provider.routes['/es-only/.well-known/openid-configuration'] = json({ issuer: other, jwks_uri: `${provider.base}/per-issuer/keys` })
    const registry = createTrustedIssuers([{ issuer, jwksUri: `${provider.base}/per-issuer/keys`, audience: ['https://orders.example/', AUDIENCE] }])
    const strict = createTrustedIssuers([{ issuer, jwksUri: `${provider.base}/per-issuer/keys`, audience: 'https://orders.example/' }])
    const tenanted = createTrustedIssuers([{ issuer, jwksUri: `${provider.base}/per-issuer/keys`, tenant: 'acme' }])
    // Only ES256 keys for this issuer: its RS256-only document has no usable key, refused.
    const esOnly = createTrustedIssuers([{ issuer: other, algorithms: ['ES256'] }], { retryMinMs: 60_000, retryMaxMs: 60_000 })
    try {
      await registry.ready()
      await strict.ready()
      await tenanted.ready()
      // The registry hands the engine each issuer's keys, audiences, algorithms and tenant.
      const [item] = tenanted.engineIssuers()
      assert.deepEqual([item.issuer, item.tenant, item.keys.length], [issuer, 'acme', 1])
      for (const Authenticator of [require('../..').Authenticator, require('../../js').Authenticator]) {
        const r = new Authenticator({ issuers: tenanted.engineIssuers(), audience: AUDIENCE, rateLimitMax: 0 }).authenticate(`Bearer ${await mint(pair, issuer)}`)
        assert.deepEqual([r.authenticated, r.tenantId, r.tenantSource], [true, 'acme', 'issuer'])
      }
      await assert.rejects(esOnly.ready(), (err) => err.code === 'ERR_AUTH_SHIELD_JWKS_INVALID')
      assert.equal(provider.hits['/per-issuer/.well-known/openid-configuration'], undefined, 'discovery ran despite jwksUri')
      for (const engine of ['native', 'js']) {
        for (const [r, status, code] of [
          [registry, 200, undefined],
          [strict, 401, 'invalid_audience'],
        ]) {
          const server = await app(r, engine)
          try {
            const answer = await get(`${server.base}/api`, bearer(await mint(pair, issuer)))
            assert.equal(answer.status, status, answer.body)
            assert.equal(answer.json.code, code)
          } finally {
            await server.close()
          }
        }
      }
    } finally {
      registry.close()
      strict.close()
      tenanted.close()
      esOnly.close()
    }
    assert.throws(() => createTrustedIssuers([{ issuer, jwksUri: 'http://idp.example/keys' }]), /https:/)
    assert.throws(() => createTrustedIssuers([{ issuer, audience: [] }]), TypeError)
    assert.throws(() => createTrustedIssuers([{ issuer, keys: [] }]), /unknown trusted-issuer field/)
    assert.throws(() => createTrustedIssuers([{ issuer, tenant: 'bad:id' }]), TypeError)
    assert.throws(() => createTrustedIssuers([{ issuer, algorithms: ['none'] }]), RangeError)
    assert.throws(() => createTrustedIssuers([null]), TypeError)
  })

  it('a kid two issuers publish is no ambiguity: each issuer\u2019s token verifies with its own key, never the other\u2019s', async () => {
    const one = await idp()
    const two = await idp()
    const shared1 = keyPair('shared')
    const shared2 = keyPair('shared')
    const own1 = keyPair('own-1')
    for (const [p, keys] of [
      [one, [shared1.publicJwk, own1.publicJwk]],
      [two, [shared2.publicJwk]],
    ]) {
      p.routes['/.well-known/openid-configuration'] = json(() => ({ issuer: p.base, jwks_uri: `${p.base}/jwks` }))
      p.routes['/jwks'] = json({ keys })
    }
    const registry = createTrustedIssuers([one.base, two.base], { cooldownMs: 60_000 })
    try {
      await registry.ready()
      assert.deepEqual(
        registry.keys.map((k) => k.kid),
        ['shared', 'own-1', 'shared'],
      )
      for (const engine of ['native', 'js']) {
        const server = await app(registry, engine)
        try {
          for (const [p, base] of [
            [own1, one.base],
            [shared1, one.base],
            [shared2, two.base],
          ]) {
            assert.equal((await get(`${server.base}/api`, bearer(await mint(p, base)))).status, 200)
          }
          // The same kid, the other issuer's key: that issuer's own "shared" key refuses it.
          for (const [p, base] of [
            [shared1, two.base],
            [shared2, one.base],
          ]) {
            const r = await get(`${server.base}/api`, bearer(await mint(p, base)))
            assert.equal(r.status, 401)
            assert.equal(r.json.code, 'invalid_signature')
          }
        } finally {
          await server.close()
        }
      }
    } finally {
      registry.close()
      await one.close()
      await two.close()
    }
  })

  it('refuses oversized, redirected, slow and plain-http discovery answers; the app keeps answering 503 meanwhile', async () => {
    const cases = {
      big: [(req, res) => res.end(JSON.stringify({ issuer: 'x', pad: 'x'.repeat(10_000) })), 'ERR_AUTH_SHIELD_JWKS_TOO_LARGE'],
      redirect: [
        (req, res) => {
          res.statusCode = 302
          res.setHeader('location', `${provider.base}/elsewhere`)
          res.end()
        },
        'ERR_AUTH_SHIELD_JWKS_FETCH',
      ],
      slow: [() => {}, 'ERR_AUTH_SHIELD_JWKS_TIMEOUT'],
      plainHttp: [(req, res, base) => json({ issuer: `${base}/plainHttp`, jwks_uri: 'http://idp.example/jwks' })(req, res), 'ERR_AUTH_SHIELD_JWKS_DISCOVERY'],
      notAnObject: [json([1, 2]), 'ERR_AUTH_SHIELD_JWKS_DISCOVERY'],
      noJwksUri: [(req, res, base) => json({ issuer: `${base}/noJwksUri` })(req, res), 'ERR_AUTH_SHIELD_JWKS_DISCOVERY'],
    }
    for (const [name, [route, code]] of Object.entries(cases)) {
      provider.routes[`/${name}/.well-known/openid-configuration`] = route
      const registry = createTrustedIssuers([`${provider.base}/${name}`], { maxBytes: 1024, timeoutMs: 300, retryMinMs: 60_000, retryMaxMs: 60_000 })
      try {
        await assert.rejects(registry.ready(), (err) => {
          assert.equal(err.code, code, `${name}: ${err.message}`)
          return true
        })
        assert.equal(registry.keys, null, name)
        const server = await app(registry, 'js')
        try {
          const r = await get(`${server.base}/api`, bearer(await mint(pair, `${provider.base}/${name}`)))
          assert.equal(r.status, 503, name)
          assert.equal(r.json.code, 'keys_unavailable')
        } finally {
          await server.close()
        }
      } finally {
        registry.close()
      }
    }
    assert.equal(provider.hits['/elsewhere'], undefined, 'a redirect was followed')
  })

  // Keys no issuer publishes, made once for both engines (2048-bit RSA takes a while to make).
  let strangerKeys
  const strangers = () => (strangerKeys ??= Array.from({ length: 8 }, (_, i) => keyPair(`stranger-${i}`)))

  for (const engine of ['native', 'js']) {
    it(`${engine}: floods of unknown issuers cost no fetch; floods of unknown kids of a trusted issuer cost at most one fetch per cooldown`, async () => {
      const issuer = `${provider.base}/flood-${engine}`
      provider.routes[`/flood-${engine}/.well-known/openid-configuration`] = json({ issuer, jwks_uri: `${provider.base}/flood-${engine}/jwks` })
      provider.routes[`/flood-${engine}/jwks`] = json({ keys: [pair.publicJwk] })
      const registry = createTrustedIssuers([issuer], { cooldownMs: 60_000 })
      const server = await app(registry, engine)
      try {
        await registry.ready()
        const seen = provider.total()
        const stranger = strangers()
        for (let i = 0; i < 200; i++) {
          const r = await get(`${server.base}/api`, bearer(await mint(stranger[i % 8], `https://random-${i}.example/`)))
          assert.equal(r.json.code, 'untrusted_issuer')
        }
        assert.equal(provider.total(), seen, 'an unknown issuer made a fetch')
        for (let i = 0; i < 100; i++) {
          const r = await get(`${server.base}/api`, bearer(await mint(stranger[i % 8], issuer)))
          assert.equal(r.json.code, 'unknown_key')
        }
        // The first unknown kid is inside the cooldown of the start-up fetch: one fetch set for its end, none now.
        assert.ok(provider.total() - seen <= 1, `unknown kids made ${provider.total() - seen} fetches`)
        assert.equal((await get(`${server.base}/api`, bearer(await mint(pair, issuer)))).status, 200)
      } finally {
        registry.close()
        await server.close()
      }
    })
  }

  for (const engine of ['native', 'js']) {
    it(`${engine}: per issuer, a key set past maxDocumentKeys is refused and the set in force kept; an issuer down is retried at most once per cooldown under a flood`, async () => {
      // The key set bound: a document of 101 keys (over maxDocumentKeys at its top, 100, the
      // engine's per-issuer bound) never replaces the issuer's good set.
      const issuer = `${provider.base}/many-${engine}`
      let published = [pair.publicJwk]
      provider.routes[`/many-${engine}/.well-known/openid-configuration`] = json({ issuer, jwks_uri: `${provider.base}/many-${engine}/jwks` })
      provider.routes[`/many-${engine}/jwks`] = json(() => ({ keys: published }))
      const registry = createTrustedIssuers([issuer], { cooldownMs: 0, maxDocumentKeys: 100 })
      const errors = []
      registry.on('error', (err) => errors.push(err.code))
      const server = await app(registry, engine)
      try {
        await registry.ready()
        published = Array.from({ length: 101 }, (_, i) => ({ ...pair.publicJwk, kid: `many-${i}` }))
        const unknown = await get(`${server.base}/api`, bearer(await mint(keyPair('many-100'), issuer)))
        assert.equal(unknown.status, 401, unknown.body)
        assert.equal(unknown.json.code, 'unknown_key')
        assert.ok(errors.includes('ERR_AUTH_SHIELD_JWKS_INVALID'), errors.join())
        assert.deepEqual(
          registry.status()[0].keys.map((k) => k.kid),
          [pair.kid],
        )
        assert.equal((await get(`${server.base}/api`, bearer(await mint(pair, issuer)))).status, 200)
      } finally {
        registry.close()
        await server.close()
      }

      // The negative side: an issuer whose discovery fails is answered keys_unavailable, and a
      // flood of its tokens asks the provider again at most once per cooldown.
      const down = `${provider.base}/down-${engine}`
      provider.routes[`/down-${engine}/.well-known/openid-configuration`] = (req, res) => {
        res.statusCode = 503
        res.end()
      }
      const downRegistry = createTrustedIssuers([down], { cooldownMs: 60_000, retryMinMs: 60_000, retryMaxMs: 60_000 })
      downRegistry.on('error', () => {})
      const downServer = await app(downRegistry, engine)
      try {
        await assert.rejects(downRegistry.ready())
        const seen = provider.total()
        const token = await mint(pair, down)
        for (let i = 0; i < 100; i++) {
          const r = await get(`${downServer.base}/api`, bearer(token))
          assert.equal(r.status, 503, r.body)
          assert.equal(r.json.code, 'keys_unavailable')
        }
        assert.ok(provider.total() - seen <= 1, `a flood of a down issuer's tokens made ${provider.total() - seen} fetches`)
      } finally {
        downRegistry.close()
        await downServer.close()
      }
    })
  }
})
