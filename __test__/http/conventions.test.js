'use strict'

// The conventions express-jwt and @fastify/jwt users expect, through both adapters and both
// engines on real servers over loopback: the verified payload (req.auth / request.auth, parsed
// only when read), errors handed to the framework (`errors: 'next'`), async getToken, the
// cookie source, other schemes as anonymous, CORS preflights, `unless`, `secret`/`algorithms`,
// `isRevoked` and the rate-limit header shapes.

const { describe, it, before, after, test } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const Fastify = require('fastify')
const authShield = require('../../adapters/express')
const authShieldPlugin = require('../../adapters/fastify')
const { readAlgorithms } = require('../../lib/http/algorithms')
const { token } = require('../support/tokens')
const { listen, request: send } = require('../support/http')

const NOW = Math.floor(Date.now() / 1000)
const SECRET = 'conventions-test-secret-0123456789abcdef'
const CLAIMS = { sub: 'u1', email: 'u1@example.com', role: 'admin', scope: 'read write', perms: ['a', 'b'], nested: { n: 1 }, exp: NOW + 600 }
const bearer = (claims = CLAIMS, secret = SECRET) => `Bearer ${token(claims, secret)}`
const CONFIG = { accessSecret: SECRET, rateLimitMax: 100, rateLimitRefillPerSec: 10 }

/** Any method, any headers, over node:http: { status, headers, body, json }. */
const request = (base, path, options) => send(`${base}${path}`, options)

// What a route sees, the same for both frameworks.
const seen = (req) => ({ user: req.user ?? null, auth: req.auth ?? null, id: req.id ?? req.requestId ?? null })

/**
 * An Express or Fastify app with one route per `mounts` entry ([prefix, config, options]);
 * each route answers what it saw. Errors reach the app's own handler, which answers
 * `{ handled: { name, code, errorCode, status } }` with the error's status.
 */
async function serve(framework, mounts, { handler = true } = {}) {
  if (framework === 'express') {
    const app = express()
    for (const [prefix, config, options] of mounts) {
      app.use(prefix, authShield(config, options), (req, res) => res.json(seen(req)))
    }
    if (handler) {
      app.use((err, req, res, next) => {
        res.status(err.status || 500).json({ handled: { name: err.name, code: err.code, errorCode: err.errorCode, status: err.status, inner: err.inner && err.inner.code } })
      })
    }
    return listen(http.createServer(app))
  }
  const app = Fastify()
  // Set first: a route's error handler is the one of its context when the route was added.
  if (handler) {
    app.setErrorHandler((err, request, reply) => {
      reply.code(err.statusCode || 500).send({ handled: { name: err.name, code: err.code, errorCode: err.errorCode, status: err.status, inner: err.inner && err.inner.code } })
    })
  }
  for (const [prefix, config, options] of mounts) {
    await app.register(
      async (child) => {
        await child.register(authShieldPlugin, { config, ...options })
        child.all('/*', async (request) => seen(request))
        child.all('/', async (request) => seen(request))
      },
      { prefix },
    )
  }
  await app.ready()
  return listen(app.server)
}

for (const framework of ['express', 'fastify']) {
  for (const engine of ['native', 'js']) {
    describe(`${framework}, ${engine} engine`, () => {
      let server
      const revokedChecks = []
      const opts = (more = {}) => ({ engine, ...more })
      before(async () => {
        server = await serve(framework, [
          ['/api', CONFIG, opts()],
          ['/next', CONFIG, opts({ errors: 'next' })],
          ['/async', CONFIG, opts({ getToken: async (req) => req.headers['x-token'] })],
          ['/throwing', CONFIG, opts({ getToken: async () => Promise.reject(new Error('token store down')) })],
          ['/cookie', CONFIG, opts({ cookie: 'session' })],
          ['/optional', CONFIG, opts({ credentialsRequired: false })],
          ['/strict-preflight', CONFIG, opts({ skipPreflight: false })],
          ['/unless', CONFIG, opts({ unless: { path: ['/unless/open', { url: /^\/unless\/get-only/, methods: ['GET'] }], ext: 'css' } })],
          ['/es', { secret: SECRET, algorithms: ['HS256'] }, opts({ errors: 'next' })],
          [
            '/revoke',
            CONFIG,
            opts({
              isRevoked: (req, claims) => {
                revokedChecks.push(claims.jti)
                return claims.jti === 'revoked-sync' || (claims.jti === 'revoked-async' ? Promise.resolve(true) : false)
              },
            }),
          ],
          ['/revoke-next', CONFIG, opts({ errors: 'next', isRevoked: async (req, claims) => claims.jti === 'revoked-async' })],
          ['/revoke-throws', CONFIG, opts({ isRevoked: () => Promise.reject(new Error('revocation store down')) })],
          ['/draft', { ...CONFIG, rateLimitMax: 2, rateLimitRefillPerSec: 0.5 }, opts({ rateLimitHeaders: 'draft' })],
          ['/both', { ...CONFIG, rateLimitMax: 2, rateLimitRefillPerSec: 0.5 }, opts({ rateLimitHeaders: 'both' })],
          ['/none', { ...CONFIG, rateLimitMax: 1, rateLimitRefillPerSec: 0.001 }, opts({ rateLimitHeaders: false })],
          ['/limited', { ...CONFIG, rateLimitMax: 1, rateLimitRefillPerSec: 0.001 }, opts({ errors: 'next' })],
        ])
      })
      after(() => server.close())
      const call = (path, headers, method) => request(server.base, path, { headers, method })

      it('hands the whole verified payload to the route and keeps the user shape', async () => {
        const r = await call('/api', { authorization: bearer() })
        assert.equal(r.status, 200)
        assert.deepEqual(r.json.auth, CLAIMS)
        assert.deepEqual(r.json.user, { userId: 'u1', email: 'u1@example.com', role: 'admin' })
      })

      it("errors: 'next' hands express-jwt's UnauthorizedError to the app's error handler", async () => {
        const cases = [
          [{}, 401, 'credentials_required', 'missing_authorization'],
          [{ authorization: 'Basic Zm9vOmJhcg==' }, 401, 'credentials_bad_scheme', 'invalid_authorization_format'],
          [{ authorization: 'wrong' }, 401, 'credentials_bad_format', 'invalid_authorization_format'],
          [{ authorization: 'Bearer' }, 401, 'credentials_bad_format', 'invalid_authorization_format'],
          [{ authorization: 'Bearer wrongjwt' }, 401, 'invalid_token', 'malformed_token'],
          [{ authorization: bearer({ ...CLAIMS, exp: NOW - 60 }) }, 401, 'invalid_token', 'token_expired'],
          [{ authorization: bearer(CLAIMS, 'another-secret-0123456789abcdefghij') }, 401, 'invalid_token', 'invalid_signature'],
          [{ authorization: bearer({ ...CLAIMS, tenant_id: 'Bad Tenant' }) }, 400, 'invalid_tenant', 'invalid_tenant'],
        ]
        for (const [headers, status, code, errorCode] of cases) {
          const r = await call('/next', headers)
          assert.equal(r.status, status, code)
          assert.deepEqual(r.json.handled, { name: 'UnauthorizedError', code, errorCode, status, inner: errorCode })
          assert.match(r.headers['x-request-id'], /^[0-9a-f-]{36}$/)
          if (status === 401) assert.match(r.headers['www-authenticate'], /^Bearer/)
        }
        const limited = [await call('/limited', { authorization: bearer() }), await call('/limited', { authorization: bearer() })]
        assert.equal(limited[1].status, 429)
        // Not an authentication failure: a handler keyed on err.name === 'UnauthorizedError' keeps the 429.
        assert.deepEqual(limited[1].json.handled, { name: 'TooManyRequestsError', code: 'rate_limited', errorCode: 'rate_limited', status: 429, inner: 'rate_limited' })
        assert.ok(Number(limited[1].headers['retry-after']) > 0)
      })

      it("errors: 'respond' (the default) still answers { error, code } itself", async () => {
        const r = await call('/api', { authorization: 'Basic Zm9vOmJhcg==' })
        assert.equal(r.status, 401)
        assert.deepEqual(r.json, { error: 'Invalid Authorization header format', code: 'invalid_authorization_format' })
      })

      it('awaits a getToken that returns a Promise, and hands its rejection to the framework', async () => {
        assert.equal((await call('/async', { 'x-token': bearer().slice(7) })).json.user.userId, 'u1')
        assert.equal((await call('/async', {})).status, 401)
        assert.equal((await call('/throwing', {})).status, 500)
      })

      it('reads the token from a cookie when there is no Authorization header', async () => {
        const t = bearer().slice(7)
        assert.equal((await call('/cookie', { cookie: `theme=dark; session=${t}; other=1` })).json.user.userId, 'u1')
        assert.equal((await call('/cookie', { cookie: `session="${t}"` })).status, 200)
        assert.equal((await call('/cookie', { cookie: 'theme=dark' })).json.code, 'missing_authorization')
        // The header, when sent, is the credentials: a bad header is not rescued by the cookie.
        assert.equal((await call('/cookie', { cookie: `session=${t}`, authorization: 'Bearer wrongjwt' })).status, 401)
      })

      it('lets another scheme through as anonymous when credentials are optional, and refuses a bad bearer token', async () => {
        const basic = await call('/optional', { authorization: 'Basic Zm9vOmJhcg==' })
        assert.equal(basic.status, 200)
        assert.deepEqual([basic.json.user, basic.json.auth], [null, null])
        assert.equal((await call('/optional', {})).status, 200)
        assert.equal((await call('/optional', { authorization: 'Bearer wrongjwt' })).status, 401)
        assert.equal((await call('/optional', { authorization: 'Bearer' })).status, 401)
      })

      it('passes CORS preflights untouched by default; skipPreflight: false authenticates them', async () => {
        const preflight = { origin: 'https://app.example', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' }
        const passed = await call('/api', preflight, 'OPTIONS')
        assert.equal(passed.status, 200)
        assert.equal(passed.headers['x-request-id'], undefined)
        assert.equal((await call('/api', {}, 'OPTIONS')).status, 401, 'an OPTIONS that is no preflight is authenticated')
        assert.equal((await call('/strict-preflight', preflight, 'OPTIONS')).status, 401)
      })

      it('skips the paths, methods and extensions of express-unless rules', async () => {
        assert.equal((await call('/unless/open', {})).status, 200)
        assert.equal((await call('/unless/get-only/x', {})).status, 200)
        assert.equal((await call('/unless/get-only/x', {}, 'DELETE')).status, 401)
        assert.equal((await call('/unless/style.css', {})).status, 200)
        assert.equal((await call('/unless/closed', {})).status, 401)
      })

      it("understands express-jwt's single options object: secret and algorithms", async () => {
        const r = await call('/es', { authorization: bearer() })
        assert.equal(r.status, 200)
        assert.deepEqual(r.json.auth, CLAIMS)
        assert.equal((await call('/es', {})).json.handled.code, 'credentials_required')
      })

      it('asks isRevoked (sync or async) only about verified tokens, and refuses revoked ones with token_revoked', async () => {
        revokedChecks.length = 0
        assert.equal((await call('/revoke', { authorization: bearer({ ...CLAIMS, jti: 'fine' }) })).status, 200)
        for (const jti of ['revoked-sync', 'revoked-async']) {
          const r = await call('/revoke', { authorization: bearer({ ...CLAIMS, jti }) })
          assert.equal(r.status, 401, jti)
          assert.deepEqual(r.json, { error: 'Token has been revoked', code: 'token_revoked' })
          assert.equal(r.headers['www-authenticate'], 'Bearer error="invalid_token", error_description="Token has been revoked"')
          assert.match(r.headers['x-request-id'], /^[0-9a-f-]{36}$/)
        }
        assert.equal((await call('/revoke', { authorization: bearer({ ...CLAIMS, jti: 'x', exp: NOW - 1 }) })).status, 401)
        assert.deepEqual(revokedChecks, ['fine', 'revoked-sync', 'revoked-async'], 'never asked about the expired token')
        const next = await call('/revoke-next', { authorization: bearer({ ...CLAIMS, jti: 'revoked-async' }) })
        assert.deepEqual(next.json.handled, { name: 'UnauthorizedError', code: 'revoked_token', errorCode: 'token_revoked', status: 401, inner: 'token_revoked' })
        assert.equal((await call('/revoke-throws', { authorization: bearer() })).status, 500)
      })

      it('sends the rate-limit headers in the shape rateLimitHeaders asks for', async () => {
        const draft = await call('/draft', { authorization: bearer() })
        assert.equal(draft.headers['ratelimit-policy'], '"default";q=2;w=4')
        assert.equal(draft.headers.ratelimit, '"default";r=1;t=2')
        assert.equal(draft.headers['ratelimit-limit'], undefined)
        const both = await call('/both', { authorization: bearer() })
        assert.equal(both.headers['ratelimit-policy'], '"default";q=2;w=4')
        assert.deepEqual([both.headers['ratelimit-limit'], both.headers['ratelimit-remaining'], both.headers['ratelimit-reset']], ['2', '1', '2'])
        const legacy = await call('/api', { authorization: bearer() })
        assert.equal(legacy.headers['ratelimit-limit'], '100')
        assert.equal(legacy.headers['ratelimit-policy'], undefined)
        const none = [await call('/none', { authorization: bearer() }), await call('/none', { authorization: bearer() })]
        assert.equal(none[0].headers['ratelimit-limit'], undefined)
        assert.equal(none[0].headers.ratelimit, undefined)
        assert.equal(none[1].status, 429)
        assert.ok(Number(none[1].headers['retry-after']) > 0, 'a 429 keeps Retry-After')
      })
    })
  }
}

describe('Express only', () => {
  it('puts the payload under requestProperty, a name or a dotted path, and leaves it assignable', async () => {
    const app = express()
    app.use('/named', authShield(CONFIG, { requestProperty: 'token' }), (req, res) => res.json({ token: req.token, auth: req.auth ?? null }))
    app.use('/dotted', authShield(CONFIG, { requestProperty: 'auth.payload' }), (req, res) => res.json(req.auth))
    app.use('/assign', authShield(CONFIG), (req, res) => {
      req.auth = { replaced: true }
      res.json(req.auth)
    })
    const server = await listen(http.createServer(app))
    try {
      const named = await request(server.base, '/named', { headers: { authorization: bearer() } })
      assert.deepEqual(named.json, { token: CLAIMS, auth: null })
      assert.deepEqual((await request(server.base, '/dotted', { headers: { authorization: bearer() } })).json, { payload: CLAIMS })
      assert.deepEqual((await request(server.base, '/assign', { headers: { authorization: bearer() } })).json, { replaced: true })
    } finally {
      await server.close()
    }
  })

  it('.unless(rules) returns the middleware skipped where the rules match, as express-jwt chains it', async () => {
    const app = express()
    const mw = authShield(CONFIG)
    const skipped = mw.unless({ path: ['/login'], method: 'HEAD' })
    assert.equal(skipped.decision, mw.decision, 'the recovery seam stays reachable')
    app.use(skipped, (req, res) => res.json(seen(req)))
    const server = await listen(http.createServer(app))
    try {
      assert.equal((await request(server.base, '/login')).status, 200)
      assert.equal((await request(server.base, '/login?next=/x')).status, 200)
      assert.equal((await request(server.base, '/other', { method: 'HEAD' })).status, 200)
      assert.equal((await request(server.base, '/other')).status, 401)
    } finally {
      await server.close()
    }
  })

  it('prefers req.cookies when a cookie parser already ran', async () => {
    const app = express()
    app.use((req, res, next) => {
      // What cookie-parser leaves: the parsed cookies, whatever the raw header said.
      req.cookies = { session: req.headers['x-parsed'] }
      next()
    })
    app.use(authShield(CONFIG, { cookie: 'session' }), (req, res) => res.json(seen(req)))
    const server = await listen(http.createServer(app))
    try {
      const r = await request(server.base, '/', { headers: { 'x-parsed': bearer().slice(7), cookie: 'session=garbage' } })
      assert.equal(r.json.user.userId, 'u1')
    } finally {
      await server.close()
    }
  })
})

describe('Fastify only', () => {
  it('shapes request.user with formatUser and keeps the payload on request.auth', async () => {
    const app = Fastify()
    await app.register(authShieldPlugin, { config: CONFIG, formatUser: (claims) => ({ id: claims.sub, scopes: claims.scope.split(' ') }) })
    app.get('/', async (request) => ({ user: request.user, auth: request.auth }))
    await app.ready()
    const r = await app.inject({ url: '/', headers: { authorization: bearer() } })
    assert.deepEqual(r.json(), { user: { id: 'u1', scopes: ['read', 'write'] }, auth: CLAIMS })
    await app.close()
  })

  it("errors: 'next' without an error handler of the app's own keeps the { error, code } answer and headers", async () => {
    const server = await serve('fastify', [['/api', CONFIG, { errors: 'next' }]], { handler: false })
    try {
      const r = await request(server.base, '/api', { headers: { authorization: 'Bearer wrongjwt' } })
      assert.equal(r.status, 401)
      assert.deepEqual(r.json, { error: 'Malformed token', code: 'malformed_token' })
      assert.match(r.headers['www-authenticate'], /error="invalid_token"/)
      assert.match(r.headers['x-request-id'], /^[0-9a-f-]{36}$/)
    } finally {
      await server.close()
    }
  })

  it('accepts secret at the top level of the plugin options, as @fastify/jwt users write it', async () => {
    const app = Fastify()
    await app.register(authShieldPlugin, { secret: SECRET, algorithms: ['HS256'], cookie: { cookieName: 'token' } })
    app.get('/', async (request) => request.auth)
    await app.ready()
    const r = await app.inject({ url: '/', headers: { cookie: `token=${bearer().slice(7)}` } })
    assert.deepEqual(r.json(), CLAIMS)
    await app.close()
  })
})

test('the payload is parsed on first read only, and both engines give the same claims', () => {
  const req = () => ({ method: 'GET', headers: { authorization: bearer() } })
  const claimsOf = (engine) => {
    const d = authShield(CONFIG, { engine }).decision.decide(req(), '/')
    assert.equal(d.action, 'pass')
    assert.equal(d.parsed, undefined, 'nothing parsed before the claims are read')
    const claims = d.claims
    assert.equal(d.claims, claims, 'parsed once')
    return claims
  }
  assert.deepEqual(claimsOf('native'), CLAIMS)
  assert.deepEqual(claimsOf('js'), claimsOf('native'))
})

test('new options are checked when the middleware is made', () => {
  const bad = [
    [CONFIG, { errors: 'throw' }, /options.errors/],
    [CONFIG, { errors: 'next', onError: () => {} }, /onError/],
    [CONFIG, { skip: '/a', unless: '/b' }, /same option/],
    [CONFIG, { unless: { paths: '/a' } }, /unless.paths/],
    [CONFIG, { unless: { path: 42 } }, /unless.path/],
    [CONFIG, { unless: { useOriginalUrl: false } }, /useOriginalUrl/],
    [CONFIG, { cookie: 'bad name' }, /options.cookie/],
    [CONFIG, { cookie: { cookieName: 'a', signed: true } }, /signed/],
    [CONFIG, { isRevoked: true }, /isRevoked/],
    [CONFIG, { skipPreflight: 'no' }, /skipPreflight/],
    [CONFIG, { rateLimitHeaders: 'ietf' }, /rateLimitHeaders/],
    [CONFIG, { requestProperty: '' }, /requestProperty/],
    [CONFIG, { requestProperty: 'a.__proto__' }, /requestProperty/],
    [{ secret: SECRET, algorithms: ['RS256'] }, undefined, /algorithms/],
    [{ secret: SECRET, algorithms: 'HS256' }, undefined, /algorithms/],
    [{ secret: SECRET, algorithms: [] }, undefined, /algorithms/],
    [{ secret: () => SECRET, algorithms: ['HS256'] }, undefined, /key-getter/],
    [{ secret: SECRET, accessSecret: SECRET }, undefined, /give one/],
    [{ accessSecret: SECRET, getToken: () => 'x' }, { getToken: () => 'y' }, /given twice/],
    [CONFIG, { algorithms: ['RS256'] }, /algorithms/],
  ]
  for (const [config, options, message] of bad) {
    assert.throws(() => authShield(config, options), (err) => err instanceof TypeError && message.test(err.message), message.source)
  }
  // express-jwt's 18-byte README secret is refused: auth-shield wants 32 bytes for HS256.
  assert.throws(() => authShield({ secret: 'shhhhhhared-secret', algorithms: ['HS256'] }))
})

test('algorithms is an allow-list over the configured keys: a list one key meets is accepted, one none meets is refused', () => {
  const list = readAlgorithms(['HS256', 'RS256'])
  assert.deepEqual(list.configure({ accessSecret: SECRET }), { accessSecret: SECRET })
  const keys = [{ alg: 'RS256' }, { alg: 'ES256' }, { alg: 'RS256' }]
  assert.deepEqual(list.configure({ keys }).keys, [{ alg: 'RS256' }, { alg: 'RS256' }])
  assert.throws(() => readAlgorithms(['PS256']).configure({ keys }), /allows none of the algorithms of config.keys \["RS256","ES256"\]/)
  assert.throws(() => readAlgorithms(['RS256']).configure({ accessSecret: SECRET }), /createRemoteJwks/)
})

test("Fastify: errors: 'next' follows the route's own error handler, not the instance's latest one", async () => {
  const app = Fastify()
  await app.register(async (child) => {
    await child.register(authShieldPlugin, { config: CONFIG, errors: 'next' })
    child.get('/late', async () => 'ok')
    child.get('/own', { errorHandler: (err, request, reply) => reply.code(err.statusCode).send({ own: err.code }) }, async () => 'ok')
  })
  // Too late for the routes above: Fastify keeps their default handler, so the plugin answers.
  app.setErrorHandler((err, request, reply) => reply.code(500).send({ late: true }))
  await app.ready()
  const late = await app.inject({ url: '/late' })
  assert.equal(late.statusCode, 401)
  assert.deepEqual(late.json(), { error: 'No Authorization header provided', code: 'missing_authorization' })
  const own = await app.inject({ url: '/own' })
  assert.deepEqual([own.statusCode, own.json()], [401, { own: 'credentials_required' }])
  await app.close()
})

test("every failure code has express-jwt's name when it is a 401, and keeps ours otherwise", () => {
  const { expressJwtCode } = require('../../lib/http/unauthorized-error')
  const table = require('../../contract/error-codes.json')
  // dpop_not_allowed: the DPoP scheme on a route that takes Bearer only, another scheme to express-jwt.
  const own = { missing_authorization: 'credentials_required', token_revoked: 'revoked_token', dpop_not_allowed: 'credentials_bad_scheme' }
  for (const [code, { status }] of Object.entries(table)) {
    const expected = own[code] ?? (code === 'invalid_authorization_format' ? 'credentials_bad_format' : status === 401 ? 'invalid_token' : code)
    assert.equal(expressJwtCode(code, 'Bearer x.y.z'), expected, code)
  }
  assert.equal(expressJwtCode('invalid_authorization_format', 'Digest username="a"'), 'credentials_bad_scheme')
  assert.equal(expressJwtCode('invalid_authorization_format', 'Basic'), 'credentials_bad_format', 'a scheme without credentials is malformed')
})

test('both engines take the same adapter decisions: action, status, body, headers and claims', async () => {
  const options = (engine) => ({ engine, credentialsRequired: false, rateLimitHeaders: 'both', isRevoked: (req, claims) => claims.jti === 'gone' })
  const make = (engine) => authShield({ ...CONFIG, rateLimitMax: 3, rateLimitRefillPerSec: 0.001 }, options(engine)).decision
  const engines = { native: make('native'), js: make('js') }
  const inputs = [
    bearer(),
    bearer({ ...CLAIMS, jti: 'gone' }),
    bearer({ ...CLAIMS, exp: NOW - 1 }),
    bearer(CLAIMS, 'another-secret-0123456789abcdefghij'),
    'Basic Zm9vOmJhcg==',
    'Bearer',
    'Bearer a.b.c',
    undefined,
    // The bucket of 3 is spent by the first and second inputs and these two: the last one is a 429.
    bearer(),
    bearer(),
  ]
  const view = (d) => ({
    action: d.action,
    status: d.status,
    body: d.body,
    // A 429's wait comes from each engine's own clock, milliseconds apart: its whole seconds may
    // differ by one (shadow mode tolerates the same); the rest must be equal.
    headers: d.headers
      .filter(([name]) => name !== 'X-Request-Id' && (d.status !== 429 || (name !== 'Retry-After' && name !== 'RateLimit-Reset')))
      .map(([name, value]) => [name, d.status === 429 && name === 'RateLimit' ? value.replace(/;t=\d+$/, '') : value]),
    claims: d.action === 'pass' ? (d.claims ?? null) : null,
  })
  const seenCodes = []
  for (const authorization of inputs) {
    const req = () => ({ method: 'GET', headers: authorization === undefined ? {} : { authorization } })
    const [n, j] = [await engines.native.decide(req(), '/'), await engines.js.decide(req(), '/')]
    assert.deepEqual(view(j), view(n), String(authorization))
    seenCodes.push(n.action === 'pass' ? 'pass' : n.result.errorCode)
  }
  assert.deepEqual(seenCodes, [
    'pass',
    'token_revoked',
    'token_expired',
    'invalid_signature',
    'pass',
    'invalid_authorization_format',
    'malformed_token',
    'pass',
    'pass',
    'rate_limited',
  ])
})
