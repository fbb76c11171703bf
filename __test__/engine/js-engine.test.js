'use strict'

// The pure-JS chain on its own: config validation identical to the native binding, each
// step's behaviour, token issuance, the bounded rate limiter and the AuthResult shape.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const js = require('../../js')
const native = require('../..')
const { RateLimiter } = require('../../js/rate-limit')
const { message: contractMessage } = require('../../contract')
const SCHEMA = require('../../contract/options.json')
const RESULTS = require('../../contract/results.json')
const { rawToken, token, HS256 } = require('../support/tokens')

const SECRET = 'js-engine-test-secret-0123456789abcdef'
const NOW = 1_700_000_000
const base = { accessSecret: SECRET, clockTimestamp: NOW }
const bearer = (claims, secret = SECRET) => `Bearer ${token(claims, secret)}`

function thrown(fn) {
  try {
    fn()
  } catch (err) {
    return { type: err.constructor.name, code: err.code, message: err.message }
  }
  return null
}

test('rejects every bad config exactly as the native binding does', () => {
  const inherited = Object.create({ accessSecret: SECRET, stray: 1 })
  const bad = [
    undefined,
    null,
    5,
    'config',
    [],
    () => {},
    {},
    { acessSecret: SECRET },
    inherited,
    { accessSecret: 5 },
    { accessSecret: '' },
    { accessSecret: 'short' },
    { accessSecret: 'short', allowShortSecret: 'yes' },
    { accessSecret: new ArrayBuffer(32) },
    { accessSecret: SECRET, refreshSecret: 'short' },
    { accessSecret: SECRET, issuer: '' },
    { accessSecret: SECRET, issuer: [] },
    { accessSecret: SECRET, issuer: ['a', 1] },
    { accessSecret: SECRET, audience: {} },
    { accessSecret: SECRET, clockToleranceSec: -1 },
    { accessSecret: SECRET, clockToleranceSec: 1e300 },
    { accessSecret: SECRET, clockToleranceSec: NaN },
    { accessSecret: SECRET, clockToleranceSec: '5' },
    { accessSecret: SECRET, rateLimitMax: 1.5 },
    { accessSecret: SECRET, rateLimitMax: -1 },
    { accessSecret: SECRET, rateLimitMax: 2e9 },
    { accessSecret: SECRET, rateLimitRefillPerSec: 0 },
    { accessSecret: SECRET, rateLimitRefillPerSec: -0.5 },
    { accessSecret: SECRET, rateLimitMaxKeys: 0 },
    { accessSecret: SECRET, enforceTenantMatch: 1 },
    { accessSecret: SECRET, baseDomain: 5 },
    { accessSecret: SECRET, baseDomain: 'A\n"b\u0007é\\.' },
    { accessSecret: SECRET, baseDomain: '.' },
    { accessSecret: SECRET, baseDomain: 'a..b' },
    { accessSecret: SECRET, accessTtlSec: 0 },
    { accessSecret: SECRET, refreshTtlSec: Infinity },
    { accessSecret: SECRET, maxTokenBytes: 63 },
    { accessSecret: SECRET, maxTokenBytes: 2 ** 20 + 1 },
    { accessSecret: SECRET, requireSubject: 'no' },
    { accessSecret: SECRET, clockTimestamp: -1e-7 },
    { accessSecret: SECRET, clockTimestamp: 1e14 },
  ]
  for (const config of bad) {
    const expected = thrown(() => new native.Authenticator(config))
    assert.ok(expected, `native accepted ${String(config)}`)
    assert.deepEqual(thrown(() => new js.Authenticator(config)), expected)
  }
})

test('accepts what the native binding accepts, and exposes the same getters', () => {
  const good = [
    { accessSecret: SECRET },
    { accessSecret: Buffer.from(SECRET) },
    { accessSecret: new Uint16Array(16) },
    { accessSecret: 'short', allowShortSecret: true },
    { accessSecret: SECRET, issuer: null, audience: undefined, baseDomain: 'Example.COM.', rateLimitMax: 0 },
    { accessSecret: SECRET, rateLimitMax: 7, rateLimitRefillPerSec: 0.25, accessTtlSec: 60.5, refreshTtlSec: 120 },
    { accessSecret: SECRET, clockToleranceSec: -0, clockTimestamp: 0 },
  ]
  for (const config of good) {
    const a = new native.Authenticator(config)
    const b = new js.Authenticator(config)
    for (const getter of ['rateLimitMax', 'rateLimitRefillPerSec', 'accessTtlSec', 'refreshTtlSec', 'rateLimitBuckets']) {
      assert.equal(b[getter], a[getter], getter)
    }
  }
})

test('returns every AuthResult field of contract/options.json, in its order, success and failure', () => {
  const auth = new js.Authenticator({ ...base, rateLimitMax: 5 })
  const keys = RESULTS.AuthResult.map((f) => f.name)
  const ok = auth.authenticate(bearer({ sub: 'u1', email: 'e@x', role: 'admin', exp: NOW + 60 }), 'acme')
  assert.deepEqual(Object.keys(ok), keys)
  assert.match(ok.requestId, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
  assert.deepEqual({ ...ok, requestId: 'x' }, {
    authenticated: true, userId: 'u1', email: 'e@x', role: 'admin', tenantId: 'acme', tenantSource: 'header', scope: undefined, requestId: 'x',
    rateLimitRemaining: 4, rateLimitLimit: 5, retryAfterMs: 0, error: undefined, errorCode: undefined, errorStatus: undefined,
    dpopReplayKey: undefined, dpopReplayUntilSec: undefined,
  })
  const bad = auth.authenticate(undefined)
  assert.deepEqual(Object.keys(bad), keys)
  assert.deepEqual({ ...bad, requestId: 'x' }, {
    authenticated: false, userId: undefined, email: undefined, role: undefined, tenantId: undefined, tenantSource: undefined,
    scope: undefined, requestId: 'x', rateLimitRemaining: undefined, rateLimitLimit: 5, retryAfterMs: 0,
    error: 'No Authorization header provided', errorCode: 'missing_authorization', errorStatus: 401,
    dpopReplayKey: undefined, dpopReplayUntilSec: undefined,
  })
  // The values the schema fixes per outcome.
  for (const field of RESULTS.AuthResult) {
    const fixed = (v) => (v === 'undefined' ? undefined : v)
    if ('onSuccess' in field) assert.equal(ok[field.name], fixed(field.onSuccess), field.name)
    if ('onFailure' in field) assert.equal(bad[field.name], fixed(field.onFailure), field.name)
  }
})

test('takes option names, defaults and bounds from contract/options.json', () => {
  const auth = new js.Authenticator({ accessSecret: SECRET })
  for (const name of ['rateLimitMax', 'rateLimitRefillPerSec', 'accessTtlSec', 'refreshTtlSec']) {
    assert.equal(auth[name], SCHEMA.options.find((o) => o.name === name).default, name)
  }
  for (const option of SCHEMA.options) {
    // Every option is known: null takes its default, never "not a known option".
    assert.doesNotThrow(() => new js.Authenticator({ accessSecret: SECRET, [option.name]: option.required || option.name === 'accessSecret' ? SECRET : null }), option.name)
    if (option.kind !== 'number' && option.kind !== 'integer') continue
    const message = (v) => contractMessage('numberOutOfRange', { name: `config.${option.name}`, min: option.min, max: option.max, value: v })
    for (const v of [option.max * 2 + 1, option.min - 1]) {
      assert.deepEqual(thrown(() => new js.Authenticator({ accessSecret: SECRET, [option.name]: v })), { type: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: message(v) })
    }
    assert.doesNotThrow(() => new js.Authenticator({ accessSecret: SECRET, [option.name]: option.max }), option.name)
    if (option.exclusiveMin) {
      assert.equal(thrown(() => new js.Authenticator({ accessSecret: SECRET, [option.name]: option.min })).type, 'RangeError')
    } else {
      assert.doesNotThrow(() => new js.Authenticator({ accessSecret: SECRET, [option.name]: option.min }), option.name)
    }
  }
})

test('extracts bearer tokens strictly', () => {
  const auth = new js.Authenticator({ ...base, rateLimitMax: 0, maxTokenBytes: 64 })
  const code = (h) => auth.authenticate(h).errorCode
  assert.equal(code(undefined), 'missing_authorization')
  assert.equal(code(null), 'missing_authorization')
  assert.equal(code(''), 'missing_authorization')
  for (const h of ['Basic abc', 'Bearer', 'Bearer ', 'Bearerabc', 'Bearer\tabc', ' Bearer abc', 'Bearer abc def', 'Bearer ===', 'Bearer a=b', 'Bearer é']) {
    assert.equal(code(h), 'invalid_authorization_format', h)
  }
  assert.equal(code(`Bearer ${'a'.repeat(65)}`), 'token_too_large')
  // The limit counts UTF-8 bytes: 22 two-byte characters are 44 bytes, 33 are 66.
  assert.equal(code(`Bearer ${'é'.repeat(22)}`), 'invalid_authorization_format')
  assert.equal(code(`Bearer ${'é'.repeat(33)}`), 'token_too_large')
  assert.equal(code('bEaReR    abc=='), 'malformed_token')
})

test('throws a TypeError for non-string header arguments, never for header content', () => {
  const auth = new js.Authenticator(base)
  for (const [args, name] of [
    [[5], 'authorization'],
    [[undefined, {}], 'tenantHeader'],
    [[undefined, undefined, ['h']], 'host'],
  ]) {
    assert.throws(() => auth.authenticate(...args), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: `${name} must be a string, null or undefined` })
  }
  assert.equal(auth.authenticate('\u0000\ud800'.repeat(100000)).errorCode, 'invalid_authorization_format')
})

test('refuses tokens in the fixed check order', () => {
  const auth = new js.Authenticator({ ...base, issuer: 'me', audience: 'api', rateLimitMax: 0 })
  const code = (claims, secret, header) => auth.authenticate(`Bearer ${rawToken(header || HS256, JSON.stringify(claims), secret || SECRET)}`).errorCode
  const good = { sub: 'u', exp: NOW + 1, iss: 'me', aud: 'api' }
  assert.equal(code(good), undefined)
  assert.equal(code(good, 'another-secret-of-enough-length-000000'), 'invalid_signature')
  assert.equal(code(good, undefined, '{"alg":"none"}'), 'unsupported_algorithm')
  assert.equal(code(good, undefined, '{"alg":"HS256","crit":["x"]}'), 'malformed_token')
  // A bad signature is reported before wrong claim types; types before times.
  assert.equal(code({ ...good, exp: 'soon' }, 'another-secret-of-enough-length-000000'), 'invalid_signature')
  assert.equal(code({ ...good, exp: 'soon', nbf: NOW + 9 }), 'invalid_claims')
  assert.equal(code({ ...good, nbf: NOW + 1, exp: NOW - 1 }), 'token_not_yet_valid')
  assert.equal(code({ ...good, exp: NOW }), 'token_expired')
  assert.equal(code({ sub: 'u', iss: 'other', aud: 'x' }), 'missing_expiration')
  assert.equal(code({ ...good, aud: ['x'], iss: 'other' }), 'invalid_audience')
  assert.equal(code({ ...good, iss: 'other', sub: '' }), 'invalid_issuer')
  assert.equal(code({ ...good, sub: '', type: 'refresh' }), 'missing_subject')
  assert.equal(code({ ...good, type: 'refresh' }), 'wrong_token_type')
  assert.equal(code({ ...good, type: 'access' }), undefined)
})

test('uses a clockTimestamp of 0 as the time, not as "unset"', () => {
  const auth = new js.Authenticator({ accessSecret: SECRET, clockTimestamp: 0, rateLimitMax: 0, audience: 'api' })
  const code = (claims) => auth.authenticate(bearer(claims)).errorCode
  assert.equal(code({ sub: 'u', exp: 1, aud: 'api' }), undefined)
  assert.equal(code({ sub: 'u', exp: 0, aud: 'api' }), 'token_expired')
  assert.equal(code({ sub: 'u', exp: 5, nbf: 1, aud: 'api' }), 'token_not_yet_valid')
  assert.equal(code({ sub: 'u', exp: 5, aud: 'web' }), 'invalid_audience')
})

test('resolves tenants: claim, then header, then subdomain', () => {
  const auth = new js.Authenticator({ ...base, rateLimitMax: 0 })
  const tenant = (claim, header, host) => {
    const r = auth.authenticate(bearer({ sub: 'u', exp: NOW + 9, ...(claim === undefined ? {} : { tenant_id: claim }) }), header, host)
    return r.authenticated ? r.tenantId : r.errorCode
  }
  assert.equal(tenant('c', 'h', 's.example.com'), 'c')
  assert.equal(tenant(undefined, 'h', 's.example.com'), 'h')
  assert.equal(tenant(undefined, undefined, 'ACME.Example.com:8080'), 'acme')
  assert.equal(tenant(undefined, '', 'www.example.com'), undefined)
  assert.equal(tenant(undefined, undefined, '[::1]:3000'), undefined)
  assert.equal(tenant(undefined, 'bad:id', undefined), 'invalid_tenant')
  assert.equal(tenant('c', 'bad:id', undefined), 'c')
  const strict = new js.Authenticator({ ...base, rateLimitMax: 0, enforceTenantMatch: true, baseDomain: 'example.com' })
  const strictTenant = (claim, header, host) => {
    const r = strict.authenticate(bearer({ sub: 'u', exp: NOW + 9, tenant_id: claim }), header, host)
    return r.authenticated ? r.tenantId : r.errorCode
  }
  assert.equal(strictTenant('Acme', undefined, 'acme.example.com'), 'Acme')
  assert.equal(strictTenant('acme', 'globex', undefined), 'tenant_mismatch')
  assert.equal(strictTenant('acme', undefined, 'globex.other.com'), 'acme')
  assert.equal(strictTenant('acme', 'bad:id', undefined), 'invalid_tenant')
})

test('tells where the tenant came from: token, header or host', () => {
  const auth = new js.Authenticator({ ...base, rateLimitMax: 0 })
  const source = (claim, header, host) => {
    const r = auth.authenticate(bearer({ sub: 'u', exp: NOW + 9, ...(claim === undefined ? {} : { tenant_id: claim }) }), header, host)
    return [r.tenantId, r.tenantSource]
  }
  assert.deepEqual(source('c', 'h', 's.example.com'), ['c', 'token'])
  assert.deepEqual(source(undefined, 'h', 's.example.com'), ['h', 'header'])
  assert.deepEqual(source(undefined, undefined, 'S.example.com'), ['s', 'host'])
  assert.deepEqual(source(undefined, undefined, 'localhost'), [undefined, undefined])
  assert.deepEqual(source('', '', 'www.example.com'), [undefined, undefined])
})

test('rate-limits per user and tenant with Retry-After data', () => {
  const auth = new js.Authenticator({ ...base, rateLimitMax: 2, rateLimitRefillPerSec: 0.5 })
  const h = bearer({ sub: 'u', exp: NOW + 9 })
  assert.equal(auth.authenticate(h, 'a').rateLimitRemaining, 1)
  assert.equal(auth.authenticate(h, 'a').rateLimitRemaining, 0)
  const limited = auth.authenticate(h, 'a')
  assert.equal(limited.errorCode, 'rate_limited')
  assert.equal(limited.errorStatus, 429)
  assert.equal(limited.rateLimitRemaining, 0)
  assert.ok(limited.retryAfterMs > 1900 && limited.retryAfterMs <= 2000)
  // A header tenant is the same bucket; a tenant the token names is another (issue 12).
  assert.equal(auth.authenticate(h, 'b').errorCode, 'rate_limited')
  assert.equal(auth.authenticate(bearer({ sub: 'u', tenant_id: 'b', exp: NOW + 9 })).rateLimitRemaining, 1)
  assert.equal(auth.rateLimitBuckets, 2)
  // Failed authentications take no token.
  assert.equal(auth.authenticate(bearer({ sub: 'u' })).errorCode, 'missing_expiration')
  assert.equal(auth.rateLimitBuckets, 2)
})

test('token buckets refill continuously and stay bounded under a flood of keys', () => {
  const SEC = 1e9
  const rl = new RateLimiter(2, 4, 100)
  rl.take('u', 0)
  rl.take('u', 0)
  assert.deepEqual(rl.take('u', SEC / 8), { allowed: false, remaining: 0, retryAfterMs: 125 })
  assert.deepEqual(rl.take('u', SEC / 4), { allowed: true, remaining: 0 })
  assert.deepEqual(rl.take('u', 10 * SEC), { allowed: true, remaining: 1 })
  const backwards = new RateLimiter(1, 1, 100)
  backwards.take('u', 5 * SEC)
  assert.equal(backwards.take('u', SEC).allowed, false)

  const flood = new RateLimiter(10, 1, 1000)
  for (let i = 0; i < 20000; i++) {
    flood.take(`k${i}`, 100 * SEC + i)
    assert.ok(flood.size <= 1001)
  }
  const busy = new RateLimiter(5, 0.001, 100)
  for (let i = 0; i < 5; i++) busy.take('busy', 0)
  for (let i = 0; i < 5000; i++) {
    busy.take('busy', i * 1000)
    busy.take(`k${i}`, i * 1000)
  }
  assert.equal(busy.take('busy', 1e7).allowed, false)
})

test('signs tokens that carry the library claims and refuses reserved ones', () => {
  const auth = new js.Authenticator({ ...base, refreshSecret: `${SECRET}-refresh`, issuer: ['me', 'old'], audience: 'api' })
  const access = auth.signAccessToken({ sub: 'u1', tenant_id: 'acme', b: 1, a: 2 })
  const [header, payload] = access.split('.').map((p) => Buffer.from(p, 'base64url').toString())
  assert.equal(header, '{"alg":"HS256","typ":"JWT"}')
  const claims = JSON.parse(payload)
  assert.deepEqual(Object.keys(claims), ['a', 'aud', 'b', 'exp', 'iat', 'iss', 'jti', 'sub', 'tenant_id', 'type'])
  assert.deepEqual({ ...claims, jti: 'x' }, { a: 2, aud: 'api', b: 1, exp: NOW + 900, iat: NOW, iss: 'me', jti: 'x', sub: 'u1', tenant_id: 'acme', type: 'access' })
  assert.equal(auth.verifyAccessToken(access).valid, true)
  const refresh = auth.signRefreshToken({ sub: 'u1' })
  assert.equal(auth.verifyRefreshToken(refresh).valid, true)
  // Separate secrets: each key refuses the other kind's token, which the other key made.
  assert.equal(auth.verifyAccessToken(refresh).errorCode, 'wrong_token_type')
  assert.equal(auth.verifyRefreshToken(access).errorCode, 'wrong_token_type')

  const n = new native.Authenticator({ ...base, issuer: ['me', 'old'], audience: 'api' })
  const j = new js.Authenticator({ ...base, issuer: ['me', 'old'], audience: 'api' })
  const cycle = {}
  cycle.self = cycle
  for (const claims of [null, [], 'x', { sub: '' }, { sub: 1 }, { sub: 'u', exp: 1 }, { sub: 'u', iss: 'x' }, { sub: 'u', iat: 1 }, { sub: 'u', jti: 'x' }, { sub: 'u', type: 'x' }, { sub: 'u', email: null }, { sub: 'u', role: 5 }, { sub: 'u', tenant_id: 'bad:id' }, { sub: 'u', aud: [1] }, { sub: 'u', nbf: '1' }, { sub: 'u', big: 10n }, cycle, { toJSON: () => undefined }, { toJSON: () => 1.5 }, { toJSON: () => [1] }, { toJSON: () => 'abc' }, { sub: 'é', x: '\ud800' }, { sub: 'u', x: '\udc00' }, { sub: 'u', y: '\ud800\ud800' }]) {
    const expected = thrown(() => n.signAccessToken(claims))
    assert.ok(expected, 'the native signer refuses it')
    assert.deepEqual(thrown(() => j.signAccessToken(claims)), expected)
  }
  const noRefresh = new js.Authenticator(base)
  // Same class, code and message as the native engine (differential.test.js compares them).
  const needs = (method) => ({
    name: 'Error',
    code: 'ERR_AUTH_SHIELD_NO_REFRESH_SECRET',
    message: `${method} needs a refresh key: set refreshSecret (or signingKey) in the Authenticator config`,
  })
  assert.throws(() => noRefresh.signRefreshToken({ sub: 'u' }), needs('signRefreshToken'))
  assert.throws(() => noRefresh.verifyRefreshToken('x'), needs('verifyRefreshToken'))
  assert.throws(() => noRefresh.verifyAccessToken(5), { name: 'TypeError', message: 'token must be a string' })
  const small = new js.Authenticator({ ...base, maxTokenBytes: 200 })
  assert.throws(() => small.signAccessToken({ sub: 'u'.repeat(200) }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' })
})

test('verification results list every key, undefined for what the token lacks', () => {
  const auth = new js.Authenticator({ ...base, requireSubject: false })
  const none = { userId: undefined, email: undefined, role: undefined, tenantId: undefined, jti: undefined, expiresAtSec: undefined }
  assert.deepEqual(auth.verifyAccessToken(token({ exp: NOW + 5, email: 'e@x' }, SECRET)), {
    valid: true, ...none, email: 'e@x', expiresAtSec: NOW + 5, error: undefined, errorCode: undefined, errorStatus: undefined,
  })
  assert.deepEqual(auth.verifyAccessToken('x.y'), { valid: false, ...none, error: 'Malformed token', errorCode: 'malformed_token', errorStatus: 401 })
  assert.equal(auth.verifyAccessToken('a'.repeat(9000)).errorCode, 'token_too_large')
})

test('reads deeply nested unknown claims without overflowing the stack', () => {
  const auth = new js.Authenticator({ ...base, rateLimitMax: 0, maxTokenBytes: 1 << 20 })
  const deep = `{"sub":"u","exp":${NOW + 9},"x":${'['.repeat(300000)}${']'.repeat(300000)}}`
  assert.equal(auth.authenticate(`Bearer ${rawToken(HS256, deep, SECRET)}`).authenticated, true)
  const unclosed = `{"sub":"u","exp":${NOW + 9},"x":${'['.repeat(300000)}}`
  assert.equal(auth.authenticate(`Bearer ${rawToken(HS256, unclosed, SECRET)}`).errorCode, 'malformed_token')
})

test('HS256 MACs equal node:crypto createHmac for every key and message length that matters', () => {
  const { createHmac, randomBytes } = require('node:crypto')
  const { Hs256Key } = require('../../js/jwt/key')
  // Keys around the 64-byte block (longer ones are hashed first, RFC 2104 §2); messages around
  // the padding edges and past the prepared buffer (8192 bytes), where createHmac takes over.
  for (const keyLength of [1, 31, 32, 63, 64, 65, 200]) {
    const secret = randomBytes(keyLength)
    const key = new Hs256Key(secret)
    for (const length of [0, 1, 55, 56, 64, 119, 120, 8191, 8192, 8193, 20000]) {
      const message = 'a.b-_'.repeat(Math.ceil(length / 5)).slice(0, length)
      assert.deepEqual(key.mac(message), createHmac('sha256', secret).update(message).digest(), `key ${keyLength}, message ${length}`)
      // The same key again: nothing of the previous message may leak into the next MAC.
      assert.deepEqual(key.mac('x'), createHmac('sha256', secret).update('x').digest())
    }
  }
})
