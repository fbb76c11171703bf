'use strict'

// Opaque access tokens from a real oidc-provider, introspected (issue 36 §1, §3): the cache
// (one introspection per token, whatever the load), coalescing, the ends of an entry (the token's
// exp, cacheMaxSec), every client authentication, RFC 9701 signed answers, DPoP-bound opaque
// tokens, scopes, revocation, both engines.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const dpop = require('dpop')
const authShield = require('../../adapters/express')
const { requireScopes } = require('../../adapters/express')
const { createTrustedIssuers } = require('../../lib/jwks/index')
const { listen, get } = require('../support/http')
const { startOpaqueProvider } = require('./provider')

const RESOURCE = 'https://orders.api.example/'
const ENGINES = ['native', 'js']
const bearer = (token) => ({ authorization: `Bearer ${token}` })
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

/** An Express app: the middleware on /api (and /api/write needing write:orders) answering what it saw. */
async function app(config, options) {
  const a = express()
  const shield = authShield(config, options)
  const seen = (req, res) => res.json({ sub: req.user.userId, iss: req.auth.iss, scope: req.auth.scope, jti: req.auth.jti, aud: req.auth.aud })
  a.get('/api/write', shield, requireScopes('write:orders'), seen)
  a.get('/api', shield, seen)
  a.use((err, req, res, next) => res.status(500).json({ thrown: err.code ?? String(err) }))
  const server = await listen(http.createServer(a))
  return { ...server, shield }
}

describe('opaque tokens of a real oidc-provider, introspected', () => {
  let op
  before(async () => {
    op = await startOpaqueProvider({ resource: RESOURCE })
  })
  after(async () => {
    await op.close()
    assert.deepEqual(unhandled, [])
  })

  for (const engine of ENGINES) {
    it(`${engine}: 50 sequential requests with one token make 1 introspection; the claims are the answer's`, async () => {
      const issuers = createTrustedIssuers([{ issuer: op.issuer, audience: RESOURCE, introspection: op.introspection() }])
      const server = await app({}, { jwks: issuers, engine })
      try {
        const token = await op.token('read:orders')
        const before = op.introspections()
        for (let i = 0; i < 50; i++) {
          const r = await get(`${server.base}/api`, bearer(token))
          assert.equal(r.status, 200, JSON.stringify(r.json))
          if (i === 0) {
            assert.equal(r.json.sub, 'orders-client')
            assert.equal(r.json.iss, op.issuer)
            assert.equal(r.json.scope, 'read:orders')
            assert.equal(r.json.aud, RESOURCE)
            assert.match(r.json.jti, /^sha256:[A-Za-z0-9_-]{43}$/)
          }
        }
        assert.equal(op.introspections() - before, 1)
        // A route requirement reads the introspected scope: 403 insufficient_scope, no new call.
        const write = await get(`${server.base}/api/write`, bearer(token))
        assert.equal(write.status, 403)
        assert.equal(write.json.code, 'insufficient_scope')
        assert.equal(op.introspections() - before, 1)
        // An unknown opaque token: one introspection, 401 token_inactive, then held (no call).
        for (let i = 0; i < 3; i++) {
          const r = await get(`${server.base}/api`, bearer('not-a-token-the-provider-issued'))
          assert.equal(r.status, 401)
          assert.equal(r.json.code, 'token_inactive')
          assert.match(r.headers['www-authenticate'], /error="invalid_token"/)
        }
        assert.equal(op.introspections() - before, 2)
      } finally {
        await server.close()
        issuers.close()
      }
    })

    it(`${engine}: 50 concurrent requests with one new token make 1 introspection`, async () => {
      const issuers = createTrustedIssuers([{ issuer: op.issuer, audience: RESOURCE, introspection: op.introspection() }])
      const server = await app({}, { jwks: issuers, engine })
      try {
        const token = await op.token('read:orders write:orders')
        op.setDelay(50)
        const before = op.introspections()
        const answers = await Promise.all(Array.from({ length: 50 }, () => get(`${server.base}/api/write`, bearer(token))))
        op.setDelay(0)
        assert.deepEqual([...new Set(answers.map((r) => r.status))], [200])
        assert.equal(op.introspections() - before, 1)
      } finally {
        op.setDelay(0)
        await server.close()
        issuers.close()
      }
    })
  }

  for (const method of ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'jwt_response']) {
    it(`the resource server authenticates with ${method}`, async () => {
      const issuers = createTrustedIssuers([{ issuer: op.issuer, audience: RESOURCE, introspection: op.introspection(method) }])
      if (method === 'jwt_response') await issuers.ready()
      const server = await app({}, { jwks: issuers })
      try {
        const token = await op.token('read:orders')
        const r = await get(`${server.base}/api`, bearer(token))
        assert.equal(r.status, 200, JSON.stringify(r.json))
        assert.equal(r.json.sub, 'orders-client')
      } finally {
        await server.close()
        issuers.close()
      }
    })
  }

  it('a wrong client secret is 503 introspection_unavailable with Retry-After, never a pass', async () => {
    const issuers = createTrustedIssuers([{ issuer: op.issuer, audience: RESOURCE, introspection: op.introspection('client_secret_basic', { clientSecret: 'wrong-secret-0123456789' }) }])
    const server = await app({}, { jwks: issuers })
    try {
      const r = await get(`${server.base}/api`, bearer(await op.token('read:orders')))
      assert.equal(r.status, 503)
      assert.equal(r.json.code, 'introspection_unavailable')
      assert.ok(Number(r.headers['retry-after']) >= 1)
    } finally {
      await server.close()
      issuers.close()
    }
  })

  it('a token for another audience is refused (RFC 8707), as a JWT would be', async () => {
    const issuers = createTrustedIssuers([{ issuer: op.issuer, audience: 'https://another.api.example/', introspection: op.introspection() }])
    const server = await app({}, { jwks: issuers })
    try {
      const r = await get(`${server.base}/api`, bearer(await op.token('read:orders')))
      assert.equal(r.status, 401)
      assert.equal(r.json.code, 'invalid_audience')
    } finally {
      await server.close()
      issuers.close()
    }
  })

  for (const engine of ENGINES) {
    it(`${engine}: revokeToken (the answer's jti) and revokeSubject apply to introspected tokens`, async () => {
      const issuers = createTrustedIssuers([{ issuer: op.issuer, audience: RESOURCE, introspection: op.introspection() }])
      const server = await app({}, { jwks: issuers, engine })
      try {
        const [t1, t2] = [await op.token('read:orders'), await op.token('read:orders')]
        const first = await get(`${server.base}/api`, bearer(t1))
        assert.equal(first.status, 200)
        assert.equal((await get(`${server.base}/api`, bearer(t2))).status, 200)
        const { authenticator } = server.shield.decision.engine
        authenticator.revokeToken(first.json.jti, Math.floor(Date.now() / 1000) + 600, { iss: op.issuer })
        assert.equal((await get(`${server.base}/api`, bearer(t1))).json.code, 'token_revoked')
        assert.equal((await get(`${server.base}/api`, bearer(t2))).status, 200)
        authenticator.revokeSubject('orders-client', { iss: op.issuer, issuedBeforeSec: Math.floor(Date.now() / 1000) + 1 })
        assert.equal((await get(`${server.base}/api`, bearer(t2))).json.code, 'token_revoked')
      } finally {
        await server.close()
        issuers.close()
      }
    })
  }

  it('a token revoked at the provider is refused once its entry ends (cacheMaxSec)', async () => {
    const issuers = createTrustedIssuers([{ issuer: op.issuer, audience: RESOURCE, introspection: op.introspection('client_secret_basic', { cacheMaxSec: 1 }) }])
    const server = await app({}, { jwks: issuers })
    try {
      const token = await op.token('read:orders')
      assert.equal((await get(`${server.base}/api`, bearer(token))).status, 200)
      await op.revoke(token)
      // Within the bound the entry still answers; past it the provider says inactive.
      await sleep(2100)
      const r = await get(`${server.base}/api`, bearer(token))
      assert.equal(r.status, 401)
      assert.equal(r.json.code, 'token_inactive')
    } finally {
      await server.close()
      issuers.close()
    }
  })

  it('a DPoP-bound opaque token (cnf.jkt) passes only with a proof of its key', async () => {
    const ORDERS = `${RESOURCE}api`
    for (const engine of ENGINES) {
      const issuers = createTrustedIssuers([{ issuer: op.issuer, audience: RESOURCE, introspection: op.introspection() }])
      const server = await app({ dpop: true }, { jwks: issuers, engine, dpopOrigin: RESOURCE.slice(0, -1) })
      try {
        const key = await dpop.generateKeyPair('ES256')
        const other = await dpop.generateKeyPair('ES256')
        const token = await op.token('read:orders', { dpop: await dpop.generateProof(key, op.metadata.token_endpoint, 'POST') })
        const send = async (scheme, proofKey) => {
          const headers = { authorization: `${scheme} ${token}` }
          if (proofKey !== undefined) headers.dpop = await dpop.generateProof(proofKey, ORDERS, 'GET', undefined, token)
          const r = await get(`${server.base}/api`, headers)
          return r.status === 200 ? 'ok' : r.json.code
        }
        assert.equal(await send('DPoP', key), 'ok', engine)
        assert.equal(await send('Bearer'), 'dpop_bound_token_as_bearer', engine)
        assert.equal(await send('DPoP', other), 'dpop_key_mismatch', engine)
        assert.equal(await send('DPoP'), 'missing_dpop_proof', engine)
        assert.equal(await send('DPoP', key), 'ok', engine)
      } finally {
        await server.close()
        issuers.close()
      }
    }
  })
})

describe('a short-lived opaque token', () => {
  it('is not accepted after its exp', async () => {
    const op = await startOpaqueProvider({ resource: RESOURCE, accessTokenTTL: 2 })
    const issuers = createTrustedIssuers([{ issuer: op.issuer, audience: RESOURCE, introspection: op.introspection() }])
    const server = await app({}, { jwks: issuers })
    try {
      const token = await op.token('read:orders')
      assert.equal((await get(`${server.base}/api`, bearer(token))).status, 200)
      await sleep(3100)
      const r = await get(`${server.base}/api`, bearer(token))
      assert.equal(r.status, 401)
      assert.ok(['token_inactive', 'token_expired'].includes(r.json.code), r.json.code)
    } finally {
      await server.close()
      issuers.close()
      await op.close()
    }
  })
})
