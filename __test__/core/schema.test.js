'use strict'
// contract/options.json is the one description of the options and of the AuthResult: both engines
// must enforce every bound and default it states and return exactly its keys, in its order.
// Changing a bound, a default or a field in one engine (or in the schema alone) fails here.
const test = require('node:test')
const assert = require('node:assert/strict')
const schema = require('../../contract/options.json')
const RESULTS = require('../../contract/results.json')
const { token, SECRET, REFRESH_SECRET, NOW } = require('../support/tokens')

const ENGINES = [
  ['native', () => require('../..')],
  ['js', () => require('../../js')],
]
const RESULT_KEYS = RESULTS.AuthResult.map((field) => field.name)
const NUMERIC = schema.options.filter((o) => o.kind === 'number' || o.kind === 'integer')
const epsilon = (x) => Math.max(Math.abs(x) * 1e-9, 1e-9)

/** A value of the wrong kind for each option kind. */
const WRONG_KIND = { secret: true, stringList: 5, number: '1', integer: '1', boolean: 1, domain: 5, keySet: 'HS256', signingKey: 'EdDSA', issuerList: 'https://issuer.example/' }

/** The claims a default-config authenticator accepts at NOW. */
const claims = (extra = {}) => ({ sub: 'u1', exp: NOW + 60, ...extra })

/** The decoded payload of a token (no verification: the engine signed it). */
const payloadOf = (t) => JSON.parse(Buffer.from(t.split('.')[1], 'base64url').toString())

/**
 * How each non-null default shows in behaviour, on an authenticator built with the default
 * (only `clockTimestamp: NOW` and the secrets set). A new option with a default needs a probe
 * here, or the "every default has a probe" test fails.
 */
const PROBES = {
  dpop: (auth) => {
    // Default false: the DPoP scheme is not one this authenticator reads.
    assert.equal(auth.authenticate(`DPoP ${token(claims(), SECRET)}`).errorCode, 'invalid_authorization_format')
    assert.equal(auth.dpopReplayEntries, 0)
  },
  dpopIatWindowSec: (auth) => assert.equal(auth.dpopIatWindowSec, 60),
  dpopAlgorithms: (auth) => assert.deepEqual(auth.dpopAlgorithms, ['ES256', 'ES384', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA', 'Ed25519']),
  dpopMaxReplayEntries: (auth) => assert.ok(auth.dpopReplayEntries <= 100000),
  dpopNonceLifetimeSec: (auth) => {
    // Default 300: one nonce for the seconds 0..299 of a slot, another from 300.
    const at = (t) => new auth.constructor({ accessSecret: SECRET, dpopNonceSecret: SECRET, clockTimestamp: t }).dpopNonce()
    assert.equal(at(600), at(899))
    assert.notEqual(at(899), at(900))
    assert.equal(auth.dpopNonce(), undefined)
  },
  clockToleranceSec: (auth) => {
    // Default 0: a token is expired at its exp second, valid one second before.
    assert.equal(auth.verifyAccessToken(token(claims({ exp: NOW }), SECRET)).errorCode, 'token_expired')
    assert.equal(auth.verifyAccessToken(token(claims({ exp: NOW + 1 }), SECRET)).valid, true)
  },
  rateLimitMax: (auth) => {
    assert.equal(auth.rateLimitMax, 100)
    assert.equal(auth.authenticate(`Bearer ${token(claims(), SECRET)}`).rateLimitLimit, 100)
  },
  rateLimitRefillPerSec: (auth) => assert.equal(auth.rateLimitRefillPerSec, 10),
  rateLimitMaxKeys: (auth) => {
    // Not readable without filling 100000 buckets; the bound itself is checked below and the
    // explicit default must be accepted.
    assert.ok(auth.rateLimitBuckets <= 100000)
  },
  rateLimitClientCredentials: (auth) => {
    // Default false: a client-credentials token (RFC 9068: client_id, sub that client) takes no bucket.
    const r = auth.authenticate(`Bearer ${token(claims({ sub: 'svc', client_id: 'svc' }), SECRET)}`)
    assert.deepEqual([r.authenticated, r.rateLimitLimit, r.rateLimitRemaining], [true, undefined, undefined])
  },
  enforceTenantMatch: (auth) => {
    const r = auth.authenticate(`Bearer ${token(claims({ tenant_id: 'acme' }), SECRET)}`, 'other')
    assert.deepEqual([r.authenticated, r.tenantId], [true, 'acme'])
  },
  accessTtlSec: (auth) => {
    const p = payloadOf(auth.signAccessToken({ sub: 'u' }))
    assert.equal(p.exp - Math.floor(p.iat), 900)
    assert.equal(auth.accessTtlSec, 900)
  },
  refreshTtlSec: (auth) => {
    const p = payloadOf(auth.signRefreshToken({ sub: 'u' }))
    assert.equal(p.exp - Math.floor(p.iat), 604800)
    assert.equal(auth.refreshTtlSec, 604800)
  },
  maxTokenBytes: (auth) => {
    // Default 8192 bytes: pad a valid token to exactly the limit, then one byte past it.
    const base = token(claims({ pad: '' }), SECRET).length
    const sized = (n) => token(claims({ pad: 'x'.repeat(Math.ceil(((n - base) * 3) / 4)) }), SECRET)
    let t = sized(8192)
    while (t.length > 8192) t = token(claims({ pad: payloadOf(t).pad.slice(1) }), SECRET)
    assert.equal(auth.verifyAccessToken(t).valid, true, `${t.length} bytes`)
    let over = t
    while (over.length <= 8192) over = token(claims({ pad: `${payloadOf(over).pad}x` }), SECRET)
    assert.equal(auth.verifyAccessToken(over).errorCode, 'token_too_large', `${over.length} bytes`)
  },
  requireAccessTokenProfile: (auth) => assert.equal(auth.verifyAccessToken(token(claims(), SECRET)).valid, true),
  requireTokenType: (auth) => assert.equal(auth.verifyAccessToken(token(claims(), SECRET)).valid, true),
  requireExpiration: (auth) =>
    assert.equal(auth.verifyAccessToken(token({ sub: 'u1' }, SECRET)).errorCode, 'missing_expiration'),
  requireSubject: (auth) =>
    assert.equal(auth.verifyAccessToken(token({ exp: NOW + 60 }, SECRET)).errorCode, 'missing_subject'),
  // Off by default: an opaque token is malformed_token, and nothing can be admitted.
  introspectionCacheMaxEntries: (auth) => {
    assert.equal(auth.authenticate('Bearer opaque-token').errorCode, 'malformed_token')
    assert.throws(() => auth.admitIntrospection('opaque-token', null, NOW + 60), { name: 'TypeError' })
    assert.equal(auth.introspectionCacheEntries, 0)
  },
  // Default 16 MiB of claims: a thousand 15-KiB answers do not all fit, the newest are held.
  introspectionCacheMaxBytes: (auth) => {
    const big = new auth.constructor({ accessSecret: SECRET, clockTimestamp: NOW, introspectionCacheMaxEntries: 10000 })
    const pad = 'p'.repeat(15000)
    for (let i = 0; i < 1200; i++) assert.equal(big.admitIntrospection(`t${i}`, JSON.stringify({ sub: 'u', exp: NOW + 60, pad }), NOW + 60), true)
    assert.ok(big.introspectionCacheEntries < 1200 && big.introspectionCacheEntries > 1000, String(big.introspectionCacheEntries))
    assert.equal(big.authenticate('Bearer t1199').authenticated, true)
    assert.equal(big.authenticate('Bearer t0').errorCode, 'introspection_required')
  },
  // Off by default: with the introspection cache on, a JWT is still verified locally.
  introspectJwts: (auth) => {
    const on = new auth.constructor({ accessSecret: SECRET, clockTimestamp: NOW, introspectionCacheMaxEntries: 10 })
    const t = token(claims(), SECRET)
    assert.equal(on.authenticate(`Bearer ${t}`).authenticated, true)
  },
  maxRevocations: (auth) => {
    // Default 100000 live revocations; the next one is refused, the held ones kept.
    for (let i = 0; i < 100000; i++) auth.revokeToken(`j${i}`, NOW + 60)
    assert.equal(auth.revocationCount, 100000)
    assert.throws(() => auth.revokeToken('one-more', NOW + 60), { name: 'RangeError', code: 'ERR_AUTH_SHIELD_REVOCATION_LIMIT' })
  },
  // Off by default: no certificate is checked, so a bound token is refused (issue 34), an
  // unbound one passes.
  certificateBoundTokens: (auth) => {
    assert.equal(auth.certificateBoundTokens, false)
    const bound = token(claims({ cnf: { 'x5t#S256': 'Avv2uRvXGkvZRXCpVXMt6eDJ3AaIw7qOlRkE5wAmZZs' } }), SECRET)
    assert.equal(auth.authenticate(`Bearer ${bound}`).errorCode, 'certificate_required')
    assert.equal(auth.authenticate(`Bearer ${token(claims(), SECRET)}`).authenticated, true)
  },
  requireCertificateBoundTokens: (auth) => assert.equal(auth.authenticate(`Bearer ${token(claims(), SECRET)}`).authenticated, true),
  allowShortSecret: (_auth, Authenticator) =>
    assert.throws(() => new Authenticator({ accessSecret: 'x'.repeat(31) }), { name: 'RangeError' }),
}

test('every option with a default has a behaviour probe', () => {
  const withDefault = schema.options.filter((o) => o.default !== null && o.default !== undefined)
  assert.deepEqual(withDefault.map((o) => o.name).sort(), Object.keys(PROBES).sort())
})

for (const [engine, load] of ENGINES) {
  const base = { accessSecret: SECRET, refreshSecret: REFRESH_SECRET, clockTimestamp: NOW }

  test(`${engine}: behaves as the schema defaults say, and accepts each default given explicitly`, () => {
    const { Authenticator } = load()
    for (const option of schema.options) {
      // accessSecret: base sets it, and one of it and keys must be given.
      if (option.required || option.name === 'clockTimestamp' || option.name === 'accessSecret') continue
      const explicit = option.default === null ? {} : { [option.name]: option.default }
      const built = [new Authenticator(base), new Authenticator({ ...base, ...explicit })]
      // null and undefined mean the default too.
      built.push(new Authenticator({ ...base, [option.name]: null }))
      built.push(new Authenticator({ ...base, [option.name]: undefined }))
      const probe = PROBES[option.name]
      if (probe) for (const auth of built) probe(auth, Authenticator)
    }
  })

  test(`${engine}: numeric bounds from the schema, inclusive unless exclusiveMin`, () => {
    const { Authenticator } = load()
    for (const { name, min, max, exclusiveMin, kind } of NUMERIC) {
      const build = (value) => () => new Authenticator({ ...base, [name]: value })
      const named = new RegExp(`\\b${name}\\b`)
      for (const bad of [min - epsilon(min), max + epsilon(max), NaN, Infinity, -Infinity]) {
        assert.throws(build(bad), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: named }, `${name}=${bad}`)
      }
      if (exclusiveMin) assert.throws(build(min), { name: 'RangeError', message: named }, `${name}=${min}`)
      else assert.doesNotThrow(build(min), `${name}=${min}`)
      assert.doesNotThrow(build(max), `${name}=${max}`)
      if (kind === 'integer') assert.throws(build(min + 0.5), { name: 'RangeError', message: named }, `${name}=${min + 0.5}`)
    }
  })

  test(`${engine}: a wrong kind is a TypeError naming the option; unknown keys are refused`, () => {
    const { Authenticator } = load()
    for (const { name, kind } of schema.options) {
      const config = { ...base, [name]: WRONG_KIND[kind] }
      assert.throws(() => new Authenticator(config), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: new RegExp(`\\b${name}\\b`) }, name)
    }
    assert.throws(() => new Authenticator({ ...base, notAnOption: 1 }), { name: 'TypeError', message: /notAnOption/ })
    const required = schema.options.filter((o) => o.required).map((o) => o.name)
    for (const name of required) {
      const { [name]: _, ...without } = base
      assert.throws(() => new Authenticator(without), { name: 'TypeError', message: new RegExp(name) })
    }
  })

  test(`${engine}: authenticate() results list exactly the schema's fields, in order`, () => {
    const { Authenticator, authenticateRequest } = load()
    const auth = new Authenticator(base)
    const success = auth.authenticate(`Bearer ${token(claims({ tenant_id: 'acme' }), SECRET)}`)
    const failure = auth.authenticate('Bearer nope')
    assert.equal(success.authenticated, true)
    assert.equal(failure.authenticated, false)
    assert.deepEqual(Object.keys(success), RESULT_KEYS)
    assert.deepEqual(Object.keys(failure), RESULT_KEYS)
    assert.deepEqual(Object.keys(authenticateRequest(undefined, undefined, undefined, base)), RESULT_KEYS)
    for (const field of RESULTS.AuthResult) {
      if ('onFailure' in field) assert.equal(failure[field.name], field.onFailure === 'undefined' ? undefined : field.onFailure, field.name)
      if ('onSuccess' in field) assert.equal(success[field.name], field.onSuccess === 'undefined' ? undefined : field.onSuccess, field.name)
    }
  })

  test(`${engine}: tenantSource says where tenantId came from`, () => {
    const { Authenticator } = load()
    const auth = new Authenticator({ ...base, baseDomain: 'example.com' })
    const bearer = (extra) => `Bearer ${token(claims(extra), SECRET)}`
    const cases = [
      [bearer({ tenant_id: 'acme' }), 'other', 'x.example.com', 'acme', 'token'],
      [bearer(), 'beta', 'x.example.com', 'beta', 'header'],
      [bearer(), undefined, 'gamma.example.com', 'gamma', 'host'],
      [bearer(), undefined, 'example.com', undefined, undefined],
    ]
    for (const [authorization, header, host, tenantId, tenantSource] of cases) {
      const r = auth.authenticate(authorization, header, host)
      assert.equal(r.authenticated, true)
      assert.deepEqual([r.tenantId, r.tenantSource], [tenantId, tenantSource], `${header} ${host}`)
      assert.ok('tenantSource' in r)
    }
  })
}

test('the AuthConfig and AuthResult types declare exactly the schema names, in order', () => {
  const dts = require('node:fs').readFileSync(require.resolve('../../binding.d.ts'), 'utf8')
  const members = (name) => {
    const start = dts.indexOf(`export interface ${name} {`)
    assert.notEqual(start, -1, name)
    const body = dts.slice(start, dts.indexOf('\n}\n', start))
    return [...body.matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1])
  }
  // A renamed option's old name is declared (@deprecated) right after its new one.
  const declared = schema.options.flatMap((o) => [o.name, ...schema.renamed.filter((r) => r.bag === 'options' && r.use === o.name).map((r) => r.name)])
  assert.deepEqual(members('AuthConfigOptions'), declared)
  // The entry points' own options (JS objects the core never reads) have their interface.
  assert.deepEqual(members('AuthenticatorEntryOptions'), schema.entryOptions.map((o) => o.name))
  // AuthResult is the union AuthSuccess | AuthFailure over these fields; each side lists them all.
  assert.deepEqual(members('AuthResultFields'), RESULT_KEYS)
  for (const side of ['AuthSuccess', 'AuthFailure']) {
    const start = dts.indexOf(`export interface ${side} extends AuthResultFields {`)
    assert.notEqual(start, -1, side)
    const body = dts.slice(start, dts.indexOf('\n}\n', start))
    assert.deepEqual([...body.matchAll(/^ {2}(\w+):/gm)].map((m) => m[1]).sort(), RESULT_KEYS.filter((k) => k !== 'requestId' && k !== 'retryAfterMs').sort(), side)
  }
})
