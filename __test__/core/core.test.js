'use strict'
// Behaviour of the fused native call (issue 2): every branch of the chain.
const test = require('node:test')
const assert = require('node:assert/strict')
const jwt = require('jsonwebtoken')
const { Authenticator } = require('../..')
const { rawToken, SECRET, NOW } = require('../support/tokens')

// The AuthResult keys, in order, from the one description of the result.
const KEYS = require('../../contract/results.json').AuthResult.map((field) => field.name)
const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const make = (extra = {}) => new Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, ...extra })
const sign = (claims, secret = SECRET) => rawToken({ alg: 'HS256', typ: 'JWT' }, { exp: NOW + 60, ...claims }, secret)
const bearer = (claims, secret) => `Bearer ${sign(claims, secret)}`

function expectError(result, code, status) {
  assert.equal(result.authenticated, false)
  assert.equal(result.errorCode, code)
  assert.equal(result.errorStatus, status)
  assert.equal(typeof result.error, 'string')
  assert.equal(result.userId, undefined)
  assert.match(result.requestId, UUID_V4)
}

test('a valid token yields the flat result with claims, tenant, rate limit and request id', () => {
  const auth = make({ rateLimitMax: 5 })
  const r = auth.authenticate(bearer({ sub: 'u1', email: 'a@b.c', role: 'admin', tenant_id: 'acme' }), null, null)
  assert.deepEqual(Object.keys(r), KEYS)
  assert.deepEqual({ ...r, requestId: 'x' }, {
    authenticated: true, userId: 'u1', email: 'a@b.c', role: 'admin', tenantId: 'acme', tenantSource: 'token', scope: undefined, requestId: 'x',
    rateLimitRemaining: 4, rateLimitLimit: 5, retryAfterMs: 0, error: undefined, errorCode: undefined, errorStatus: undefined,
    dpopReplayKey: undefined, dpopReplayUntilSec: undefined,
  })
  assert.match(r.requestId, UUID_V4)
})

test('every failure has the same keys and a request id', () => {
  const r = make().authenticate(undefined, undefined, undefined)
  assert.deepEqual(Object.keys(r), KEYS)
  expectError(r, 'missing_authorization', 401)
  assert.equal(r.error, 'No Authorization header provided')
})

test('request ids are fresh UUID v4 on every call', () => {
  const auth = make()
  const ids = new Set()
  for (let i = 0; i < 1000; i++) ids.add(auth.authenticate(null).requestId)
  assert.equal(ids.size, 1000)
  for (const id of ids) assert.match(id, UUID_V4)
})

test('bearer extraction follows RFC 6750', () => {
  const auth = make({ rateLimitMax: 0 })
  const token = sign({ sub: 'u' })
  for (const header of [`Bearer ${token}`, `bearer ${token}`, `BEARER ${token}`, `Bearer   ${token}`]) {
    assert.equal(auth.authenticate(header).authenticated, true, header)
  }
  expectError(auth.authenticate(''), 'missing_authorization', 401)
  expectError(auth.authenticate(null), 'missing_authorization', 401)
  for (const header of ['Basic dTpw', 'Bearer', 'Bearer ', `Bearer${token}`, `Bearer ${token} x`, `Token ${token}`, `Bearer\t${token}`, `Bearer ${token}\n`, 'Bearer a\u0000b', 'Bearer ü']) {
    const r = auth.authenticate(header)
    expectError(r, 'invalid_authorization_format', 401)
    assert.equal(r.error, 'Invalid Authorization header format')
  }
})

test('tokens over maxTokenBytes are rejected before decoding', () => {
  const auth = make({ maxTokenBytes: 100 })
  expectError(auth.authenticate(`Bearer ${'a'.repeat(101)}`), 'token_too_large', 401)
  expectError(auth.authenticate(`Bearer ${'a'.repeat(5 * 1024 * 1024)}`), 'token_too_large', 401)
  expectError(make().authenticate(`Bearer ${'a'.repeat(8193)}`), 'token_too_large', 401)
})

test('malformed tokens', () => {
  const auth = make()
  const good = sign({ sub: 'u' })
  const [h, p, s] = good.split('.')
  const cases = [
    'abc', 'a.b', `${h}.${p}`, `${h}.${p}.${s}.x`, `${h}..${s}`, `.${p}.${s}`,
    `${h}.${p}.${s}=`, `${h}.${p}.${s}==`,
    `${h}.${Buffer.from('not json').toString('base64url')}.${s}`,
    `${h}.${Buffer.from('[1,2]').toString('base64url')}.${s}`,
    `${h}.${Buffer.from('"str"').toString('base64url')}.${s}`,
    `${Buffer.from('{"alg":"HS256"').toString('base64url')}.${p}.${s}`,
  ]
  for (const token of cases) expectError(auth.authenticate(`Bearer ${token}`), 'malformed_token', 401)
  // '=' is only allowed at the end of a b64token (RFC 6750), so inner padding is a header format error.
  for (const token of [`${h}=.${p}.${s}`, `${h}.${p}=.${s}`]) {
    expectError(auth.authenticate(`Bearer ${token}`), 'invalid_authorization_format', 401)
  }
  // A payload whose known claim is duplicated is ambiguous: refused even with a valid MAC.
  expectError(auth.authenticate(`Bearer ${rawToken({ alg: 'HS256' }, '{"sub":"a","sub":"b","exp":9999999999}', SECRET)}`), 'malformed_token', 401)
})

test('only HS256 is accepted, in exact spelling', () => {
  const auth = make()
  for (const alg of ['none', 'None', 'NONE', 'nOnE', 'HS384', 'HS512', 'RS256', 'ES256', 'hs256', '']) {
    const token = rawToken({ alg, typ: 'JWT' }, { sub: 'u', exp: NOW + 60 }, SECRET)
    expectError(auth.authenticate(`Bearer ${token}`), 'unsupported_algorithm', 401)
    const unsigned = token.slice(0, token.lastIndexOf('.') + 1)
    expectError(auth.authenticate(`Bearer ${unsigned}`), alg === '' ? 'unsupported_algorithm' : 'unsupported_algorithm', 401)
  }
  expectError(auth.authenticate(`Bearer ${rawToken({ typ: 'JWT' }, { sub: 'u', exp: NOW + 60 }, SECRET)}`), 'unsupported_algorithm', 401)
})

test('signature must match the access secret', () => {
  const auth = make()
  expectError(auth.authenticate(bearer({ sub: 'u' }, 'another-secret-0123456789abcdefghij')), 'invalid_signature', 401)
  const token = sign({ sub: 'u' })
  const stripped = token.slice(0, token.lastIndexOf('.') + 1)
  expectError(auth.authenticate(`Bearer ${stripped}`), 'invalid_signature', 401)
  const other = sign({ sub: 'v' })
  const swapped = `${token.slice(0, token.lastIndexOf('.'))}${other.slice(other.lastIndexOf('.'))}`
  expectError(auth.authenticate(`Bearer ${swapped}`), 'invalid_signature', 401)
})

test('exp, nbf and clock tolerance', () => {
  const auth = make()
  expectError(auth.authenticate(bearer({ sub: 'u', exp: NOW })), 'token_expired', 401)
  expectError(auth.authenticate(bearer({ sub: 'u', exp: NOW - 1 })), 'token_expired', 401)
  assert.equal(auth.authenticate(bearer({ sub: 'u', exp: NOW + 1 })).authenticated, true)
  expectError(auth.authenticate(bearer({ sub: 'u', nbf: NOW + 1 })), 'token_not_yet_valid', 401)
  assert.equal(auth.authenticate(bearer({ sub: 'u', nbf: NOW })).authenticated, true)
  const lenient = make({ clockToleranceSec: 30 })
  assert.equal(lenient.authenticate(bearer({ sub: 'u', exp: NOW - 29 })).authenticated, true)
  expectError(lenient.authenticate(bearer({ sub: 'u', exp: NOW - 30 })), 'token_expired', 401)
  assert.equal(lenient.authenticate(bearer({ sub: 'u', nbf: NOW + 30 })).authenticated, true)
})

test('exp is required unless requireExpiration is false', () => {
  const noExp = `Bearer ${rawToken({ alg: 'HS256' }, { sub: 'u' }, SECRET)}`
  expectError(make().authenticate(noExp), 'missing_expiration', 401)
  assert.equal(make({ requireExpiration: false }).authenticate(noExp).authenticated, true)
})

test('issuer and audience are checked when configured', () => {
  const auth = make({ issuer: 'https://issuer', audience: ['api', 'web'] })
  assert.equal(auth.authenticate(bearer({ sub: 'u', iss: 'https://issuer', aud: 'web' })).authenticated, true)
  assert.equal(auth.authenticate(bearer({ sub: 'u', iss: 'https://issuer', aud: ['x', 'api'] })).authenticated, true)
  expectError(auth.authenticate(bearer({ sub: 'u', iss: 'https://issuer', aud: 'x' })), 'invalid_audience', 401)
  expectError(auth.authenticate(bearer({ sub: 'u', iss: 'https://issuer' })), 'invalid_audience', 401)
  expectError(auth.authenticate(bearer({ sub: 'u', iss: 'other', aud: 'api' })), 'invalid_issuer', 401)
  expectError(auth.authenticate(bearer({ sub: 'u', aud: 'api' })), 'invalid_issuer', 401)
})

test('sub is required', () => {
  expectError(make().authenticate(bearer({})), 'missing_subject', 401)
  expectError(make().authenticate(bearer({ sub: '' })), 'missing_subject', 401)
})

test('claims of the wrong JSON type are refused', () => {
  const auth = make()
  for (const claims of [{ sub: 1 }, { sub: 'u', exp: String(NOW + 60) }, { sub: 'u', nbf: null }, { sub: 'u', email: 5 },
    { sub: 'u', role: ['admin'] }, { sub: 'u', tenant_id: 7 }, { sub: 'u', type: true }, { sub: 'u', aud: [1] }, { sub: 'u', iss: {} }]) {
    expectError(auth.authenticate(bearer(claims)), 'invalid_claims', 401)
  }
  expectError(auth.authenticate(`Bearer ${rawToken({ alg: 'HS256' }, `{"sub":"u","exp":1e400}`, SECRET)}`), 'malformed_token', 401)
})

test('rejects_refresh_token_as_access even under a shared secret', () => {
  const auth = make()
  expectError(auth.authenticate(bearer({ sub: 'u', type: 'refresh' })), 'wrong_token_type', 401)
  expectError(auth.authenticate(bearer({ sub: 'u', type: 'ACCESS' })), 'wrong_token_type', 401)
  assert.equal(auth.authenticate(bearer({ sub: 'u', type: 'access' })).authenticated, true)
  assert.equal(auth.authenticate(bearer({ sub: 'u' })).authenticated, true)
  expectError(make({ requireTokenType: true }).authenticate(bearer({ sub: 'u' })), 'wrong_token_type', 401)

  const shared = new Authenticator({ accessSecret: SECRET, refreshSecret: SECRET })
  const refresh = shared.signRefreshToken({ sub: 'u' })
  expectError(shared.authenticate(`Bearer ${refresh}`), 'wrong_token_type', 401)
})

test('tenant: claim beats header beats subdomain', () => {
  const auth = make({ rateLimitMax: 0 })
  const t = (claims, header, host) => auth.authenticate(bearer({ sub: 'u', ...claims }), header, host).tenantId
  assert.equal(t({ tenant_id: 'claim' }, 'header', 'sub.example.com'), 'claim')
  assert.equal(t({}, 'header', 'sub.example.com'), 'header')
  assert.equal(t({}, null, 'Sub.Example.com:8443'), 'sub')
  assert.equal(t({}, '', 'acme.example.com.'), 'acme')
  for (const host of ['localhost:3000', 'example.com', '127.0.0.1:80', '[::1]:3000', 'www.example.com', 'api', null]) {
    assert.equal(t({}, null, host), undefined, String(host))
  }
})

test('tenant: baseDomain limits subdomain tenants to its direct subdomains', () => {
  const auth = make({ rateLimitMax: 0, baseDomain: 'example.com' })
  const t = (host) => auth.authenticate(bearer({ sub: 'u' }), null, host).tenantId
  assert.equal(t('acme.example.com'), 'acme')
  assert.equal(t('a.b.example.com'), undefined)
  assert.equal(t('acme.other.org'), undefined)
})

test('tenant ids outside the safe charset are refused with 400', () => {
  const auth = make()
  for (const bad of ['a:b', 'a\nb', 'x'.repeat(64), '-x', 'a b', '../etc', 'ü', 'a%0d']) {
    expectError(auth.authenticate(bearer({ sub: 'u' }), bad, null), 'invalid_tenant', 400)
    expectError(auth.authenticate(bearer({ sub: 'u', tenant_id: bad }), null, null), 'invalid_tenant', 400)
  }
  expectError(auth.authenticate(bearer({ sub: 'u' }), null, 'ev!l.example.com'), 'invalid_tenant', 400)
})

test('enforceTenantMatch refuses a token tenant that differs from the requested one', () => {
  const auth = make({ enforceTenantMatch: true })
  const token = bearer({ sub: 'u', tenant_id: 'acme' })
  expectError(auth.authenticate(token, 'other', null), 'tenant_mismatch', 403)
  expectError(auth.authenticate(token, null, 'other.example.com'), 'tenant_mismatch', 403)
  assert.equal(auth.authenticate(token, 'acme', null).tenantId, 'acme')
  assert.equal(auth.authenticate(token, null, 'ACME.example.com').tenantId, 'acme')
  assert.equal(auth.authenticate(token, null, null).tenantId, 'acme')
  assert.equal(make().authenticate(token, 'other', null).tenantId, 'acme')
})

test('rate limit: per user:tenant bucket, 429 with retryAfterMs when empty', () => {
  const auth = make({ rateLimitMax: 3, rateLimitRefillPerSec: 0.5 })
  const u1 = bearer({ sub: 'u1' })
  assert.deepEqual([1, 2, 3].map(() => auth.authenticate(u1).rateLimitRemaining), [2, 1, 0])
  const limited = auth.authenticate(u1)
  expectError(limited, 'rate_limited', 429)
  assert.equal(limited.rateLimitRemaining, 0)
  assert.equal(limited.rateLimitLimit, 3)
  assert.ok(limited.retryAfterMs > 1000 && limited.retryAfterMs <= 2000, String(limited.retryAfterMs))
  // A tenant only asked for (header) is the same bucket; one the token names, or another user,
  // has its own (issue 12).
  expectError(auth.authenticate(u1, 'other'), 'rate_limited', 429)
  assert.equal(auth.authenticate(bearer({ sub: 'u1', tenant_id: 'other' })).rateLimitRemaining, 2)
  assert.equal(auth.authenticate(bearer({ sub: 'u2' })).rateLimitRemaining, 2)
  // Failed authentications do not spend tokens.
  auth.authenticate(bearer({ sub: 'u3' }, 'wrong-secret-0123456789abcdefghijkl'))
  assert.equal(auth.authenticate(bearer({ sub: 'u3' })).rateLimitRemaining, 2)
})

test('rate limit refills continuously over time', async () => {
  const auth = make({ rateLimitMax: 2, rateLimitRefillPerSec: 20 })
  const u = bearer({ sub: 'refill' })
  auth.authenticate(u)
  auth.authenticate(u)
  assert.equal(auth.authenticate(u).errorCode, 'rate_limited')
  await new Promise((resolve) => setTimeout(resolve, 120)) // 20 tokens/s: at least two back
  assert.equal(auth.authenticate(u).authenticated, true)
})

test('rateLimitMax 0 turns rate limiting off', () => {
  const auth = make({ rateLimitMax: 0 })
  const r = auth.authenticate(bearer({ sub: 'u' }))
  assert.equal(r.rateLimitLimit, undefined)
  assert.equal(r.rateLimitRemaining, undefined)
  for (let i = 0; i < 500; i++) assert.equal(auth.authenticate(bearer({ sub: 'u' })).authenticated, true)
})

test('interoperates with jsonwebtoken both ways', () => {
  const auth = new Authenticator({ accessSecret: SECRET, issuer: 'iss', audience: 'aud' })
  const theirs = jwt.sign({ sub: 'u', email: 'e@x', tenant_id: 't1' }, SECRET, { expiresIn: 60, issuer: 'iss', audience: 'aud' })
  const r = auth.authenticate(`Bearer ${theirs}`)
  assert.equal(r.authenticated, true)
  assert.equal(r.tenantId, 't1')
  const ours = auth.signAccessToken({ sub: 'u', role: 'admin' })
  const decoded = jwt.verify(ours, SECRET, { algorithms: ['HS256'], issuer: 'iss', audience: 'aud' })
  assert.equal(decoded.sub, 'u')
  assert.equal(decoded.type, 'access')
  // iat to the millisecond (docs/revocation.md), exp in whole seconds; jsonwebtoken reads both.
  assert.equal(decoded.exp - Math.floor(decoded.iat), 900)
  assert.match(decoded.jti, UUID_V4)
  assert.ok(Number.isInteger(decoded.exp))
  assert.ok(Number.isInteger(Math.round(decoded.iat * 1000)) && Math.abs(decoded.iat * 1000 - Date.now()) < 60_000)
})

test('verifies the RFC 7515 A.1 example with the clock set before its expiry', () => {
  const { vectors } = require('../../contract/vectors/jwt_rfc_examples.json')
  const a1 = vectors.find((v) => v.name === 'rfc7515-a1-hs256')
  const key = Buffer.from(a1.key.raw_hex, 'hex')
  const auth = new Authenticator({ accessSecret: key, clockTimestamp: 1300819000, requireSubject: false })
  const v = auth.verifyAccessToken(a1.token)
  assert.equal(v.valid, true)
  assert.equal(v.expiresAtSec, 1300819380)
  const expired = new Authenticator({ accessSecret: key, requireSubject: false }).verifyAccessToken(a1.token)
  assert.equal(expired.errorCode, 'token_expired')
  // As a JWT the RFC 7520 payload is not a claims set.
  const jws = vectors.find((v) => v.name === 'rfc7520-4.4-hs256-jws')
  const auth2 = new Authenticator({ accessSecret: Buffer.from(jws.key.raw_hex, 'hex') })
  assert.equal(auth2.verifyAccessToken(jws.token).errorCode, 'malformed_token')
  // Algorithm confusion: the RSA public key is never an HMAC secret (refused at construction,
  // issue 34), and an RS256 token never reaches HMAC verification.
  const rs = vectors.find((v) => v.name === 'rfc7515-a2-rs256')
  assert.throws(() => new Authenticator({ accessSecret: rs.key.spki_pem, requireSubject: false, requireExpiration: false }), { name: 'TypeError', message: /holds a PEM block/ })
  const auth3 = new Authenticator({ accessSecret: Buffer.from(a1.key.raw_hex, 'hex'), requireSubject: false, requireExpiration: false })
  assert.equal(auth3.verifyAccessToken(rs.token).errorCode, 'unsupported_algorithm')
})

test('authenticate never throws for anything a client can send', () => {
  const auth = make()
  const samples = ['', ' ', 'Bearer', '\u0000', 'Bearer \uD800', 'Bearer ' + '.'.repeat(5000), 'x'.repeat(100000), 'Bearer a.b.c', '\u202e']
  for (const a of samples) for (const t of samples) for (const h of samples) {
    const r = auth.authenticate(a, t, h)
    assert.equal(typeof r.errorStatus, 'number')
  }
})

test('non-string arguments are a TypeError (a programming error, not client input)', () => {
  const auth = make()
  assert.throws(() => auth.authenticate(42), TypeError)
  assert.throws(() => auth.authenticate(null, {}, null), TypeError)
  assert.throws(() => auth.authenticate(null, null, ['h']), TypeError)
})
