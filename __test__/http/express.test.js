'use strict'

// Real Express 4 and Express 5 apps on loopback, hit over HTTP: statuses, JSON bodies,
// headers, req.user / req.tenantId / req.id, optional auth, token getters, skipped paths,
// onError, the engine switch (option, USE_RUST_AUTH, missing binary) and shadow mode.

const { describe, it, before, after, test } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const path = require('node:path')
const http = require('node:http')
const authShield = require('../../adapters/express')
const native = require('../..')
const js = require('../../js')
const { token, rawToken, HS256 } = require('../support/tokens')
const { listen, get } = require('../support/http')
const { runAndListJsFiles, assertEngineNotLoaded } = require('../support/js-engine-loaded')

const NOW = 1_700_000_000
const SECRET = 'express-test-secret-0123456789abcdef'
const CONFIG = { accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 3, rateLimitRefillPerSec: 0.001, baseDomain: 'example.com' }
const bearer = (claims) => `Bearer ${token({ exp: NOW + 60, ...claims }, SECRET)}`

/** Runs `fn` with USE_RUST_AUTH set to `value` (undefined: unset), then restores it. */
function withUseRustAuth(value, fn) {
  const saved = process.env.USE_RUST_AUTH
  try {
    if (value === undefined) delete process.env.USE_RUST_AUTH
    else process.env.USE_RUST_AUTH = value
    fn()
  } finally {
    if (saved === undefined) delete process.env.USE_RUST_AUTH
    else process.env.USE_RUST_AUTH = saved
  }
}

function echo(req, res) {
  res.json({
    user: req.user ?? null,
    tenantId: req.tenantId ?? null,
    tenantSource: req.tenantSource ?? null,
    id: req.id ?? null,
    requestId: req.requestId ?? null,
    // What the route really sees: JSON cannot tell undefined from a missing key.
    types: [typeof req.user, typeof req.tenantId, typeof req.tenantSource],
  })
}

function buildApp(express, mismatches) {
  const app = express()
  const mount = (prefix, mw) => app.use(prefix, mw, echo)
  mount('/api', authShield(CONFIG))
  mount('/js', authShield(CONFIG, { engine: 'js' }))
  mount('/strict', authShield({ ...CONFIG, enforceTenantMatch: true }))
  mount('/optional', authShield(CONFIG, { credentialsRequired: false }))
  mount('/realm', authShield(CONFIG, { realm: 'orders' }))
  mount(
    '/cookie',
    authShield(CONFIG, { getToken: (req) => /(?:^|; )session=([^;]+)/.exec(req.headers.cookie || '')?.[1] }),
  )
  mount('/skip', authShield(CONFIG, { skip: ['/skip/health', /^\/skip\/public\//] }))
  mount('/skipfn', authShield(CONFIG, { skip: (req) => req.method === 'GET' && req.query.open === '1' }))
  mount(
    '/custom',
    authShield(CONFIG, { onError: (err, req, res) => res.status(err.status).json({ message: err.message, reason: err.code, requestId: err.requestId }) }),
  )
  mount(
    '/forward',
    authShield(CONFIG, { onError: (err, req, res, next) => next(err) }),
  )
  const shadow = authShield(CONFIG, { shadow: true, onMismatch: (m) => mismatches.push(m) })
  mount('/shadow', shadow)
  app.get('/stats', (req, res) => res.json(shadow.stats()))
  // Express error handler (4-argument form) for /forward.
  app.use((err, req, res, next) => res.status(err.status || 500).json({ handled: err.code }))
  return app
}

for (const [name, express] of [
  ['Express 5', require('express')],
  ['Express 4', require('express4')],
]) {
  describe(name, () => {
    let server
    const mismatches = []
    before(async () => {
      server = await listen(http.createServer(buildApp(express, mismatches)))
    })
    after(() => server.close())
    const url = (p) => server.base + p

    it('lets a valid token through with req.user, req.tenantId, req.requestId (and req.id) and rate-limit headers', async () => {
      const r = await get(url('/api/orders'), { authorization: bearer({ sub: 'ok-user', email: 'e@x', role: 'admin' }), host: 'acme.example.com:8080' })
      assert.equal(r.status, 200)
      assert.deepEqual(r.json.user, { userId: 'ok-user', email: 'e@x', role: 'admin' })
      assert.equal(r.json.tenantId, 'acme')
      assert.equal(r.json.tenantSource, 'host')
      assert.match(r.headers['x-request-id'], /^[0-9a-f-]{36}$/)
      assert.equal(r.json.id, r.headers['x-request-id'])
      // req.requestId is the name Fastify and AuthResult use; req.id is Express's alias of it.
      assert.equal(r.json.requestId, r.headers['x-request-id'])
      assert.equal(r.headers['ratelimit-limit'], '3')
      assert.equal(r.headers['ratelimit-remaining'], '2')
      assert.equal(r.headers['ratelimit-reset'], '1000')
      assert.equal(r.headers['www-authenticate'], undefined)
      const header = await get(url('/api/orders'), { authorization: bearer({ sub: 'ok-user-2', tenant_id: undefined }), 'x-tenant-id': 'globex' })
      assert.equal(header.json.tenantId, 'globex')
      assert.equal(header.json.tenantSource, 'header')
      assert.deepEqual(header.json.user, { userId: 'ok-user-2' })
      const claim = await get(url('/api/orders'), { authorization: bearer({ sub: 'ok-user-3', tenant_id: 'initech' }), 'x-tenant-id': 'globex' })
      assert.equal(claim.json.tenantId, 'initech')
      assert.equal(claim.json.tenantSource, 'token')
      const none = await get(url('/api/orders'), { authorization: bearer({ sub: 'ok-user-4' }), host: 'localhost' })
      assert.equal(none.status, 200)
      assert.deepEqual(none.json.types, ['object', 'undefined', 'undefined'])
    })

    it('answers a missing token with 401, a bare Bearer challenge and a request id', async () => {
      const r = await get(url('/api/orders'))
      assert.equal(r.status, 401)
      assert.deepEqual(r.json, { error: 'No Authorization header provided', code: 'missing_authorization' })
      assert.equal(r.headers['www-authenticate'], 'Bearer')
      assert.match(r.headers['content-type'], /^application\/json/)
      assert.match(r.headers['x-request-id'], /^[0-9a-f-]{36}$/)
      assert.equal(r.headers['ratelimit-limit'], undefined)
      const realm = await get(url('/realm/x'))
      assert.equal(realm.headers['www-authenticate'], 'Bearer realm="orders"')
    })

    it('tells malformed requests from invalid tokens in WWW-Authenticate (RFC 6750 §3.1)', async () => {
      const basic = await get(url('/api/x'), { authorization: 'Basic dXNlcjpwYXNz' })
      assert.equal(basic.status, 401)
      assert.equal(basic.json.code, 'invalid_authorization_format')
      assert.equal(basic.headers['www-authenticate'], 'Bearer')
      const spaced = await get(url('/api/x'), { authorization: 'Bearer abc def' })
      assert.equal(spaced.headers['www-authenticate'], 'Bearer error="invalid_request", error_description="Invalid Authorization header format"')
      const expired = await get(url('/api/x'), { authorization: bearer({ sub: 'u', exp: NOW - 1 }) })
      assert.equal(expired.status, 401)
      assert.deepEqual(expired.json, { error: 'Token has expired', code: 'token_expired' })
      assert.equal(expired.headers['www-authenticate'], 'Bearer error="invalid_token", error_description="Token has expired"')
      const forged = await get(url('/realm/x'), { authorization: `Bearer ${token({ sub: 'u', exp: NOW + 9 }, 'another-secret-0123456789abcdef-xyz')}` })
      assert.equal(forged.headers['www-authenticate'], 'Bearer realm="orders", error="invalid_token", error_description="Invalid token signature"')
    })

    it('answers tenant problems with 400 and 403, without a challenge', async () => {
      const invalid = await get(url('/api/x'), { authorization: bearer({ sub: 't1' }), 'x-tenant-id': 'bad:id' })
      assert.equal(invalid.status, 400)
      assert.deepEqual(invalid.json, { error: 'Invalid tenant id', code: 'invalid_tenant' })
      assert.equal(invalid.headers['www-authenticate'], undefined)
      const mismatch = await get(url('/strict/x'), { authorization: bearer({ sub: 't2', tenant_id: 'acme' }), host: 'globex.example.com' })
      assert.equal(mismatch.status, 403)
      assert.equal(mismatch.json.code, 'tenant_mismatch')
      assert.match(mismatch.headers['x-request-id'], /^[0-9a-f-]{36}$/)
    })

    it('answers an empty bucket with 429, Retry-After and RateLimit-Remaining: 0', async () => {
      const h = { authorization: bearer({ sub: 'busy-user' }) }
      for (let i = 0; i < 3; i++) assert.equal((await get(url('/api/x'), h)).status, 200)
      const r = await get(url('/api/x'), h)
      assert.equal(r.status, 429)
      assert.deepEqual(r.json, { error: 'Too many requests', code: 'rate_limited' })
      assert.equal(r.headers['ratelimit-remaining'], '0')
      assert.equal(r.headers['ratelimit-limit'], '3')
      const retry = Number(r.headers['retry-after'])
      assert.ok(retry > 990 && retry <= 1000, `Retry-After ${retry}`)
      assert.equal(r.headers['ratelimit-reset'], r.headers['retry-after'])
      assert.equal(r.headers['www-authenticate'], undefined)
    })

    it('lets anonymous requests through with credentialsRequired: false, but not bad tokens', async () => {
      const anonymous = await get(url('/optional/x'))
      assert.equal(anonymous.status, 200)
      // The settled anonymous value, the same in the Fastify plugin: undefined, as in an AuthResult.
      assert.deepEqual(anonymous.json.types, ['undefined', 'undefined', 'undefined'])
      assert.equal(anonymous.headers['www-authenticate'], undefined)
      assert.match(anonymous.headers['x-request-id'], /^[0-9a-f-]{36}$/)
      const known = await get(url('/optional/x'), { authorization: bearer({ sub: 'opt-user' }) })
      assert.equal(known.json.user.userId, 'opt-user')
      const bad = await get(url('/optional/x'), { authorization: 'Bearer x.y.z' })
      assert.equal(bad.status, 401)
      assert.equal(bad.json.code, 'malformed_token')
    })

    it('reads the token through getToken (a cookie here)', async () => {
      const r = await get(url('/cookie/x'), { cookie: `theme=dark; session=${token({ sub: 'cookie-user', exp: NOW + 9 }, SECRET)}` })
      assert.equal(r.status, 200)
      assert.equal(r.json.user.userId, 'cookie-user')
      const none = await get(url('/cookie/x'), { authorization: bearer({ sub: 'header-user' }) })
      assert.equal(none.status, 401)
      assert.equal(none.json.code, 'missing_authorization')
    })

    it('skips listed paths, patterns and predicate matches without authenticating', async () => {
      assert.equal((await get(url('/skip/health'))).status, 200)
      assert.equal((await get(url('/skip/health?full=1'))).status, 200)
      assert.equal((await get(url('/skip/public/logo.png'))).status, 200)
      assert.equal((await get(url('/skip/health/deep'))).status, 401)
      assert.equal((await get(url('/skip/private'))).status, 401)
      const skipped = await get(url('/skip/health'))
      assert.equal(skipped.headers['x-request-id'], undefined)
      assert.equal((await get(url('/skipfn/x?open=1'))).status, 200)
      assert.equal((await get(url('/skipfn/x'))).status, 401)
    })

    it('hands failures to onError, after setting the headers', async () => {
      const r = await get(url('/custom/x'), { authorization: 'Bearer a.b.c' })
      assert.equal(r.status, 401)
      assert.deepEqual(r.json, { message: 'Malformed token', reason: 'malformed_token', requestId: r.headers['x-request-id'] })
      assert.equal(r.headers['www-authenticate'], 'Bearer error="invalid_token", error_description="Malformed token"')
      const forwarded = await get(url('/forward/x'))
      assert.equal(forwarded.status, 401)
      assert.deepEqual(forwarded.json, { handled: 'missing_authorization' })
    })

    it('answers identically with the native and the JS engine', async () => {
      const cases = [
        {},
        { authorization: bearer({ sub: 'same', email: 'e@x', tenant_id: 'acme' }) },
        { authorization: bearer({ sub: 'same' }), 'x-tenant-id': 'Globex' },
        { authorization: bearer({ sub: 'same', exp: NOW }) },
        { authorization: bearer({ sub: 'same', type: 'refresh' }) },
        { authorization: 'Bearer a.b.c' },
        { authorization: 'Token x' },
        { authorization: bearer({ sub: 'same' }), 'x-tenant-id': '-x' },
        { authorization: bearer({ sub: 'same-limit' }) },
        { authorization: bearer({ sub: 'same-limit' }) },
        { authorization: bearer({ sub: 'same-limit' }) },
        { authorization: bearer({ sub: 'same-limit' }) },
      ]
      const comparable = (r) => {
        const { 'x-request-id': id, date, etag, 'retry-after': retry, 'ratelimit-reset': reset, ...headers } = r.headers
        return { status: r.status, body: { ...r.json, id: undefined, requestId: undefined }, headers, retry: retry && Number(retry) > 990 }
      }
      for (const headers of cases) {
        const [a, b] = [await get(url('/api/x'), headers), await get(url('/js/x'), headers)]
        assert.deepEqual(comparable(b), comparable(a), JSON.stringify(headers))
      }
    })

    it('runs both engines in shadow mode and counts their differences', async () => {
      const before = (await get(url('/stats'))).json
      assert.equal(before.engine, 'native')
      assert.equal(before.shadow, true)
      assert.equal(before.shadowEngine, 'js')
      const requests = [
        {},
        { authorization: bearer({ sub: 'shadow-user', tenant_id: 'acme' }) },
        { authorization: bearer({ sub: 'shadow-user', exp: NOW - 5 }) },
        { authorization: 'Bearer nope' },
      ]
      for (const h of requests) await get(url('/shadow/x'), h)
      // A token the two engines are known to read differently while the native float parsing
      // is not exact (see differential.test.js): the count must match what they really do.
      const odd = `Bearer ${rawToken(HS256, `{"sub":"odd","exp":${NOW}.0000001}`, SECRET)}`
      const pair = [new native.Authenticator(CONFIG), new js.Authenticator(CONFIG)].map((a) => a.authenticate(odd).errorCode)
      const disagree = pair[0] === pair[1] ? 0 : 1
      await get(url('/shadow/x'), { authorization: odd })
      const after = (await get(url('/stats'))).json
      assert.equal(after.requests - before.requests, requests.length + 1)
      assert.equal(after.mismatches - before.mismatches, disagree)
      assert.equal(mismatches.length, after.mismatches)
      if (disagree) {
        const m = mismatches.at(-1)
        assert.equal(m.primaryEngine, 'native')
        assert.equal(m.shadowEngine, 'js')
        assert.ok(m.fields.includes('authenticated'))
        assert.equal(m.primary.errorCode, pair[0])
      }
    })
  })
}

test('the Express adapter on the native engine never loads the JS engine', () => {
  const { value, loaded } = runAndListJsFiles(`
    const authShield = require(${JSON.stringify(path.join(__dirname, '..', '..', 'adapters', 'express.js'))})
    report(authShield({ accessSecret: ${JSON.stringify(SECRET)} }).engine)`)
  assert.equal(value, 'native')
  assert.ok(loaded.includes('lib/http/engine.js'), loaded.join())
  assertEngineNotLoaded(loaded)
})

test('an engine asked for explicitly must match a passed Authenticator', () => {
  const conflict = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }
  withUseRustAuth(undefined, () => {
    assert.throws(() => authShield(new native.Authenticator(CONFIG), { engine: 'js' }), {
      ...conflict,
      message: /options\.engine 'js' asks for the js engine, but a native Authenticator was passed: pass the config object instead/,
    })
    assert.throws(() => authShield(new js.Authenticator(CONFIG), { engine: 'native' }), { ...conflict, message: /but a js Authenticator/ })
    assert.equal(authShield(new js.Authenticator(CONFIG), { engine: 'js' }).engine, 'js')
    assert.equal(authShield(new native.Authenticator(CONFIG), { engine: 'native' }).engine, 'native')
    // Without an explicit choice the instance decides.
    assert.equal(authShield(new js.Authenticator(CONFIG)).engine, 'js')
    assert.equal(authShield(new native.Authenticator(CONFIG)).engine, 'native')
  })
  withUseRustAuth('false', () => {
    assert.throws(() => authShield(new native.Authenticator(CONFIG)), { ...conflict, message: /^USE_RUST_AUTH=false asks for the js engine, but a native Authenticator/ })
    assert.equal(authShield(new js.Authenticator(CONFIG)).engine, 'js')
    // The option decides over the variable, for instances as for configs.
    assert.equal(authShield(new native.Authenticator(CONFIG), { engine: 'native' }).engine, 'native')
  })
  withUseRustAuth('TRUE', () => {
    assert.throws(() => authShield(new js.Authenticator(CONFIG)), { ...conflict, message: /^USE_RUST_AUTH=TRUE asks for the native engine, but a js Authenticator/ })
  })
})

test('an unknown USE_RUST_AUTH value is a TypeError naming the accepted values', () => {
  for (const value of ['nope', 'rust', 'native', '2']) {
    const message = `USE_RUST_AUTH must be one of true, 1, yes, on, false, 0, no, off (any case) or unset, got ${JSON.stringify(value)}`
    withUseRustAuth(value, () => {
      assert.throws(() => authShield(CONFIG), { name: 'TypeError', message }, value)
      assert.throws(() => authShield(CONFIG, { engine: 'js' }), { name: 'TypeError', message }, value)
    })
  }
  for (const [value, engine] of [['', 'native'], [' off ', 'js'], ['No', 'js'], ['1', 'native'], ['0', 'js'], ['yes', 'native']]) {
    withUseRustAuth(value, () => assert.equal(authShield(CONFIG).engine, engine, JSON.stringify(value)))
  }
})

test('USE_RUST_AUTH=false selects the JS engine; the option wins over the variable', () => {
  withUseRustAuth('false', () => {
    assert.equal(authShield(CONFIG).engine, 'js')
    assert.equal(authShield(CONFIG, { engine: 'native' }).engine, 'native')
  })
  withUseRustAuth('true', () => assert.equal(authShield(CONFIG).engine, 'native'))
  withUseRustAuth(undefined, () => assert.equal(authShield(CONFIG).engine, 'native'))
})

test('falls back to the JS engine, with one clear warning, when the binary cannot load', () => {
  const script = `
    const authShield = require(${JSON.stringify(path.join(__dirname, '..', '..', 'adapters', 'express.js'))})
    const config = { accessSecret: ${JSON.stringify(SECRET)} }
    const a = authShield(config)
    const b = authShield(config, { shadow: true })
    console.log(JSON.stringify([a.engine, b.engine, b.stats().shadow]))`
  const child = spawnSync(process.execPath, ['-e', script], {
    env: { ...process.env, NAPI_RS_NATIVE_LIBRARY_PATH: '/nonexistent/auth-shield.node', USE_RUST_AUTH: '' },
    encoding: 'utf8',
  })
  assert.equal(child.status, 0, child.stderr)
  assert.deepEqual(JSON.parse(child.stdout), ['js', 'js', false])
  assert.equal(child.stderr.match(/AUTH_SHIELD_NATIVE_UNAVAILABLE/g).length, 1)
  assert.match(child.stderr, /native binary could not be loaded .*using the pure-JS engine/)
})

test('when the native package fails with a JavaScript error (not a missing binary), the fallback warning says so', () => {
  // A fault injected into one module the native package loads: a TypeError thrown at require time.
  const inject = `
    const Module = require('node:module')
    const load = Module._load
    Module._load = function (request, parent, isMain) {
      if (request === './base/deprecation.js' && parent && parent.filename.endsWith('native.js')) throw new TypeError('injected fault')
      return load.apply(this, arguments)
    }`
  const script = `
    ${inject}
    const authShield = require(${JSON.stringify(path.join(__dirname, '..', '..', 'adapters', 'express.js'))})
    console.log(authShield({ accessSecret: ${JSON.stringify(SECRET)} }).engine)`
  const child = spawnSync(process.execPath, ['-e', script], { env: { ...process.env, USE_RUST_AUTH: '' }, encoding: 'utf8' })
  assert.equal(child.status, 0, child.stderr)
  assert.equal(child.stdout.trim(), 'js')
  assert.equal(child.stderr.match(/AUTH_SHIELD_NATIVE_UNAVAILABLE/g).length, 1)
  assert.match(child.stderr, /failed to load with a JavaScript error, not a missing binary \(TypeError: injected fault; please report it\)/)
  assert.doesNotMatch(child.stderr, /native binary could not be loaded/)
})

test('refuses bad options with a TypeError naming them', () => {
  for (const [options, message] of [
    [{ credentialRequired: false }, /options\.credentialRequired is not a known option/],
    [{ credentialsRequired: 'no' }, /credentialsRequired must be a boolean/],
    [{ getToken: 'cookie' }, /getToken must be a function/],
    [{ skip: [5] }, /options\.skip must be/],
    [{ engine: 'rust' }, /options\.engine must be 'native' or 'js'/],
    [{ shadow: 1 }, /options\.shadow must be a boolean/],
    [{ realm: 'a"b' }, /options\.realm/],
  ]) {
    assert.throws(() => authShield(CONFIG, options), { name: 'TypeError', message })
  }
  assert.throws(() => authShield(new js.Authenticator(CONFIG), { shadow: true }), /pass the config object/)
  assert.throws(() => authShield({ accessSecret: 'short' }), { name: 'RangeError' })
})
