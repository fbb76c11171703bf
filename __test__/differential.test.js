'use strict'

// Native and JS engines, field for field, on >= 10,000 generated requests: valid, expired and
// not-yet-valid tokens, wrong secrets, issuers and audiences, refresh tokens, mutated bytes,
// malformed headers and JSON, every tenant combination and rate-limit sequences. Time is fixed
// with clockTimestamp; each rate-limit sequence gets its own pair of authenticators.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const native = require('..')
const js = require('../js')
const { random, rawToken, token, HS256, withoutRequestId } = require('./support/tokens')

const NOW = 1_700_000_000
const ACCESS = 'differential-access-secret-0123456789'
const REFRESH = 'differential-refresh-secret-0123456789'
const WRONG = 'differential-wrong-secret-0123456789ab'

const CONFIGS = [
  { accessSecret: ACCESS, refreshSecret: REFRESH, clockTimestamp: NOW, rateLimitMax: 0 },
  {
    accessSecret: ACCESS,
    refreshSecret: REFRESH,
    clockTimestamp: NOW,
    issuer: ['auth.example', 'legacy'],
    audience: 'api',
    clockToleranceSec: 30,
    requireTokenType: true,
    rateLimitMax: 1e6,
    rateLimitRefill: 1e-6,
  },
  {
    accessSecret: ACCESS,
    clockTimestamp: NOW + 0.5,
    requireExpiration: false,
    requireSubject: false,
    maxTokenBytes: 400,
    rateLimitMax: 0,
  },
  { accessSecret: ACCESS, refreshSecret: ACCESS, clockTimestamp: NOW, enforceTenantMatch: true, baseDomain: 'Example.com.', rateLimitMax: 0 },
  // jsonwebtoken reads clockTimestamp 0 as "unset": the JS engine must still use it.
  { accessSecret: Buffer.from(ACCESS), clockTimestamp: 0, audience: ['api', 'web'], rateLimitMax: 0 },
]

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

function pairOf(config) {
  return { n: new native.Authenticator(config), j: new js.Authenticator(config) }
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
    return claims
  }
  const claims = {}
  const put = (name, values) => {
    const v = rng.pick(values)
    if (v !== undefined) claims[name] = v
  }
  put('sub', ['user-1', 'user-2', 'user-1', 'user-2', '', undefined, 42, null])
  put('email', [undefined, 'a@example.com', 'é@example.com', 5])
  put('role', [undefined, 'admin', 'user', ['admin']])
  put('tenant_id', [undefined, undefined, 'acme', 'Acme', 'globex', '', 'bad:id', 7])
  put('iss', [undefined, 'auth.example', 'legacy', 'other', 5])
  put('aud', [undefined, 'api', 'web', ['x', 'api'], ['x'], [1], 'other', []])
  put('type', [undefined, undefined, 'access', 'refresh', 'Access', 1])
  const now = config.clockTimestamp
  put('exp', [now + 3600, now + 3600, now - 100, now - 31, now - 30, now - 1, now, now + 1, now + 29, now + 0.5, undefined, '9', null])
  put('nbf', [undefined, undefined, now - 10, now, now + 1, now + 30, now + 31, 'x'])
  put('iat', [undefined, now, 'x'])
  if (rng.chance(0.2)) claims.extra = rng.pick([{ nested: [1, { a: null }] }, 1e300, 'x'.repeat(50), [[], {}]])
  return claims
}

// Payload texts serde_json and JSON.parse are known to read differently unless handled.
const ODD_PAYLOADS = [
  '{"sub":"u","sub":"v","exp":9999999999}',
  '{"sub":"u","s\\u0075b":"v","exp":9999999999}',
  '{"sub":"u","exp":9999999999,"x":1,"x":2}',
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
  let t = token(claimsFor(rng, config), secret)
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

  // Random requests across every config.
  const rng = random(20261123)
  for (let i = 0; i < 6000; i++) {
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
  // The generator reaches every outcome but rate limiting (tested by sequences below).
  const reached = [...checker.codes.keys()].sort()
  const expected = ['ok', ...Object.keys(require('../js/error-codes.json'))].filter((c) => c !== 'rate_limited').sort()
  assert.deepEqual(reached, expected)
  for (const [code, n] of checker.codes) assert.ok(n >= 10, `${code} reached only ${n} times`)
})

test('tenantSource names where the tenant came from, the same in both engines', () => {
  const schemaFields = require('../js/schema.json').result.map((f) => f.name)
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

test('rate-limit sequences agree, bucket by bucket', () => {
  const rng = random(7)
  let requests = 0
  for (let s = 0; s < 60; s++) {
    const capacity = 1 + rng.int(5)
    // A slow refill: no token comes back while a sequence runs, so counts are deterministic.
    const config = { accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: capacity, rateLimitRefill: 0.001 }
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

test('token verification and signing agree between engines', () => {
  const rng = random(99)
  const config = { ...CONFIGS[1], rateLimitMax: 0 }
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
      assert.equal(v.expiresAt - NOW, v === access ? 900 : 604800)
    }
  }
  // Same claims, same payload bytes apart from the random jti.
  const payloadOf = (t) => JSON.parse(Buffer.from(t.split('.')[1], 'base64url')).jti && Buffer.from(t.split('.')[1], 'base64url').toString()
  const strip = (t) => payloadOf(t).replace(/"jti":"[^"]+"/, '')
  assert.equal(strip(pair.j.signAccessToken(claims)), strip(pair.n.signAccessToken(claims)))
  assert.equal(pair.j.signAccessToken(claims).split('.')[0], pair.n.signAccessToken(claims).split('.')[0])
})

test('authenticateRequest (one-shot) agrees and shares state per config', () => {
  const config = { accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 3, rateLimitRefill: 0.001 }
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

// Key sets: every alg, kid present, absent, unknown or naming a key of another alg, mutated
// bytes and swapped segments, several key sets, setKeys between rounds. Tokens come from jose.
test('both engines agree field for field on tokens of every alg and every kid case', async () => {
  const { ALL_ALGS, keyEntry, joseToken } = require('./support/keys')
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
  for (let s = 0; s < sets.length; s++) {
    const config = { keys: sets[s], clockTimestamp: NOW, rateLimitMax: 0 }
    const pair = pairOf(config)
    for (let round = 0; round < 2; round++) {
      for (const t of tokens) {
        checker.check(pair, [`Bearer ${t}`, undefined, 'acme.example.com'], `set ${s} round ${round}`)
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
  for (const code of ['ok', 'unknown_key', 'unsupported_algorithm', 'invalid_signature', 'token_expired', 'missing_subject']) {
    assert.ok(checker.codes.get(code) >= 5, `${code} reached ${checker.codes.get(code) || 0} times`)
  }
})
