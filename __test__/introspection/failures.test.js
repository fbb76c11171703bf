'use strict'

// The failure table of issue 36: an introspection endpoint that is down, slow, redirecting,
// oversized, not JSON, from another issuer or audience, without a boolean `active`, or whose RFC
// 9701 answer was tampered with. A real loopback server plays the misbehaving authorization
// server (metadata, JWKS and introspection endpoint). An uncached token is never let through:
// 503 introspection_unavailable with Retry-After when the endpoint failed, 401 when it answered.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { generateKeyPairSync, sign } = require('node:crypto')
const express = require('express')
const authShield = require('../../adapters/express')
const { createTrustedIssuers } = require('../../lib/jwks/index')
const { listen, get } = require('../support/http')

const RESOURCE = 'https://orders.api.example/'
const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url')

/** The fake authorization server: `behave(req, res, body)` answers the introspection endpoint. */
async function startFakeServer() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const server = http.createServer()
  const { base, close } = await listen(server)
  const fake = { base, issuer: base, calls: 0, behave: null, close }
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'fake-1', alg: 'RS256', use: 'sig' }
  server.on('request', (req, res) => {
    if (req.url === '/.well-known/openid-configuration') return json(res, { issuer: base, jwks_uri: `${base}/jwks`, introspection_endpoint: `${base}/introspect` })
    if (req.url === '/jwks') return json(res, { keys: [jwk] })
    if (req.url === '/elsewhere') return json(res, { active: true, sub: 'evil', aud: RESOURCE, exp: now() + 60 })
    if (req.url !== '/introspect') return res.writeHead(404).end()
    fake.calls++
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => fake.behave(req, res, new URLSearchParams(body)))
  })
  /** An RFC 9701 answer signed with `key` (the fake's own by default). */
  fake.jwt = (answer, { key = privateKey, header = {}, payload = {} } = {}) => {
    const input = `${b64({ alg: 'RS256', kid: 'fake-1', typ: 'token-introspection+jwt', ...header })}.${b64({ iss: base, aud: 'rs', iat: now(), token_introspection: answer, ...payload })}`
    return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`
  }
  fake.otherKey = other.privateKey
  return fake
}

function json(res, value, type = 'application/json') {
  res.writeHead(200, { 'content-type': type }).end(typeof value === 'string' ? value : JSON.stringify(value))
}

const now = () => Math.floor(Date.now() / 1000)
const good = () => ({ active: true, sub: 'user-1', client_id: 'c', scope: 'read', aud: RESOURCE, exp: now() + 60 })

async function app(registry, engine) {
  const a = express()
  a.use('/api', authShield({}, { jwks: registry, engine }), (req, res) => res.json({ sub: req.user.userId }))
  return listen(http.createServer(a))
}

describe('the introspection failure table (a misbehaving loopback authorization server)', () => {
  let fake
  before(async () => {
    fake = await startFakeServer()
  })
  after(async () => {
    await fake.close()
    assert.deepEqual(unhandled, [])
  })

  const jwtAnswer = (token, mutate) => (req, res) => {
    const jwt = fake.jwt(good())
    json(res, mutate(jwt), 'application/token-introspection+jwt')
  }
  const tamper = (jwt) => {
    const [h, , s] = jwt.split('.')
    return `${h}.${b64({ iss: fake.issuer, aud: 'rs', iat: now(), token_introspection: { ...good(), scope: 'admin' } })}.${s}`
  }

  // [label, behave, extra introspection options, expected status, expected code]
  const TABLE = [
    ['a good JSON answer (the control)', (req, res) => json(res, good()), {}, 200, null],
    ['active: false', (req, res) => json(res, { active: false }), {}, 401, 'token_inactive'],
    ['down (connection refused)', null, { endpoint: 'http://127.0.0.1:9/introspect' }, 503, 'introspection_unavailable'],
    ['slow (past timeoutMs)', (req, res) => setTimeout(() => json(res, good()), 1500), { timeoutMs: 200 }, 503, 'introspection_unavailable'],
    ['a redirect (never followed)', (req, res) => res.writeHead(302, { location: `${fake.base}/elsewhere` }).end(), {}, 503, 'introspection_unavailable'],
    ['HTTP 500', (req, res) => res.writeHead(500).end(), {}, 503, 'introspection_unavailable'],
    ['oversized (past maxBytes)', (req, res) => json(res, { ...good(), pad: 'x'.repeat(5000) }), { maxBytes: 1024 }, 503, 'introspection_unavailable'],
    ['oversized, no content-length', (req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.write(`{"active":true,"pad":"${'x'.repeat(3000)}`)
      res.end('"}')
    }, { maxBytes: 1024 }, 503, 'introspection_unavailable'],
    ['not JSON (text/html)', (req, res) => json(res, '<html>login</html>', 'text/html'), {}, 503, 'introspection_unavailable'],
    ['not JSON (a JSON content type, a broken body)', (req, res) => json(res, '{"active": tru'), {}, 503, 'introspection_unavailable'],
    ['JSON but not an object', (req, res) => json(res, '[true]'), {}, 503, 'introspection_unavailable'],
    ['active missing', (req, res) => json(res, { sub: 'user-1', aud: RESOURCE, exp: now() + 60 }), {}, 503, 'introspection_unavailable'],
    ['active not a boolean', (req, res) => json(res, { ...good(), active: 'true' }), {}, 503, 'introspection_unavailable'],
    ['active 1', (req, res) => json(res, { ...good(), active: 1 }), {}, 503, 'introspection_unavailable'],
    ['wrong iss', (req, res) => json(res, { ...good(), iss: 'https://evil.example/' }), {}, 401, 'token_inactive'],
    ['wrong aud', (req, res) => json(res, { ...good(), aud: 'https://another.api.example/' }), {}, 401, 'invalid_audience'],
    ['expired exp', (req, res) => json(res, { ...good(), exp: now() - 10 }), {}, 401, 'token_expired'],
    ['RFC 9701: a good signed answer (the control)', jwtAnswer(null, (j) => j), { jwtResponse: true }, 200, null],
    ['RFC 9701: tampered payload', jwtAnswer(null, tamper), { jwtResponse: true }, 503, 'introspection_unavailable'],
    ['RFC 9701: signed by another key', (req, res) => json(res, fake.jwt(good(), { key: fake.otherKey }), 'application/token-introspection+jwt'), { jwtResponse: true }, 503, 'introspection_unavailable'],
    ['RFC 9701: alg none', (req, res) => json(res, `${b64({ alg: 'none', typ: 'token-introspection+jwt' })}.${b64({ iss: fake.issuer, token_introspection: good() })}.`, 'application/token-introspection+jwt'), { jwtResponse: true }, 503, 'introspection_unavailable'],
    ['RFC 9701: from another issuer', (req, res) => json(res, fake.jwt(good(), { payload: { iss: 'https://evil.example/' } }), 'application/token-introspection+jwt'), { jwtResponse: true }, 503, 'introspection_unavailable'],
    ['RFC 9701: wrong typ', (req, res) => json(res, fake.jwt(good(), { header: { typ: 'JWT' } }), 'application/token-introspection+jwt'), { jwtResponse: true }, 503, 'introspection_unavailable'],
    ['RFC 9701: a plain JSON answer when a signed one was asked for', (req, res) => json(res, good()), { jwtResponse: true }, 503, 'introspection_unavailable'],
  ]

  for (const engine of ['native', 'js']) {
    for (const [label, behave, extra, status, code] of TABLE) {
      it(`${engine}: ${label} -> ${status}${code === null ? '' : ` ${code}`}`, async () => {
        fake.behave = behave
        const registry = createTrustedIssuers([{ issuer: fake.issuer, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: 'rs-secret-0123456789', ...extra } }])
        await registry.ready()
        const server = await app(registry, engine)
        try {
          const r = await get(`${server.base}/api`, { authorization: 'Bearer opaque-token-0123456789' })
          assert.equal(r.status, status, JSON.stringify(r.json))
          if (code !== null) {
            assert.equal(r.json.code, code)
            if (status === 503) assert.ok(Number(r.headers['retry-after']) >= 1, 'Retry-After')
          } else assert.equal(r.json.sub, 'user-1')
        } finally {
          await server.close()
          registry.close()
        }
      })
    }
  }

  it('after a failure, new tokens get 503 without a call until the back-off ends; then the endpoint is asked again', async () => {
    fake.behave = (req, res) => res.writeHead(500).end()
    const registry = createTrustedIssuers([{ issuer: fake.issuer, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: 'rs-secret-0123456789', retryMinMs: 300, retryMaxMs: 300 } }])
    await registry.ready()
    const server = await app(registry)
    try {
      const calls = fake.calls
      assert.equal((await get(`${server.base}/api`, { authorization: 'Bearer first-token' })).status, 503)
      assert.equal(fake.calls - calls, 1)
      for (let i = 0; i < 5; i++) assert.equal((await get(`${server.base}/api`, { authorization: `Bearer other-${i}` })).status, 503)
      assert.equal(fake.calls - calls, 1, 'no call during the back-off')
      fake.behave = (req, res) => json(res, good())
      await new Promise((resolve) => setTimeout(resolve, 350))
      assert.equal((await get(`${server.base}/api`, { authorization: 'Bearer first-token' })).status, 200)
      assert.equal(fake.calls - calls, 2)
    } finally {
      await server.close()
      registry.close()
    }
  })

  for (const engine of ['native', 'js']) {
    it(`${engine}: each request is counted once, with the code it was answered with (a miss is no refusal)`, async () => {
      const { authenticatorMetrics } = require('../../lib/metrics/ledger')
      fake.behave = (req, res, body) => json(res, body.get('token') === 'known-token' ? good() : { active: false })
      const registry = createTrustedIssuers([{ issuer: fake.issuer, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: 'rs-secret-0123456789', retryMinMs: 100000, retryMaxMs: 100000 } }])
      await registry.ready()
      const a = express()
      const shield = authShield({}, { jwks: registry, engine })
      a.use('/api', shield, (req, res) => res.json({ sub: req.user.userId }))
      const server = await listen(http.createServer(a))
      try {
        for (const t of ['known-token', 'known-token', 'unknown-token', 'unknown-token']) await get(`${server.base}/api`, { authorization: `Bearer ${t}` })
        fake.behave = (req, res) => res.writeHead(500).end()
        assert.equal((await get(`${server.base}/api`, { authorization: 'Bearer failing-token' })).status, 503)
        const m = authenticatorMetrics(shield.authenticator, shield.authenticator.metrics())
        assert.equal(m.authentication.succeeded, 2)
        assert.deepEqual(Object.fromEntries(Object.entries(m.authentication.failures).filter(([, n]) => n !== 0)), { token_inactive: 2, introspection_unavailable: 1 })
        assert.equal(m.authentication.failed, 3)
      } finally {
        await server.close()
        registry.close()
      }
    })
  }

  it('introspectJwts: a JWT is introspected too, and the app sees the answer, not the JWT payload', async () => {
    fake.behave = (req, res) => json(res, good())
    const registry = createTrustedIssuers([{ issuer: fake.issuer, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: 'rs-secret-0123456789', introspectJwts: true } }])
    await registry.ready()
    const a = express()
    a.use('/api', authShield({}, { jwks: registry }), (req, res) => res.json({ sub: req.user.userId, scope: req.auth.scope }))
    const server = await listen(http.createServer(a))
    try {
      const unsigned = `${b64({ alg: 'RS256', kid: 'fake-1' })}.${b64({ sub: 'from-the-jwt', scope: 'admin', iss: fake.issuer, aud: RESOURCE, exp: now() + 60 })}.c2ln`
      const calls = fake.calls
      const r = await get(`${server.base}/api`, { authorization: `Bearer ${unsigned}` })
      assert.equal(r.status, 200)
      assert.deepEqual(r.json, { sub: 'user-1', scope: 'read' })
      assert.equal(fake.calls - calls, 1)
    } finally {
      await server.close()
      registry.close()
    }
  })

  it('a token read again after cacheMaxSec: the route requirements and the app see the new answer (a scope taken away)', async () => {
    let scope = 'read write'
    fake.behave = (req, res) => json(res, { ...good(), scope })
    const registry = createTrustedIssuers([{ issuer: fake.issuer, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: 'rs-secret-0123456789', cacheMaxSec: 1 } }])
    await registry.ready()
    const a = express()
    const shield = authShield({}, { jwks: registry })
    a.get('/api/write', shield, authShield.requireScopes('write'), (req, res) => res.json({ scope: req.auth.scope }))
    a.get('/api', shield, (req, res) => res.json({ scope: req.auth.scope }))
    const server = await listen(http.createServer(a))
    try {
      const headers = { authorization: 'Bearer changing-token' }
      assert.equal((await get(`${server.base}/api/write`, headers)).status, 200)
      assert.equal((await get(`${server.base}/api`, headers)).json.scope, 'read write')
      scope = 'read'
      await new Promise((resolve) => setTimeout(resolve, 2100))
      const r = await get(`${server.base}/api/write`, headers)
      assert.equal(r.status, 403)
      assert.equal(r.json.code, 'insufficient_scope')
      // The claims the app reads are the new answer's too (never a copy kept from the first).
      assert.equal((await get(`${server.base}/api`, headers)).json.scope, 'read')
    } finally {
      await server.close()
      registry.close()
    }
  })

  it('the token never appears in errors, status or the claims handed to the app', async () => {
    fake.behave = (req, res) => res.writeHead(500).end()
    const registry = createTrustedIssuers([{ issuer: fake.issuer, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: 'rs-secret-0123456789' } }])
    await registry.ready()
    const a = express()
    const shield = authShield({}, { jwks: registry })
    a.use('/api', shield, (req, res) => res.json(req.auth))
    const server = await listen(http.createServer(a))
    const secretToken = 'very-secret-opaque-token-value-42'
    try {
      const r = await get(`${server.base}/api`, { authorization: `Bearer ${secretToken}` })
      assert.equal(r.status, 503)
      const stage = shield.decision.pipeline.stages.find((s) => s.name === 'introspection')
      const status = stage.status()
      assert.ok(!JSON.stringify(status).includes(secretToken))
      assert.ok(!String(status.lastError && status.lastError.stack).includes(secretToken))
      assert.ok(!JSON.stringify(r.json).includes(secretToken))
      fake.behave = (req, res) => json(res, good())
      await new Promise((resolve) => setTimeout(resolve, 1100))
      const ok = await get(`${server.base}/api`, { authorization: `Bearer ${secretToken}` })
      assert.equal(ok.status, 200)
      assert.ok(!JSON.stringify(ok.json).includes(secretToken))
      assert.equal(stage.pending.size, 0, 'nothing kept once the exchange is over')
    } finally {
      await server.close()
      registry.close()
    }
  })
})
