'use strict'

// Native and JS engines, field for field, on >= 10,000 generated requests: valid, expired and
// not-yet-valid tokens, wrong secrets, issuers and audiences, refresh tokens, mutated bytes,
// malformed headers and JSON, every tenant combination and rate-limit sequences. Time is fixed
// with clockTimestamp; each rate-limit sequence gets its own pair of authenticators.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { random, rawToken, token, HS256, withoutRequestId } = require('../support/tokens')
const { plumbing } = require('../support/store-seam')
const { schemaConfigs, nonDefaultValues, optionOf } = require('../support/schema-configs')

const NOW = 1_700_000_000
const ACCESS = 'differential-access-secret-0123456789'
const REFRESH = 'differential-refresh-secret-0123456789'
const WRONG = 'differential-wrong-secret-0123456789ab'

// Drawn from contract/options.json (__test__/support/schema-configs.js): every value derived
// for every option appears in at least one config, so an option added to the schema is compared
// here too. `values` gives what these tokens are made for; [] holds an option at its default.
const CONFIGS = schemaConfigs({
  seed: 35,
  count: 12,
  always: ['accessSecret', 'clockTimestamp', 'rateLimitMax', 'rateLimitRefillPerSec'],
  companions: { requireAccessTokenProfile: ['issuer', 'audience'] },
  // Its refusals need tokens the others do not refuse first: missing_profile_claim >= 10 times.
  times: { requireAccessTokenProfile: 3 },
  values: {
    // Tokens here are HS256 on ACCESS: other key sources have their own tests below.
    accessSecret: [ACCESS, Buffer.from(ACCESS)],
    keys: [],
    signingKey: [],
    issuers: [],
    refreshSecret: [REFRESH, ACCESS],
    issuer: [['auth.example', 'legacy'], 'auth.example'],
    audience: ['api', ['api', 'web']],
    // jsonwebtoken reads clockTimestamp 0 as "unset": the JS engine must still use it.
    clockTimestamp: [NOW, NOW + 0.5, 0],
    // Off or out of reach: rate_limited is reached by the sequences below, not by the generator.
    rateLimitMax: [0, 1e6],
    // The limiter refills on the real clock: slow enough that no request of a run sees a whole
    // token come back between the two engines' calls (each value is compared in options-contract).
    rateLimitRefillPerSec: [1e-6, 0.001],
    baseDomain: ['Example.com.', 'example.com'],
    maxTokenBytes: [400, ...nonDefaultValues(optionOf('maxTokenBytes'))],
    // Every Bearer token without a certificate would be unbound_token: the tests at the end.
    requireCertificateBoundTokens: [],
    // Every JWT would be introspection_required: the introspection test at the end compares it.
    introspectJwts: [],
    requiredScope: [['read', 'write:x'], 'read'],
    requiredAcr: [['mfa', 'gold'], 'mfa'],
    maxAuthAgeSec: [60, 0, 3200000000],
  },
  // A config both engines refuse (the profile without issuer or audience…) is refused alike, then redrawn.
  accept: (config) => {
    const refusal = (engine) => {
      try {
        new engine.Authenticator(config)
        return null
      } catch (err) {
        return { type: err.constructor.name, message: err.message }
      }
    }
    const n = refusal(native)
    assert.deepStrictEqual(refusal(js), n, JSON.stringify(config))
    return n === null
  },
})

// 600 random requests per config at least, so each reaches the checks late in the chain.
const RANDOM_REQUESTS = Math.max(9000, 600 * CONFIGS.length)

const TENANT_CLAIMS = [undefined, 'acme', 'Acme', '', 'globex', 'bad:id', 'a'.repeat(64), 7]
const TENANT_HEADERS = [undefined, null, '', 'acme', 'ACME', 'globex', 'bad:id', 'a'.repeat(64), '-x', 'a_b-c']
const HOSTS = [
  undefined,
  '',
  'localhost',
  'localhost:3000',
  '127.0.0.1:8080',
  '[::1]:3000',
  'example.com',
  'www.example.com',
  'acme.example.com',
  'ACME.example.com:8443',
  'globex.example.com.',
  'a.b.example.com',
  'acme.other.org',
  'api.localhost',
  'bad_%.example.com',
  `${'x'.repeat(70)}.example.com`,
  'acme.example.com:',
  'acme.Example.COM',
  'Acme.example.com:80:90',
]

/** A metrics() snapshot without what depends on each engine's speed (duration buckets and sum). */
function countsOf(m) {
  const { buckets, sumSeconds, ...duration } = m.duration
  assert.equal(buckets.reduce((a, b) => a + b, 0), duration.count)
  assert.ok(sumSeconds >= 0)
  return { ...m, duration }
}

/** Both engines' metrics() agree, counter for counter. */
function sameMetrics(pair) {
  const a = countsOf(pair.n.metrics())
  assert.deepStrictEqual(countsOf(pair.j.metrics()), a)
  return a
}

function pairOf(config) {
  const pair = { n: new native.Authenticator(config), j: new js.Authenticator(config) }
  for (const engine of [pair.n, pair.j]) engine.setDurationMetrics(true)
  return pair
}

/** Runs one request through both engines and records any difference. */
function makeChecker() {
  const mismatches = []
  const codes = new Map()
  let count = 0
  return {
    codes,
    check(pair, args, label) {
      count++
      const a = pair.n.authenticate(...args)
      const b = pair.j.authenticate(...args)
      assert.deepEqual(Object.keys(b), Object.keys(a), 'AuthResult keys and order')
      const code = a.errorCode || 'ok'
      codes.set(code, (codes.get(code) || 0) + 1)
      try {
        assert.deepStrictEqual(withoutRequestId(b), withoutRequestId(a))
      } catch {
        if (mismatches.length < 5) mismatches.push({ label, args, native: a, js: b })
      }
      // The counters too, after every request: a difference names the request that made it.
      const counters = [countsOf(pair.n.metrics()), countsOf(pair.j.metrics())]
      try {
        assert.deepStrictEqual(counters[1], counters[0])
      } catch {
        if (mismatches.length < 5) mismatches.push({ label, args, metrics: { native: counters[0], js: counters[1] } })
      }
      return a
    },
    get count() {
      return count
    },
    mismatches,
  }
}

function claimsFor(rng, config) {
  // A quarter are well-formed, so the late checks (issuer, subject, type) are reached too.
  if (rng.chance(0.25)) {
    const claims = { sub: rng.pick(['user-1', 'user-2']), exp: config.clockTimestamp + 60, aud: 'api', type: 'access' }
    claims.iss = rng.pick(['auth.example', 'legacy', 'other'])
    if (rng.chance(0.5)) claims.tenant_id = rng.pick(['acme', 'globex'])
    if (rng.chance(0.5)) claims.scope = rng.pick(['read write:x', 'write:x  read', 'read', ''])
    if (rng.chance(0.6)) Object.assign(claims, { client_id: 'c1', iat: config.clockTimestamp - 5, jti: `j${rng.int(1000)}` })
    if (rng.chance(0.6)) Object.assign(claims, { acr: rng.pick(['mfa', 'gold', 'pwd']), auth_time: config.clockTimestamp - rng.pick([0, 59, 60, 61, 60.5, -5]) })
    return claims
  }
  const claims = {}
  const put = (name, values) => {
    const v = rng.pick(values)
    if (v !== undefined) claims[name] = v
  }
  put('sub', ['user-1', 'user-2', 'user-1', 'user-2', '', undefined, undefined, 42, null])
  put('email', [undefined, 'a@example.com', 'é@example.com', 5])
  put('role', [undefined, 'admin', 'user', ['admin']])
  put('tenant_id', [undefined, undefined, 'acme', 'Acme', 'globex', '', 'bad:id', 7])
  put('iss', [undefined, 'auth.example', 'legacy', 'other', 5])
  put('aud', [undefined, 'api', 'web', ['x', 'api'], ['x'], [1], 'other', []])
  put('type', [undefined, undefined, 'access', 'refresh', 'Access', 1])
  const now = config.clockTimestamp
  put('exp', [now + 3600, now + 3600, now - 100, now - 31, now - 30, now - 1, now, now + 1, now + 29, now + 0.5, undefined, undefined, '9', null])
  put('nbf', [undefined, undefined, now - 10, now, now + 1, now + 30, now + 31, 'x'])
  // A future iat (an issuer writing milliseconds, 1e300) is not yet valid (issue 34).
  put('iat', rng.chance(0.9) ? [undefined, now, 'x'] : [now + 0.999, now + 1, now + 31, now * 1000, 1e300])
  put('scope', [undefined, undefined, 'read write:x', ' read  write:x ', 'read', 'readwrite:x', 'READ WRITE:X', 'ré write:x read', '', ['read', 'write:x'], null, 0, false, 'a"b read', 'a\\b write:x', 'read\u0000 x', 'read read'])
  put('acr', [undefined, undefined, 'mfa', 'pwd', '', ['mfa'], null])
  put('auth_time', [undefined, undefined, now, now - 60, now - 61, now + 1, 'x', rng.pick([now + 0.999, now * 1000])])
  put('permissions', [undefined, undefined, undefined, ['read', 'write:x'], ['write:x'], [], 'read', [1]])
  put('client_id', [undefined, 'c1', '', 5, null])
  put('jti', [undefined, undefined, undefined, undefined, undefined, 'j1', '', 7])
  put('scp', [undefined, undefined, ['read', 'write:x'], ['write:x'], 'read write:x', [], ['read', 1], 'read', {}, true, ['read write:x'], ['', 'read'], ['é', 'write:x']])
  if (rng.chance(0.2)) claims.extra = rng.pick([{ nested: [1, { a: null }] }, 1e300, 'x'.repeat(50), [[], {}]])
  return claims
}

// Payload texts serde_json and JSON.parse are known to read differently unless handled.
const ODD_PAYLOADS = [
  '{"sub":"u","sub":"v","exp":9999999999}',
  '{"sub":"u","s\\u0075b":"v","exp":9999999999}',
  '{"sub":"u","exp":9999999999,"x":1,"x":2}',
  '{"sub":"u","exp":9999999999,"scope":"read write:x","scope":"read"}',
  '{"sub":"u","exp":9999999999,"scp":["read"],"scp":["write:x"]}',
  '{"sub":"u","exp":9999999999,"scope":"read\\u0020write:x"}',
  '{"sub":"u","exp":9999999999,"scope":"read\\twrite:x"}',
  '{"sub":"u","exp":9999999999,"scope":"\\u0072ead write:x"}',
  '{"sub":"u","exp":9999999999,"scp":["\\u0072ead","a\\"b"],"permissions":["write\\u003ax"]}',
  '{"sub":"\\ud800","exp":9999999999}',
  '{"sub":"u","exp":9999999999,"x":"\\ud800"}',
  '{"sub":"\\ud83d\\ude00","exp":9999999999}',
  '{"sub":"\xff","exp":9999999999}',
  '{"sub":"u","exp":9999999999,"x":"\xff"}',
  '{"sub":"u","exp":9999999999,"\xff":1}',
  '{"sub":"u","exp":9999999999,"x":{"\xff":1}}',
  '{"sub":{"\xff":1},"exp":9999999999}',
  '{"sub":["a","\xff"],"exp":9999999999}',
  '{"sub":[1,"\xff"],"exp":9999999999}',
  '{"sub":"u","exp":1e400}',
  '{"sub":"u","exp":9999999999,"x":1e400}',
  '{"sub":"u","exp":9999999999,"aud":["a",1e400]}',
  '{"sub":"u","exp":9999999999,"aud":[1,1e400]}',
  '{"sub":"u","exp":-1e400}',
  '{"sub":"u","exp":1e-400}',
  `{"sub":"u","exp":9999999999,"x":${'['.repeat(150)}${']'.repeat(150)}}`,
  '{"sub":"u","exp":9999999999,"x":01}',
  '{"sub":"u","exp":9999999999,"x":1.}',
  '{"sub":"u","exp":9999999999,}',
  '{"sub":"u","exp":9999999999} ',
  ' \t\r\n{"sub":"u","exp":9999999999}',
  '\ufeff{"sub":"u","exp":9999999999}',
  '{"sub":"u","exp":9999999999,"x":"a\x01"}',
  '{"sub":"u","exp":9999999999,"x":"\\q"}',
  '{"sub":"u","exp":9999999999,"x":"\\u12G4"}',
  '{"sub":"u","exp":9999999999,"x":tru}',
  '{"sub":null,"exp":9999999999}',
  '{"sub":"u","exp":9999999999,"aud":null}',
  '{"sub":"u","exp":18446744073709551616}',
  '{"sub":"u","exp":9999999999,"__proto__":{"sub":"x"}}',
  '[]',
  '"x"',
  '',
  '{',
]

const ODD_HEADERS = [
  '{"alg":"none","typ":"JWT"}',
  '{"alg":"HS384"}',
  '{"alg":"hs256"}',
  '{"alg":"HS256","crit":["exp"]}',
  '{"alg":"HS256","crit":null}',
  '{"alg":"HS256","alg":"HS256"}',
  '{"alg":"HS\\u0032\\u00356"}',
  '{"alg":["HS256"]}',
  '{"alg":null}',
  '{"typ":"JWT"}',
  '{"alg":"HS256","typ":"at+jwt"}',
  '{"alg":"HS256","typ":"application/AT+JWT"}',
  '{"alg":"HS256","typ":"at+jwt","typ":"at+jwt"}',
  '{"alg":"HS256","typ":"JWT","typ":"at+jwt"}',
  '{"alg":"HS256","typ":1e400}',
  '{"alg":"HS256","typ":["at+jwt"]}',
  '{"alg":"HS256","typ":"\\ud800"}',
  '{"alg":"HS256","typ":"\\u017ft+jwt"}',
  '{"alg":"HS256","typ":"at+jwt "}',
  '{"alg":"HS256","x":"\xff"}',
  '{"alg":"HS256","\xff":1}',
  '{"alg":"HS256","kid":"../../etc/passwd"}',
  '{"alg":"HS256","kid":"\' OR 1=1 --"}',
  '{"alg":"HS256","kid":7}',
  '{"alg":"RS256","kid":"k"}',
  '{"alg":1e400}',
  '["HS256"]',
  '{"alg":"HS256"',
  '',
]

const MUTATION_CHARS = 'AQgw09-_.=+/~ é\t'

function mutate(rng, t) {
  switch (rng.int(7)) {
    case 0: {
      const i = rng.int(t.length)
      return t.slice(0, i) + rng.pick([...MUTATION_CHARS]) + t.slice(i + 1)
    }
    case 1: {
      const i = rng.int(t.length)
      return t.slice(0, i) + t.slice(i + 1)
    }
    case 2:
      return `${t}=`
    case 3:
      return t.slice(0, t.lastIndexOf('.') + 1 + rng.int(43))
    case 4:
      return `${t}.${t.split('.')[1]}`
    case 5:
      return t.split('.').slice(0, 2).join('.')
    default: {
      const i = rng.int(t.length)
      return t.slice(0, i) + String.fromCharCode(t.charCodeAt(i) ^ 1) + t.slice(i + 1)
    }
  }
}

function tokenFor(rng, config) {
  const r = rng.next()
  if (r < 0.06) return rawToken(HS256, rng.pick(ODD_PAYLOADS), ACCESS)
  if (r < 0.1) return rawToken(rng.pick(ODD_HEADERS), '{"sub":"u","exp":9999999999}', ACCESS)
  const secret = rng.chance(0.85) ? ACCESS : rng.pick([WRONG, REFRESH])
  // Most of a profile config's tokens say they are access tokens (RFC 9068 typ).
  const header = config.requireAccessTokenProfile && rng.chance(0.75) ? { alg: 'HS256', typ: rng.pick(['at+jwt', 'at+jwt', 'application/at+jwt', 'At+Jwt', 'JWT', 'at+jwt ']) } : HS256
  let t = token(claimsFor(rng, config), secret, header)
  if (rng.chance(0.15)) t = mutate(rng, t)
  return t
}

function authorizationFor(rng, t) {
  const r = rng.next()
  if (r < 0.75) return `Bearer ${t}`
  return rng.pick([
    `bearer   ${t}`,
    `BEARER ${t}`,
    `Bearer\t${t}`,
    `Basic ${t}`,
    t,
    `Bearer ${t} `,
    `Bearer ${t}==`,
    ` Bearer ${t}`,
    `Bearer ${t}é`,
    `Bearer ${'a'.repeat(9000)}`,
    `Bearer ${'é'.repeat(3000)}`,
    `Bearer ${' '.repeat(10000)}abc`,
    '',
    undefined,
    null,
    'Bearer',
    'Bearer ',
    'Bearer ===',
  ])
}

test('both engines give identical results on >= 10,000 generated requests', () => {
  const checker = makeChecker()
  const pairs = CONFIGS.map(pairOf)

  // Random requests across every config (1,000 or more each, so every code is reached often).
  const rng = random(20261123)
  for (let i = 0; i < RANDOM_REQUESTS; i++) {
    const k = i % CONFIGS.length
    const t = tokenFor(rng, CONFIGS[k])
    const args = [authorizationFor(rng, t), rng.pick(TENANT_HEADERS), rng.pick(HOSTS)]
    checker.check(pairs[k], args, `random #${i} config ${k}`)
  }

  // Every tenant combination, under each tenant policy.
  const tenantConfigs = [
    { enforceTenantMatch: false },
    { enforceTenantMatch: true },
    { enforceTenantMatch: false, baseDomain: 'example.com' },
    { enforceTenantMatch: true, baseDomain: 'EXAMPLE.com' },
  ]
  for (const policy of tenantConfigs) {
    const pair = pairOf({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0, ...policy })
    for (const claim of TENANT_CLAIMS) {
      const claims = { sub: 'u', exp: NOW + 60 }
      if (claim !== undefined) claims.tenant_id = claim
      const authorization = `Bearer ${token(claims, ACCESS)}`
      for (const header of TENANT_HEADERS) {
        for (const host of HOSTS) checker.check(pair, [authorization, header, host], `tenant ${JSON.stringify(policy)}`)
      }
    }
  }

  assert.deepEqual(checker.mismatches, [])
  assert.ok(checker.count >= 10000, `only ${checker.count} requests`)
  // Both engines counted the same verdicts, and the counters add up to the requests made.
  let counted = 0
  for (const pair of pairs) {
    const m = sameMetrics(pair)
    assert.equal(m.duration.count, m.authentication.succeeded + m.authentication.failed)
    counted += m.duration.count
  }
  assert.equal(counted, RANDOM_REQUESTS)
  // The generator reaches every outcome but rate limiting and shared-limit leases (tested by
  // sequences below).
  const reached = [...checker.codes.keys()].sort()
  // Codes reached only by the sequences below (or by their own suites), not by the generator.
  // Certificate-bound tokens' codes need a binding mode and a sender context: the tests at the end.
  // DPoP codes: the DPoP test below and __test__/dpop/ (proofs are made asynchronously).
  const dpopCodes = Object.keys(require('../../contract/error-codes.json')).filter((c) => c.includes('dpop'))
  // untrusted_issuer needs the issuers option: the trusted-issuer tests at the end.
  const notGenerated = new Set(['rate_limited', 'token_revoked', 'revocation_unavailable', 'rate_limit_pending', 'keys_unavailable', 'certificate_required', 'certificate_mismatch', 'unbound_token', 'untrusted_issuer', 'introspection_unavailable', 'token_inactive', ...dpopCodes])
  const expected = ['ok', ...Object.keys(require('../../contract/error-codes.json'))].filter((c) => !notGenerated.has(c)).sort()
  assert.deepEqual(reached, expected)
  for (const [code, n] of checker.codes) assert.ok(n >= 10, `${code} reached only ${n} times`)
})

// Lone surrogate escapes (issue 22): high alone, low alone, a reversed pair, a high one before a
// non-surrogate escape or at the end of a string, at key and value positions, nested, in header
// and payload, under the right key and a forged one. Both engines: malformed_token, decided
// before alg and signature; a real pair (the control) is a character like any other.
const SURROGATES = ['\\ud800', '\\udbff', '\\udc00', '\\udfff', '\\udc00\\ud800', '\\ud83d\\u0041', '\\ud83dx', 'a\\ud800']
const PAIR = '\\ud83d\\ude00'
const SURROGATE_PAYLOADS = [
  (u) => `{"sub":"${u}","exp":9999999999}`,
  (u) => `{"sub":"u","exp":9999999999,"${u}":1}`,
  (u) => `{"sub":"u","exp":9999999999,"x":"${u}"}`,
  (u) => `{"sub":{"${u}":1},"exp":9999999999}`,
  (u) => `{"sub":"u","exp":9999999999,"aud":[1,"${u}"]}`,
  (u) => `{"sub":"u","exp":9999999999,"aud":["api","${u}"]}`,
  (u) => `{"sub":"u","exp":{"a":[{"${u}":null}]}}`,
  (u) => `{"sub":"u","exp":9999999999,"x":[[{"y":{"z":["${u}"]}}]]}`,
  (u) => `{"sub":"u","exp":9999999999,"tenant_id":{"${u}":"acme"}}`,
]
const SURROGATE_HEADERS = [
  (u) => `{"alg":{"${u}":1}}`,
  (u) => `{"alg":"HS256","${u}":1}`,
  (u) => `{"alg":"HS256","typ":"${u}"}`,
  (u) => `{"alg":"none","x":[{"${u}":[]}]}`,
  (u) => `{"alg":"HS256","kid":"${u}"}`,
  (u) => `{"alg":"HS256","crit":["${u}"]}`,
]

test('lone surrogates anywhere in header or payload are malformed_token in both engines, forged or not', () => {
  const checker = makeChecker()
  const pair = pairOf({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0 })
  const rng = random(22)
  let lone = 0
  for (let i = 0; i < 1200; i++) {
    const u = rng.chance(0.15) ? PAIR : rng.pick(SURROGATES)
    const secret = rng.chance(0.5) ? ACCESS : WRONG
    const t = rng.chance(0.6)
      ? rawToken(HS256, rng.pick(SURROGATE_PAYLOADS)(u), secret)
      : rawToken(rng.pick(SURROGATE_HEADERS)(u), '{"sub":"u","exp":9999999999}', secret)
    const result = checker.check(pair, [`Bearer ${t}`], `surrogate #${i} ${t}`)
    assert.deepStrictEqual(pair.j.verifyAccessToken(t), pair.n.verifyAccessToken(t), t)
    if (u !== PAIR) {
      lone++
      assert.equal(result.errorCode, 'malformed_token', t.split('.', 2).map((part) => Buffer.from(part, 'base64url').toString()).join(' '))
    }
  }
  assert.deepEqual(checker.mismatches, [])
  assert.ok(lone > 900)
  // The control reaches past the JSON reader: a verdict other than malformed_token.
  assert.ok([...checker.codes.keys()].some((c) => c !== 'malformed_token'), [...checker.codes.keys()].join())
})

test('tenantSource names where the tenant came from, the same in both engines', () => {
  const schemaFields = require('../../contract/results.json').AuthResult.map((f) => f.name)
  const plain = pairOf({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0 })
  const enforcing = pairOf({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0, enforceTenantMatch: true, baseDomain: 'example.com' })
  const withClaim = `Bearer ${token({ sub: 'u', exp: NOW + 60, tenant_id: 'acme' }, ACCESS)}`
  const withoutClaim = `Bearer ${token({ sub: 'u', exp: NOW + 60 }, ACCESS)}`
  const cases = [
    // [pair, authorization, tenant header, host, tenantId, tenantSource, errorCode]
    [plain, withClaim, 'globex', 'initech.example.com', 'acme', 'token'],
    [plain, withoutClaim, 'globex', 'initech.example.com', 'globex', 'header'],
    [plain, withoutClaim, undefined, 'Initech.example.com:8443', 'initech', 'host'],
    [plain, withoutClaim, '', 'localhost:3000', undefined, undefined],
    [plain, withoutClaim, null, null, undefined, undefined],
    [enforcing, withClaim, 'ACME', undefined, 'acme', 'token'],
    [enforcing, withClaim, undefined, 'acme.example.com', 'acme', 'token'],
    [enforcing, withoutClaim, undefined, 'acme.example.com', 'acme', 'host'],
    // Failures carry no tenant, wherever it would have come from.
    [enforcing, withClaim, 'globex', undefined, undefined, undefined, 'tenant_mismatch'],
    [plain, withoutClaim, 'bad:id', undefined, undefined, undefined, 'invalid_tenant'],
    [plain, 'Bearer x.y.z', 'globex', undefined, undefined, undefined, 'malformed_token'],
  ]
  for (const [pair, authorization, header, host, tenantId, tenantSource, errorCode] of cases) {
    const label = JSON.stringify([authorization === withClaim ? 'claim' : authorization, header, host])
    for (const result of [pair.n.authenticate(authorization, header, host), pair.j.authenticate(authorization, header, host)]) {
      assert.deepEqual(Object.keys(result), schemaFields, `${label}: fields in schema order`)
      assert.equal(result.errorCode, errorCode, label)
      assert.equal(result.tenantId, tenantId, label)
      assert.equal(result.tenantSource, tenantSource, label)
    }
  }
})

// Slow refills, down to ones too small for 1e9 / refill to be finite (issue 22: they switched
// the limiter off), and capacities at the schema's bound.
// AuthResult.scope (issue 25): what each engine lists, written out by hand.
const SCOPE_CASES = [
  [{}, undefined],
  [{ scope: 'read write:x' }, 'read write:x'],
  [{ scope: '  write:x   x read ' }, 'write:x x read'],
  [{ scope: '' }, ''],
  [{ scope: ' ' }, ''],
  [{ scope: 'read read' }, 'read read'],
  [{ scope: 'ré write:x a"b c\\d e\u0000 f\tg' }, 'write:x'],
  [{ scp: ['read', 'write:x'] }, 'read write:x'],
  [{ scp: 'read  write:x' }, 'read write:x'],
  [{ scp: ['read write:x', '', 'ok'] }, 'ok'],
  [{ scp: [] }, ''],
  [{ permissions: ['read:orders', 'delete:orders'] }, 'read:orders delete:orders'],
  [{ permissions: [] }, ''],
  [{ scope: 'openid', scp: ['a'], permissions: ['b', 'openid'] }, 'openid a b openid'],
  [{ scope: ['read'] }, null],
  [{ scope: null }, null],
  [{ scope: 0 }, null],
  [{ scope: 'read', scp: ['read', 1] }, null],
  [{ scp: {} }, null],
  [{ scp: true }, null],
  [{ permissions: 'read' }, null],
  [{ permissions: ['read', null] }, null],
]

test('AuthResult.scope lists the granted scope-tokens single-spaced, the same in both engines; a failure has none', () => {
  for (const config of [{}, { requiredScope: ['read'] }]) {
    const pair = pairOf({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0, ...config })
    for (const [claims, expected] of SCOPE_CASES) {
      const label = JSON.stringify(claims)
      const authorization = `Bearer ${token({ sub: 'u', exp: NOW + 60, ...claims }, ACCESS)}`
      const a = pair.n.authenticate(authorization, null, null)
      const b = pair.j.authenticate(authorization, null, null)
      assert.deepStrictEqual(withoutRequestId(b), withoutRequestId(a), label)
      if (config.requiredScope === undefined) {
        assert.equal(a.authenticated, true, label)
        assert.equal(a.scope, expected, label)
      } else {
        // Only a token that grants `read` passes; a failure never carries a scope.
        assert.equal(a.authenticated, typeof expected === 'string' && expected.split(' ').includes('read'), label)
        if (!a.authenticated) assert.equal(a.scope, undefined, label)
        if (expected === null) assert.equal(a.errorCode, 'invalid_claims', label)
      }
    }
  }
  // JSON escapes (the payload decoded, not copied) and a large list, the same.
  const pair = pairOf({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0 })
  const escaped = `Bearer ${rawToken(HS256, `{"sub":"u","exp":${NOW + 60},"scope":"\\u0072ead w\\u0072ite","permissions":["\\u0061"]}`, ACCESS)}`
  const alone = `Bearer ${rawToken(HS256, `{"sub":"u","exp":${NOW + 60},"scope":"\\u0072ead w\\u0072ite"}`, ACCESS)}`
  const many = Array.from({ length: 500 }, (_, i) => `s${i}`).join(' ')
  const large = `Bearer ${token({ sub: 'u', exp: NOW + 60, scope: many, scp: many.split(' ') }, ACCESS)}`
  for (const [authorization, expected] of [[escaped, 'read write a'], [alone, 'read write'], [large, `${many} ${many}`]]) {
    assert.equal(pair.n.authenticate(authorization, null, null).scope, expected)
    assert.equal(pair.j.authenticate(authorization, null, null).scope, expected)
  }
})

const SLOW_REFILLS = [0.001, 0.001, 1e-9, 1e-300, Number.MIN_VALUE, 2.2250738585072009e-308]
const CAPACITIES = [999999999, 1e9]

test('rate-limit sequences agree, bucket by bucket', () => {
  const rng = random(7)
  let requests = 0
  for (let s = 0; s < 60; s++) {
    const capacity = s % 12 === 11 ? rng.pick(CAPACITIES) : 1 + rng.int(5)
    // A slow refill: no token comes back while a sequence runs, so counts are deterministic.
    const config = { accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: capacity, rateLimitRefillPerSec: rng.pick(SLOW_REFILLS) }
    if (s % 10 === 9) config.rateLimitMaxKeys = 3
    const pair = pairOf(config)
    const started = Date.now()
    const length = 3 + rng.int(14)
    for (let i = 0; i < length; i++) {
      const user = rng.pick(['u1', 'u2', 'u3', 'u4', 'u5'])
      const tenant = rng.pick([undefined, 'acme', 'globex'])
      const claims = { sub: user, exp: NOW + 60 }
      const valid = rng.chance(0.85)
      const t = token(claims, valid ? ACCESS : WRONG)
      const args = [`Bearer ${t}`, tenant, rng.pick(['acme.example.com', undefined])]
      const a = pair.n.authenticate(...args)
      const b = pair.j.authenticate(...args)
      requests++
      const elapsed = Date.now() - started + 1
      // Each engine reads its own monotonic clock: the wait may differ by the time between calls.
      if (a.errorCode === 'rate_limited' && b.errorCode === 'rate_limited') {
        assert.ok(Math.abs(a.retryAfterMs - b.retryAfterMs) <= elapsed, `retryAfterMs ${a.retryAfterMs} vs ${b.retryAfterMs}`)
        assert.ok(a.retryAfterMs > 990_000 && b.retryAfterMs > 990_000)
        b.retryAfterMs = a.retryAfterMs
      }
      assert.deepStrictEqual(withoutRequestId(b), withoutRequestId(a), `sequence ${s} step ${i}`)
      assert.equal(pair.j.rateLimitBuckets, pair.n.rateLimitBuckets, `buckets after sequence ${s} step ${i}`)
    }
  }
  assert.ok(requests > 300)
})

test('shared-limit lease sequences agree: pending, grants, refusals, renewals, strict mode', () => {
  const rng = random(11)
  const codes = new Set()
  let requests = 0
  for (let s = 0; s < 40; s++) {
    const pair = pairOf({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 1 + rng.int(50), rateLimitRefillPerSec: 0.001 })
    const lease = 1 + rng.int(8)
    const strict = s % 5 === 4
    const maxKeys = s % 7 === 6 ? 2 : 100
    plumbing(pair.n).enableSharedLimit(lease, strict, maxKeys)
    plumbing(pair.j).enableSharedLimit(lease, strict, maxKeys)
    const started = Date.now()
    for (let i = 0; i < 40; i++) {
      const step = rng.int(10)
      if (step < 6) {
        const tenant = rng.pick([undefined, 'acme'])
        const t = token({ sub: rng.pick(['u1', 'u2', 'u3']), exp: NOW + 60, ...(tenant && { tenant_id: tenant }) }, ACCESS)
        const a = pair.n.authenticate(`Bearer ${t}`)
        const b = pair.j.authenticate(`Bearer ${t}`)
        requests++
        codes.add(a.errorCode || 'ok')
        if (a.errorCode === 'rate_limited' && b.errorCode === 'rate_limited') {
          assert.ok(Math.abs(a.retryAfterMs - b.retryAfterMs) <= Date.now() - started + 1, `retryAfterMs ${a.retryAfterMs} vs ${b.retryAfterMs}`)
          b.retryAfterMs = a.retryAfterMs
        }
        assert.deepStrictEqual(withoutRequestId(b), withoutRequestId(a), `sequence ${s} step ${i}`)
      } else if (step < 8) {
        assert.deepStrictEqual(plumbing(pair.j).takeLeaseRequests(), plumbing(pair.n).takeLeaseRequests(), `drain, sequence ${s} step ${i}`)
      } else {
        const key = rng.pick([':u1', ':u2', 'acme:u3', 'acme:u1'])
        const tokens = rng.chance(0.3) ? 0 : rng.int(lease + 3)
        const args = [key, tokens, rng.int(100), tokens === 0 ? 60_000 : 0]
        plumbing(pair.n).grantLease(...args)
        plumbing(pair.j).grantLease(...args)
      }
      assert.equal(plumbing(pair.j).sharedLimitKeys, plumbing(pair.n).sharedLimitKeys, `lease keys, sequence ${s} step ${i}`)
    }
  }
  assert.ok(requests > 500)
  for (const code of ['ok', 'rate_limited', 'rate_limit_pending']) assert.ok(codes.has(code), `${code} not reached`)
})

test('token verification and signing agree between engines', () => {
  const rng = random(99)
  const config = { accessSecret: ACCESS, refreshSecret: REFRESH, clockTimestamp: NOW, issuer: ['auth.example', 'legacy'], audience: 'api', clockToleranceSec: 30, requireTokenType: true, rateLimitMax: 0 }
  const pair = pairOf(config)
  for (let i = 0; i < 1500; i++) {
    const t = rng.chance(0.5) ? tokenFor(rng, config) : token({ ...claimsFor(rng, config), type: 'refresh' }, REFRESH)
    assert.deepStrictEqual(pair.j.verifyAccessToken(t), pair.n.verifyAccessToken(t), `access ${t}`)
    assert.deepStrictEqual(pair.j.verifyRefreshToken(t), pair.n.verifyRefreshToken(t), `refresh ${t}`)
  }
  const claims = { sub: 'u1', email: 'e@x', role: 'admin', tenant_id: 'acme', aud: ['api'], zeta: { b: 1, a: [2] } }
  for (const [signer, verifier] of [
    [pair.n, pair.j],
    [pair.j, pair.n],
  ]) {
    const access = verifier.verifyAccessToken(signer.signAccessToken(claims))
    const refresh = verifier.verifyRefreshToken(signer.signRefreshToken(claims))
    for (const v of [access, refresh]) {
      assert.equal(v.valid, true)
      assert.equal(v.userId, 'u1')
      assert.equal(v.tenantId, 'acme')
      assert.equal(v.expiresAtSec - NOW, v === access ? 900 : 604800)
    }
  }
  // Same claims, same payload bytes apart from the random jti.
  const payloadOf = (t) => JSON.parse(Buffer.from(t.split('.')[1], 'base64url')).jti && Buffer.from(t.split('.')[1], 'base64url').toString()
  const strip = (t) => payloadOf(t).replace(/"jti":"[^"]+"/, '')
  assert.equal(strip(pair.j.signAccessToken(claims)), strip(pair.n.signAccessToken(claims)))
  assert.equal(pair.j.signAccessToken(claims).split('.')[0], pair.n.signAccessToken(claims).split('.')[0])
})

test('authenticateRequest (one-shot) agrees and shares state per config', () => {
  const config = { accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 3, rateLimitRefillPerSec: 0.001 }
  const t = `Bearer ${token({ sub: 'one-shot', exp: NOW + 60 }, ACCESS)}`
  for (let i = 0; i < 5; i++) {
    const a = native.authenticateRequest(t, undefined, undefined, { ...config })
    const b = js.authenticateRequest(t, undefined, undefined, { ...config })
    if (a.errorCode === 'rate_limited') b.retryAfterMs = a.retryAfterMs
    assert.deepStrictEqual(withoutRequestId(b), withoutRequestId(a))
  }
})

// Regression: serde_json without float_roundtrip read this exp as exactly 1000 (expired); the
// native scanner now rounds correctly, as JSON.parse does.
test('exp written with more digits than a double holds is read the same', () => {
  const pair = pairOf({ accessSecret: ACCESS, clockTimestamp: 1000, rateLimitMax: 0 })
  const t = rawToken(HS256, '{"sub":"u","exp":1000.0000000000001}', ACCESS)
  assert.deepStrictEqual(pair.j.verifyAccessToken(t), pair.n.verifyAccessToken(t))
})

test('a refresh token presented as access is wrong_token_type in both engines, whatever the secrets', () => {
  // With separate secrets the access key refuses the signature; the refresh key, checked only
  // then, made it: one of our refresh tokens, not a forgery. The reverse holds for refresh.
  const configs = [
    { accessSecret: ACCESS, refreshSecret: REFRESH, clockTimestamp: NOW, rateLimitMax: 0 },
    { accessSecret: ACCESS, refreshSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0 },
  ]
  for (const config of configs) {
    const { n, j } = pairOf(config)
    const refresh = n.signRefreshToken({ sub: 'u' })
    const access = n.signAccessToken({ sub: 'u' })
    for (const engine of [n, j]) {
      assert.equal(engine.authenticate(`Bearer ${refresh}`).errorCode, 'wrong_token_type')
      assert.equal(engine.verifyAccessToken(refresh).errorCode, 'wrong_token_type')
      assert.equal(engine.verifyRefreshToken(access).errorCode, 'wrong_token_type')
      assert.equal(engine.authenticate(`Bearer ${access}`).authenticated, true)
    }
    // A token of neither key, and a refresh token with a flipped signature bit, stay forgeries.
    const foreign = token({ sub: 'u', exp: NOW + 60, type: 'refresh' }, WRONG)
    const flipped = refresh.slice(0, -2) + (refresh.at(-2) === 'A' ? 'B' : 'A') + refresh.at(-1)
    for (const t of [foreign, flipped]) {
      const a = withoutRequestId(n.authenticate(`Bearer ${t}`))
      assert.deepStrictEqual(withoutRequestId(j.authenticate(`Bearer ${t}`)), a)
      assert.equal(a.errorCode, 'invalid_signature')
    }
  }
  // Without a refresh secret there is no key to recognise a refresh token by.
  const { n, j } = pairOf({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0 })
  const refresh = pairOf(configs[0]).n.signRefreshToken({ sub: 'u' })
  for (const engine of [n, j]) assert.equal(engine.authenticate(`Bearer ${refresh}`).errorCode, 'invalid_signature')
})

// Revocation (docs/revocation.md): the same verdicts, codes and thrown errors from both deny lists.
test('revocations give the same verdicts in both engines: jti, subject cut-off, no iat, expiry, bound', () => {
  const rng = random(14)
  const config = { accessSecret: ACCESS, refreshSecret: REFRESH, clockTimestamp: NOW, rateLimitMax: 0, issuer: ['auth.example', 'legacy'], maxRevocations: 40 }
  const pair = pairOf(config)
  const tokens = []
  for (let i = 0; i < 300; i++) {
    const claims = { sub: `user-${rng.int(12)}`, exp: NOW + 1 + rng.int(900), iss: rng.pick(['auth.example', 'legacy']) }
    if (rng.chance(0.9)) claims.jti = `jti-${rng.int(60)}`
    if (rng.chance(0.85)) claims.iat = NOW - 500 + rng.int(1000)
    tokens.push(token(claims, ACCESS))
  }
  const verdicts = () => {
    for (const t of tokens) {
      assert.deepStrictEqual(withoutRequestId(pair.j.authenticate(`Bearer ${t}`)), withoutRequestId(pair.n.authenticate(`Bearer ${t}`)))
      assert.deepStrictEqual(pair.j.verifyAccessToken(t), pair.n.verifyAccessToken(t))
    }
  }
  const both = (fn) => {
    let a, b
    try {
      fn(pair.n)
    } catch (err) {
      a = err
    }
    try {
      fn(pair.j)
    } catch (err) {
      b = err
    }
    assert.equal(b?.constructor, a?.constructor)
    assert.equal(b?.code, a?.code)
    assert.equal(b?.message, a?.message)
    assert.equal(pair.j.revocationCount, pair.n.revocationCount)
    return a
  }
  verdicts()
  const codes = new Set()
  for (let i = 0; i < 80; i++) {
    const iss = rng.pick([undefined, 'auth.example', 'legacy', 'other'])
    if (rng.chance(0.6)) {
      // Some already expired (not held), some live.
      const jti = `jti-${rng.int(60)}`
      const exp = NOW - 10 + rng.int(900)
      both((e) => e.revokeToken(jti, exp, { iss }))
    } else {
      const before = rng.chance(0.3) ? undefined : NOW - 500 + rng.int(1000)
      const sub = `user-${rng.int(12)}`
      both((e) => e.revokeSubject(sub, { issuedBeforeSec: before, iss }))
    }
    if (i % 10 === 0) verdicts()
  }
  verdicts()
  for (const t of tokens) {
    codes.add(pair.n.authenticate(`Bearer ${t}`).errorCode)
    pair.j.authenticate(`Bearer ${t}`) // the same calls in both, for metrics() below
  }
  assert.ok(codes.has('token_revoked') && codes.has(undefined), [...codes].join())
  // Past maxRevocations both refuse the same way, and keep what they hold.
  assert.equal(pair.n.revocationCount, 40)
  assert.equal(both((e) => e.revokeToken('one-more', NOW + 60)).code, 'ERR_AUTH_SHIELD_REVOCATION_LIMIT')
  verdicts()
  const m = sameMetrics(pair)
  assert.ok(m.revocations.refusedAtLimit >= 1) // the random revocations above reach the bound too
  assert.equal(m.revocations.held, 40)
  assert.ok(m.authentication.failures.token_revoked > 0)
  // Bad arguments: the same class, code and message.
  const BAD = [
    (e) => e.revokeToken(1, NOW),
    (e) => e.revokeToken('', NOW),
    (e) => e.revokeToken('j'),
    (e) => e.revokeToken('j', '1'),
    (e) => e.revokeToken('j', NaN),
    (e) => e.revokeToken('j', -1),
    (e) => e.revokeToken('j', 1e14),
    (e) => e.revokeToken('é'.repeat(129), NOW),
    (e) => e.revokeToken('j', NOW, 'x'),
    (e) => e.revokeToken('j', NOW, { iss: 5 }),
    (e) => e.revokeToken('j', NOW, { iss: 'i'.repeat(257) }),
    (e) => e.revokeSubject(undefined),
    (e) => e.revokeSubject(''),
    (e) => e.revokeSubject('u', { issuedBeforeSec: 'now' }),
    (e) => e.revokeSubject('u', { issuedBeforeSec: Infinity }),
    (e) => e.revokeSubject('u', 7),
    (e) => plumbing(e).setRevocationUnavailable('yes'),
  ]
  for (const bad of BAD) assert.ok(both(bad), String(bad))
})

test('a revocation feed marking the list unavailable refuses unrevoked tokens with revocation_unavailable (503) in both engines', () => {
  const pair = pairOf({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0 })
  const revoked = token({ sub: 'u', jti: 'r', iat: NOW, exp: NOW + 60 }, ACCESS)
  const fine = token({ sub: 'u', jti: 'f', iat: NOW, exp: NOW + 60 }, ACCESS)
  const expired = token({ sub: 'u', jti: 'r', iat: NOW - 120, exp: NOW - 60 }, ACCESS)
  for (const e of [pair.n, pair.j]) {
    e.revokeToken('r', NOW + 60)
    plumbing(e).setRevocationUnavailable(true)
    assert.equal(e.revocationUnavailable, true)
  }
  for (const [t, code] of [
    [revoked, 'token_revoked'],
    [fine, 'revocation_unavailable'],
    [expired, 'token_expired'],
  ]) {
    const a = pair.n.authenticate(`Bearer ${t}`)
    assert.deepStrictEqual(withoutRequestId(pair.j.authenticate(`Bearer ${t}`)), withoutRequestId(a))
    assert.equal(a.errorCode, code)
    assert.deepStrictEqual(pair.j.verifyAccessToken(t), pair.n.verifyAccessToken(t))
  }
  assert.equal(pair.n.authenticate(`Bearer ${fine}`).errorStatus, 503)
  for (const e of [pair.n, pair.j]) plumbing(e).setRevocationUnavailable(false)
  assert.equal(pair.n.authenticate(`Bearer ${fine}`).authenticated, true)
  assert.equal(pair.j.authenticate(`Bearer ${fine}`).authenticated, true)
})

test('revocations are dropped by both engines once their tokens expire', async () => {
  // The system clock: entries expire 1 s from now (tolerance 0), then make room.
  const pair = pairOf({ accessSecret: ACCESS, rateLimitMax: 0, accessTtlSec: 1, refreshTtlSec: 1, maxRevocations: 2 })
  const now = Math.floor(Date.now() / 1000)
  for (const e of [pair.n, pair.j]) {
    e.revokeToken('a', now + 1)
    e.revokeSubject('u', { issuedBeforeSec: now })
    assert.equal(e.revocationCount, 2)
    assert.throws(() => e.revokeToken('b', now + 60), { code: 'ERR_AUTH_SHIELD_REVOCATION_LIMIT' })
  }
  await new Promise((resolve) => setTimeout(resolve, (now + 2) * 1000 - Date.now() + 50))
  for (const e of [pair.n, pair.j]) {
    e.revokeToken('b', now + 60)
    assert.equal(e.revocationCount, 1)
  }
})


// Key sets: every alg, kid present, absent, unknown or naming a key of another alg, cache hits, mutated
// bytes and swapped segments, several key sets, setKeys between rounds. Tokens come from jose.
test('both engines agree field for field on tokens of every alg and every kid case', async () => {
  const { ALL_ALGS, keyEntry, joseToken } = require('../support/keys')
  const rng = random(13)
  const sets = [
    ALL_ALGS.map((alg) => keyEntry(alg, `k-${alg}`)),
    // No kids: kid-less tokens select by alg, tokens with a kid name nothing.
    ALL_ALGS.map((alg) => keyEntry(alg, undefined, 'jwk')),
    // Two keys of one alg: a kid-less token of it is ambiguous.
    [keyEntry('ES256', 'a', 'pem'), keyEntry('ES256', undefined), { ...keyEntry('HS256', 'h') }, keyEntry('EdDSA', 'e')],
  ]
  const tokens = []
  for (const alg of ALL_ALGS) {
    for (const kid of [`k-${alg}`, undefined, 'a', 'e', 'h', 'k-HS256', '../../etc/passwd']) {
      const claims = rng.pick([
        { sub: 'user-1', exp: NOW + 60 },
        { sub: 'user-2', exp: NOW - 10, email: 'e@x' },
        { sub: '', exp: NOW + 60 },
        { exp: NOW + 60, tenant_id: 'acme', sub: 'u' },
      ])
      tokens.push(await joseToken(alg, claims, kid === undefined ? {} : { kid }))
    }
  }
  const checker = makeChecker()
  let hits = 0
  for (let s = 0; s < sets.length; s++) {
    const config = { keys: sets[s], clockTimestamp: NOW, rateLimitMax: 0 }
    const pair = pairOf(config)
    for (let round = 0; round < 2; round++) {
      for (const t of tokens) {
        const first = checker.check(pair, [`Bearer ${t}`, undefined, 'acme.example.com'], `set ${s} round ${round}`)
        // Every set has an asymmetric key, so the verified-token cache is on: a success was
        // remembered and the same token again is a cache hit (no new entry), a failure is not.
        const entries = pair.n.verifiedTokenCacheEntries
        checker.check(pair, [`Bearer ${t}`, undefined, 'acme.example.com'], `set ${s} round ${round} again`)
        assert.equal(pair.n.verifiedTokenCacheEntries, entries)
        if (first.authenticated) hits++
        assert.equal(pair.j.verifiedTokenCacheEntries, pair.n.verifiedTokenCacheEntries, `cache entries set ${s}`)
        const mutated = mutate(rng, t)
        checker.check(pair, [`Bearer ${mutated}`], `set ${s} mutated`)
        assert.deepStrictEqual(pair.j.verifyAccessToken(t), pair.n.verifyAccessToken(t), `verify set ${s}`)
      }
      // Rotate: the next set, in both engines at once.
      const next = sets[(s + round + 1) % sets.length]
      assert.equal(pair.n.setKeys(next), pair.j.setKeys(next))
    }
    assert.deepStrictEqual(pair.j.jwks(), pair.n.jwks())
  }
  assert.deepEqual(checker.mismatches, [])
  assert.ok(hits >= 20, `${hits} cache hits`)
  for (const code of ['ok', 'unknown_key', 'unsupported_algorithm', 'invalid_signature', 'token_expired', 'missing_subject']) {
    assert.ok(checker.codes.get(code) >= 5, `${code} reached ${checker.codes.get(code) || 0} times`)
  }
})

// signingKey (RS256, PS256, ES256, EdDSA): access and refresh tokens signed by each engine,
// verified by both, field for field; refresh tokens signed by the signing key when no
// refreshSecret is given, else HMAC; tampered tokens, each kind presented as the other, an
// identity provider's token claiming type refresh, and tokens of the other signing algs (under
// our kid too). RS256 and Ed25519 signatures are deterministic: over equal header and payload
// bytes, native, JS and jose (CompactSign) must write the same signature.
test('signingKey tokens, access and refresh, agree field for field between engines for RS256, PS256, ES256 and EdDSA', async () => {
  const jose = require('jose')
  const { generateKeyPairSync } = require('node:crypto')
  const { readSigningKey } = require('../../base/keys/signing-key')
  const { keyEntry, joseToken } = require('../support/keys')
  const SIGNING = {
    RS256: () => generateKeyPairSync('rsa', { modulusLength: 2048 }),
    PS256: () => generateKeyPairSync('rsa', { modulusLength: 2048 }),
    ES256: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }),
    EdDSA: () => generateKeyPairSync('ed25519'),
  }
  const DETERMINISTIC = new Set(['RS256', 'EdDSA'])
  const HS256B64 = Buffer.from(HS256).toString('base64url')
  const rng = random(31)
  const keys = Object.fromEntries(Object.entries(SIGNING).map(([alg, make]) => [alg, make().privateKey]))
  // A second key of each alg, to sign under our kid with the wrong key.
  const impostors = Object.fromEntries(Object.entries(SIGNING).map(([alg, make]) => [alg, make().privateKey]))
  const signingKey = (alg, kid = `own-${alg}`, privateKey = keys[alg]) => ({ kid, alg, privateKey })
  const segments = (t) => t.split('.')
  const checker = makeChecker()
  const verdictCodes = new Map()
  const compare = (pair, t, label) => {
    checker.check(pair, [`Bearer ${t}`], label)
    for (const method of ['verifyAccessToken', 'verifyRefreshToken']) {
      const a = pair.n[method](t)
      assert.deepStrictEqual(pair.j[method](t), a, `${label} ${method}`)
      const code = a.errorCode || 'ok'
      verdictCodes.set(code, (verdictCodes.get(code) || 0) + 1)
    }
  }
  const expect = (pair, t, label, [auth, access, refresh]) => {
    const code = (v) => (v.valid === false || v.authenticated === false ? v.errorCode : 'ok')
    for (const engine of [pair.n, pair.j]) {
      assert.deepEqual(
        [code(engine.authenticate(`Bearer ${t}`)), code(engine.verifyAccessToken(t)), code(engine.verifyRefreshToken(t))],
        [auth, access, refresh],
        label,
      )
    }
  }

  for (const alg of Object.keys(SIGNING)) {
    const otherAlg = rng.pick(Object.keys(SIGNING).filter((a) => a !== alg))
    const base = { clockTimestamp: NOW, rateLimitMax: 0, issuer: 'auth.example', audience: 'api' }
    const configs = {
      // No refreshSecret: the signing key signs refresh tokens too.
      'signing key only': { ...base, signingKey: signingKey(alg) },
      // An identity provider's key beside it: never a refresh key.
      'signing key and an idp key': { ...base, signingKey: signingKey(alg), keys: [keyEntry(otherAlg, 'idp')] },
      // An explicit refreshSecret wins: refresh tokens are HMAC.
      'signing key, accessSecret and refreshSecret': { ...base, signingKey: signingKey(alg), accessSecret: ACCESS, refreshSecret: REFRESH },
    }
    for (const [name, config] of Object.entries(configs)) {
      const pair = pairOf(config)
      const hmacRefresh = config.refreshSecret !== undefined
      // A token with a kid selects no HMAC refresh key: unknown_key there, whatever else is wrong.
      const refreshCode = (code) => (hmacRefresh ? 'unknown_key' : code)
      const claims = { sub: 'user-1', email: 'e@x', role: 'admin', tenant_id: 'acme', zeta: { b: 1, a: [2] } }
      const tokens = { access: [], refresh: [] }
      for (const [engineName, engine] of [['native', pair.n], ['js', pair.j]]) {
        const access = engine.signAccessToken(claims)
        const refresh = engine.signRefreshToken(claims)
        tokens.access.push(access)
        tokens.refresh.push(refresh)
        const label = `${alg} ${name}: ${engineName}-signed`
        assert.deepEqual(JSON.parse(Buffer.from(segments(access)[0], 'base64url')), { alg, kid: `own-${alg}`, typ: 'JWT' })
        assert.equal(segments(refresh)[0], hmacRefresh ? HS256B64 : segments(access)[0], label)
        expect(pair, access, `${label} access`, ['ok', 'ok', 'wrong_token_type'])
        expect(pair, refresh, `${label} refresh`, ['wrong_token_type', 'wrong_token_type', 'ok'])
        compare(pair, access, `${label} access`)
        compare(pair, refresh, `${label} refresh`)
      }
      // Equal header segments; payloads equal but for the random jti.
      const withoutJti = (t) => Buffer.from(segments(t)[1], 'base64url').toString().replace(/"jti":"[^"]+"/, '')
      for (const kind of ['access', 'refresh']) {
        const [n, j] = tokens[kind]
        assert.equal(segments(n)[0], segments(j)[0], `${alg} ${name} ${kind} header`)
        assert.equal(withoutJti(n), withoutJti(j), `${alg} ${name} ${kind} payload`)
      }
      // Byte-equal signatures where the alg is deterministic; else verified by jose.
      const ours = [...tokens.access, ...(hmacRefresh ? [] : tokens.refresh)]
      const jsSigner = readSigningKey(config.signingKey)
      for (const t of ours) {
        const [h, p, s] = segments(t)
        if (DETERMINISTIC.has(alg)) {
          const payload = Buffer.from(p, 'base64url')
          const joseSigned = await new jose.CompactSign(payload).setProtectedHeader({ alg, kid: `own-${alg}`, typ: 'JWT' }).sign(keys[alg])
          assert.equal(joseSigned, t, `${alg} ${name}: jose writes the same token`)
          assert.equal(jsSigner.sign(`${h}.${p}`).toString('base64url'), s, `${alg} ${name}: the JS signer writes the same signature`)
        } else {
          await jose.compactVerify(t, jose.createLocalJWKSet(pair.n.jwks()))
        }
      }
      // Tampered: a flipped signature bit, a payload under another token's signature, random mutations.
      const [access, refresh] = [tokens.access[0], tokens.refresh[1]]
      const flip = (t) => {
        const [h, p, s] = segments(t)
        const bytes = Buffer.from(s, 'base64url')
        bytes[bytes.length >> 1] ^= 1
        return `${h}.${p}.${bytes.toString('base64url')}`
      }
      const forged = ['invalid_signature', 'invalid_signature', refreshCode('invalid_signature')]
      expect(pair, flip(access), `${alg} ${name}: flipped access`, forged)
      // Our refresh payload under our access signature: no key of either kind made it.
      const spliced = `${segments(access)[0]}.${segments(tokens.refresh[0])[1]}.${segments(access)[2]}`
      expect(pair, spliced, `${alg} ${name}: spliced`, forged)
      compare(pair, spliced, `${alg} ${name}: spliced`)
      compare(pair, flip(access), `${alg} ${name}: flipped access`)
      compare(pair, flip(refresh), `${alg} ${name}: flipped refresh`)
      for (let i = 0; i < 40; i++) compare(pair, mutate(rng, rng.pick([access, refresh])), `${alg} ${name}: mutated`)

      // The other signing algs: under their own kid (unknown here) and under ours (wrong alg,
      // except the idp's kid when it names a key of that alg).
      for (const other of Object.keys(SIGNING).filter((a) => a !== alg)) {
        for (const kid of [`own-${other}`, `own-${alg}`]) {
          const foreign = new native.Authenticator({ ...base, signingKey: signingKey(other, kid) })
          for (const t of [foreign.signAccessToken({ sub: 'user-2' }), foreign.signRefreshToken({ sub: 'user-2' })]) {
            const code = kid === `own-${alg}` ? 'unsupported_algorithm' : 'unknown_key'
            expect(pair, t, `${alg} ${name}: ${other} under ${kid}`, [code, code, refreshCode(code)])
            compare(pair, t, `${alg} ${name}: ${other} under ${kid}`)
          }
        }
      }
      // Our alg and kid, another key: a forgery, whatever its type claim.
      const impostor = new js.Authenticator({ ...base, signingKey: signingKey(alg, `own-${alg}`, impostors[alg]) })
      for (const t of [impostor.signAccessToken({ sub: 'user-3' }), impostor.signRefreshToken({ sub: 'user-3' })]) {
        expect(pair, t, `${alg} ${name}: impostor`, forged)
        compare(pair, t, `${alg} ${name}: impostor`)
      }
      // The identity provider's token claiming type refresh: an access-side token, never a refresh token.
      const idpRefresh = await joseToken(otherAlg, { sub: 'user-4', exp: NOW + 60, iss: 'auth.example', aud: 'api', type: 'refresh' }, { kid: 'idp' })
      const idpExpected = config.keys ? ['wrong_token_type', 'wrong_token_type', 'wrong_token_type'] : ['unknown_key', 'unknown_key', 'unknown_key']
      expect(pair, idpRefresh, `${alg} ${name}: idp refresh`, idpExpected)
      compare(pair, idpRefresh, `${alg} ${name}: idp refresh`)

      // Revocation applies to refresh tokens of either key, in both engines.
      const { jti, expiresAtSec } = pair.n.verifyRefreshToken(refresh)
      for (const engine of [pair.n, pair.j]) engine.revokeToken(jti, expiresAtSec)
      expect(pair, refresh, `${alg} ${name}: revoked refresh`, ['wrong_token_type', 'wrong_token_type', 'token_revoked'])
      compare(pair, refresh, `${alg} ${name}: revoked refresh`)
    }
  }
  assert.deepEqual(checker.mismatches, [])
  for (const code of ['ok', 'wrong_token_type', 'invalid_signature', 'unsupported_algorithm', 'unknown_key', 'malformed_token', 'token_revoked']) {
    assert.ok(verdictCodes.get(code) >= 3, `${code} reached ${verdictCodes.get(code) || 0} times`)
  }
})

// Certificate-bound tokens (RFC 8705 §3): every cnf form against every sender context, under
// each binding mode. A thumbprint is base64url(SHA-256(DER)), 43 characters.
const THUMB = require('node:crypto').createHash('sha256').update('certificate-a').digest('base64url')
const OTHER_THUMB = require('node:crypto').createHash('sha256').update('certificate-b').digest('base64url')
const CNF_PAYLOADS = [
  null, // no cnf
  `{"x5t#S256":"${THUMB}"}`,
  `{"x5t#S256":"${OTHER_THUMB}"}`,
  `{"jkt":"0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I","x5t#S256":"${THUMB}"}`,
  `{"x5t\\u0023S256":"${THUMB}"}`,
  `{"x5t#S256":"${THUMB}","x5t#S256":"${THUMB}"}`,
  `{"x5t#S256":"${THUMB}","x5t\\u0023S256":"${OTHER_THUMB}"}`,
  `{"x5t#S256":"${THUMB}="}`,
  `{"x5t#S256":"${THUMB.slice(0, 42)}"}`,
  `{"x5t#S256":"${THUMB.slice(0, 42)}B"}`,
  `{"x5t#S256":"${THUMB.slice(0, 20)}+${THUMB.slice(21)}"}`,
  `{"x5t#S256":"${Buffer.from(THUMB, 'base64url').toString('hex')}"}`,
  '{"x5t#S256":""}',
  '{"x5t#S256":null}',
  '{"x5t#S256":7}',
  `{"x5t#S256":["${THUMB}"]}`,
  `{"x5t#S256":{"v":"${THUMB}"}}`,
  '{"jkt":"abc"}',
  '{}',
  `"${THUMB}"`,
  'null',
  '[]',
  'true',
  '{"x5t#S256":"\\ud800"}',
  '{"\\udc00":1}',
  `{"deep":${'['.repeat(300)}${']'.repeat(300)}}`,
  '{"x5t#S256":"a"',
]
const SENDERS = [
  undefined,
  null,
  {},
  { clientCertThumbprint: undefined },
  { clientCertThumbprint: null },
  { clientCertThumbprint: '' },
  { clientCertThumbprint: THUMB },
  { clientCertThumbprint: OTHER_THUMB },
  { clientCertThumbprint: `${THUMB}=` },
  { clientCertThumbprint: `${THUMB}${'x'.repeat(5000)}` },
  { clientCertThumbprint: THUMB.slice(0, 42) },
  { clientCertThumbprint: `${THUMB.slice(0, 42)}é` },
  { clientCertThumbprint: THUMB, dpop: 'not read here' },
  Object.assign(Object.create({ clientCertThumbprint: THUMB }), {}),
]
// Wrong types: a TypeError in both engines when a binding mode reads them, ignored otherwise.
const BAD_SENDERS = ['thumbprint', 7, () => {}, { clientCertThumbprint: 7 }, { clientCertThumbprint: Buffer.from(THUMB) }, { clientCertThumbprint: {} }]
// JS falsy values other than undefined and null are wrong types too, never "no certificate".
BAD_SENDERS.push(0, false, '', NaN, 0n, { clientCertThumbprint: 0 }, { clientCertThumbprint: false }, { clientCertThumbprint: NaN })

test('certificate-bound tokens: identical verdicts for every cnf form, sender context and mode', () => {
  const checker = makeChecker()
  const modes = [{}, { certificateBoundTokens: true }, { requireCertificateBoundTokens: true }, { certificateBoundTokens: true, requireCertificateBoundTokens: true }]
  for (const mode of modes) {
    const pair = pairOf({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0, ...mode })
    assert.equal(pair.n.certificateBoundTokens, Object.keys(mode).length > 0)
    assert.equal(pair.j.certificateBoundTokens, pair.n.certificateBoundTokens)
    for (const cnf of CNF_PAYLOADS) {
      const payload = `{"sub":"u","exp":${NOW + 60}${cnf === null ? '' : `,"cnf":${cnf}`}}`
      const authorization = `Bearer ${rawToken(HS256, payload, ACCESS)}`
      for (const sender of SENDERS) checker.check(pair, [authorization, undefined, undefined, sender], JSON.stringify([mode, cnf, sender]))
      for (const sender of BAD_SENDERS) {
        const outcome = (engine) => {
          try {
            return withoutRequestId(engine.authenticate(authorization, undefined, undefined, sender))
          } catch (err) {
            return { name: err.name, code: err.code, message: err.message }
          }
        }
        const n = outcome(pair.n)
        assert.deepStrictEqual(outcome(pair.j), n, JSON.stringify([mode, cnf, String(sender)]))
        if (Object.keys(mode).length > 0) assert.equal(n.code, 'ERR_INVALID_ARG_TYPE', JSON.stringify([mode, cnf, String(sender)]))
      }
    }
    sameMetrics(pair)
  }
  assert.deepEqual(checker.mismatches, [])
  for (const code of [undefined, 'certificate_required', 'certificate_mismatch', 'unbound_token', 'invalid_claims', 'malformed_token']) {
    assert.ok(checker.codes.has(code || 'ok'), `${code} reached: ${[...checker.codes.keys()]}`)
  }
})

test('certificate-bound tokens: a bound token passes only with its thumbprint, in both engines', () => {
  const bound = `Bearer ${token({ sub: 'u', exp: NOW + 60, cnf: { 'x5t#S256': THUMB } }, ACCESS)}`
  const unbound = `Bearer ${token({ sub: 'u', exp: NOW + 60 }, ACCESS)}`
  const cases = [
    // [config, authorization, thumbprint, errorCode]
    // Off (the default), no certificate counts: a bound token is refused, as a DPoP-bound one
    // sent as Bearer is (issue 34).
    [{}, bound, undefined, 'certificate_required'],
    [{}, bound, THUMB, 'certificate_required'],
    [{}, unbound, undefined, undefined],
    [{ certificateBoundTokens: true }, bound, THUMB, undefined],
    [{ certificateBoundTokens: true }, bound, OTHER_THUMB, 'certificate_mismatch'],
    [{ certificateBoundTokens: true }, bound, undefined, 'certificate_required'],
    [{ certificateBoundTokens: true }, unbound, undefined, undefined],
    [{ requireCertificateBoundTokens: true }, unbound, THUMB, 'unbound_token'],
    [{ requireCertificateBoundTokens: true }, bound, THUMB, undefined],
  ]
  for (const [mode, authorization, thumbprint, errorCode] of cases) {
    const pair = pairOf({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0, ...mode })
    for (const engine of [pair.n, pair.j]) {
      const result = engine.authenticate(authorization, undefined, undefined, { clientCertThumbprint: thumbprint })
      assert.equal(result.errorCode, errorCode, JSON.stringify([mode, thumbprint]))
      if (errorCode !== undefined) assert.equal(result.errorStatus, 401)
    }
  }
})

test('certificate-bound tokens: random thumbprint strings on both sides give identical verdicts', () => {
  const fc = require('fast-check')
  const pair = pairOf({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0, certificateBoundTokens: true })
  const alphabet = fc.constantFrom(...'AQgw09-_+/=.éB'.split(''), ...THUMB.split(''))
  const thumbLike = fc.oneof(fc.constant(THUMB), fc.string({ unit: alphabet, minLength: 40, maxLength: 46 }), fc.string({ maxLength: 50 }), fc.string({ unit: 'binary', maxLength: 45 }))
  const checker = makeChecker()
  fc.assert(
    fc.property(thumbLike, fc.option(thumbLike, { nil: undefined }), (bound, presented) => {
      const authorization = `Bearer ${token({ sub: 'u', exp: NOW + 60, cnf: { 'x5t#S256': bound } }, ACCESS)}`
      checker.check(pair, [authorization, undefined, undefined, { clientCertThumbprint: presented }], JSON.stringify([bound, presented]))
    }),
    { numRuns: 3000, seed: 8705 },
  )
  assert.deepEqual(checker.mismatches, [])
  assert.ok(checker.codes.get('ok') > 0 && checker.codes.get('invalid_claims') > 0 && checker.codes.get('certificate_mismatch') > 0, [...checker.codes])
  sameMetrics(pair)
})
test('DPoP: both engines agree field for field on generated proofs, mutations, replays and bindings', async () => {
  const dpopSupport = require('../support/dpop')
  const { URL, issuer, clientKey, proof, rawProof, proofClaims } = dpopSupport
  const iss = await issuer()
  const keys = []
  for (const alg of ['ES256', 'ES256', 'RS256', 'PS256', 'Ed25519']) keys.push(await clientKey(alg))
  const tokens = []
  for (const key of keys) tokens.push({ key, token: await iss.sign({ cnf: { jkt: key.jkt } }) })
  tokens.push({ key: keys[0], token: await iss.sign({}) })
  tokens.push({ key: keys[0], token: await iss.sign({ cnf: { jkt: 7 } }) })
  tokens.push({ key: keys[0], token: await iss.sign({ cnf: 'x' }) })
  const config = { keys: iss.keys, dpop: true, dpopMaxReplayEntries: 40, dpopIatWindowSec: 120, rateLimitMax: 0 }
  const pair = { n: new native.Authenticator(config), j: new js.Authenticator(config) }
  const rng = random(0x9449)
  const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const mutate = (p) => {
    const i = rng.int(p.length)
    if (p[i] === '.') return p.slice(0, i) + p.slice(i + 1)
    return p.slice(0, i) + rng.pick([...B64, '.', ' ', ',']) + p.slice(i + 1)
  }
  const urls = [URL, `${URL}?q=1`, 'https://API.example.com:443/orders#f', 'https://api.example.com/orders/', 'http://api.example.com/orders', 'https://api.example.com:8443/orders', 'https://u@api.example.com/orders', 'not a url', '']
  const seen = []
  const codes = new Map()
  let dpopSuccesses = 0
  for (let i = 0; i < 400; i++) {
    const { key, token } = rng.pick(tokens)
    const signer = rng.next() < 0.1 ? rng.pick(keys) : key
    let p
    const kind = rng.int(10)
    if (kind < 4) p = await proof(signer, { token, url: rng.next() < 0.8 ? URL : rng.pick(urls), method: rng.next() < 0.9 ? 'GET' : 'POST' })
    else if (kind < 6 && signer.alg === 'ES256') {
      const claims = { ...proofClaims(token), iat: Math.floor(Date.now() / 1000) + rng.pick([0, -119, 119, -500, 500, 0.5, -0.5]) }
      const header = { alg: 'ES256', typ: rng.pick(['dpop+jwt', 'dpop+jwt', 'DPoP+jwt', 'JWT']), jwk: rng.next() < 0.9 ? signer.jwk : signer.privateJwk }
      if (rng.next() < 0.2) delete claims[rng.pick(Object.keys(claims))]
      p = rawProof(signer, header, claims)
    } else if (kind < 7 && seen.length > 0) p = rng.pick(seen)
    else p = mutate(await proof(signer, { token }))
    seen.push(p)
    const scheme = rng.pick(['DPoP', 'dpop', 'DPOP', 'Bearer', 'DPoP  '])
    const sender = { dpop: rng.next() < 0.95 ? p : undefined, method: rng.next() < 0.95 ? 'GET' : 'get', url: rng.pick([URL, URL, URL, `${URL}?x=1`, ...urls]) }
    const a = pair.n.authenticate(`${scheme} ${token}`, null, null, sender)
    const b = pair.j.authenticate(`${scheme} ${token}`, null, null, sender)
    assert.deepStrictEqual(withoutRequestId(b), withoutRequestId(a), `request ${i}: ${scheme} ${p}`)
    // A DPoP success hands over the proof's replay key and window end (the shared store's
    // input), a Bearer success and every failure neither.
    if (a.authenticated && scheme.trim().toLowerCase() === 'dpop') {
      const { jti, iat } = JSON.parse(Buffer.from(p.split('.')[1], 'base64url'))
      const jkt = JSON.parse(Buffer.from(token.split('.')[1], 'base64url')).cnf.jkt
      assert.equal(a.dpopReplayKey, require('node:crypto').createHash('sha256').update(`${jkt}.${jti}`).digest('hex'))
      // The second after iat + window, plus the skew allowance (docs/sender-constrained.md#clock-skew).
      assert.equal(a.dpopReplayUntilSec, Math.floor(iat + 120) + 1 + require('../../contract').LIMITS.dpopReplaySkewSec)
      dpopSuccesses++
    } else {
      assert.equal(a.dpopReplayKey, undefined)
      assert.equal(a.dpopReplayUntilSec, undefined)
    }
    const c = a.authenticated ? 'ok' : a.errorCode
    codes.set(c, (codes.get(c) || 0) + 1)
  }
  assert.ok(dpopSuccesses > 0)
  assert.equal(pair.n.dpopReplayEntries, pair.j.dpopReplayEntries)
  // Server nonces: the same nonce from both engines, the same verdict on nonces of each slot.
  const now = Math.floor(Date.now() / 1000)
  const nonceConfig = (t) => ({ ...config, clockTimestamp: t, dpopNonceSecret: 'differential-nonce-secret-0123456789', dpopNonceLifetimeSec: 30 })
  const nonced = { n: new native.Authenticator(nonceConfig(now)), j: new js.Authenticator(nonceConfig(now)) }
  assert.equal(nonced.n.dpopNonce(), nonced.j.dpopNonce())
  const nonces = [0, 30, 60, 90].map((ago) => new js.Authenticator(nonceConfig(now - ago)).dpopNonce())
  const signer = keys[0]
  const bound = tokens[0].token
  for (let i = 0; i < 40; i++) {
    const nonce = rng.pick([...nonces, undefined, 5, '', nonces[0].slice(1)])
    const claims = { ...proofClaims(bound), iat: now }
    if (nonce !== undefined) claims.nonce = nonce
    const sender = { dpop: rawProof(signer, { alg: 'ES256', typ: 'dpop+jwt', jwk: signer.jwk }, claims), method: 'GET', url: URL }
    const a = nonced.n.authenticate(`DPoP ${bound}`, null, null, sender)
    assert.deepStrictEqual(withoutRequestId(nonced.j.authenticate(`DPoP ${bound}`, null, null, sender)), withoutRequestId(a), `nonce ${nonce}`)
    const c = a.authenticated ? 'ok' : a.errorCode
    codes.set(c, (codes.get(c) || 0) + 1)
  }
  for (const c of ['use_dpop_nonce', 'ok', 'invalid_dpop_proof', 'dpop_proof_mismatch', 'dpop_proof_stale', 'dpop_proof_replayed', 'dpop_key_mismatch', 'dpop_bound_token_as_bearer', 'missing_dpop_proof']) {
    assert.ok(codes.get(c) >= 1, `${c} reached ${codes.get(c) || 0} times: ${JSON.stringify([...codes])}`)
  }
})

// Per-route DPoP modes and DPoP-Nonce on rotation (lib/http/dpop.js) over both engines: the same
// middleware decision (action, status, body, headers but the request id) for every mode and every
// kind of request, proofs with the current, the previous slot's and no nonce included.
test('DPoP modes and DPoP-Nonce: both engines take the same middleware decisions', async () => {
  const { AuthDecision } = require('../../lib/http/decision')
  const { issuer, clientKey, proof, rawProof, proofClaims, URL } = require('../support/dpop')
  const origin = new globalThis.URL(URL).origin
  const iss = await issuer()
  const key = await clientKey('ES256')
  const bound = await iss.sign({ cnf: { jkt: key.jkt } })
  const unbound = await iss.sign({})
  const now = Math.floor(Date.now() / 1000)
  const base = { keys: iss.keys, dpop: true, rateLimitMax: 0, clockTimestamp: now }
  const nonceSecret = 'differential-nonce-secret-0123456789'
  const withNonces = { ...base, dpopNonceSecret: nonceSecret, dpopNonceLifetimeSec: 30 }
  const current = new js.Authenticator(withNonces).dpopNonce()
  const previous = new js.Authenticator({ ...withNonces, clockTimestamp: now - 30 }).dpopNonce()
  const nonced = (nonce) => rawProof(key, { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }, { ...proofClaims(bound), iat: now, nonce })
  const decisionView = (d) => ({
    action: d.action,
    status: d.status,
    body: d.body,
    headers: d.headers.filter(([name]) => name !== 'X-Request-Id'),
  })
  const requests = async () => {
    const fresh = await proof(key, { token: bound, url: URL })
    return [
      { authorization: `Bearer ${unbound}` },
      { authorization: `Bearer ${bound}` },
      { authorization: `DPoP ${bound}`, dpop: fresh },
      { authorization: `DPoP ${bound}`, dpop: fresh },
      { authorization: `DPoP ${bound}` },
      { authorization: `DPoP ${unbound}`, dpop: await proof(key, { token: unbound, url: URL }) },
      { authorization: 'DPoP x.y.z', dpop: 'a.b.c' },
      { authorization: `DPoP ${bound}`, dpop: nonced(current) },
      { authorization: `DPoP ${bound}`, dpop: nonced(previous) },
      { authorization: `DPoP ${bound}`, dpop: nonced(undefined) },
      {},
    ]
  }
  let compared = 0
  let rotated = 0
  for (const config of [base, withNonces]) {
    for (const mode of ['disabled', 'allowed', 'required', undefined]) {
      const options = (engine) => ({ engine, dpopOrigin: origin, dpopMode: mode, credentialsRequired: true })
      const pair = { n: new AuthDecision(config, options('native')), j: new AuthDecision(config, options('js')) }
      for (const headers of await requests()) {
        const req = { method: 'GET', originalUrl: '/orders', headers }
        const [a, b] = await Promise.all([pair.n.decide(req, '/orders'), pair.j.decide(req, '/orders')])
        assert.deepStrictEqual(decisionView(b), decisionView(a), JSON.stringify([mode, config === withNonces, headers.authorization]))
        compared++
        const code = a.action === 'pass' ? 'ok' : JSON.parse(a.body).code
        const nonce = a.headers.find(([name]) => name === 'DPoP-Nonce')
        if (headers.dpop === undefined || headers.authorization === undefined) continue
        if (config === withNonces && mode !== 'disabled' && a.action === 'pass') {
          // The previous slot's nonce passes with the current one in the header; the current one without.
          const carried = JSON.parse(Buffer.from(headers.dpop.split('.')[1], 'base64url')).nonce
          assert.deepStrictEqual(nonce, carried === previous ? ['DPoP-Nonce', current] : undefined, JSON.stringify([mode, carried]))
          if (carried === previous) rotated++
        }
        if (mode === 'disabled') assert.equal(code, 'dpop_not_allowed')
      }
    }
  }
  assert.equal(compared, 88)
  // Both nonce slots passed in the modes that read proofs ('allowed', 'required', the default).
  assert.equal(rotated, 3)
})

test('DPoP algorithms: dpopAlgorithms narrows the proofs both engines accept, and none/HS*/unknown names are refused alike', async () => {
  const { URL, issuer, clientKey, proof } = require('../support/dpop')
  const iss = await issuer()
  const keys = []
  for (const alg of ['ES256', 'RS256', 'PS256', 'Ed25519']) keys.push(await clientKey(alg))
  const tokens = []
  for (const key of keys) tokens.push({ key, token: await iss.sign({ cnf: { jkt: key.jkt } }) })
  for (const algs of [undefined, 'ES256', ['Ed25519', 'RS256'], ['PS256', 'ES384', 'PS256'], ['EdDSA']]) {
    const config = { keys: iss.keys, dpop: true, rateLimitMax: 0, dpopAlgorithms: algs }
    const pair = { n: new native.Authenticator(config), j: new js.Authenticator(config) }
    assert.deepEqual(pair.n.dpopAlgorithms, pair.j.dpopAlgorithms)
    const allowed = new Set(pair.n.dpopAlgorithms)
    for (const { key, token } of tokens) {
      const sender = { dpop: await proof(key, { token }), method: 'GET', url: URL }
      const a = pair.n.authenticate(`DPoP ${token}`, null, null, sender)
      assert.deepStrictEqual(withoutRequestId(pair.j.authenticate(`DPoP ${token}`, null, null, sender)), withoutRequestId(a))
      assert.equal(a.authenticated, allowed.has(key.alg), `${key.alg} with ${algs}: ${a.errorCode}`)
      if (!a.authenticated) assert.equal(a.errorCode, 'invalid_dpop_proof')
    }
  }
  assert.deepEqual(new native.Authenticator({ keys: iss.keys, dpopAlgorithms: ['PS256', 'ES384', 'PS256'] }).dpopAlgorithms, ['PS256', 'ES384'])
  for (const algs of ['none', 'HS256', ['ES256', 'HS512'], 'ES512', 'es256', ['ES256', 'None'], '', [], [7], 5]) {
    const refusal = (engine) => {
      try {
        new engine.Authenticator({ keys: iss.keys, dpop: true, dpopAlgorithms: algs })
      } catch (err) {
        return { name: err.name, code: err.code, message: err.message }
      }
      return null
    }
    const n = refusal(native)
    assert.notEqual(n, null, String(algs))
    assert.deepEqual(refusal(js), n, String(algs))
  }
  for (const bad of ['none', 'HS256', 'HS384', 'HS512', 'ES512']) {
    assert.throws(() => new native.Authenticator({ keys: iss.keys, dpopAlgorithms: bad }), { name: 'TypeError' })
  }
})

// verifyAccessToken has no request, hence no sender: it judges an access token as authenticate
// judges it sent as Bearer without a client certificate (docs/sender-constrained.md), so a
// sender-constrained token is never `valid` there. authenticateRequest takes the sender as its
// 5th argument.
test('verifyAccessToken fails closed on sender-constrained tokens, as authenticate does on Bearer without a sender; both engines', async () => {
  const { URL, issuer, clientKey, proof } = require('../support/dpop')
  const modes = [{}, { certificateBoundTokens: true }, { requireCertificateBoundTokens: true }, { dpop: true }]
  const code = (r, ok) => (r[ok] ? 'ok' : r.errorCode)
  const codes = new Set()
  const payloads = [...CNF_PAYLOADS, '{"jkt":"0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"}', '{"jkt":7}', '{"jkt":null}']
  for (const mode of modes) {
    const pair = pairOf({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0, ...mode })
    for (const cnf of payloads) {
      const t = rawToken(HS256, `{"sub":"u","exp":${NOW + 60}${cnf === null ? '' : `,"cnf":${cnf}`}}`, ACCESS)
      const v = pair.n.verifyAccessToken(t)
      assert.deepStrictEqual(pair.j.verifyAccessToken(t), v, JSON.stringify([mode, cnf]))
      const bearer = pair.n.authenticate(`Bearer ${t}`)
      assert.deepStrictEqual(withoutRequestId(pair.j.authenticate(`Bearer ${t}`)), withoutRequestId(bearer))
      assert.equal(code(v, 'valid'), code(bearer, 'authenticated'), JSON.stringify([mode, cnf]))
      if (!v.valid) assert.equal(v.errorStatus, 401)
      codes.add(code(v, 'valid'))
    }
    sameMetrics(pair)
  }
  for (const c of ['ok', 'dpop_bound_token_as_bearer', 'certificate_required', 'unbound_token', 'invalid_claims', 'malformed_token']) assert.ok(codes.has(c), `${c}: ${[...codes]}`)

  // The brief's case: a DPoP-bound token and a certificate-bound one are not `valid` on their own.
  const iss = await issuer()
  const key = await clientKey('ES256')
  const dpopBound = await iss.sign({ cnf: { jkt: key.jkt } })
  const certBound = token({ sub: 'u', exp: NOW + 60, cnf: { 'x5t#S256': THUMB } }, ACCESS)
  for (const engine of [native, js]) {
    const dpopConfig = { keys: iss.keys, dpop: true, rateLimitMax: 0 }
    const verdict = new engine.Authenticator(dpopConfig).verifyAccessToken(dpopBound)
    assert.equal(verdict.valid, false)
    assert.equal(verdict.errorCode, 'dpop_bound_token_as_bearer')
    assert.equal(verdict.jti, undefined)
    const certConfig = { accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0, certificateBoundTokens: true }
    assert.equal(new engine.Authenticator(certConfig).verifyAccessToken(certBound).errorCode, 'certificate_required')

    // authenticateRequest: the sender is the 5th argument, the proof checked and replays refused.
    const sender = { dpop: await proof(key, { token: dpopBound, url: URL }), method: 'GET', url: URL }
    assert.equal(engine.authenticateRequest(`DPoP ${dpopBound}`, null, null, dpopConfig).errorCode, 'missing_dpop_proof')
    assert.equal(engine.authenticateRequest(`DPoP ${dpopBound}`, null, null, dpopConfig, sender).authenticated, true)
    assert.equal(engine.authenticateRequest(`DPoP ${dpopBound}`, null, null, dpopConfig, sender).errorCode, 'dpop_proof_replayed')
    assert.equal(engine.authenticateRequest(`Bearer ${certBound}`, null, null, certConfig, { clientCertThumbprint: THUMB }).authenticated, true)
    assert.equal(engine.authenticateRequest(`Bearer ${certBound}`, null, null, certConfig, { clientCertThumbprint: OTHER_THUMB }).errorCode, 'certificate_mismatch')
    assert.equal(engine.authenticateRequest(`Bearer ${certBound}`, null, null, certConfig).errorCode, 'certificate_required')
    assert.throws(() => engine.authenticateRequest(`Bearer ${certBound}`, null, null, certConfig, 7), { code: 'ERR_INVALID_ARG_TYPE' })
  }
})

// Trusted issuers (lib/jwks/issuers.js): the Authenticator holds the union of the issuers' keys
// and their issuer list; the key-to-issuer binding is checked by the engine-independent glue on
// each engine's result. Here, the engine part: tokens of each issuer's key claiming each issuer,
// unknown kids, untrusted, trailing-slash and upper-case issuers give identical results.
test('trusted issuers: the union key set with the issuers list gives identical results in both engines', async () => {
  const { keyEntry, joseToken } = require('../support/keys')
  const A = 'https://tenant-a.idp.example'
  const B = 'https://tenant-b.idp.example/'
  const keys = [keyEntry('RS256', 'a-1'), keyEntry('ES256', 'b-1'), keyEntry('EdDSA', 'b-2')]
  const pair = pairOf({ keys, issuer: [A, B], audience: 'api', clockTimestamp: NOW, rateLimitMax: 0 })
  const checker = makeChecker()
  for (const [alg, kid] of [
    ['RS256', 'a-1'],
    ['ES256', 'b-1'],
    ['EdDSA', 'b-2'],
    ['RS256', 'b-1'],
    ['ES256', 'unknown'],
    ['ES256', undefined],
  ]) {
    for (const iss of [A, B, `${A}/`, B.toUpperCase(), 'https://untrusted.example/', undefined]) {
      const claims = { sub: 'u', aud: 'api', exp: NOW + 60, ...(iss === undefined ? {} : { iss }) }
      const t = await joseToken(alg, claims, kid === undefined ? {} : { kid })
      checker.check(pair, [`Bearer ${t}`], `${alg} ${kid} ${iss}`)
    }
  }
  assert.deepEqual(checker.mismatches, [])
  for (const code of ['ok', 'invalid_issuer', 'unknown_key']) assert.ok(checker.codes.get(code) >= 2, `${code} reached ${checker.codes.get(code) || 0} times`)
})

// The trusted-issuer registry inside the engines (`issuers`, issue 25): iss selects the issuer
// before any key, then its own set by kid. Keys of one issuer under another's kid, shared kids,
// per-issuer audiences, algorithms and tenants, untrusted spellings, setKeys per issuer, the
// verified-token cache (asymmetric keys: on) and mutated tokens, field for field.
test('trusted issuers in the engine: identical verdicts for iss, kid, key, audience, algorithms, tenant and per-issuer setKeys', async () => {
  const { keyEntry, joseToken } = require('../support/keys')
  const A = 'https://tenant-a.idp.example'
  const B = 'https://tenant-b.idp.example/'
  const C = 'https://c.idp.example/realms/x'
  const SA = 'issuer-a-hmac-secret-0123456789abcdef'
  const SB = 'issuer-b-hmac-secret-0123456789abcdef'
  const issuers = () => [
    { issuer: A, keys: [keyEntry('RS256', 'a-1'), { kid: 'h', alg: 'HS256', secret: SA }, keyEntry('EdDSA', 'shared')] },
    { issuer: B, keys: [keyEntry('ES256', 'b-1'), { kid: 'h', alg: 'HS256', secret: SB }, keyEntry('RS256', 'shared')], audience: ['api-b'], tenant: 'tenant-b' },
    { issuer: C, algorithms: ['HS256'], tenant: 'globex' },
  ]
  const rng = random(25)
  const checker = makeChecker()
  const tokens = []
  const ISS = [A, B, C, `${A}/`, B.slice(0, -1), B.toUpperCase(), 'https://untrusted.example/', undefined, 7]
  for (const iss of ISS) {
    for (const aud of ['api', 'api-b', ['x', 'api-b']]) {
      const claims = { sub: 'u', aud, exp: NOW + 60, ...(iss === undefined ? {} : { iss }) }
      if (rng.chance(0.3)) claims.tenant_id = rng.pick(['tenant-b', 'TENANT-B', 'globex', 'acme'])
      for (const [alg, kid] of [['RS256', 'a-1'], ['ES256', 'b-1'], ['EdDSA', 'shared'], ['RS256', 'shared'], ['ES256', 'a-1'], ['RS256', undefined]]) {
        tokens.push(await joseToken(alg, claims, kid === undefined ? {} : { kid }))
      }
      for (const [secret, kid] of [[SA, 'h'], [SB, 'h'], [SA, undefined], [SB, 'c-1']]) {
        tokens.push(rawToken(kid === undefined ? { alg: 'HS256' } : { alg: 'HS256', kid }, claims, secret))
      }
    }
  }
  for (const extra of [{}, { enforceTenantMatch: true, baseDomain: 'example.com' }, { verifiedTokenCacheMaxEntries: 0 }]) {
    const pair = pairOf({ issuers: issuers(), audience: 'api', clockTimestamp: NOW, rateLimitMax: 0, ...extra })
    for (let round = 0; round < 3; round++) {
      for (const t of tokens) {
        const host = rng.pick([undefined, 'tenant-b.example.com', 'globex.example.com', 'acme.example.com'])
        const header = rng.pick([undefined, 'tenant-b', 'globex', 'other'])
        checker.check(pair, [`Bearer ${t}`, header, host], `round ${round} ${JSON.stringify(extra)}`)
        checker.check(pair, [`Bearer ${t}`, header, host], `round ${round} again`)
        if (rng.chance(0.2)) checker.check(pair, [`Bearer ${mutate(rng, t)}`], 'mutated')
        assert.deepStrictEqual(pair.j.verifyAccessToken(t), pair.n.verifyAccessToken(t))
      }
      // Rotate one issuer's keys in both engines: C gets A's HMAC secret under kid c-1, then B
      // loses its keys, then everything as at first.
      const next = [
        [[{ kid: 'c-1', alg: 'HS256', secret: SB }], C],
        [[{ kid: 'other', alg: 'HS256', secret: SA }], B],
        [issuers()[1].keys, B],
      ][round]
      assert.equal(pair.n.setKeys(next[0], { issuer: next[1] }), pair.j.setKeys(next[0], { issuer: next[1] }))
      assert.equal(pair.n.keySetGeneration, pair.j.keySetGeneration)
      assert.deepStrictEqual(pair.j.jwks(), pair.n.jwks())
    }
  }
  assert.deepEqual(checker.mismatches, [])
  for (const code of ['ok', 'untrusted_issuer', 'unknown_key', 'unsupported_algorithm', 'invalid_signature', 'invalid_audience', 'tenant_mismatch']) {
    assert.ok(checker.codes.get(code) >= 5, `${code} reached ${checker.codes.get(code) || 0} times`)
  }
})

test('trusted issuers: bad configs and setKeys calls are refused identically by both engines', () => {
  const good = { issuer: 'https://a.example/', keys: [{ kid: 'h', alg: 'HS256', secret: 'x'.repeat(32) }] }
  const thrown = (fn) => {
    try {
      fn()
    } catch (err) {
      return { type: err.constructor.name, code: err.code, message: err.message }
    }
    return null
  }
  const configs = [
    [],
    {},
    'https://a.example/',
    [good, good],
    [{ ...good, issuer: '' }],
    [{ ...good, issuer: 7 }],
    [{ keys: good.keys }],
    [{ ...good, audiance: 'x' }],
    [{ ...good, keys: 'k' }],
    [{ ...good, keys: [] }],
    [{ ...good, audience: [] }],
    [{ ...good, audience: [7] }],
    [{ ...good, algorithms: ['none'] }],
    [{ ...good, algorithms: 'HS256', tenant: 'bad:id' }],
    [{ ...good, tenant: 5 }],
    [null],
    [[good]],
    Array.from({ length: 51 }, (_, i) => ({ issuer: `https://${i}.example/` })),
    [{ ...good, issuer: 'x'.repeat(2049) }],
  ]
  for (const issuers of configs) {
    const config = { issuers, rateLimitMax: 0 }
    const n = thrown(() => new native.Authenticator(config))
    assert.ok(n !== null, JSON.stringify(issuers).slice(0, 80))
    assert.deepStrictEqual(thrown(() => new js.Authenticator(config)), n, JSON.stringify(issuers).slice(0, 80))
  }
  for (const other of [{ accessSecret: 'x'.repeat(32) }, { keys: good.keys }, { issuer: 'https://a.example/' }]) {
    const config = { issuers: [good], ...other }
    const n = thrown(() => new native.Authenticator(config))
    assert.equal(n.type, 'TypeError')
    assert.deepStrictEqual(thrown(() => new js.Authenticator(config)), n)
  }
  const pair = pairOf({ issuers: [good, { issuer: 'https://b.example/' }], rateLimitMax: 0 })
  const plain = pairOf({ accessSecret: 'x'.repeat(32), rateLimitMax: 0 })
  for (const [p, options] of [
    [pair, undefined],
    [pair, {}],
    [pair, 'https://a.example/'],
    [pair, { issuer: 7 }],
    [pair, { issuer: 'https://a.example' }],
    [plain, { issuer: 'https://a.example/' }],
  ]) {
    const n = thrown(() => p.n.setKeys(good.keys, options))
    assert.ok(n !== null, JSON.stringify(options))
    assert.deepStrictEqual(thrown(() => p.j.setKeys(good.keys, options)), n, JSON.stringify(options))
  }
  assert.equal(pair.n.setKeys(good.keys, { issuer: 'https://b.example/' }), 1)
  assert.equal(pair.j.setKeys(good.keys, { issuer: 'https://b.example/' }), 1)
})

// requireAccessTokenProfile without issuer or audience (RFC 9068 §4, issue 25): both engines
// refuse the same configs with the same TypeError, and build the same others.
test('the profile needs issuer and audience: the same configs refused, with the same error, in both engines', () => {
  const VALUES = [undefined, null, 'x', ['x'], ['x', 'y'], '', [], ['']]
  let refused = 0
  for (const issuer of VALUES) {
    for (const audience of VALUES) {
      for (const profile of [true, false, undefined]) {
        const config = { accessSecret: ACCESS, requireAccessTokenProfile: profile, issuer, audience }
        const outcome = (engine) => {
          try {
            new engine.Authenticator(config)
            return null
          } catch (err) {
            return { name: err.name, message: err.message }
          }
        }
        const a = outcome(native)
        assert.deepEqual(outcome(js), a, JSON.stringify(config))
        if (a !== null && a.message === require('../../contract/messages.json').profileNeedsIssuerAndAudience.template) refused++
      }
    }
  }
  assert.ok(refused >= 6, `refused ${refused}`)
})

// Per-route requirements (lib/http/route-requirements.js) read the payload the adapter decision
// kept: on each engine's pass they give the same answer, and the answer the config-level
// check of the same scopes or acr values gives (requiredScope, requiredAcr) for that token.
test('route requirements agree between engines and with the config-level checks', () => {
  const { AuthDecision } = require('../../lib/http/decision')
  const { requireScopes, requireAnyScope, requireAuthentication } = require('../../lib/http/route-requirements')
  const base = { accessSecret: ACCESS, refreshSecret: REFRESH, clockTimestamp: NOW, rateLimitMax: 0 }
  const decisions = [native, js].map((engine) => new AuthDecision(new engine.Authenticator(base)))
  const both = (extra) => [native, js].map((engine) => new engine.Authenticator({ ...base, ...extra }))
  const cases = [
    ['requireScopes', requireScopes('read', 'write:x'), both({ requiredScope: ['read', 'write:x'] })],
    ['requireAuthentication', requireAuthentication({ acrValues: ['mfa', 'gold'] }), both({ requiredAcr: ['mfa', 'gold'] })],
    ['requireAnyScope', requireAnyScope('read', 'write:x'), null],
  ]
  const rng = random(2025)
  const seen = new Map()
  for (let i = 0; i < 4000; i++) {
    const authorization = `Bearer ${token(claimsFor(rng, base), rng.chance(0.9) ? ACCESS : WRONG)}`
    const passes = decisions.map((d) => d.decide({ method: 'GET', headers: { authorization } }, '/'))
    assert.equal(passes[1].action, passes[0].action, authorization)
    if (passes[0].action !== 'pass') continue
    for (const [name, requirement, configLevel] of cases) {
      const [a, b] = passes.map((p) => {
        const d = requirement.refusal(p)
        return d === null ? null : { status: d.status, code: d.result.errorCode, body: d.body, challenge: d.headers[1][1] }
      })
      assert.deepEqual(b, a, `${name} ${authorization}`)
      const code = a === null ? null : a.code
      seen.set(`${name} ${code}`, (seen.get(`${name} ${code}`) || 0) + 1)
      if (configLevel !== null) {
        for (const auth of configLevel) assert.equal(auth.authenticate(authorization).errorCode ?? null, code, `${name} ${authorization}`)
      }
    }
  }
  for (const key of ['requireScopes null', 'requireScopes insufficient_scope', 'requireScopes invalid_claims', 'requireAuthentication null', 'requireAuthentication insufficient_user_authentication', 'requireAuthentication invalid_claims', 'requireAnyScope null', 'requireAnyScope insufficient_scope']) {
    assert.ok(seen.get(key) >= 5, `${key}: ${seen.get(key) || 0}`)
  }
})

// Opaque tokens (issue 36): both engines admit the same introspection answers, then give the
// same verdict, result and counters for each, under the generated configs that introspect.
test('both engines judge admitted introspection answers alike', () => {
  const checker = makeChecker()
  const rng = random(36)
  const configs = CONFIGS.filter((c) => c.introspectionCacheMaxEntries > 0)
  const extra = { accessSecret: ACCESS, clockTimestamp: NOW, introspectionCacheMaxEntries: 50, introspectionCacheMaxBytes: 65536 }
  for (const config of [...configs, extra, { ...extra, audience: 'api', issuer: 'auth.example', requiredScope: 'read' }, { ...extra, introspectJwts: true }]) {
    const pair = pairOf(config)
    const jwts = Array.from({ length: 8 }, () => tokenFor(rng, config))
    for (let i = 0; i < 400; i++) {
      // With introspectJwts, JWTs (a few distinct ones, so some are admitted before they come back) too.
      const opaque = config.introspectJwts && rng.chance(0.3) ? jwts[rng.int(jwts.length)] : `opaque-${rng.int(80)}`
      if (rng.chance(0.5)) {
        const inactive = rng.chance(0.2)
        const json = inactive ? null : JSON.stringify(claimsFor(rng, config))
        const until = NOW + rng.pick([-1, 0, 1, 60])
        const admitted = [pair.n, pair.j].map((a) => {
          try {
            return a.admitIntrospection(opaque, json, until)
          } catch (err) {
            return `${err.name}: ${err.message}`
          }
        })
        assert.equal(admitted[1], admitted[0], json)
        const held = [pair.n, pair.j].map((a) => a.introspectionClaims(opaque))
        assert.equal(held[1], held[0])
      }
      checker.check(pair, [authorizationFor(rng, opaque), rng.pick(TENANT_HEADERS), rng.pick(HOSTS)], `opaque #${i}`)
    }
    assert.equal(pair.j.introspectionCacheEntries, pair.n.introspectionCacheEntries)
    sameMetrics(pair)
  }
  assert.deepEqual(checker.mismatches, [])
  for (const code of ['ok', 'introspection_required', 'token_inactive', 'token_expired', 'invalid_claims', 'insufficient_scope']) assert.ok(checker.codes.get(code) >= 3, `${code}: ${checker.codes.get(code) || 0}`)
})
