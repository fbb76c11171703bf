'use strict'

// Property tests with fast-check (shrinking to a minimal counterexample on failure): valid
// tokens authenticate, single-byte mutations never do, sign/verify round-trips across engines,
// the native and pure-JS engines agree field for field on arbitrary claims, headers and hosts,
// and tenantSource names the input the tenant came from. Time is fixed with clockTimestamp;
// seeds are fixed so a failure replays.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fc = require('fast-check')
const native = require('../..')
const js = require('../../js')
const { rawToken, token, HS256, withoutRequestId } = require('../support/tokens')

const NOW = 1_700_000_000
const SECRET = 'property-access-secret-0123456789abcdef'
const REFRESH = 'property-refresh-secret-0123456789abcdef'
const RUNS = { numRuns: 400, seed: 0x5eed }

const CONFIGS = [
  { accessSecret: SECRET, refreshSecret: REFRESH, clockTimestamp: NOW, rateLimitMax: 0 },
  {
    accessSecret: SECRET,
    clockTimestamp: NOW,
    issuer: ['iss-a', 'iss-b'],
    audience: 'api',
    clockToleranceSec: 30,
    requireTokenType: true,
    enforceTenantMatch: true,
    baseDomain: 'example.com',
    rateLimitMax: 3,
    rateLimitRefillPerSec: 1e-6,
  },
  { accessSecret: SECRET, clockTimestamp: NOW, requireExpiration: false, requireSubject: false, maxTokenBytes: 300, rateLimitMax: 0 },
]

const pair = (config) => [new native.Authenticator(config), new js.Authenticator(config)]

// --- arbitraries -----------------------------------------------------------------------

const tenantId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/)
const anyJson = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
)
/** A time claim near NOW, so expiry and not-before go both ways. */
const time = fc.integer({ min: NOW - 100, max: NOW + 100 })

/** Claims a legitimate issuer would sign, all valid for CONFIGS[0] at NOW. */
const validClaims = fc.record(
  {
    sub: fc.string({ minLength: 1, unit: 'binary' }),
    exp: fc.integer({ min: NOW + 1, max: NOW + 10_000_000 }),
    nbf: fc.integer({ min: 0, max: NOW }),
    iat: fc.integer({ min: 0, max: NOW }),
    email: fc.emailAddress(),
    role: fc.string({ unit: 'binary' }),
    tenant_id: tenantId,
    type: fc.constant('access'),
    jti: fc.uuid(),
    extra: anyJson,
  },
  { requiredKeys: ['sub', 'exp'] },
)

/** Claims of every shape: right and wrong types, near the time edges, for the differential. */
/** Mostly the right type, sometimes any JSON value (so each check's branch gets its share). */
const mostly = (arb) => fc.oneof({ arbitrary: arb, weight: 12 }, { arbitrary: anyJson, weight: 1 })

/** Claims of every shape: right and wrong types, near the time edges, for the differential. */
const anyClaims = fc.record(
  {
    sub: mostly(fc.string()),
    exp: mostly(time),
    nbf: mostly(time),
    iat: mostly(time),
    iss: mostly(fc.constantFrom('iss-a', 'iss-b', 'iss-c', '')),
    aud: mostly(fc.oneof(fc.constantFrom('api', 'web'), fc.array(fc.constantFrom('api', 'web', 'x')))),
    email: mostly(fc.emailAddress()),
    role: mostly(fc.string()),
    tenant_id: mostly(fc.oneof(tenantId, fc.constantFrom('', 'a:b', 'ACME', 'acme'))),
    type: mostly(fc.constantFrom('access', 'access', 'refresh', '')),
    jti: mostly(fc.uuid()),
  },
  { requiredKeys: [] },
)

const label = fc.oneof(tenantId, fc.constantFrom('www', 'WWW', 'acme', 'ACME', 'a_b', '-x', 'xn--bcher-kva', 'ä'), fc.string({ maxLength: 6 }))
const host = fc.oneof(
  fc.tuple(label, fc.constantFrom('.example.com', '.example.com.', '.Example.COM', '.example.org', '.b.example.com', '.localhost', ''), fc.constantFrom('', ':443', ':8080', ':', ':x')).map((p) => p.join('')),
  fc.constantFrom('[::1]', '[::1]:3000', '127.0.0.1', '10.0.0.1:80', 'localhost', 'example', '.', ''),
  fc.string({ maxLength: 30 }),
  fc.constant(undefined),
)
const tenantHeader = fc.oneof(fc.constant(undefined), fc.constant(''), tenantId, fc.constantFrom('acme', 'ACME', 'a:b', 'acme\n'), fc.string({ maxLength: 10 }))

// --- properties ------------------------------------------------------------------------

test('every token signed with the right secret and valid claims authenticates, in both engines', () => {
  const [n, j] = pair(CONFIGS[0])
  fc.assert(
    fc.property(validClaims, (claims) => {
      const header = `Bearer ${token(claims, SECRET)}`
      for (const r of [n.authenticate(header), j.authenticate(header)]) {
        assert.equal(r.errorCode, undefined)
        assert.equal(r.userId, claims.sub)
        assert.equal(r.email, claims.email)
        assert.equal(r.role, claims.role)
        assert.equal(r.tenantId, claims.tenant_id)
      }
    }),
    RUNS,
  )
})

test('any single-byte mutation of a valid token fails, with the same code in both engines', () => {
  const [n, j] = pair(CONFIGS[0])
  const chars = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/~ !\u0000'
  fc.assert(
    fc.property(validClaims, fc.nat(), fc.constantFrom(...chars), (claims, at, ch) => {
      const good = token(claims, SECRET)
      const i = at % good.length
      fc.pre(good[i] !== ch)
      const header = `Bearer ${good.slice(0, i)}${ch}${good.slice(i + 1)}`
      const rn = n.authenticate(header)
      assert.equal(rn.authenticated, false, `mutation at ${i} to ${JSON.stringify(ch)} authenticated`)
      assert.deepEqual(withoutRequestId(j.authenticate(header)), withoutRequestId(rn))
    }),
    { ...RUNS, numRuns: 1000 },
  )
})

test('tokens signed by either engine verify in both, and claims round-trip', () => {
  const [n, j] = pair(CONFIGS[0])
  const userClaims = fc.record(
    { sub: fc.string({ minLength: 1, unit: 'binary' }), email: fc.emailAddress(), role: fc.string({ unit: 'binary' }), tenant_id: tenantId, aud: fc.constantFrom('api', ['api', 'web']) },
    { requiredKeys: ['sub'] },
  )
  fc.assert(
    fc.property(userClaims, (claims) => {
      for (const signer of [n, j]) {
        const access = signer.signAccessToken(claims)
        const refresh = signer.signRefreshToken(claims)
        for (const verifier of [n, j]) {
          const v = verifier.verifyAccessToken(access)
          assert.equal(v.valid, true, v.errorCode)
          assert.equal(v.userId, claims.sub)
          assert.equal(v.email, claims.email)
          assert.equal(v.role, claims.role)
          assert.equal(v.tenantId, claims.tenant_id)
          assert.equal(v.expiresAtSec, NOW + 900)
          assert.equal(verifier.verifyRefreshToken(refresh).valid, true)
          // A refresh token is never an access token, nor the reverse.
          assert.equal(verifier.verifyAccessToken(refresh).valid, false)
          assert.equal(verifier.verifyRefreshToken(access).valid, false)
          assert.equal(verifier.authenticate(`Bearer ${access}`).userId, claims.sub)
        }
      }
    }),
    { ...RUNS, numRuns: 200 },
  )
})

test('native and JS engines agree on arbitrary claims, tenant headers and hosts', () => {
  fc.assert(
    fc.property(fc.nat(CONFIGS.length - 1), anyClaims, tenantHeader, host, fc.boolean(), (c, claims, tenant, hostHeader, wrongSecret) => {
      const [n, j] = pair(CONFIGS[c])
      const header = `Bearer ${token(claims, wrongSecret ? REFRESH : SECRET)}`
      // Three requests, so the limiter's state is compared as well as the first verdict.
      for (let k = 0; k < 3; k++) {
        const rn = n.authenticate(header, tenant, hostHeader)
        const rj = j.authenticate(header, tenant, hostHeader)
        assert.deepEqual(withoutRequestId(rj), withoutRequestId(rn))
        assert.deepEqual(Object.keys(rj), Object.keys(rn))
      }
    }),
    { ...RUNS, numRuns: 1500 },
  )
})

test('tenantSource says which input named the tenant, in both engines', () => {
  fc.assert(
    fc.property(fc.nat(CONFIGS.length - 1), anyClaims, tenantHeader, host, (c, claims, tenant, hostHeader) => {
      for (const auth of pair(CONFIGS[c])) {
        const r = auth.authenticate(`Bearer ${token(claims, SECRET)}`, tenant, hostHeader)
        if (!r.authenticated) {
          assert.equal(r.tenantSource, undefined)
          continue
        }
        // The claim wins whenever the token has one; the header only when it has none.
        const claim = typeof claims.tenant_id === 'string' && claims.tenant_id !== ''
        const expected = claim ? 'token' : tenant ? 'header' : r.tenantId === undefined ? undefined : 'host'
        assert.equal(r.tenantSource, expected, JSON.stringify({ claims, tenant, hostHeader, r }))
        if (expected === 'token') assert.equal(r.tenantId, claims.tenant_id)
        if (expected === 'header') assert.equal(r.tenantId, tenant)
      }
    }),
    RUNS,
  )
})

test('native and JS engines agree on arbitrary Authorization headers and raw JSON', () => {
  const [n, j] = pair(CONFIGS[0])
  const json = fc.oneof(
    fc.json(),
    fc.string({ unit: 'binary' }),
    fc.constantFrom('{"sub":"a","exp":1e400}', '{"sub":"a","sub":"b"}', '{"sub":"a","exp":1700000001,"x":[[[[]]]]}', '{"sub":"\\ud800"}'),
  )
  const authorization = fc.oneof(
    fc.string({ unit: 'binary' }),
    fc.string().map((s) => `Bearer ${s}`),
    fc.tuple(json, json).map(([h, p]) => `Bearer ${rawToken(h, Buffer.from(p).toString('latin1'), SECRET)}`),
    json.map((p) => `Bearer ${rawToken(HS256, Buffer.from(p).toString('latin1'), SECRET)}`),
    fc.constant(undefined),
  )
  fc.assert(
    fc.property(authorization, (h) => {
      assert.deepEqual(withoutRequestId(j.authenticate(h)), withoutRequestId(n.authenticate(h)))
    }),
    { ...RUNS, numRuns: 3000 },
  )
})

test('the one-shot authenticateRequest agrees with the Authenticator class', () => {
  const config = { ...CONFIGS[0], rateLimitMax: 0 }
  const n = new native.Authenticator(config)
  fc.assert(
    fc.property(anyClaims, tenantHeader, host, (claims, tenant, hostHeader) => {
      const header = `Bearer ${token(claims, SECRET)}`
      const expected = withoutRequestId(n.authenticate(header, tenant, hostHeader))
      assert.deepEqual(withoutRequestId(native.authenticateRequest(header, tenant, hostHeader, config)), expected)
      assert.deepEqual(withoutRequestId(js.authenticateRequest(header, tenant, hostHeader, config)), expected)
    }),
    { ...RUNS, numRuns: 300 },
  )
})
