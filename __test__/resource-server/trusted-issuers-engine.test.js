'use strict'

// The trusted-issuer registry inside both engines (config `issuers`, src/issuers.rs,
// js/issuers.js): the token's iss selects the issuer before any key, then its own key set by
// kid. Keys of one issuer never verify a token claiming another (even under its kid), untrusted
// spellings are refused byte for byte, per-issuer audiences, algorithms and tenants, setKeys per
// issuer, the documented bounds, and a flood of random issuers that leaves no state behind.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { rawToken } = require('../support/tokens')
const { keyEntry, joseToken } = require('../support/keys')

const NOW = 1_700_000_000
const A = 'https://a.idp.example/'
const B = 'https://b.idp.example/realms/b'
const SA = 'issuer-a-secret-0123456789abcdefghij'
const SB = 'issuer-b-secret-0123456789abcdefghij'
const ENGINES = { native: native.Authenticator, js: js.Authenticator }

const hs = (iss, secret, kid = 'k', extra = {}) =>
  `Bearer ${rawToken({ alg: 'HS256', kid }, { sub: 'u', exp: NOW + 60, aud: 'api', ...(iss === undefined ? {} : { iss }), ...extra }, secret)}`

function config(extra = {}) {
  return {
    issuers: [
      { issuer: A, keys: [{ kid: 'k', alg: 'HS256', secret: SA }, keyEntry('RS256', 'rsa')] },
      { issuer: B, keys: [{ kid: 'k', alg: 'HS256', secret: SB }], tenant: 'tenant-b', audience: ['api-b', 'api'] },
    ],
    audience: 'api',
    clockTimestamp: NOW,
    rateLimitMax: 0,
    ...extra,
  }
}

for (const [name, Authenticator] of Object.entries(ENGINES)) {
  test(`${name}: a key of issuer A never verifies a token claiming issuer B, even under B's kid`, async () => {
    const auth = new Authenticator(config())
    assert.equal(auth.authenticate(hs(A, SA)).authenticated, true)
    assert.equal(auth.authenticate(hs(B, SB)).authenticated, true)
    // A's key under the kid both publish, claiming B (and the reverse): the other's own key refuses it.
    assert.equal(auth.authenticate(hs(B, SA)).errorCode, 'invalid_signature')
    assert.equal(auth.authenticate(hs(A, SB)).errorCode, 'invalid_signature')
    // A's RSA key and kid, claiming B: B has no such kid.
    const rsa = await joseToken('RS256', { sub: 'u', exp: NOW + 60, aud: 'api', iss: B }, { kid: 'rsa' })
    assert.equal(auth.authenticate(`Bearer ${rsa}`).errorCode, 'unknown_key')
    const rsaA = await joseToken('RS256', { sub: 'u', exp: NOW + 60, aud: 'api', iss: A }, { kid: 'rsa' })
    assert.equal(auth.authenticate(`Bearer ${rsaA}`).authenticated, true)
  })

  test(`${name}: an iss not configured byte for byte is untrusted_issuer (401), before any key`, () => {
    const auth = new Authenticator(config())
    for (const iss of [A.slice(0, -1), `${A}/`, A.toUpperCase(), `${B}/`, ` ${A}`, 'https://c.idp.example/', '', undefined]) {
      const r = auth.authenticate(hs(iss, SA))
      assert.equal(r.errorCode, 'untrusted_issuer', String(iss))
      assert.equal(r.errorStatus, 401)
    }
    // Not a string: no issuer to select.
    assert.equal(auth.authenticate(hs(7, SA)).errorCode, 'untrusted_issuer')
    assert.equal(auth.authenticate(hs([A], SA)).errorCode, 'untrusted_issuer')
    // Even a token without a verifiable signature: the issuer is chosen first.
    assert.equal(auth.authenticate(hs('https://c.idp.example/', 'not-any-key-0123456789abcdefghijkl')).errorCode, 'untrusted_issuer')
  })

  test(`${name}: per-issuer audiences replace the config's, algorithms limit the issuer's tokens`, () => {
    const auth = new Authenticator(config({ issuers: [...config().issuers.slice(0, 1), { ...config().issuers[1], audience: 'api-b', algorithms: ['RS256'] }] }))
    assert.equal(auth.authenticate(hs(A, SA, 'k', { aud: 'api-b' })).errorCode, 'invalid_audience')
    // B only takes RS256 tokens: its HS256 key is never selected.
    assert.equal(auth.authenticate(hs(B, SB, 'k', { aud: 'api-b' })).errorCode, 'unsupported_algorithm')
    const open = new Authenticator(config())
    assert.equal(open.authenticate(hs(B, SB, 'k', { aud: 'api-b' })).authenticated, true)
    assert.equal(open.authenticate(hs(B, SB, 'k', { aud: 'web' })).errorCode, 'invalid_audience')
  })

  test(`${name}: tenantSource 'issuer': the issuer's tenant is the result's; a token or request naming another is refused`, () => {
    const auth = new Authenticator(config())
    const b = auth.authenticate(hs(B, SB))
    assert.equal(b.tenantId, 'tenant-b')
    assert.equal(b.tenantSource, 'issuer')
    // The issuer's tenant wins over the header; the claim must agree with it (ASCII case folded).
    assert.equal(auth.authenticate(hs(B, SB), 'other').tenantSource, 'issuer')
    assert.equal(auth.authenticate(hs(B, SB, 'k', { tenant_id: 'TENANT-B' })).tenantId, 'tenant-b')
    assert.equal(auth.authenticate(hs(B, SB, 'k', { tenant_id: 'acme' })).errorCode, 'tenant_mismatch')
    // A has no tenant: the usual resolution.
    const a = auth.authenticate(hs(A, SA, 'k', { tenant_id: 'acme' }))
    assert.deepEqual([a.tenantId, a.tenantSource], ['acme', 'token'])
    const strict = new Authenticator(config({ enforceTenantMatch: true }))
    assert.equal(strict.authenticate(hs(B, SB), 'other').errorCode, 'tenant_mismatch')
    assert.equal(strict.authenticate(hs(B, SB), 'Tenant-B').authenticated, true)
  })

  test(`${name}: setKeys(keys, { issuer }) replaces that issuer's set only`, () => {
    const auth = new Authenticator(config())
    const rotated = 'issuer-b-rotated-0123456789abcdefghij'
    assert.equal(auth.keySetGeneration, 0)
    assert.equal(auth.setKeys([{ kid: 'k2', alg: 'HS256', secret: rotated }], { issuer: B }), 1)
    assert.equal(auth.keySetGeneration, 1)
    assert.equal(auth.authenticate(hs(B, SB)).errorCode, 'unknown_key')
    assert.equal(auth.authenticate(hs(B, rotated, 'k2')).authenticated, true)
    assert.equal(auth.authenticate(hs(A, SA)).authenticated, true)
    // The rotated key is B's alone.
    assert.equal(auth.authenticate(hs(A, rotated, 'k2')).errorCode, 'unknown_key')
    assert.throws(() => auth.setKeys([{ kid: 'k', alg: 'HS256', secret: SA }]), TypeError)
    assert.throws(() => auth.setKeys([{ kid: 'k', alg: 'HS256', secret: SA }], { issuer: `${B}/` }), RangeError)
    // Issuers without keys at construction (a remote key set not fetched yet) refuse every token of theirs.
    const empty = new Authenticator({ issuers: [{ issuer: A }], rateLimitMax: 0, clockTimestamp: NOW })
    assert.equal(empty.authenticate(hs(A, SA)).errorCode, 'unknown_key')
    empty.setKeys([{ kid: 'k', alg: 'HS256', secret: SA }], { issuer: A })
    assert.equal(empty.authenticate(hs(A, SA)).authenticated, true)
  })

  test(`${name}: bounds: 50 issuers, 100 keys per issuer, 2048-byte identifiers`, () => {
    const many = (n) => Array.from({ length: n }, (_, i) => ({ issuer: `https://${i}.idp.example/`, keys: [{ kid: 'k', alg: 'HS256', secret: SA }] }))
    const fifty = new Authenticator({ issuers: many(50), rateLimitMax: 0, clockTimestamp: NOW })
    assert.equal(fifty.authenticate(hs('https://49.idp.example/', SA)).authenticated, true)
    assert.throws(() => new Authenticator({ issuers: many(51), rateLimitMax: 0 }), RangeError)
    const keys = (n) => Array.from({ length: n }, (_, i) => ({ kid: `k${i}`, alg: 'HS256', secret: SA }))
    assert.ok(new Authenticator({ issuers: [{ issuer: A, keys: keys(100) }], rateLimitMax: 0 }))
    assert.throws(() => new Authenticator({ issuers: [{ issuer: A, keys: keys(101) }], rateLimitMax: 0 }), RangeError)
    assert.throws(() => fifty.setKeys(keys(101), { issuer: 'https://0.idp.example/' }), RangeError)
    assert.ok(new Authenticator({ issuers: [{ issuer: 'x'.repeat(2048) }], rateLimitMax: 0 }))
    assert.throws(() => new Authenticator({ issuers: [{ issuer: 'x'.repeat(2049) }], rateLimitMax: 0 }), RangeError)
  })

  test(`${name}: a flood of random issuers is refused and leaves no state behind`, () => {
    const auth = new Authenticator(config({ rateLimitMax: 100, verifiedTokenCacheMaxEntries: 1000 }))
    const rounds = 20_000
    for (let i = 0; i < rounds; i++) {
      const iss = `https://${i.toString(36)}.${(i * 7919).toString(36)}.example/`
      assert.equal(auth.authenticate(hs(iss, SA)).errorCode, 'untrusted_issuer')
    }
    // Refused before any key: nothing cached, no rate-limit bucket, every refusal counted.
    assert.equal(auth.verifiedTokenCacheEntries, 0)
    assert.equal(auth.rateLimitBuckets, 0)
    assert.equal(auth.metrics().authentication.failures.untrusted_issuer, rounds)
    assert.equal(auth.authenticate(hs(A, SA)).authenticated, true)
  })
}

// RFC 9068 §4 with trusted issuers: the registry names the issuers, so the profile needs an
// audience only, the config's or one of each issuer's own. Both engines build and refuse alike.
test('the access-token profile with trusted issuers: an audience for every issuer, or the config one', () => {
  const issuers = (audA, audB) => [
    { issuer: A, keys: [{ kid: 'k', alg: 'HS256', secret: SA }], ...(audA === undefined ? {} : { audience: audA }) },
    { issuer: B, keys: [{ kid: 'k', alg: 'HS256', secret: SB }], ...(audB === undefined ? {} : { audience: audB }) },
  ]
  const cases = [
    [{ issuers: issuers(), audience: 'api' }, true],
    [{ issuers: issuers('api', 'api-b') }, true],
    [{ issuers: issuers('api', 'api-b'), audience: 'api' }, true],
    [{ issuers: issuers('api') }, false],
    [{ issuers: issuers() }, false],
    [{ issuers: issuers(undefined, 'api-b') }, false],
  ]
  for (const [extra, builds] of cases) {
    const outcomes = Object.values(ENGINES).map((Authenticator) => {
      try {
        new Authenticator({ clockTimestamp: NOW, rateLimitMax: 0, requireAccessTokenProfile: true, ...extra })
        return 'built'
      } catch (error) {
        return `${error.name}: ${error.message}`
      }
    })
    assert.equal(outcomes[0], outcomes[1], JSON.stringify(extra))
    if (builds) assert.equal(outcomes[0], 'built', JSON.stringify(extra))
    else assert.match(outcomes[0], /^TypeError: config\.requireAccessTokenProfile needs/, JSON.stringify(extra))
  }
  // And the profile's own checks still run for each issuer's tokens.
  const auth = new ENGINES.native({ clockTimestamp: NOW, rateLimitMax: 0, requireAccessTokenProfile: true, issuers: issuers('api', 'api') })
  assert.equal(auth.authenticate(hs(A, SA)).errorCode, 'wrong_token_type')
})
