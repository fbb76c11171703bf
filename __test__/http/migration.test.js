'use strict'

// docs/migrating.md, proven: the behaviours express-jwt's own test suite checks (missing,
// malformed and other-scheme credentials, bad and expired tokens, wrong audience or issuer,
// optional credentials, preflights, `unless`, custom and async getToken, requestProperty,
// isRevoked), run on real servers over loopback three ways: real express-jwt, auth-shield/express
// with the same options plus `errors: 'next'`, and the Fastify plugin with the same options.
// The status, express-jwt's error code and the payload the route sees must agree. Then an app
// written from express-jwt's README runs against both with only its import changed.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { createSecretKey } = require('node:crypto')
const express = require('express')
const Fastify = require('fastify')
const jsonwebtoken = require('jsonwebtoken')
const expressJwt = require('express-jwt')
const authShieldExpress = require('../../adapters/express')
const authShieldPlugin = require('../../adapters/fastify')
const { listen, request: send } = require('../support/http')
const { readmeApp } = require('../fixtures/express-jwt-readme-app')
const { plumbing } = require('../support/store-seam')

// auth-shield wants 32-byte HS256 secrets and tokens with `sub` and `exp` (docs/migrating.md):
// the cases use such tokens, which express-jwt accepts as well.
const SECRET = 'migration-test-secret-0123456789abcdef'
const OTHER = 'another-test-secret-0123456789abcdefgh'
const sign = (claims, secret = SECRET, options = { expiresIn: 600 }) => jsonwebtoken.sign({ sub: 'u1', ...claims }, secret, options)
const good = sign({ foo: 'bar' })
const expired = sign({ foo: 'bar', exp: Math.floor(Date.now() / 1000) - 3600 }, SECRET, {})
const NOT_JSON = `${good.split('.')[0]}.${Buffer.from('{foo: bar').toString('base64url')}.${good.split('.')[2]}`
const TAMPERED = `${good.split('.')[0]}.${Buffer.from(JSON.stringify({ sub: 'u1', foo: 'baz', exp: 9e9 })).toString('base64url')}.${good.split('.')[2]}`
const payloadOf = (t) => jsonwebtoken.decode(t)

const base = { secret: SECRET, algorithms: ['HS256'] }

/**
 * [name, options, request, expected]: `expected` is { status, code } for a failure or
 * { status: 200, auth } for a pass (`auth` is what the route finds under req.auth).
 */
const CASES = [
  ['no Authorization header, credentials required', base, {}, { status: 401, code: 'credentials_required' }],
  ['a header that is not "<scheme> <credentials>"', base, { headers: { authorization: 'wrong' } }, { status: 401, code: 'credentials_bad_format' }],
  ['another scheme (Basic)', base, { headers: { authorization: 'Basic foobar' } }, { status: 401, code: 'credentials_bad_scheme' }],
  ['another scheme while credentials are optional', { ...base, credentialsRequired: false }, { headers: { authorization: 'Basic foobar' } }, { status: 200, auth: null }],
  ['no header while credentials are optional', { ...base, credentialsRequired: false }, {}, { status: 200, auth: null }],
  ['a bearer value that is no JWT', base, { headers: { authorization: 'Bearer wrongjwt' } }, { status: 401, code: 'invalid_token' }],
  ['a payload that is not JSON', base, { headers: { authorization: `Bearer ${NOT_JSON}` } }, { status: 401, code: 'invalid_token' }],
  ['a token signed with another secret', base, { headers: { authorization: `Bearer ${sign({}, OTHER)}` } }, { status: 401, code: 'invalid_token' }],
  ['a payload changed after signing', base, { headers: { authorization: `Bearer ${TAMPERED}` } }, { status: 401, code: 'invalid_token' }],
  ['an unexpected audience', { ...base, audience: 'orders' }, { headers: { authorization: `Bearer ${sign({ aud: 'billing' })}` } }, { status: 401, code: 'invalid_token' }],
  ['an unexpected issuer', { ...base, issuer: 'https://wrong' }, { headers: { authorization: `Bearer ${sign({ iss: 'https://foo' })}` } }, { status: 401, code: 'invalid_token' }],
  ['an expired token', base, { headers: { authorization: `Bearer ${expired}` } }, { status: 401, code: 'invalid_token' }],
  ['an expired token while credentials are optional', { ...base, credentialsRequired: false }, { headers: { authorization: `Bearer ${expired}` } }, { status: 401, code: 'invalid_token' }],
  ['a bad signature while credentials are optional', { ...base, credentialsRequired: false }, { headers: { authorization: `Bearer ${sign({}, OTHER)}` } }, { status: 401, code: 'invalid_token' }],
  ['a valid token', base, { headers: { authorization: `Bearer ${good}` } }, { status: 200, auth: payloadOf(good) }],
  ['a valid token and a Buffer secret', { ...base, secret: Buffer.from(SECRET) }, { headers: { authorization: `Bearer ${good}` } }, { status: 200, auth: payloadOf(good) }],
  [
    'a CORS preflight announcing authorization',
    base,
    { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'content-type, authorization' } },
    { status: 200, auth: null },
  ],
  ['a token from a custom getToken (query string)', { ...base, getToken: (req) => new URL(req.url, 'http://x').searchParams.get('token') }, { path: `/?token=${good}` }, { status: 200, auth: payloadOf(good) }],
  ['a token from an async getToken', { ...base, getToken: async (req) => req.headers['x-token'] }, { headers: { 'x-token': good } }, { status: 200, auth: payloadOf(good) }],
  ['a getToken that throws', { ...base, getToken: throwIt }, {}, { status: 401, code: 'custom_code' }],
  ['isRevoked answering true', { ...base, isRevoked: async () => true }, { headers: { authorization: `Bearer ${good}` } }, { status: 401, code: 'revoked_token' }],
  ['isRevoked answering false', { ...base, isRevoked: async () => false }, { headers: { authorization: `Bearer ${good}` } }, { status: 200, auth: payloadOf(good) }],
]

function throwIt() {
  throw Object.assign(new Error('Invalid token!'), { name: 'UnauthorizedError', code: 'custom_code', status: 401 })
}

/** Any method, any headers: { status, body, json }. */
const request = (server, { path = '/', ...options } = {}) =>
  send(`${server.base}${path}`, options).then(({ status, body, json }) => ({ status, body, json }))

// Both Express apps answer the same way: the route what it saw, the error handler the error.
function expressApp(middleware) {
  const app = express()
  app.use(middleware)
  app.all('/', (req, res) => res.json({ auth: req.auth ?? null }))
  app.use((err, req, res, next) => res.status(err.status || 500).json({ name: err.name, code: err.code }))
  return listen(http.createServer(app))
}

async function fastifyApp(options) {
  const app = Fastify()
  app.setErrorHandler((err, request, reply) => reply.code(err.statusCode || err.status || 500).send({ name: err.name, code: err.code }))
  await app.register(authShieldPlugin, { ...options, errors: 'next' })
  app.all('/', async (request) => ({ auth: request.auth ?? null }))
  await app.ready()
  return listen(app.server)
}

/** What a run saw, in the terms of `expected`. */
function outcome(r) {
  return r.status === 200 ? { status: 200, auth: r.json.auth } : { status: r.status, code: r.json && r.json.code }
}

const VARIANTS = {
  'express-jwt': (options) => expressApp(expressJwt.expressjwt(options)),
  'auth-shield/express': (options) => expressApp(authShieldExpress.expressjwt({ ...options, errors: 'next' })),
  'auth-shield/fastify': fastifyApp,
}

for (const [variant, make] of Object.entries(VARIANTS)) {
  describe(`express-jwt's behaviours through ${variant}`, () => {
    for (const [name, options, req, expected] of CASES) {
      it(name, async () => {
        const server = await make(options)
        try {
          const r = await request(server, req)
          assert.deepEqual(outcome(r), expected)
          if (r.status !== 200 && expected.code !== 'custom_code') assert.equal(r.json.name, 'UnauthorizedError')
        } finally {
          await server.close()
        }
      })
    }
  })
}

describe('express-jwt: requestProperty and unless', () => {
  for (const [variant, lib] of [
    ['express-jwt', expressJwt],
    ['auth-shield/express', authShieldExpress],
  ]) {
    const extra = variant === 'express-jwt' ? {} : { errors: 'next' }
    it(`${variant}: a nested requestProperty holds the payload`, async () => {
      const app = express()
      app.use(lib.expressjwt({ ...base, requestProperty: 'auth.payload', ...extra }))
      app.get('/', (req, res) => res.json(req.auth))
      const server = await listen(http.createServer(app))
      try {
        assert.deepEqual((await request(server, { headers: { authorization: `Bearer ${good}` } })).json, { payload: payloadOf(good) })
      } finally {
        await server.close()
      }
    })
    it(`${variant}: .unless({ path }) leaves the listed paths alone`, async () => {
      const server = await expressApp(lib.expressjwt({ ...base, ...extra }).unless({ path: '/' }))
      try {
        assert.deepEqual(outcome(await request(server)), { status: 200, auth: null })
        assert.equal((await request(server, { path: '/elsewhere' })).status, 401)
      } finally {
        await server.close()
      }
    })
  }
})

describe("express-jwt's README app, with only its import changed", () => {
  let ours
  let theirs
  before(async () => {
    theirs = await listen(http.createServer(readmeApp(expressJwt, SECRET)))
    // expressjwt defaults to errors: 'next', express-jwt's only behaviour.
    ours = await listen(http.createServer(readmeApp(authShieldExpress, SECRET)))
  })
  after(async () => {
    await ours.close()
    await theirs.close()
  })

  const admin = sign({ admin: true })
  const requests = [
    ['the public route, excluded by unless', { path: '/token' }],
    ['an anonymous request (credentials optional)', { path: '/me' }],
    ['a protected route without a token', { path: '/protected' }],
    ['a protected route with a non-admin token', { path: '/protected', headers: { authorization: `Bearer ${good}` } }],
    ['a protected route with an admin token', { path: '/protected', headers: { authorization: `Bearer ${admin}` } }],
    ['the token in the query string', { path: `/me?token=${good}` }],
    ['req.auth for a valid token', { path: '/me', headers: { authorization: `Bearer ${admin}` } }],
    ['an expired token, through the README error handler', { path: '/me', headers: { authorization: `Bearer ${expired}` } }],
    ['a forged token, through the README error handler', { path: '/me', headers: { authorization: `Bearer ${sign({ admin: true }, OTHER)}` } }],
  ]
  for (const [name, req] of requests) {
    it(`answers like express-jwt: ${name}`, async () => {
      const [a, b] = [await request(theirs, req), await request(ours, req)]
      assert.deepEqual({ status: b.status, body: b.body }, { status: a.status, body: a.body })
    })
  }

  it('really exercised both outcomes of the README routes', async () => {
    assert.equal((await request(ours, { path: '/protected', headers: { authorization: `Bearer ${admin}` } })).status, 200)
    assert.equal((await request(ours, { path: '/me', headers: { authorization: `Bearer ${expired}` } })).body, 'invalid token...')
    assert.deepEqual((await request(ours, { path: '/me', headers: { authorization: `Bearer ${admin}` } })).json.auth, payloadOf(admin))
  })
})

// Issue 23: the compatible export `expressjwt` keeps express-jwt's meaning for code written for
// it (defaults, callback shapes, errors), in both engines. Each case runs on a real server.
const ENGINES = ['native', 'js']
const NOW = () => Math.floor(Date.now() / 1000)

/** An Express app: the route answers what it saw, the error handler the error's fields. */
function inspectingApp(middleware) {
  const app = express()
  app.use(middleware)
  app.all('/', (req, res) => res.json({ auth: req.auth ?? null }))
  app.use((err, req, res, next) => res.status(err.status || 500).json(errorFields(err)))
  return listen(http.createServer(app))
}

function errorFields(err) {
  const inner = err.inner || {}
  return {
    name: err.name,
    code: err.code,
    status: err.status,
    message: err.message,
    inner: { name: inner.name, message: inner.message, expiredAt: inner.expiredAt, date: inner.date },
  }
}

/** One request through `middleware`: { status, json, headers }. */
async function once(middleware, req = {}) {
  const server = await inspectingApp(middleware)
  try {
    return await request(server, req)
  } finally {
    await server.close()
  }
}

const bearerOf = (token) => ({ headers: { authorization: `Bearer ${token}` } })
/** A request with the response headers too: { status, headers, body, json }. */
const withHeaders = (server, { path = '/', ...options } = {}) => send(`${server.base}${path}`, options)

for (const engine of ENGINES) {
  describe(`expressjwt keeps express-jwt's meaning (${engine} engine)`, () => {
    const ours = (options) => authShieldExpress.expressjwt({ ...options, engine })

    it('hands failures to next(err) by default, as express-jwt does', async () => {
      const r = await once(ours(base))
      assert.equal(r.status, 401)
      assert.equal(r.json.name, 'UnauthorizedError')
      assert.equal(r.json.code, 'credentials_required')
      // authShield keeps its own default: it answers itself.
      const own = await once(authShieldExpress({ accessSecret: SECRET }, { engine }))
      assert.deepEqual(own.json, { error: 'No Authorization header provided', code: 'missing_authorization' })
    })

    it('calls isRevoked with the decoded token { header, payload }, so a revoked jti is refused', async () => {
      const seen = []
      const isRevoked = async (req, token) => {
        seen.push(token)
        return token.payload.jti === 'revoked-1'
      }
      const revoked = sign({ jti: 'revoked-1' })
      const r = await once(ours({ ...base, isRevoked }), bearerOf(revoked))
      assert.equal(r.status, 401)
      assert.equal(r.json.code, 'revoked_token')
      assert.equal(r.json.message, 'The token has been revoked.')
      assert.deepEqual(seen[0], jsonwebtoken.decode(revoked, { complete: true }))
      const fine = await once(ours({ ...base, isRevoked }), bearerOf(good))
      assert.deepEqual(fine.json.auth, payloadOf(good))
    })

    it("accepts express-jwt's UnauthorizedError constructor, also thrown from getToken", async () => {
      const { UnauthorizedError } = authShieldExpress
      const inner = { message: 'Invalid token!' }
      const e = new UnauthorizedError('invalid_token', inner)
      assert.ok(e instanceof Error && e instanceof UnauthorizedError)
      assert.deepEqual({ name: e.name, code: e.code, status: e.status, message: e.message, inner: e.inner }, { name: 'UnauthorizedError', code: 'invalid_token', status: 401, message: 'Invalid token!', inner })
      assert.ok(e.stack.startsWith('UnauthorizedError: Invalid token!'))
      const getToken = () => {
        throw new UnauthorizedError('invalid_token', { message: 'Invalid token!' })
      }
      const r = await once(ours({ ...base, getToken }))
      assert.deepEqual([r.status, r.json.code, r.json.message], [401, 'invalid_token', 'Invalid token!'])
    })

    // Each request through real express-jwt and through ours: the same name, code, status,
    // message and jsonwebtoken inner error (name, message, expiredAt / date).
    const exp = NOW() - 3600
    const nbf = NOW() + 3600
    const COMPARED = [
      ['no credentials', base, {}],
      ['another scheme', base, { headers: { authorization: 'Basic foobar' } }],
      ['a malformed header', base, { headers: { authorization: 'wrong' } }],
      ['a bearer value that is no JWT', base, { headers: { authorization: 'Bearer wrongjwt' } }],
      ['an expired token', base, bearerOf(sign({ exp }, SECRET, {}))],
      ['a token not yet valid', base, bearerOf(sign({ nbf }))],
      ['a bad signature', base, bearerOf(sign({}, OTHER))],
      ['an unexpected audience', { ...base, audience: 'orders' }, bearerOf(sign({ aud: 'billing' }))],
      ['an unexpected issuer', { ...base, issuer: 'https://wrong' }, bearerOf(sign({ iss: 'https://foo' }))],
      ['a revoked token', { ...base, isRevoked: async () => true }, bearerOf(good)],
    ]
    for (const [name, options, req] of COMPARED) {
      it(`gives express-jwt's error and jsonwebtoken's inner error: ${name}`, async () => {
        const theirs = await once(expressJwt.expressjwt(options), req)
        const mine = await once(ours(options), req)
        assert.equal(mine.status, theirs.status)
        assert.deepEqual(mine.json, theirs.json)
      })
    }

    it('supports a secret getter (GetVerificationKey) per tenant, one prepared key each', async () => {
      const tenants = { a: 'tenant-a-secret-0123456789abcdefghij', b: 'tenant-b-secret-0123456789abcdefghij' }
      const calls = []
      const secret = (req, token) => {
        calls.push(token)
        if (token && tenants[token.payload.iss]) return tenants[token.payload.iss]
        throw new Error('Could not find secret for issuer.')
      }
      const mw = ours({ secret, algorithms: ['HS256'], rateLimitMax: 1, rateLimitRefillPerSec: 0.001 })
      const server = await inspectingApp(mw)
      try {
        const ta = sign({ iss: 'a' }, tenants.a)
        const tb = sign({ iss: 'b' }, tenants.b)
        assert.deepEqual((await request(server, bearerOf(ta))).json.auth, payloadOf(ta))
        assert.deepEqual((await request(server, bearerOf(tb))).json.auth, payloadOf(tb))
        assert.deepEqual(calls[0], jsonwebtoken.decode(ta, { complete: true }))
        // Tenant a's token signed with b's secret: refused.
        const forged = await request(server, bearerOf(sign({ iss: 'a' }, tenants.b)))
        assert.deepEqual([forged.status, forged.json.message], [401, 'invalid signature'])
        const unknown = await request(server, bearerOf(sign({ iss: 'c' })))
        assert.deepEqual([unknown.status, unknown.json.message], [500, 'Could not find secret for issuer.'])
        // The prepared key keeps its state: tenant a's bucket (capacity 1) is empty now.
        const limited = await request(server, bearerOf(ta))
        assert.deepEqual([limited.status, limited.json.name], [429, 'TooManyRequestsError'])
        // No credentials never reach the getter.
        const before = calls.length
        assert.equal((await request(server)).json.code, 'credentials_required')
        assert.equal(calls.length, before)
      } finally {
        await server.close()
      }
    })

    it('answers a getter without a key as jsonwebtoken does, and a throw that is no Error as a real Error', async () => {
      const none = await once(ours({ secret: () => undefined, algorithms: ['HS256'] }), bearerOf(good))
      assert.deepEqual([none.status, none.json.code, none.json.message], [401, 'invalid_token', 'secret or public key must be provided'])
      const throwing = (value) => () => {
        throw value
      }
      for (const value of [undefined, null, 0, '', false]) {
        for (const options of [
          { secret: () => Promise.reject(value), algorithms: ['HS256'] },
          { ...base, getToken: throwing(value) },
          { ...base, getToken: () => Promise.reject(value) },
          { ...base, isRevoked: throwing(value) },
          { ...base, onExpired: throwing(value) },
        ]) {
          const req = options.onExpired ? bearerOf(sign({ exp: NOW() - 60 }, SECRET, {})) : bearerOf(good)
          const r = await once(ours(options), req)
          assert.deepEqual([r.status, r.json.name], [500, 'Error'], `${Object.keys(options)} ${String(value)}`)
        }
      }
    })

    it('fails closed on an isRevoked answer that is not true or false, and on callbacks that never settle', async () => {
      // express-jwt passes any falsy answer; a forgotten `return` must not mean "not revoked".
      for (const answer of [undefined, null, 0, '', 'no', {}]) {
        const r = await once(ours({ ...base, isRevoked: async () => answer }), bearerOf(good))
        assert.deepEqual([r.status, r.json.code], [500, 'ERR_AUTH_SHIELD_CALLBACK'], String(answer))
      }
      const never = () => new Promise(() => {})
      for (const options of [
        { secret: never, algorithms: ['HS256'] },
        { ...base, getToken: never },
        { ...base, isRevoked: never },
        { ...base, onExpired: never },
      ]) {
        const req = options.onExpired ? bearerOf(sign({ exp: NOW() - 60 }, SECRET, {})) : bearerOf(good)
        const r = await once(ours({ ...options, callbackTimeoutMs: 50 }), req)
        assert.deepEqual([r.status, r.json.code], [503, 'ERR_AUTH_SHIELD_CALLBACK_TIMEOUT'], Object.keys(options).join())
        assert.equal(r.json.auth, undefined, 'the route never ran')
      }
    })

    it('keeps at most 1000 keys from a getter and refuses the next new one, evicting none', { timeout: 120_000 }, async () => {
      const keyOf = (i) => `tenant-${String(i).padStart(6, '0')}-secret-0123456789abcdef`
      const mw = ours({ secret: (req, token) => keyOf(token.payload.n), algorithms: ['HS256'] })
      const run = (n) =>
        new Promise((resolve) => {
          // The key as a KeyObject: jsonwebtoken then signs without first trying it as a private key.
          const req = { headers: { authorization: `Bearer ${sign({ n }, createSecretKey(Buffer.from(keyOf(n))))}` } }
          mw(req, {}, (err) => resolve({ err, auth: req.auth }))
        })
      for (let n = 0; n < 1000; n++) assert.equal((await run(n)).err, undefined, `key ${n}`)
      const refused = await run(1000)
      assert.equal(refused.err.code, 'ERR_AUTH_SHIELD_KEY_LIMIT')
      assert.equal(refused.auth, undefined)
      // The first key is still held (nothing was evicted).
      assert.equal((await run(0)).err, undefined)
    })

    it('calls onExpired for an expired token: returning lets it through, throwing refuses it', async () => {
      const expired = sign({ exp: NOW() - 60 }, SECRET, {})
      const seen = []
      const through = await once(ours({ ...base, onExpired: (req, err) => seen.push(err) }), bearerOf(expired))
      assert.deepEqual(through.json.auth, payloadOf(expired))
      assert.equal(seen[0].inner.name, 'TokenExpiredError')
      assert.deepEqual(seen[0].inner.expiredAt, new Date(payloadOf(expired).exp * 1000))
      const rethrown = await once(ours({ ...base, onExpired: (req, err) => Promise.reject(err) }), bearerOf(expired))
      assert.deepEqual([rethrown.status, rethrown.json.code, rethrown.json.inner.name], [401, 'invalid_token', 'TokenExpiredError'])
      // The other claim checks still run: a wrong audience is refused though onExpired lets expiry pass.
      const wrongAud = sign({ exp: NOW() - 60, aud: 'billing' }, SECRET, {})
      const r = await once(ours({ ...base, audience: 'orders', onExpired: () => {} }), bearerOf(wrongAud))
      assert.deepEqual([r.status, r.json.code], [401, 'invalid_token'])
      // And isRevoked: a revoked expired token is refused.
      const revoked = await once(ours({ ...base, onExpired: () => {}, isRevoked: () => true }), bearerOf(expired))
      assert.equal(revoked.json.code, 'revoked_token')
    })

    it('handles hand-built requests without url or headers and a res without setHeader', async () => {
      const call = (mw, req) => new Promise((resolve) => mw(req, {}, (...args) => resolve({ args, req })))
      const optional = await call(ours({ ...base, credentialsRequired: false }), {})
      assert.deepEqual(optional.args, [])
      const required = await call(ours(base), {})
      assert.equal(required.args[0].code, 'credentials_required')
      // A capitalised Authorization, as AWS Lambda adapters build it.
      const lambda = await call(ours(base), { headers: { Authorization: `Bearer ${good}` } })
      assert.deepEqual(lambda.args, [])
      assert.deepEqual(lambda.req.auth, payloadOf(good))
      // Respond mode with a res that cannot answer: the failure goes to next.
      const respond = await call(ours({ ...base, errors: 'respond' }), { headers: {} })
      assert.equal(respond.args[0].code, 'credentials_required')
    })

    it("skips an OPTIONS request whose Access-Control-Request-Headers names authorization, as express-jwt does", async () => {
      const preflight = { method: 'OPTIONS', headers: { 'access-control-request-headers': 'sasa, sras,  Authorization' } }
      assert.deepEqual((await once(ours(base), preflight)).json, { auth: null })
      assert.deepEqual((await once(expressJwt.expressjwt(base), preflight)).json, { auth: null })
      // Without authorization among them, the request is authenticated.
      const other = { method: 'OPTIONS', headers: { 'access-control-request-headers': 'content-type' } }
      assert.equal((await once(ours(base), other)).json.code, 'credentials_required')
    })

    it("starts with express-jwt's errors for a missing secret or algorithms", () => {
      assert.throws(() => authShieldExpress.expressjwt(), { name: 'RangeError', message: 'express-jwt: `secret` is a required option' })
      assert.throws(() => ours({ secret: SECRET }), { name: 'RangeError', message: 'express-jwt: `algorithms` is a required option' })
      assert.throws(() => ours({ secret: SECRET, algorithms: 'HS256' }), { name: 'RangeError', message: 'express-jwt: `algorithms` must be an array' })
      // A getter gives the key: another key beside it would be silently replaced.
      assert.throws(() => ours({ secret: () => SECRET, accessSecret: SECRET, algorithms: ['HS256'] }), { name: 'TypeError' })
    })
  })
}

// Issue 22 §4: throttling and "unavailable" are not authentication failures. With errors: 'next'
// they keep 429 / 503 through express-jwt's README handler (`err.name === 'UnauthorizedError'`
// → 401), and http-errors' fields reach finalhandler and Fastify's handler.
for (const engine of ENGINES) {
  describe(`errors: 'next' keeps 429 and 503 (${engine} engine)`, () => {
    const readmeHandler = (err, req, res, next) => (err.name === 'UnauthorizedError' ? res.status(401).send('invalid token...') : next(err))
    const limitedConfig = { accessSecret: SECRET, rateLimitMax: 1, rateLimitRefillPerSec: 0.001 }
    const makers = {
      'authShield(…, { errors: next })': () => authShieldExpress(limitedConfig, { engine, errors: 'next' }),
      expressjwt: () => authShieldExpress.expressjwt({ ...limitedConfig, engine }),
    }
    for (const [name, make] of Object.entries(makers)) {
      it(`Express, ${name}: 429 and 503 pass express-jwt's handler with their status and headers`, async () => {
        const mw = make()
        const app = express()
        const seen = []
        app.use(mw)
        app.get('/', (req, res) => res.send('ok'))
        app.use((err, req, res, next) => {
          seen.push(err)
          next(err)
        })
        app.use(readmeHandler)
        // express's finalhandler answers the rest with err.status and err.headers.
        const server = await listen(http.createServer(app))
        try {
          const auth = bearerOf(good)
          assert.equal((await request(server, auth)).status, 200)
          const limited = await withHeaders(server, auth)
          assert.equal(limited.status, 429)
          assert.ok(Number(limited.headers['retry-after']) > 0)
          const e429 = seen.at(-1)
          assert.deepEqual(
            { name: e429.name, status: e429.status, statusCode: e429.statusCode, expose: e429.expose, code: e429.code, errorCode: e429.errorCode },
            { name: 'TooManyRequestsError', status: 429, statusCode: 429, expose: true, code: 'rate_limited', errorCode: 'rate_limited' },
          )
          assert.ok(e429 instanceof authShieldExpress.TooManyRequestsError && !(e429 instanceof authShieldExpress.UnauthorizedError))
          plumbing(mw.authenticator).setRevocationUnavailable(true)
          const unavailable = await request(server, bearerOf(sign({ sub: 'u2' })))
          assert.equal(unavailable.status, 503)
          const e503 = seen.at(-1)
          assert.deepEqual(
            { name: e503.name, status: e503.status, statusCode: e503.statusCode, expose: e503.expose, code: e503.code },
            { name: 'ServiceUnavailableError', status: 503, statusCode: 503, expose: false, code: 'revocation_unavailable' },
          )
          // A real authentication failure still reads as one.
          assert.equal((await request(server)).body, 'invalid token...')
        } finally {
          await server.close()
        }
      })
    }

    it("Fastify, errors: 'next': 429 and 503 reach the error handler with their names and statuses", async () => {
      const app = Fastify()
      app.setErrorHandler((err, request, reply) => {
        if (err.name === 'UnauthorizedError') return reply.code(401).send({ name: err.name })
        reply.headers(err.headers).code(err.statusCode).send({ name: err.name, code: err.code, expose: err.expose })
      })
      await app.register(authShieldPlugin, { config: limitedConfig, engine, errors: 'next' })
      app.get('/', async () => 'ok')
      await app.ready()
      const server = await listen(app.server)
      try {
        const auth = bearerOf(good)
        assert.equal((await request(server, auth)).status, 200)
        const limited = await withHeaders(server, auth)
        assert.deepEqual([limited.status, limited.json], [429, { name: 'TooManyRequestsError', code: 'rate_limited', expose: true }])
        assert.ok(Number(limited.headers['retry-after']) > 0)
        plumbing(app.authShield.authenticator).setRevocationUnavailable(true)
        const unavailable = await request(server, bearerOf(sign({ sub: 'u2' })))
        assert.deepEqual([unavailable.status, unavailable.json], [503, { name: 'ServiceUnavailableError', code: 'revocation_unavailable', expose: false }])
        assert.deepEqual((await request(server)).json, { name: 'UnauthorizedError' })
      } finally {
        await server.close()
      }
    })
  })
}
