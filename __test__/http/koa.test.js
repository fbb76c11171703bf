'use strict'

// auth-shield/koa in real Koa 3 apps on loopback, with both engines: what a passing request
// leaves on ctx.state (user, tenant, request id, the payload under `key`), the answers to
// missing, malformed, invalid and expired tokens and to an empty bucket, skipped paths,
// optional auth, onError, `errors: 'throw'` to the app's error handler and to Koa's own, and
// callbacks that fail (fail closed: the route never runs).

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const Koa = require('koa')
const http = require('node:http')
const authShield = require('../../adapters/koa')
const { listen, get } = require('../support/http')
const { token } = require('../support/tokens')
const { koaServer, adapterFixtures, assertEmptyBucket, assertFenceRefused, FAILING_CALLBACKS } = require('../support/adapter-servers')

const { NOW, CONFIG, jwt, bearer } = adapterFixtures('koa-test-secret-0123456789abcdef')
const CALLBACK_TIMEOUT_MS = 100

for (const engine of ['native', 'js']) {
  describe(`auth-shield/koa (${engine} engine)`, () => {
    const servers = {}
    const thrown = []
    const url = (name, path = '/x') => `${servers[name].base}${path}`

    before(async () => {
      const mk = (options) => authShield(CONFIG, { engine, ...options })
      servers.api = await koaServer(mk())
      servers.optional = await koaServer(mk({ credentialsRequired: false }))
      servers.skip = await koaServer(mk({ skip: ['/health', /^\/public\//], unless: undefined }))
      servers.unless = await koaServer(mk({ unless: { path: ['/health'], method: ['HEAD'] } }))
      servers.key = await koaServer(mk({ key: 'jwt' }))
      servers.cookie = await koaServer(mk({ cookie: 'session' }))
      servers.onError = await koaServer(
        mk({
          onError: async (err, ctx) => {
            ctx.status = err.status
            ctx.body = { reason: err.code, requestId: err.requestId, header: ctx.response.get('X-Request-Id') }
          },
        }),
      )
      servers.throw = await koaServer(mk({ errors: 'throw' }), { errors: thrown })
      // No error handler of the app: Koa's own answers the thrown error.
      servers.koaDefault = await koaServer(mk({ errors: 'throw', realm: 'orders' }), { handleErrors: false })
    })
    after(async () => {
      for (const s of Object.values(servers)) await s.close()
    })

    it('passes a valid token: ctx.state.user, tenant, request id (also X-Request-Id) and the payload as ctx.state.auth', async () => {
      const r = await get(url('api'), { ...bearer({ sub: 'u1', email: 'u1@example.com', role: 'admin', tenant_id: 'acme', extra: [1] }) })
      assert.equal(r.status, 200, r.body)
      assert.deepEqual(r.json.user, { userId: 'u1', email: 'u1@example.com', role: 'admin' })
      assert.equal(r.json.tenantId, 'acme')
      assert.equal(r.json.tenantSource, 'token')
      assert.match(r.json.requestId, /^[0-9a-f-]{36}$/)
      assert.equal(r.headers['x-request-id'], r.json.requestId)
      assert.deepEqual(r.json.claims.extra, [1])
      assert.equal(r.json.claims.sub, 'u1')
      assert.equal(r.headers['ratelimit-limit'], '3')
    })

    it('puts the payload under `key` (koa-jwt\'s option)', async () => {
      const app = new Koa()
      app.use(authShield(CONFIG, { engine, key: 'user' }))
      app.use((ctx) => (ctx.body = { user: ctx.state.user, auth: ctx.state.auth ?? null }))
      const s = await listen(http.createServer(app.callback()))
      try {
        // key: 'user' gives koa-jwt's shape: the payload on ctx.state.user.
        const r = await get(`${s.base}/`, bearer({ sub: 'k1', scope: 'read' }))
        assert.equal(r.status, 200, r.body)
        assert.deepEqual(r.json, { user: { sub: 'k1', scope: 'read', exp: NOW + 600 }, auth: null })
      } finally {
        await s.close()
      }
      const r = await get(url('key'), bearer({ sub: 'k2' }))
      assert.equal(r.json.claims, null)
      assert.equal(r.json.user.userId, 'k2')
      for (const key of ['', 'requestId', 'tenantId', '__proto__', 1]) {
        assert.throws(() => authShield(CONFIG, { key }), { name: 'TypeError', message: /options\.key/ })
      }
    })

    it('answers missing, malformed, invalid and expired tokens with the status, code and challenge of the result', async () => {
      const missing = await get(url('api'))
      assert.equal(missing.status, 401)
      assert.equal(missing.json.code, 'missing_authorization')
      assert.deepEqual(Object.keys(missing.json), ['error', 'code'])
      assert.equal(missing.headers['www-authenticate'], 'Bearer')
      assert.equal(missing.headers['content-type'], 'application/json; charset=utf-8')
      assert.match(missing.headers['x-request-id'], /^[0-9a-f-]{36}$/)

      const format = await get(url('api'), { authorization: 'Bearer' })
      assert.equal(format.status, 401)
      assert.equal(format.json.code, 'invalid_authorization_format')
      assert.match(format.headers['www-authenticate'], /^Bearer error="invalid_request"/)

      const forged = await get(url('api'), bearer({ sub: 'u1' }, 'another-secret-0123456789abcdef!!'))
      assert.equal(forged.status, 401)
      assert.equal(forged.json.code, 'invalid_signature')

      const expired = await get(url('api'), bearer({ sub: 'u1', exp: NOW - 120 }))
      assert.equal(expired.status, 401)
      assert.deepEqual(expired.json, { error: 'Token has expired', code: 'token_expired' })
      assert.equal(expired.headers['www-authenticate'], 'Bearer error="invalid_token", error_description="Token has expired"')
    })

    it('answers an empty bucket with 429, Retry-After and RateLimit-Remaining: 0', async () => {
      const r = await assertEmptyBucket(url('api'), bearer({ sub: 'busy' }))
      assert.equal(r.headers['www-authenticate'], undefined)
    })

    it('leaves skipped paths untouched (skip and unless rules)', async () => {
      for (const path of ['/health', '/public/a.css']) {
        const r = await get(url('skip', path))
        assert.equal(r.status, 200)
        assert.equal(r.headers['x-request-id'], undefined)
        assert.equal(r.json.requestId, null)
      }
      assert.equal((await get(url('skip', '/private'))).status, 401)
      assert.equal((await get(url('unless', '/health'))).status, 200)
      assert.equal((await get(url('unless', '/other'))).status, 401)
    })

    it('lets anonymous requests through with credentialsRequired: false, but not bad tokens', async () => {
      const anonymous = await get(url('optional'))
      assert.equal(anonymous.status, 200)
      assert.deepEqual([anonymous.json.user, anonymous.json.tenantId, anonymous.json.claims], [null, null, null])
      assert.equal(anonymous.json.requestId, anonymous.headers['x-request-id'])
      assert.equal(anonymous.headers['www-authenticate'], undefined)
      assert.equal((await get(url('optional'), { authorization: 'Basic dTpw' })).status, 200)
      assert.equal((await get(url('optional'), bearer({ sub: 'u', exp: NOW - 120 }))).json.code, 'token_expired')
    })

    it('reads the token from a cookie when there is no Authorization header', async () => {
      const r = await get(url('cookie'), { cookie: `a=b; session=${jwt({ sub: 'c1' })}` })
      assert.equal(r.status, 200, r.body)
      assert.equal(r.json.user.userId, 'c1')
    })

    it('hands failures to onError(err, ctx) with the headers already set', async () => {
      const r = await get(url('onError'), bearer({ sub: 'u', exp: NOW - 120 }))
      assert.equal(r.status, 401)
      assert.equal(r.json.reason, 'token_expired')
      assert.equal(r.json.requestId, r.headers['x-request-id'])
      assert.equal(r.json.header, r.headers['x-request-id'])
      assert.match(r.headers['www-authenticate'], /invalid_token/)
    })

    it("throws failures to the app's error handler with errors: 'throw' (status, expose, headers)", async () => {
      thrown.length = 0
      const r = await get(url('throw'), bearer({ sub: 'u', exp: NOW - 120 }))
      assert.equal(r.status, 401)
      assert.deepEqual(r.json, { thrown: 'invalid_token', name: 'UnauthorizedError' })
      assert.equal(thrown.length, 1)
      const [err] = thrown
      assert.equal(err.authCode, 'token_expired')
      assert.equal(err.expose, true)
      assert.equal(err.headers['WWW-Authenticate'], 'Bearer error="invalid_token", error_description="Token has expired"')
      const h = bearer({ sub: 'thrown-busy' })
      for (let i = 0; i < 3; i++) await get(url('throw'), h)
      const busy = await get(url('throw'), h)
      assert.equal(busy.status, 429)
      assert.deepEqual(busy.json, { thrown: 'rate_limited', name: 'TooManyRequestsError' })
      assert.ok(Number(busy.headers['retry-after']) > 0)
      assert.throws(() => authShield(CONFIG, { errors: 'next' }), { name: 'TypeError', message: "options.errors must be 'respond' or 'throw'" })
      assert.throws(() => authShield(CONFIG, { errors: 'throw', onError() {} }), { name: 'TypeError' })
    })

    it("lets Koa's own error handler answer a thrown failure with its status, message and headers", async () => {
      const r = await get(url('koaDefault'), bearer({ sub: 'u', exp: NOW - 120 }))
      assert.equal(r.status, 401)
      assert.equal(r.body, 'Token has expired')
      assert.equal(r.headers['www-authenticate'], 'Bearer realm="orders", error="invalid_token", error_description="Token has expired"')
      assert.match(r.headers['x-request-id'], /^[0-9a-f-]{36}$/)
    })

    describe('callbacks fail closed', () => {
      const VALID = bearer({ sub: 'fenced' })
      for (const [label, options] of [...FAILING_CALLBACKS, ['onError rejecting with 0', { onError: () => Promise.reject(0) }]]) {
        it(`refuses the request when ${label}`, async () => {
          const errors = []
          let reached = false
          const mw = authShield(CONFIG, { engine, callbackTimeoutMs: CALLBACK_TIMEOUT_MS, ...options })
          const s = await koaServer(async (ctx, next) => {
            await mw(ctx, () => {
              reached = true
              return next()
            })
          }, { errors })
          // onError only runs on a failure: send that one an expired token.
          await assertFenceRefused(s, 'onError' in options ? bearer({ sub: 'u', exp: NOW - 120 }) : VALID, errors)
          assert.equal(reached, false)
        })
      }

      it('refuses a token isRevoked calls revoked (401 token_revoked); ctx is its first argument', async () => {
        const seenBy = []
        const s = await koaServer(
          authShield(CONFIG, {
            engine,
            isRevoked: (ctx, claims) => {
              seenBy.push([typeof ctx.state, ctx.path])
              return claims.sub === 'gone'
            },
          }),
        )
        try {
          const r = await get(`${s.base}/r`, bearer({ sub: 'gone' }))
          assert.equal(r.status, 401)
          assert.equal(r.json.code, 'token_revoked')
          assert.equal((await get(`${s.base}/r`, bearer({ sub: 'kept' }))).status, 200)
          assert.deepEqual(seenBy, [['object', '/r'], ['object', '/r']])
        } finally {
          await s.close()
        }
      })
    })
  })
}

it('the ESM entry exports the CommonJS exports by name, the middleware as default', async () => {
  const esm = await import('../../adapters/koa.mjs')
  assert.equal(esm.default, authShield)
  for (const name of Object.keys(authShield)) assert.equal(esm[name], authShield[name], name)
})

it('the Koa example of docs/middleware.md runs as written', async () => {
  const { docsExample } = require('../support/adapter-servers')
  const example = docsExample('Koa (2 and 3)').replace("require('auth-shield/koa')", "require('../../adapters/koa')")
  const secret = 'docs-example-secret-0123456789abcdef'
  const app = new Function('require', 'process', `${example}\nreturn app`)(require, { env: { JWT_SECRET: secret } })
  const s = await listen(http.createServer(app.callback()))
  try {
    const health = await get(`${s.base}/health`)
    assert.equal(health.status, 200)
    assert.equal(health.headers['x-request-id'], undefined, 'skipped: nothing set')
    assert.equal((await get(`${s.base}/me`)).status, 401)
    const r = await get(`${s.base}/me`, { authorization: `Bearer ${token({ sub: 'd1', exp: NOW + 60 }, secret)}` })
    assert.equal(r.status, 200)
    assert.deepEqual(r.json.user, { userId: 'd1' })
    assert.equal(r.json.requestId, r.headers['x-request-id'])
  } finally {
    await s.close()
  }
})

for (const engine of ['native', 'js']) {
  it(`chains .unless(rules) as koa-jwt users write it; shadow mode and stats (${engine} engine)`, async () => {
    const mismatches = []
    const mw = authShield(CONFIG, { engine, shadow: true, onMismatch: (m) => mismatches.push(m) })
    const seenBy = []
    const chained = mw.unless({ path: ['/open'], custom: (ctx) => (seenBy.push(ctx.path), ctx.query.open === '1') })
    assert.equal(chained.engine, engine)
    assert.equal(chained.unless('/x').engine, engine)
    const s = await koaServer(chained)
    try {
      assert.equal((await get(`${s.base}/open`)).status, 200)
      assert.equal((await get(`${s.base}/x?open=1`)).status, 200)
      assert.equal((await get(`${s.base}/x`)).status, 401)
      assert.deepEqual(seenBy, ['/x', '/x'])
      assert.equal((await get(`${s.base}/x`, bearer({ sub: 'shadowed' }))).status, 200)
      const stats = mw.stats()
      assert.equal(stats.shadowEngine, engine === 'native' ? 'js' : 'native')
      assert.equal(stats.requests, 2)
      assert.deepEqual(mismatches, [])
    } finally {
      await s.close()
    }
    assert.throws(() => mw.unless({ bogus: 1 }), { name: 'TypeError' })
  })
}

it("takes koa-jwt's single options object: { secret, key } and .unless, as docs/migrating.md shows", async () => {
  const mw = authShield({ secret: CONFIG.accessSecret, key: 'user', algorithms: ['HS256'] }).unless({ path: [/^\/public/] })
  const s = await koaServer(mw)
  try {
    assert.equal((await get(`${s.base}/public/a`)).status, 200)
    const r = await get(`${s.base}/x`, bearer({ sub: 'kj' }))
    assert.equal(r.status, 200, r.body)
    assert.equal(r.json.user.sub, 'kj')
    assert.equal((await get(`${s.base}/x`)).status, 401)
  } finally {
    await s.close()
  }
  assert.throws(() => authShield({ secret: CONFIG.accessSecret, algorithms: ['RS256'] }), { name: 'TypeError' })
})
