'use strict'

// The loose ends the introspection landing left (issue 36, after the merge), each against a real
// loopback authorization server (metadata, JWKS, introspection endpoint), both engines:
// - every 503 of introspection is `introspection_unavailable` with Retry-After, a miss answered
//   late (past callbackTimeoutMs, waiting in the issuer's queue) included: introspection_required
//   is the way to a verdict, never one a client sees;
// - an issuer used only for introspection whose metadata has no jwks_uri fetches no keys, says
//   so once, and refuses its JWT-shaped tokens with a clear code;
// - the introspection endpoint is discovered again after a failed discovery (the server down at
//   start-up) and after persistent failures of the endpoint discovered;
// - in shadow mode a revocation through the middleware's `authenticator` reaches both engines.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { generateKeyPairSync, sign } = require('node:crypto')
const express = require('express')
const authShield = require('../../adapters/express')
const { createTrustedIssuers } = require('../../lib/jwks/index')
const { listen, get } = require('../support/http')
const { ADAPTER_STARTS, expressServer } = require('../support/adapter-servers')

const RESOURCE = 'https://orders.api.example/'
const SECRET = 'rs-secret-0123456789'
const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

const now = () => Math.floor(Date.now() / 1000)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url')
const good = (extra = {}) => ({ active: true, sub: 'user-1', client_id: 'c', scope: 'read', aud: RESOURCE, exp: now() + 60, ...extra })

function json(res, value, type = 'application/json') {
  res.writeHead(200, { 'content-type': type }).end(JSON.stringify(value))
}

/** A loopback authorization server; `metadata()` and `behave` may change while it runs. */
async function startServer() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const server = http.createServer()
  const { base, close } = await listen(server)
  const fake = { base, issuer: base, calls: {}, discoveries: 0, down: false, behave: (req, res) => json(res, good()), close }
  fake.metadata = () => ({ issuer: base, jwks_uri: `${base}/jwks`, introspection_endpoint: `${base}/introspect` })
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' }
  server.on('request', (req, res) => {
    if (fake.down) return req.socket.destroy()
    if (req.url === '/.well-known/openid-configuration') {
      fake.discoveries++
      return json(res, fake.metadata())
    }
    if (req.url === '/jwks') {
      fake.jwksFetches = (fake.jwksFetches || 0) + 1
      return json(res, { keys: [jwk] })
    }
    fake.calls[req.url] = (fake.calls[req.url] || 0) + 1
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => fake.behave(req, res, new URLSearchParams(body)))
  })
  fake.jwt = (payload) => {
    const input = `${b64({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })}.${b64({ iss: base, aud: RESOURCE, sub: 'user-1', iat: now(), exp: now() + 60, jti: 'j', ...payload })}`
    return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`
  }
  return fake
}

async function app(options, adapterOptions) {
  const a = express()
  const shield = authShield(options, adapterOptions)
  a.use('/api', shield, (req, res) => res.json({ sub: req.user.userId }))
  const server = await listen(http.createServer(a))
  server.shield = shield
  return server
}

const ADAPTERS = [...ADAPTER_STARTS, ['expressjwt', (config, options) => expressServer(require('../../adapters/express').expressjwt({ ...config, ...options }))]]
const bearer = (token) => ({ authorization: `Bearer ${token}` })
const MODES = [
  ['native', { engine: 'native' }],
  ['js', { engine: 'js' }],
  ['shadow', { engine: 'native', shadow: true }],
]

describe('introspection loose ends', () => {
  let fake
  before(async () => {
    fake = await startServer()
  })
  after(async () => {
    await fake.close()
    assert.deepEqual(unhandled, [])
  })

  for (const [mode, options] of MODES) {
    it(`${mode}: a miss answered past callbackTimeoutMs (waiting in the issuer's queue) is 503 introspection_unavailable with Retry-After`, async () => {
      fake.behave = (req, res) => setTimeout(() => json(res, good()), 400)
      const issuers = createTrustedIssuers([{ issuer: fake.issuer, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: SECRET, maxConcurrent: 1, timeoutMs: 5000 } }])
      await issuers.ready()
      const server = await app({}, { jwks: issuers, callbackTimeoutMs: 150, ...options })
      try {
        const answers = await Promise.all([1, 2, 3].map((i) => get(`${server.base}/api`, bearer(`late-token-${mode}-${i}`))))
        for (const r of answers) {
          assert.equal(r.status, 503, JSON.stringify(r.json))
          assert.equal(r.json.code, 'introspection_unavailable')
          assert.ok(Number(r.headers['retry-after']) >= 1, 'Retry-After')
        }
        // Once answered, the tokens pass.
        await sleep(1400)
        assert.equal((await get(`${server.base}/api`, bearer(`late-token-${mode}-1`))).status, 200)
        if (options.shadow) assert.equal(server.shield.stats().mismatches, 0)
      } finally {
        await server.close()
        issuers.close()
      }
    })
  }

  for (const [adapter, start] of ADAPTERS) {
    it(`${adapter}: a miss past callbackTimeoutMs is 503 with Retry-After, never introspection_required`, async () => {
      fake.behave = (req, res) => setTimeout(() => json(res, good()), 400)
      const issuers = createTrustedIssuers([{ issuer: fake.issuer, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: SECRET, timeoutMs: 5000 } }])
      await issuers.ready()
      const server = await start({}, { jwks: issuers, callbackTimeoutMs: 150 })
      try {
        const r = await get(`${server.base}/orders`, bearer(`late-${adapter}`))
        assert.equal(r.status, 503, JSON.stringify(r.json))
        assert.ok(Number(r.headers['retry-after']) >= 1, 'Retry-After')
        assert.doesNotMatch(JSON.stringify(r.json ?? r.body ?? ''), /introspection_required/)
        if (adapter !== 'expressjwt') assert.equal(r.json.code, 'introspection_unavailable')
      } finally {
        await server.close()
        issuers.close()
      }
    })
  }

  for (const [mode, options] of MODES) {
    it(`${mode}: an engine with an introspection cache and no introspecting issuer answers an opaque token 503 introspection_unavailable with Retry-After`, async () => {
      const server = await app({ accessSecret: 'a'.repeat(32), introspectionCacheMaxEntries: 10 }, options)
      try {
        const r = await get(`${server.base}/api`, bearer('an-opaque-token'))
        assert.equal(r.status, 503)
        assert.equal(r.json.code, 'introspection_unavailable')
        assert.ok(Number(r.headers['retry-after']) >= 1, 'Retry-After')
        if (options.shadow) assert.equal(server.shield.stats().mismatches, 0)
      } finally {
        await server.close()
      }
    })
  }

  for (const [mode, options] of MODES) {
    it(`${mode}: a revocation through the middleware's authenticator reaches every engine (shadow: 0 mismatches)`, async () => {
      fake.behave = (req, res, body) => json(res, good({ jti: `jti-${body.get('token')}`, sub: body.get('token').startsWith('subject') ? 'user-2' : 'user-1' }))
      const issuers = createTrustedIssuers([{ issuer: fake.issuer, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: SECRET } }])
      await issuers.ready()
      const mismatches = []
      const server = await app({}, { jwks: issuers, ...options, ...(options.shadow ? { onMismatch: (m) => void mismatches.push(m.fields) } : {}) })
      try {
        const [t1, t2] = [`token-a-${mode}`, `subject-b-${mode}`]
        assert.equal((await get(`${server.base}/api`, bearer(t1))).status, 200)
        assert.equal((await get(`${server.base}/api`, bearer(t2))).status, 200)
        const { authenticator } = server.shield
        authenticator.revokeToken(`jti-${t1}`, now() + 600, { iss: fake.issuer })
        authenticator.revokeSubject('user-2', { iss: fake.issuer, issuedBeforeSec: now() + 1 })
        assert.equal((await get(`${server.base}/api`, bearer(t1))).json.code, 'token_revoked')
        assert.equal((await get(`${server.base}/api`, bearer(t2))).json.code, 'token_revoked')
        if (options.shadow) {
          assert.deepEqual(mismatches, [])
          assert.equal(server.shield.stats().mismatches, 0)
        }
      } finally {
        await server.close()
        issuers.close()
      }
    })
  }

  for (const [mode, options] of MODES) {
    it(`${mode}: the authorization server down at start-up: 503 with Retry-After (never 200), then it works without a restart`, async () => {
      fake.behave = (req, res) => json(res, good())
      fake.down = true
      const issuers = createTrustedIssuers([{ issuer: fake.issuer, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: SECRET, retryMinMs: 100, retryMaxMs: 200 } }], { retryMinMs: 100, retryMaxMs: 200 })
      issuers.on('error', () => {})
      const server = await app({}, { jwks: issuers, ...options })
      try {
        for (let i = 0; i < 3; i++) {
          const r = await get(`${server.base}/api`, bearer(`start-token-${mode}`))
          assert.equal(r.status, 503, JSON.stringify(r.json))
          assert.equal(r.json.code, 'introspection_unavailable')
          assert.ok(Number(r.headers['retry-after']) >= 1, 'Retry-After')
          await sleep(120)
        }
        fake.down = false
        let r
        for (let i = 0; i < 30; i++) {
          r = await get(`${server.base}/api`, bearer(`start-token-${mode}`))
          if (r.status === 200) break
          assert.equal(r.status, 503)
          assert.ok(Number(r.headers['retry-after']) >= 1, 'Retry-After')
          await sleep(100)
        }
        assert.equal(r.status, 200, JSON.stringify(r.json))
        assert.equal(r.json.sub, 'user-1')
      } finally {
        await server.close()
        issuers.close()
      }
    })
  }

  it('shadow: setKeys through the middleware\'s authenticator reaches both engines (a rotated key verifies, 0 mismatches)', async () => {
    const { rawToken } = require('../support/tokens')
    const ISS = 'https://idp.example/'
    const [old, rotated] = ['old-secret-0123456789abcdefghijkl', 'new-secret-0123456789abcdefghijkl']
    const token = (kid, secret) => rawToken({ alg: 'HS256', kid }, { sub: 'u', iss: ISS, aud: 'api', exp: now() + 60 }, secret)
    const server = await app({ issuers: [{ issuer: ISS, keys: [{ kid: 'k1', alg: 'HS256', secret: old }] }], audience: 'api', rateLimitMax: 0 }, { engine: 'native', shadow: true })
    try {
      assert.equal((await get(`${server.base}/api`, bearer(token('k1', old)))).status, 200)
      assert.equal((await get(`${server.base}/api`, bearer(token('k2', rotated)))).json.code, 'unknown_key')
      server.shield.authenticator.setKeys([{ kid: 'k2', alg: 'HS256', secret: rotated }], { issuer: ISS })
      assert.equal((await get(`${server.base}/api`, bearer(token('k2', rotated)))).status, 200)
      assert.equal((await get(`${server.base}/api`, bearer(token('k1', old)))).json.code, 'unknown_key')
      assert.equal(server.shield.stats().mismatches, 0)
      assert.equal(server.shield.stats().requests, 4)
    } finally {
      await server.close()
    }
  })

  for (const [mode, options] of MODES) {
    it(`${mode}: an issuer for introspection only (no jwks_uri) fetches no keys, says so once, and refuses its JWTs 401 unknown_key`, async () => {
      fake.behave = (req, res) => json(res, good())
      const metadata = fake.metadata
      fake.metadata = () => ({ issuer: fake.base, introspection_endpoint: `${fake.base}/introspect` })
      const warnings = []
      const onWarning = (w) => w.code === 'AUTH_SHIELD_INTROSPECTION_ONLY' && warnings.push(w.message)
      process.on('warning', onWarning)
      const [discoveries, fetches] = [fake.discoveries, fake.jwksFetches || 0]
      const errors = []
      const issuers = createTrustedIssuers([{ issuer: fake.issuer, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: SECRET } }], { retryMinMs: 100, retryMaxMs: 100, cooldownMs: 0 })
      issuers.on('error', (err) => errors.push(err))
      try {
        await issuers.ready()
        const server = await app({}, { jwks: issuers, ...options })
        try {
          assert.equal((await get(`${server.base}/api`, bearer(`opaque-${mode}`))).status, 200)
          for (let i = 0; i < 3; i++) {
            const r = await get(`${server.base}/api`, bearer(fake.jwt({ jti: `jwt-${i}` })))
            assert.equal(r.status, 401, JSON.stringify(r.json))
            assert.equal(r.json.code, 'unknown_key')
            assert.match(r.headers['www-authenticate'], /error="invalid_token"/)
          }
          await sleep(350)
          if (options.shadow) assert.equal(server.shield.stats().mismatches, 0)
        } finally {
          await server.close()
        }
        assert.deepEqual(errors, [])
        assert.equal(fake.discoveries - discoveries, 2, "the key source's discovery and the endpoint's, never retried")
        assert.equal((fake.jwksFetches || 0) - fetches, 0, 'no key set fetched')
        await new Promise(setImmediate)
        assert.equal(warnings.length, 1)
        assert.match(warnings[0], /no jwks_uri: it is trusted for introspection only/)
        assert.equal(issuers.status()[0].lastError, null)
        assert.equal(issuers.status()[0].introspectionOnly, true)
      } finally {
        process.off('warning', onWarning)
        fake.metadata = metadata
        issuers.close()
      }
    })
  }

  it('an endpoint discovered that keeps failing is discovered again (bounded: once per back-off step past the third failure)', async () => {
    fake.behave = (req, res) => (req.url === '/introspect' ? res.writeHead(500).end() : json(res, good()))
    const issuers = createTrustedIssuers([{ issuer: fake.issuer, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: SECRET, retryMinMs: 100, retryMaxMs: 100 } }])
    await issuers.ready()
    const server = await app({}, { jwks: issuers })
    const metadata = fake.metadata
    try {
      assert.equal((await get(`${server.base}/api`, bearer('moved-token'))).status, 503)
      // The server moved its endpoint; its metadata says where.
      fake.metadata = () => ({ ...metadata(), introspection_endpoint: `${fake.base}/introspect-v2` })
      const discoveries = fake.discoveries
      let r
      for (let i = 0; i < 10; i++) {
        await sleep(110)
        r = await get(`${server.base}/api`, bearer('moved-token'))
        if (r.status === 200) break
        assert.equal(r.json.code, 'introspection_unavailable')
      }
      assert.equal(r.status, 200)
      assert.ok(fake.discoveries - discoveries <= 2, `${fake.discoveries - discoveries} discoveries`)
      assert.equal(issuers.status()[0].introspection.endpoint, `${fake.base}/introspect-v2`)
    } finally {
      fake.metadata = metadata
      await server.close()
      issuers.close()
    }
  })
})
