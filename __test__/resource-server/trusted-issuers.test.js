'use strict'

// Trusted issuers with discovery (lib/jwks/issuers.js): two real OpenID Providers (oidc-provider
// on loopback), each given to the app by its issuer identifier only. Their keys come from
// discovery; a token's `iss` selects its issuer, and a key of one issuer never admits a token
// claiming the other, in every adapter and both engines.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { randomUUID, generateKeyPairSync } = require('node:crypto')
const express = require('express')
const Fastify = require('fastify')
const jose = require('jose')
const authShield = require('../../adapters/express')
const authShieldPlugin = require('../../adapters/fastify')
const Koa = require('koa')
const koaAuthShield = require('../../adapters/koa')
const { createVerifier } = require('../../adapters/fetch')
const { createTrustedIssuers, MAX_ISSUERS } = require('../../lib/jwks/index')
const { listen, get } = require('../support/http')
const { startProvider, rsaJwk, decodeJwt } = require('../support/oidc-provider')
const { routeApp } = require('../support/route-apps')
const ERROR_CODES = require('../../contract/error-codes.json')

const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

const RESOURCE = 'https://orders.api.example/'
const CONFIG = { audience: RESOURCE, requiredScope: 'read:orders' }
const bearer = (token) => ({ authorization: `Bearer ${token}` })
// The tenant the adapter set (req, request, ctx.state, the Verified answer), when one was resolved.
const tenantOf = (on) => (on.tenantId === undefined ? {} : { tenant: on.tenantId, tenantSource: on.tenantSource })

const ADAPTERS = {
  async express(middleware, config = CONFIG) {
    const app = express()
    app.use('/api', authShield(config, middleware), (req, res) => res.json({ sub: req.user.userId, iss: req.auth.iss, ...tenantOf(req) }))
    return listen(http.createServer(app))
  },
  async fastify(middleware, config = CONFIG) {
    const app = Fastify()
    await app.register(async (scope) => {
      await scope.register(authShieldPlugin, { config, ...middleware })
      scope.get('/api', async (request) => ({ sub: request.user.userId, iss: request.auth.iss, ...tenantOf(request) }))
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    return { base: `http://127.0.0.1:${app.server.address().port}`, close: () => app.close() }
  },
  async koa(middleware, config = CONFIG) {
    const app = new Koa()
    app.silent = true
    app.use(koaAuthShield(config, middleware))
    app.use((ctx) => {
      ctx.body = { sub: ctx.state.user.userId, iss: ctx.state.auth.iss, ...tenantOf(ctx.state) }
    })
    return listen(http.createServer(app.callback()))
  },
  async fetch(middleware, config = CONFIG) {
    const verify = createVerifier(config, middleware)
    const server = http.createServer(async (req, res) => {
      const headers = new Headers()
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1])
      const auth = await verify(new Request(`http://${req.headers.host}${req.url}`, { headers }))
      const response = auth.ok ? Response.json({ sub: auth.user.userId, iss: auth.claims.iss, ...tenantOf(auth) }, { headers: auth.headers }) : auth.response
      res.statusCode = response.status
      for (const [name, value] of response.headers) res.setHeader(name, value)
      res.end(Buffer.from(await response.arrayBuffer()))
    })
    return listen(server)
  },
}

/** An access token for `iss` signed with `privateJwk` under `kid` (what a thief of that key could mint). */
async function mint(privateJwk, kid, iss, clientId = 'orders-client') {
  const key = await jose.importJWK(privateJwk, 'RS256')
  const now = Math.floor(Date.now() / 1000)
  return new jose.SignJWT({ scope: 'read:orders', client_id: clientId, jti: randomUUID() })
    .setProtectedHeader({ alg: 'RS256', kid, typ: 'at+jwt' })
    .setIssuer(iss)
    .setSubject(clientId)
    .setAudience(RESOURCE)
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .sign(key)
}

/** Waits (bounded) until `check()` is true; fails the test when it never becomes true. */
async function eventually(check, what) {
  for (let i = 0; i < 200; i++) {
    if (await check()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  assert.fail(`never: ${what}`)
}

describe('trusted issuers with discovery: two real oidc-providers behind one app', () => {
  let opA
  let opB
  let registry
  const tokens = {}

  before(async () => {
    opA = await startProvider({ resource: RESOURCE, clientId: 'client-a' })
    opB = await startProvider({ resource: RESOURCE, clientId: 'client-b' })
    registry = createTrustedIssuers([opA.issuer, opB.issuer])
    await registry.ready()
    tokens.a = await opA.token('read:orders')
    tokens.b = await opB.token('read:orders')
    // Issuer A's own key and kid, claiming issuer B (and the reverse): verifiable by the union of
    // keys, refused because the key is not B's.
    tokens.aAsB = await mint(opA.signingJwk, opA.signingJwk.kid, opB.issuer, 'client-b')
    tokens.bAsA = await mint(opB.signingJwk, opB.signingJwk.kid, opA.issuer, 'client-a')
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const stranger = privateKey.export({ format: 'jwk' })
    tokens.untrusted = await mint(stranger, 'stranger-kid', 'https://untrusted.example/')
    tokens.trailingSlash = await mint(stranger, 'stranger-kid', `${opA.issuer}/`)
    tokens.upperCase = await mint(stranger, 'stranger-kid', opA.issuer.toUpperCase())
  })

  after(async () => {
    registry.close()
    await opA.close()
    await opB.close()
    assert.deepEqual(unhandled, [])
  })

  it('discovers each issuer\u2019s jwks_uri from its metadata, no JWKS URL configured', () => {
    assert.deepEqual(registry.issuers, [opA.issuer, opB.issuer])
    const status = registry.status()
    assert.deepEqual(
      status.map((s) => s.jwksUri),
      [opA.jwksUri, opB.jwksUri],
    )
    assert.ok(status.every((s) => s.lastError === null && s.keys.length === 1))
    assert.equal(registry.keys.length, 2)
  })

  for (const adapter of Object.keys(ADAPTERS)) {
    for (const engine of ['native', 'js']) {
      it(`${adapter}, ${engine}: each issuer's tokens pass; a key of one issuer never admits a token claiming the other; untrusted issuers cost no fetch`, async () => {
        const server = await ADAPTERS[adapter]({ jwks: registry, engine })
        try {
          for (const [t, op] of [
            [tokens.a, opA],
            [tokens.b, opB],
          ]) {
            const ok = await get(`${server.base}/api`, bearer(t))
            assert.equal(ok.status, 200, ok.body)
            assert.deepEqual(ok.json, { sub: op.clientId, iss: op.issuer })
          }
          const seen = opA.requests() + opB.requests()
          for (const t of [tokens.untrusted, tokens.trailingSlash, tokens.upperCase]) {
            const r = await get(`${server.base}/api`, bearer(t))
            assert.equal(r.status, 401)
            assert.equal(r.json.code, 'untrusted_issuer')
          }
          assert.equal(opA.requests() + opB.requests(), seen, 'an untrusted iss made a provider fetch')
          for (const t of [tokens.aAsB, tokens.bAsA]) {
            const r = await get(`${server.base}/api`, bearer(t))
            assert.equal(r.status, 401, r.body)
            assert.equal(r.json.code, 'unknown_key')
          }
        } finally {
          await server.close()
        }
      })
    }
  }

  it('refuses configurations that would undo the key-to-issuer binding', () => {
    assert.throws(() => authShield({ ...CONFIG, issuer: opA.issuer }, { jwks: registry }), /leave config.issuer unset/)
    assert.throws(() => authShield({ ...CONFIG, accessSecret: 'x'.repeat(32) }, { jwks: registry }), /without keys or accessSecret/)
    assert.throws(() => createTrustedIssuers([]), TypeError)
    assert.throws(() => createTrustedIssuers([opA.issuer, opA.issuer]), /listed twice/)
    assert.throws(() => createTrustedIssuers(['http://idp.example/']), /https:/)
    assert.throws(() => createTrustedIssuers(['https://idp.example/?tenant=1']), /query or fragment/)
    assert.throws(() => createTrustedIssuers(Array.from({ length: MAX_ISSUERS + 1 }, (_, i) => `https://idp${i}.example/`)), RangeError)
  })

  it('refuses a discovery document naming another issuer (mix-up), and never fetches its jwks_uri', async () => {
    // A loopback server answering every metadata request with issuer B's document.
    let served = 0
    const impostor = await listen(
      http.createServer((req, res) => {
        served++
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify(opB.metadata))
      }),
    )
    const before = opB.requests()
    const mixed = createTrustedIssuers([impostor.base], { retryMinMs: 60_000, retryMaxMs: 60_000 })
    try {
      await assert.rejects(mixed.ready(), (err) => err.code === 'ERR_AUTH_SHIELD_JWKS_DISCOVERY' && /names another issuer/.test(err.message))
      assert.equal(served, 1)
      assert.equal(opB.requests(), before, 'the impostor document\u2019s jwks_uri was fetched')
      assert.equal(mixed.keys, null)
      assert.equal(mixed.status()[0].jwksUri, null)
      // The app stays up and answers its tokens keys_unavailable (503), not 401 and not a crash.
      const app = express().use('/api', authShield(CONFIG, { jwks: mixed }), (req, res) => res.json({}))
      const server = await listen(http.createServer(app))
      try {
        const forged = await mint(opB.signingJwk, opB.signingJwk.kid, impostor.base)
        const r = await get(`${server.base}/api`, bearer(forged))
        assert.equal(r.status, 503)
        assert.equal(r.json.code, 'keys_unavailable')
        assert.equal(opB.requests(), before)
      } finally {
        await server.close()
      }
    } finally {
      mixed.close()
      await impostor.close()
    }
  })

  it('closed during discovery: ready() rejects with ERR_AUTH_SHIELD_JWKS_CLOSED, nothing left running', async () => {
    opA.setDown(true)
    const closing = createTrustedIssuers([opA.issuer])
    const ready = closing.ready()
    closing.close()
    opA.setDown(false)
    await assert.rejects(ready, (err) => err.code === 'ERR_AUTH_SHIELD_JWKS_CLOSED' || err.code === 'ERR_AUTH_SHIELD_JWKS_FETCH')
    await assert.rejects(closing.ready(), (err) => typeof err.code === 'string' && err.code.startsWith('ERR_AUTH_SHIELD_JWKS_'))
    assert.equal(await closing.refresh(), false)
    assert.equal(closing.keys, null)
  })

  for (const [adapter, engine] of [
    ['express', 'native'],
    ['express', 'js'],
    ['fetch', 'native'],
    ['fetch', 'js'],
  ]) {
    it(`${adapter}, ${engine}: an issuer down at start-up is answered keys_unavailable, the other works, and it recovers when it is back`, async () => {
      opA.setDown(true)
      const started = createTrustedIssuers([opA.issuer, opB.issuer], { retryMinMs: 100, retryMaxMs: 200, cooldownMs: 0 })
      const errors = []
      started.on('error', (err) => errors.push(err.code))
      const server = await ADAPTERS[adapter]({ jwks: started, engine })
      try {
        await eventually(() => started.status()[1].keys !== null, 'issuer B has keys')
        const b = await get(`${server.base}/api`, bearer(tokens.b))
        assert.equal(b.status, 200, b.body)
        const a = await get(`${server.base}/api`, bearer(tokens.a))
        assert.equal(a.status, 503, a.body)
        assert.equal(a.json.code, 'keys_unavailable')
        assert.ok(Number(a.headers['retry-after']) >= 1)
        assert.ok(errors.includes('ERR_AUTH_SHIELD_JWKS_FETCH'), errors.join())
        assert.equal(started.status()[0].lastError.code, 'ERR_AUTH_SHIELD_JWKS_FETCH')
        opA.setDown(false)
        await eventually(async () => (await get(`${server.base}/api`, bearer(tokens.a))).status === 200, 'issuer A recovered')
        assert.equal((await get(`${server.base}/api`, bearer(tokens.aAsB))).json.code, 'unknown_key')
      } finally {
        opA.setDown(false)
        started.close()
        await server.close()
      }
    })
  }

  // Multi-tenant SaaS: one provider per customer tenant. Each issuer maps to its tenant
  // (tenantSource 'issuer'); a request of tenant A's provider that names tenant B (X-Tenant-ID,
  // with enforceTenantMatch) is refused, whatever B's own tokens would get.
  for (const adapter of Object.keys(ADAPTERS)) {
    for (const engine of ['native', 'js']) {
      it(`${adapter}, ${engine}: one provider per tenant: the tenant comes from the issuer; a token of A asking for tenant B is tenant_mismatch`, async () => {
        const tenants = createTrustedIssuers([
          { issuer: opA.issuer, tenant: 'tenant-a' },
          { issuer: opB.issuer, tenant: 'tenant-b' },
        ])
        const server = await ADAPTERS[adapter]({ jwks: tenants, engine }, { ...CONFIG, enforceTenantMatch: true })
        try {
          await tenants.ready()
          for (const [t, op, tenant] of [
            [tokens.a, opA, 'tenant-a'],
            [tokens.b, opB, 'tenant-b'],
          ]) {
            const ok = await get(`${server.base}/api`, bearer(t))
            assert.equal(ok.status, 200, ok.body)
            assert.deepEqual(ok.json, { sub: op.clientId, iss: op.issuer, tenant, tenantSource: 'issuer' })
            // Naming its own tenant (ASCII case folded) is fine; naming the other one is not.
            const own = await get(`${server.base}/api`, { ...bearer(t), 'x-tenant-id': tenant.toUpperCase() })
            assert.equal(own.status, 200, own.body)
          }
          for (const [t, other] of [
            [tokens.a, 'tenant-b'],
            [tokens.b, 'tenant-a'],
          ]) {
            const r = await get(`${server.base}/api`, { ...bearer(t), 'x-tenant-id': other })
            assert.equal(r.status, 403, r.body)
            assert.equal(r.json.code, 'tenant_mismatch')
          }
          // A's key under B's issuer is still B's key question, never A's tenant.
          assert.equal((await get(`${server.base}/api`, bearer(tokens.aAsB))).json.code, 'unknown_key')
        } finally {
          tenants.close()
          await server.close()
        }
      })
    }
  }

  // The resilience of the remote key source, per issuer: a provider down mid-run keeps its keys
  // in force (stale-if-error) until cacheMaxAgeMs + staleIfErrorMs, then they are withdrawn
  // (503 keys_unavailable, that issuer only) and installed again once it is back. Both engines
  // live through one outage of A side by side (each its own registry and app), so its windows
  // are waited out once.
  it('express, native and js: an issuer down mid-run: stale keys served, then withdrawn (503) for it alone, back when it is', async () => {
    const runs = []
    try {
      for (const engine of ['native', 'js']) {
        const stale = createTrustedIssuers([opA.issuer, opB.issuer], { cacheMaxAgeMs: 300, staleIfErrorMs: 3_000, retryMinMs: 100, retryMaxMs: 200, cooldownMs: 100 })
        const run = { engine, stale, expired: [], server: null }
        runs.push(run)
        stale.on('error', () => {})
        stale.on('expired', (err) => run.expired.push(err.code))
      }
      await Promise.all(runs.map(async (run) => {
        await run.stale.ready()
        run.server = await ADAPTERS.express({ jwks: run.stale, engine: run.engine })
      }))
      for (const { engine, server } of runs) assert.equal((await get(`${server.base}/api`, bearer(tokens.a))).status, 200, engine)
      opA.setDown(true)
      await Promise.all(runs.map(({ engine, stale }) => eventually(() => stale.status()[0].lastError !== null, `${engine}: a failed refresh of A's key set`)))
      // Stale, within its maximum age: still in force.
      for (const { engine, server } of runs) {
        const during = await get(`${server.base}/api`, bearer(tokens.a))
        assert.equal(during.status, 200, `${engine}: ${during.body}`)
      }
      await Promise.all(runs.map(({ engine, expired }) => eventually(() => expired.length > 0, `${engine}: A's key set withdrawn`)))
      for (const { engine, server, expired } of runs) {
        assert.deepEqual(expired, ['ERR_AUTH_SHIELD_JWKS_EXPIRED'], engine)
        const withdrawn = await get(`${server.base}/api`, bearer(tokens.a))
        assert.equal(withdrawn.status, 503, `${engine}: ${withdrawn.body}`)
        assert.equal(withdrawn.json.code, 'keys_unavailable', engine)
        assert.equal((await get(`${server.base}/api`, bearer(tokens.b))).status, 200, engine)
      }
      opA.setDown(false)
      await Promise.all(runs.map(({ engine, server }) => eventually(async () => (await get(`${server.base}/api`, bearer(tokens.a))).status === 200, `${engine}: A back`)))
    } finally {
      opA.setDown(false)
      for (const { stale, server } of runs) {
        stale.close()
        if (server !== null) await server.close()
      }
    }
  })

  // The issue's "done when": an app lists the two providers' issuer URLs and each route its
  // scopes; no key or JWKS URL copied by hand.
  const SCOPED_ROUTES = {
    '/read': (m) => [m.requireScopes('read:orders')],
    '/write': (m) => [m.requireScopes('write:orders')],
    '/either': (m) => [m.requireAnyScope('write:orders', 'admin')],
  }
  for (const adapter of ['express', 'fastify', 'koa', 'fetch']) {
    for (const engine of ['native', 'js']) {
      it(`${adapter}, ${engine}: per-route scopes over both providers: 200 where granted, 403 insufficient_scope naming the route's scopes`, async () => {
        const writer = await opB.token('read:orders write:orders')
        const server = await routeApp(adapter, { audience: RESOURCE }, { jwks: registry, engine }, SCOPED_ROUTES)
        try {
          const answer = async (path, t) => {
            const r = await get(`${server.base}${path}`, bearer(t))
            return [r.status, r.status === 200 ? r.json.sub : r.json.code, r.headers['www-authenticate'] ?? null]
          }
          assert.deepEqual(await answer('/read', tokens.a), [200, opA.clientId, null])
          assert.deepEqual(await answer('/read', writer), [200, opB.clientId, null])
          assert.deepEqual(await answer('/write', writer), [200, opB.clientId, null])
          assert.deepEqual(await answer('/either', writer), [200, opB.clientId, null])
          const denied = `Bearer error="insufficient_scope", error_description="${ERROR_CODES.insufficient_scope.message}"`
          assert.deepEqual(await answer('/write', tokens.a), [403, 'insufficient_scope', `${denied}, scope="write:orders"`])
          assert.deepEqual(await answer('/either', tokens.a), [403, 'insufficient_scope', `${denied}, scope="write:orders admin"`])
          assert.deepEqual((await answer('/read', tokens.aAsB)).slice(0, 2), [401, 'unknown_key'])
        } finally {
          await server.close()
        }
      })
    }
  }

  // Key rotation of one provider behind a registry found by discovery: the new key is picked up
  // on its unknown kid (that issuer's key set only), the old one refused once withdrawn; the
  // other issuer is untouched.
  for (const engine of ['native', 'js']) {
    it(`express, ${engine}: one provider rotates its keys: picked up by discovery's key set, the withdrawn kid refused, the other issuer untouched`, async () => {
      const [k1, k2, k3] = [rsaJwk(), rsaJwk(), rsaJwk()]
      const rotating = await startProvider({ resource: RESOURCE, clientId: 'client-r', keys: [k1] })
      const registry2 = createTrustedIssuers([rotating.issuer, opB.issuer], { cooldownMs: 0 })
      registry2.on('error', () => {})
      await registry2.ready()
      const server = await ADAPTERS.express({ jwks: registry2, engine })
      try {
        const status = async (t) => {
          const r = await get(`${server.base}/api`, bearer(t))
          return r.status === 200 ? 200 : `${r.status} ${r.json.code}`
        }
        const t1 = await rotating.token('read:orders')
        assert.equal(await status(t1), 200)
        rotating.rotateKeys([k2, k1])
        const t2 = await rotating.token('read:orders')
        assert.equal(decodeJwt(t2).header.kid, k2.kid)
        assert.equal(await status(t2), 200)
        assert.equal(await status(t1), 200)
        rotating.rotateKeys([k3, k2])
        const t3 = await rotating.token('read:orders')
        assert.equal(await status(t3), 200)
        assert.equal(await status(t1), '401 unknown_key')
        assert.deepEqual(
          registry2.status()[0].keys.map((k) => k.kid),
          [k3.kid, k2.kid],
        )
        assert.equal(await status(tokens.b), 200)
      } finally {
        registry2.close()
        await server.close()
        await rotating.close()
      }
    })
  }
})
