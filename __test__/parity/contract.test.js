'use strict'

// contract/ is the one statement of the facts both engines share (contract/README.md). These
// tests hold the files well-formed and complete, and run real failing calls through the native
// and the JS engine: every failure code and every caller-error template must come out in the
// same words from both. The Rust side's derivation is pinned by `cargo test` (src/error.rs,
// src/contract.rs); a malformed file fails its build (build.rs).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const fc = require('fast-check')
const native = require('../..')
const js = require('../../js')
const { LIMITS, message, defaultOf } = require('../../contract')
const { token } = require('../support/tokens')
const { plumbing } = require('../support/store-seam')

const DIR = path.join(__dirname, '../..', 'contract')
const CODES = require('../../contract/error-codes.json')
const MESSAGES = require('../../contract/messages.json')
const LIMITS_FILE = require('../../contract/limits.json')
const SECRET = 'contract-test-secret-0123456789abcdef'
const EC_KEY = require('node:crypto').generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey
const NOW = 1_700_000_000
const ENGINES = { native, js }
const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9_]*)\}/g

const entries = (table) => Object.entries(table).filter(([name]) => !name.startsWith('$'))

function thrown(fn) {
  try {
    fn()
  } catch (err) {
    return { type: err.constructor.name, code: err.code, message: err.message }
  }
  return null
}

/** The same call in both engines: its outcome, equal in both, is returned. */
function both(call) {
  const [a, b] = [call(native), call(js)]
  assert.deepEqual(b, a)
  return a
}

test('contract/ holds the files the engines read, each JSON well-formed', () => {
  const files = fs.readdirSync(DIR).sort()
  for (const file of ['README.md', 'error-codes.json', 'index.js', 'limits.json', 'messages.json', 'options.json', 'results.json']) {
    assert.ok(files.includes(file), file)
  }
  for (const file of files.filter((f) => f.endsWith('.json'))) {
    assert.doesNotThrow(() => JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')), file)
  }
  const readme = fs.readFileSync(path.join(DIR, 'README.md'), 'utf8')
  for (const file of files.filter((f) => f !== 'README.md')) {
    // A folder (vectors/) is named with its slash.
    const name = fs.statSync(path.join(DIR, file)).isDirectory() ? `${file}/` : file
    assert.ok(readme.includes(`\`${name}\``), `README.md describes ${name}`)
  }
  for (const file of fs.readdirSync(path.join(DIR, 'vectors'))) {
    assert.doesNotThrow(() => JSON.parse(fs.readFileSync(path.join(DIR, 'vectors', file), 'utf8')), `vectors/${file}`)
  }
})

test('every failure code has exactly an HTTP error status and a message without placeholders', () => {
  assert.ok(Object.keys(CODES).length > 0)
  for (const [code, entry] of Object.entries(CODES)) {
    assert.match(code, /^[a-z]+(_[a-z]+)*$/)
    assert.deepEqual(Object.keys(entry), ['status', 'message'], code)
    assert.ok(Number.isInteger(entry.status) && entry.status >= 400 && entry.status <= 599, code)
    assert.equal(typeof entry.message, 'string', code)
    assert.ok(entry.message.length > 0, code)
    assert.doesNotMatch(entry.message, PLACEHOLDER, code)
  }
})

test('every limit is a safe non-negative integer with its reason', () => {
  for (const [name, entry] of entries(LIMITS_FILE)) {
    assert.match(name, /^[a-z][A-Za-z0-9]*$/)
    assert.deepEqual(Object.keys(entry), ['value', 'doc'], name)
    assert.ok(Number.isSafeInteger(entry.value) && entry.value >= 0, name)
    assert.ok(typeof entry.doc === 'string' && entry.doc.length > 0, name)
    assert.equal(LIMITS[name], entry.value)
  }
})

test('every template names each placeholder once in params, with a known kind', () => {
  for (const [id, entry] of entries(MESSAGES)) {
    assert.match(id, /^[a-z][A-Za-z0-9]*$/)
    assert.ok(typeof entry.template === 'string' && entry.template.length > 0, id)
    const used = [...entry.template.matchAll(PLACEHOLDER)].map((m) => m[1])
    const params = entry.params ?? {}
    assert.deepEqual([...new Set(used)].sort(), Object.keys(params).sort(), id)
    for (const kind of Object.values(params)) assert.ok(['text', 'quoted', 'number'].includes(kind), `${id}: ${kind}`)
  }
})

test('fills numbers as ECMAScript Number::toString and quoted text as a JSON string', () => {
  const range = (value) => message('numberOutOfRange', { name: 'x', min: 0, max: 1, value })
  for (const [value, text] of [
    [86400, '86400'], [1.25, '1.25'], [-0, '0'], [1e20, '100000000000000000000'], [1e21, '1e+21'],
    [1.5e-7, '1.5e-7'], [1e-6, '0.000001'], [5e-324, '5e-324'], [NaN, 'NaN'], [-Infinity, '-Infinity'],
  ]) {
    assert.equal(range(value), `x must be a finite number from 0 to 1, got ${text}`)
  }
  assert.equal(message('invalidDomain', { name: 'd', domain: 'a"\n\u0001' }), 'd is not a valid domain name: "a\\"\\n\\u0001"')
  assert.throws(() => message('numberOutOfRange', { name: 'x', min: 0, max: 1 }), /param value/)
  assert.throws(() => message('numberOutOfRange', { name: 'x', min: 0, max: 1, value: 2, extra: 1 }), /no param extra/)
  assert.throws(() => message('noSuchMessage'), /no message/)
})

test("defaultOf gives an option's default from contract/options.json, a copy, and throws on an unknown name", () => {
  const schema = JSON.parse(fs.readFileSync(path.join(__dirname, '../../contract/options.json'), 'utf8'))
  for (const option of schema.options) assert.deepEqual(defaultOf(option.name), option.default, option.name)
  const algs = defaultOf('dpopAlgorithms')
  algs.push('HS256')
  assert.ok(!defaultOf('dpopAlgorithms').includes('HS256'), 'a caller changing its copy changes nothing else')
  assert.throws(() => defaultOf('dpopAlgorithm'), /no option dpopAlgorithm/)
  assert.throws(() => defaultOf('__proto__'), /no option/)
})

// A request that fails with each code, in both engines.
const failing = {
  missing_authorization: () => [{}, undefined],
  invalid_authorization_format: () => [{}, 'Basic abc'],
  token_too_large: () => [{ maxTokenBytes: 64 }, `Bearer ${'a'.repeat(100)}`],
  malformed_token: () => [{}, 'Bearer abc.def'],
  unsupported_algorithm: () => [{}, `Bearer ${token({ sub: 'u', exp: NOW + 60 }, SECRET, { alg: 'XS256', typ: 'JWT' })}`],
  unknown_key: () => [{ accessSecret: undefined, keys: [{ kid: 'a', alg: 'HS256', secret: SECRET }] }, `Bearer ${token({ sub: 'u', exp: NOW + 60 }, SECRET, { alg: 'HS256', typ: 'JWT', kid: 'b' })}`],
  invalid_signature: () => [{}, `Bearer ${token({ sub: 'u', exp: NOW + 60 }, `${SECRET}x`)}`],
  invalid_claims: () => [{}, `Bearer ${token({ sub: 'u', exp: 'soon' }, SECRET)}`],
  token_not_yet_valid: () => [{}, `Bearer ${token({ sub: 'u', nbf: NOW + 60, exp: NOW + 120 }, SECRET)}`],
  token_expired: () => [{}, `Bearer ${token({ sub: 'u', exp: NOW - 60 }, SECRET)}`],
  missing_expiration: () => [{}, `Bearer ${token({ sub: 'u' }, SECRET)}`],
  invalid_audience: () => [{ audience: 'api' }, `Bearer ${token({ sub: 'u', exp: NOW + 60, aud: 'web' }, SECRET)}`],
  invalid_issuer: () => [{ issuer: 'me' }, `Bearer ${token({ sub: 'u', exp: NOW + 60, iss: 'you' }, SECRET)}`],
  missing_subject: () => [{}, `Bearer ${token({ exp: NOW + 60 }, SECRET)}`],
  wrong_token_type: () => [{}, `Bearer ${token({ sub: 'u', exp: NOW + 60, type: 'refresh' }, SECRET)}`],
  invalid_tenant: () => [{}, `Bearer ${token({ sub: 'u', exp: NOW + 60 }, SECRET)}`, 'bad tenant!'],
  tenant_mismatch: () => [{ enforceTenantMatch: true }, `Bearer ${token({ sub: 'u', exp: NOW + 60, tenant_id: 'a' }, SECRET)}`, 'b'],
  rate_limited: () => [{ rateLimitMax: 1 }, `Bearer ${token({ sub: 'u', exp: NOW + 60 }, SECRET)}`, undefined, 2],
  // RFC 8705 certificate-bound tokens; the fifth item is authenticate's sender context.
  certificate_required: () => [{ certificateBoundTokens: true }, `Bearer ${token({ sub: 'u', exp: NOW + 60, cnf: { 'x5t#S256': THUMB } }, SECRET)}`, undefined, 1, {}],
  certificate_mismatch: () => [{ certificateBoundTokens: true }, `Bearer ${token({ sub: 'u', exp: NOW + 60, cnf: { 'x5t#S256': THUMB } }, SECRET)}`, undefined, 1, { clientCertThumbprint: THUMB.replace(/^./, 'B') }],
  unbound_token: () => [{ requireCertificateBoundTokens: true }, `Bearer ${token({ sub: 'u', exp: NOW + 60 }, SECRET)}`, undefined, 1, { clientCertThumbprint: THUMB }],
  missing_dpop_proof: () => [{ dpop: true }, `DPoP ${token({ sub: 'u', exp: NOW + 60 }, SECRET)}`],
  missing_profile_claim: () => [{ requireAccessTokenProfile: true, issuer: 'i', audience: 'a' }, `Bearer ${token({ sub: 'u', exp: NOW + 60, iss: 'i', aud: 'a', iat: NOW, jti: 'j' }, SECRET, { alg: 'HS256', typ: 'at+jwt' })}`],
  insufficient_user_authentication: () => [{ requiredAcr: 'mfa' }, `Bearer ${token({ sub: 'u', exp: NOW + 60, acr: 'pwd' }, SECRET)}`],
  insufficient_scope: () => [{ requiredScope: 'write' }, `Bearer ${token({ sub: 'u', exp: NOW + 60, scope: 'read' }, SECRET)}`],
  introspection_required: () => [{ introspectionCacheMaxEntries: 1 }, 'Bearer opaque-never-introspected'],
  untrusted_issuer: () => [{ accessSecret: undefined, issuers: [{ issuer: 'me', keys: [{ alg: 'HS256', secret: SECRET }] }] }, `Bearer ${token({ sub: 'u', exp: NOW + 60, iss: 'you' }, SECRET)}`],
}
const THUMB = 'Avv2uRvXGkvZRXCpVXMt6eDJ3AaIw7qOlRkE5wAmZZs'
// Codes no single authenticate call of a fresh authenticator produces, and where they are tested.
const NOT_FROM_ONE_CALL = {
  token_revoked: 'revocation.test.js (after revokeToken)',
  revocation_unavailable: 'revocation-outage.test.js (a feed that lost its store)',
  rate_limit_pending: 'shared-limit.test.js (a store attached, no lease yet)',
  keys_unavailable: 'jwks-outage.test.js (answered by the middleware, never by the core)',
  invalid_dpop_proof: 'dpop/proof.test.js (a DPoP proof, the 4th argument, made by the dpop package or jose)',
  dpop_proof_mismatch: 'dpop/proof.test.js (a proof for another method, URL or token)',
  dpop_proof_stale: 'dpop/proof.test.js (a proof iat outside dpopIatWindowSec)',
  dpop_proof_replayed: 'dpop/proof.test.js (the same proof twice)',
  dpop_replay_cache_full: 'dpop/proof.test.js (dpopMaxReplayEntries live proofs)',
  dpop_key_mismatch: 'dpop/proof.test.js (a token bound to another key)',
  dpop_bound_token_as_bearer: 'dpop/proof.test.js (a token with cnf.jkt as Bearer)',
  dpop_required: 'dpop/http.test.js (answered by the middleware with dpopMode: required, never by the core)',
  dpop_not_allowed: 'dpop/modes.test.js (answered by the middleware with dpopMode: disabled, never by the core)',
  dpop_replay_unavailable: 'dpop/shared-replay.test.js (answered by the middleware when Redis fails)',
  use_dpop_nonce: 'dpop/proof.test.js (dpopNonceSecret set, a proof without the current nonce)',
  introspection_unavailable: 'introspection/failures.test.js (answered by the middleware when the endpoint fails, never by the core)',
  token_inactive: 'introspection/engine.test.js (after admitIntrospection(token, null, until))',
}

test('every failure code comes out of both engines with the status and message of the contract', () => {
  assert.deepEqual(Object.keys({ ...failing, ...NOT_FROM_ONE_CALL }).sort(), Object.keys(CODES).sort())
  for (const [code, make] of Object.entries(failing)) {
    const [options, authorization, tenant, times = 1, sender] = make()
    const result = both(({ Authenticator }) => {
      const auth = new Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, ...options })
      let r
      for (let i = 0; i < times; i++) r = auth.authenticate(authorization, tenant, undefined, sender)
      return { error: r.error, errorCode: r.errorCode, errorStatus: r.errorStatus }
    })
    assert.deepEqual(result, { error: CODES[code].message, errorCode: code, errorStatus: CODES[code].status }, code)
  }
  // token_revoked through a real revocation, in both engines.
  const revoked = both(({ Authenticator }) => {
    const auth = new Authenticator({ accessSecret: SECRET })
    const t = auth.signAccessToken({ sub: 'u' })
    auth.revokeSubject('u', { before: Date.now() + 60_000 })
    const r = auth.authenticate(`Bearer ${t}`)
    return { error: r.error, errorCode: r.errorCode, errorStatus: r.errorStatus }
  })
  assert.deepEqual(revoked, { error: CODES.token_revoked.message, errorCode: 'token_revoked', errorStatus: CODES.token_revoked.status })
})

// A real failing call per caller-error template; each returns what was thrown.
const callers = {
  bothKeySources: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, keys: [{ alg: 'HS256', secret: SECRET }] })),
  numberOutOfRange: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, clockToleranceSec: 1e21 })),
  numberNotAboveMin: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, rateLimitRefill: 0 })),
  integerOutOfRange: ({ RateLimiter }) => thrown(() => new RateLimiter({ capacity: 1.5, refillPerSec: 1 })),
  outOfRange: ({ Authenticator }) => {
    const auth = new Authenticator({ accessSecret: SECRET })
    plumbing(auth).enableSharedLimit(5, false, 100)
    return thrown(() => plumbing(auth).grantLease('k', 1, 1, 1e300))
  },
  refillOutOfRange: ({ RateLimiter }) => thrown(() => new RateLimiter({ capacity: 1, refillPerSec: Infinity })),
  costOutOfRange: ({ RateLimiter }) => thrown(() => new RateLimiter({ capacity: 3, refillPerSec: 1 }).consume('k', 3.5)),
  invalidDomain: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, baseDomain: 'a "b"\n\u0001\u007f\u0085é' })),
  loneSurrogateKey: ({ RateLimiter }) => thrown(() => new RateLimiter({ capacity: 1, refillPerSec: 1 }).consume('\ud800')),
  claimsNotSerializable: ({ Authenticator }) => {
    const claims = { sub: 'u' }
    claims.self = claims
    return thrown(() => new Authenticator({ accessSecret: SECRET }).signAccessToken(claims))
  },
  accessSecretRequired: ({ Authenticator }) => thrown(() => new Authenticator({})),
  secretTooShort: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: 'short' })),
  keySecretTooShort: ({ Authenticator }) => thrown(() => new Authenticator({ keys: [{ alg: 'HS384', secret: SECRET }] })),
  keyNameWithKid: ({ Authenticator }) => thrown(() => new Authenticator({ keys: [{ kid: 'é"\\', alg: 'HS256', secret: 'short' }] })),
  signingKidInvalid: ({ Authenticator }) => thrown(() => new Authenticator({ signingKey: { kid: 'a b', alg: 'ES256', privateKey: EC_KEY } })),
  claimsSubRequired: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET }).signAccessToken({})),
  claimsTenantIdInvalid: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET }).signAccessToken({ sub: 'u', tenant_id: '-x' })),
  claimsAudInvalid: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET }).signAccessToken({ sub: 'u', aud: 5 })),
  signedTokenTooLarge: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, maxTokenBytes: 64, clockTimestamp: NOW }).signAccessToken({ sub: 'u' })),
  noRefreshSecret: ({ Authenticator }) => thrown(() => new Authenticator({ keys: [{ alg: 'HS256', secret: SECRET }] }).signRefreshToken({ sub: 'u' })),
  noAccessSecret: ({ Authenticator }) => thrown(() => new Authenticator({ keys: [{ alg: 'HS256', secret: SECRET }] }).signAccessToken({ sub: 'u' })),
  sharedKeys: ({ Authenticator }) => thrown(() => Authenticator.shared({ accessSecret: SECRET, rateLimitMax: 7 }).setKeys([{ alg: 'HS256', secret: SECRET }])),
  revocationLimit: ({ Authenticator }) => {
    const auth = new Authenticator({ accessSecret: SECRET, maxRevocations: 1 })
    auth.revokeToken('a', Math.floor(Date.now() / 1000) + 600)
    return thrown(() => auth.revokeToken('b', Math.floor(Date.now() / 1000) + 600))
  },
  profileNeedsIssuerAndAudience: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, requireAccessTokenProfile: true, issuer: 'i' })),
  dpopAlgorithmRefused: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, dpop: true, dpopAlgorithms: ['ES256', 'HS256'] })),
  unknownOption: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, acessSecret: SECRET })),
  introspectionOff: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET }).admitIntrospection('t', null, NOW)),
  introspectionToken: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, introspectionCacheMaxEntries: 1 }).admitIntrospection('', null, NOW)),
  introspectionClaims: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, introspectionCacheMaxEntries: 1 }).admitIntrospection('t', '[1]', NOW)),
  introspectionUntil: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, introspectionCacheMaxEntries: 1 }).admitIntrospection('t', null, Infinity)),
  replayKeyMalformed: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, dpop: true }).releaseDpopProof('x')),
  mustBeBoolean: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, enforceTenantMatch: 1 })),
  mustBeString: ({ RateLimiter }) => thrown(() => new RateLimiter({ capacity: 1, refillPerSec: 1 }).consume(5)),
  mustBeNumber: ({ RateLimiter }) => thrown(() => new RateLimiter({ capacity: '1', refillPerSec: 1 })),
  mustBeObject: ({ Authenticator }) => thrown(() => new Authenticator(5)),
  mustBeOptionalString: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET }).authenticate('Bearer x', 5)),
  mustBeStringList: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, audience: 5 })),
  mustBeSecret: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: 5 })),
  mustBeInteger: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, rateLimitMax: 1.5 })),
  mustNotBeEmpty: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: '' })),
  keyTooLong: ({ RateLimiter }) => thrown(() => new RateLimiter({ capacity: 1, refillPerSec: 1 }).consume('k'.repeat(LIMITS.rateLimiterMaxKeyBytes + 1))),
  rateLimitOff: ({ Authenticator }) => thrown(() => plumbing(new Authenticator({ accessSecret: SECRET, rateLimitMax: 0 })).enableSharedLimit(5, false, 100)),
  renamedTogether: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, rateLimitRefill: 1, rateLimitRefillPerSec: 1 })),
  claimsNotObject: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET }).signAccessToken(5)),
  tooManyBytes: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET }).revokeToken('j'.repeat(1 << 20), NOW + 60)),
  notNumericDate: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET }).revokeToken('j', -1)),
  signingKidInKeys: ({ Authenticator }) => thrown(() => new Authenticator({ keys: [{ kid: 'own', alg: 'HS256', secret: SECRET }], signingKey: { kid: 'own', alg: 'ES256', privateKey: EC_KEY } })),
  secretIsPem: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: `-----BEGIN PUBLIC KEY-----\n${SECRET}\n-----END PUBLIC KEY-----\n` })),
  secretIsJwk: ({ Authenticator }) => thrown(() => new Authenticator({ keys: [{ kid: 'k', alg: 'HS256', secret: `{"kty":"oct","k":"${SECRET}"}` }] })),
  senderNotContext: ({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, certificateBoundTokens: true }).authenticate('Bearer x', undefined, undefined, 5)),
  // Last: it fills each engine's table of shared configs for the rest of this process.
  sharedConfigLimit: ({ authenticateRequest }) => {
    for (let i = 0; i <= LIMITS.maxSharedConfigs; i++) {
      const refused = thrown(() => authenticateRequest(undefined, undefined, undefined, { accessSecret: SECRET, rateLimitMax: i + 1 }))
      if (refused !== null) return { ...refused, after: i }
    }
    return null
  },
}

test('every caller-error template is filled in the same words by both engines', () => {
  assert.deepEqual(Object.keys(callers).sort(), entries(MESSAGES).map(([id]) => id).sort())
  for (const [id, call] of Object.entries(callers)) {
    const outcome = both(call)
    assert.ok(outcome !== null, `${id} threw`)
    const shape = MESSAGES[id].template.split(PLACEHOLDER).map((part, i) => (i % 2 ? '[^]*' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    assert.match(outcome.message, new RegExp(`^${shape.join('')}$`), id)
  }
})

test('both engines write any number in a range message the same way', () => {
  const ok = (v) => v >= 0 && v <= 86400
  fc.assert(
    fc.property(fc.oneof(fc.double(), fc.integer(), fc.constantFrom(-0, 5e-324, 1e21, 1e-7, 2 ** 53, -1e-300, 647964579277707.2)), (v) => {
      fc.pre(!ok(v))
      const outcome = both(({ Authenticator }) => thrown(() => new Authenticator({ accessSecret: SECRET, clockToleranceSec: v })))
      assert.equal(outcome.message, message('numberOutOfRange', { name: 'config.clockToleranceSec', min: 0, max: 86400, value: v }))
    }),
    { numRuns: 300 },
  )
})

const RESULTS = require('../../contract/results.json')

test('the result shapes of the contract are the Fields interfaces of binding.d.ts, names and types', () => {
  const dts = fs.readFileSync(path.join(__dirname, '../..', 'binding.d.ts'), 'utf8')
  const members = (name) => {
    const start = dts.indexOf(`export interface ${name} {`)
    assert.notEqual(start, -1, name)
    const body = dts.slice(start, dts.indexOf('\n}\n', start))
    return [...body.matchAll(/^ {2}(\w+)(\??): (.+)$/gm)].map(([, field, optional, type]) => ({ field, optional: optional === '?', type }))
  }
  for (const [shape, iface] of [['AuthResult', 'AuthResultFields'], ['TokenVerification', 'TokenVerificationFields']]) {
    const wanted = RESULTS[shape].map((f) => ({ field: f.name, optional: f.type.split(' | ').includes('undefined'), type: f.type }))
    assert.deepEqual(members(iface), wanted, iface)
    for (const f of RESULTS[shape]) {
      assert.deepEqual(Object.keys(f).filter((k) => !['name', 'type', 'doc', 'onSuccess', 'onFailure'].includes(k)), [], f.name)
      assert.ok(f.doc.length > 0, f.name)
    }
  }
})

test('both engines return every TokenVerification field of the contract, in its order', () => {
  const keys = RESULTS.TokenVerification.map((f) => f.name)
  for (const [name, engine] of Object.entries(ENGINES)) {
    const auth = new engine.Authenticator({ accessSecret: SECRET })
    const ok = auth.verifyAccessToken(auth.signAccessToken({ sub: 'u' }))
    const bad = auth.verifyAccessToken('nope')
    assert.deepEqual(Object.keys(ok), keys, name)
    assert.deepEqual(Object.keys(bad), keys, name)
    for (const f of RESULTS.TokenVerification) {
      const fixed = (v) => (v === 'undefined' ? undefined : v)
      if ('onSuccess' in f) assert.equal(ok[f.name], fixed(f.onSuccess), `${name} ${f.name}`)
      if ('onFailure' in f) assert.equal(bad[f.name], fixed(f.onFailure), `${name} ${f.name}`)
    }
    assert.equal(ok.valid, true)
    assert.equal(bad.valid, false)
  }
})

test('the narrowed result types fix the values the contract fixes per outcome', () => {
  const dts = fs.readFileSync(path.join(__dirname, '../..', 'binding.d.ts'), 'utf8')
  const members = (name) => {
    const start = dts.indexOf(`export interface ${name} extends `)
    assert.notEqual(start, -1, name)
    const body = dts.slice(start, dts.indexOf('\n}\n', start))
    return Object.fromEntries([...body.matchAll(/^ {2}(\w+): (.+)$/gm)].map(([, field, type]) => [field, type]))
  }
  for (const [shape, verdict, success, failure] of [
    ['AuthResult', 'authenticated', 'AuthSuccess', 'AuthFailure'],
    ['TokenVerification', 'valid', 'TokenValid', 'TokenInvalid'],
  ]) {
    const [ok, bad] = [members(success), members(failure)]
    assert.equal(ok[verdict], 'true', success)
    assert.equal(bad[verdict], 'false', failure)
    for (const f of RESULTS[shape]) {
      if (f.onSuccess === 'undefined') assert.equal(ok[f.name], 'undefined', `${success}.${f.name}`)
      if (f.onFailure === 'undefined') assert.equal(bad[f.name], 'undefined', `${failure}.${f.name}`)
    }
  }
  // A refused request answers with one of the statuses of the failure codes, and only those.
  const statuses = [...new Set(Object.values(CODES).map((c) => c.status))].sort()
  assert.deepEqual(members('AuthFailure').errorStatus.split(' | ').map(Number).sort(), statuses)
})

test('a typed array (a Buffer) or a Map as a config or an options object is refused alike by both engines, at once', () => {
  const huge = Buffer.alloc(1 << 20)
  const calls = [
    ['new Authenticator', (e, v) => new e.Authenticator(v)],
    ['authenticateRequest config', (e, v) => e.authenticateRequest({ headers: {} }, v)],
    ['resolveTenant options', (e, v) => e.resolveTenant('acme', null, v)],
    ['RateLimiter options', (e, v) => new e.RateLimiter(v)],
    ['revokeToken options', (e, v) => new e.Authenticator({ accessSecret: SECRET }).revokeToken('j1', 4102444800, v)],

  ]
  const outcome = (f) => {
    try {
      f()
      return 'no error'
    } catch (err) {
      return `${err.name} ${err.code} ${err.message}`
    }
  }
  for (const value of [huge, new Uint8Array(3), new Float64Array(2), new DataView(new ArrayBuffer(8)), new Map([['accessSecret', SECRET]])]) {
    for (const [label, call] of calls) {
      const a = outcome(() => call(native, value))
      const b = outcome(() => call(js, value))
      assert.equal(a, b, `${label} with ${value.constructor.name}`)
      // A Map has no enumerable keys: an empty options object (its `keys` method is no option),
      // so a config without a secret.
      if (ArrayBuffer.isView(value)) assert.match(a, /^TypeError ERR_INVALID_ARG_TYPE .*must be an object$/, label)
      else if (label === 'new Authenticator') assert.match(a, /^TypeError ERR_INVALID_ARG_TYPE config\.accessSecret is required/, label)
    }
  }
  // The native helpers (no JS twin) refuse a Buffer the same way, before reading its indices.
  for (const [label, call] of [
    ['hashPasswordSync', () => native.hashPasswordSync('correct horse battery staple', huge)],
    ['totp', () => native.totp('JBSWY3DPEHPK3PXP', huge)],
    ['sanitizeHtml', () => native.sanitizeHtml('<b>x</b>', huge)],
  ]) {
    assert.equal(outcome(call), 'TypeError ERR_INVALID_ARG_TYPE options must be an object', label)
  }
})
