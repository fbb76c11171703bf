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
const express = require('express')
const Fastify = require('fastify')
const jsonwebtoken = require('jsonwebtoken')
const expressJwt = require('express-jwt')
const authShieldExpress = require('../express')
const authShieldPlugin = require('../fastify')
const { listen, request: send } = require('./support/http')
const { readmeApp } = require('./fixtures/express-jwt-readme-app')

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

describe("express-jwt's README app, with only its import changed and errors: 'next' added", () => {
  let ours
  let theirs
  before(async () => {
    theirs = await listen(http.createServer(readmeApp(expressJwt, SECRET)))
    ours = await listen(http.createServer(readmeApp(authShieldExpress, SECRET, { errors: 'next' })))
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
