'use strict'

// The verified-token cache in both engines: on by default for asymmetric keys, off for HMAC
// unless its size is given, keyed by the whole token, cleared by setKeys, bounded under a flood,
// and never a shortcut past exp, the tenant, the rate limit or the request id.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { sign } = require('node:crypto')
const native = require('../..')
const js = require('../../js')
const { b64url, withoutRequestId } = require('../support/tokens')
const { keyPair, keyEntry, joseToken } = require('../support/keys')

const ENGINES = [
  ['native', native],
  ['js', js],
]
const NOW = 1_800_000_000

function both(config) {
  return ENGINES.map(([name, engine]) => [name, new engine.Authenticator({ clockTimestamp: NOW, rateLimitMax: 0, ...config })])
}

/** An EdDSA token signed with node:crypto directly (fast enough to make thousands). */
function edToken(claims, kid = 'ed') {
  const input = `${b64url(JSON.stringify({ alg: 'EdDSA', kid }))}.${b64url(JSON.stringify(claims))}`
  return `${input}.${sign(null, Buffer.from(input), keyPair('EdDSA').privateKey).toString('base64url')}`
}

const ED = { keys: [keyEntry('EdDSA', 'ed')] }

test('on by default for asymmetric keys: a success is remembered, a failure never', () => {
  const good = edToken({ sub: 'u', exp: NOW + 60 })
  const expired = edToken({ sub: 'u', exp: NOW - 1 })
  for (const [engine, auth] of both(ED)) {
    assert.equal(auth.verifiedTokenCacheEntries, 0)
    assert.equal(auth.authenticate(`Bearer ${expired}`).errorCode, 'token_expired')
    assert.equal(auth.authenticate('Bearer a.b.c').errorCode, 'malformed_token')
    assert.equal(auth.verifiedTokenCacheEntries, 0, engine)
    assert.equal(auth.authenticate(`Bearer ${good}`).authenticated, true)
    assert.equal(auth.verifiedTokenCacheEntries, 1, engine)
    // The hit gives the same result as the first verification.
    const again = auth.authenticate(`Bearer ${good}`)
    assert.equal(again.authenticated, true)
    assert.equal(again.userId, 'u')
    assert.equal(auth.verifyAccessToken(good).valid, true)
    assert.equal(auth.verifiedTokenCacheEntries, 1)
  }
})

test('off for HMAC-only key sets unless verifiedTokenCacheMaxEntries is given; 0 turns it off', async () => {
  const hs = await joseToken('HS256', { sub: 'u', exp: NOW + 60 }, { kid: 'h' })
  for (const [, auth] of both({ keys: [keyEntry('HS256', 'h')] })) {
    assert.equal(auth.authenticate(`Bearer ${hs}`).authenticated, true)
    assert.equal(auth.verifiedTokenCacheEntries, 0)
  }
  for (const [, auth] of both({ keys: [keyEntry('HS256', 'h')], verifiedTokenCacheMaxEntries: 10 })) {
    assert.equal(auth.authenticate(`Bearer ${hs}`).authenticated, true)
    assert.equal(auth.verifiedTokenCacheEntries, 1)
  }
  const ed = edToken({ sub: 'u', exp: NOW + 60 })
  for (const [, auth] of both({ ...ED, verifiedTokenCacheMaxEntries: 0 })) {
    assert.equal(auth.authenticate(`Bearer ${ed}`).authenticated, true)
    assert.equal(auth.verifiedTokenCacheEntries, 0)
  }
})

test('a key set mixing HMAC and asymmetric keys remembers only the asymmetric tokens unless the size is given', async () => {
  const hs = await joseToken('HS256', { sub: 'u', exp: NOW + 60 }, { kid: 'h' })
  const ed = edToken({ sub: 'u', exp: NOW + 60 })
  const mixed = { keys: [keyEntry('HS256', 'h'), keyEntry('EdDSA', 'ed')] }
  for (const [engine, auth] of both(mixed)) {
    for (let i = 0; i < 3; i++) assert.equal(auth.authenticate(`Bearer ${hs}`).authenticated, true, engine)
    assert.equal(auth.verifiedTokenCacheEntries, 0, `${engine}: an HMAC check is cheaper than the cache`)
    assert.equal(auth.authenticate(`Bearer ${ed}`).authenticated, true, engine)
    assert.equal(auth.verifiedTokenCacheEntries, 1, engine)
  }
  for (const [engine, auth] of both({ ...mixed, verifiedTokenCacheMaxEntries: 10 })) {
    assert.equal(auth.authenticate(`Bearer ${hs}`).authenticated, true, engine)
    assert.equal(auth.authenticate(`Bearer ${ed}`).authenticated, true, engine)
    assert.equal(auth.verifiedTokenCacheEntries, 2, `${engine}: asked for by size, HMAC tokens too`)
  }
})

test('keyed by the whole token: a copied signature on another payload is still invalid_signature', () => {
  const good = edToken({ sub: 'u', exp: NOW + 60 })
  const [h, , s] = good.split('.')
  const forged = `${h}.${b64url(JSON.stringify({ sub: 'admin', exp: NOW + 60 }))}.${s}`
  for (const [, auth] of both(ED)) {
    assert.equal(auth.authenticate(`Bearer ${good}`).authenticated, true)
    assert.equal(auth.authenticate(`Bearer ${forged}`).errorCode, 'invalid_signature')
    assert.equal(auth.authenticate(`Bearer ${good}x`).errorCode, 'malformed_token')
  }
})

test('setKeys empties the cache: a cached token of a retired key is refused at once', () => {
  const good = edToken({ sub: 'u', exp: NOW + 60 })
  for (const [, auth] of both(ED)) {
    assert.equal(auth.authenticate(`Bearer ${good}`).authenticated, true)
    assert.equal(auth.verifiedTokenCacheEntries, 1)
    auth.setKeys([keyEntry('ES256', 'es')])
    assert.equal(auth.verifiedTokenCacheEntries, 0)
    assert.equal(auth.authenticate(`Bearer ${good}`).errorCode, 'unknown_key')
    assert.equal(auth.verifyAccessToken(good).errorCode, 'unknown_key')
  }
})

test('a hit still checks exp against the clock', async () => {
  // The real clock: the token expires one to two seconds from now.
  const exp = Math.floor(Date.now() / 1000) + 2
  const t = edToken({ sub: 'u', exp })
  const auths = ENGINES.map(([, engine]) => new engine.Authenticator({ ...ED, rateLimitMax: 0 }))
  for (const auth of auths) assert.equal(auth.authenticate(`Bearer ${t}`).authenticated, true)
  await new Promise((resolve) => setTimeout(resolve, (exp - Date.now() / 1000) * 1000 + 50))
  for (const auth of auths) {
    assert.equal(auth.authenticate(`Bearer ${t}`).errorCode, 'token_expired')
    assert.equal(auth.verifiedTokenCacheEntries, 0, 'the expired entry is dropped')
  }
})

test('JS engine: a hit still checks nbf and exp at the given time and belongs to one key set (src/jwt/verify.rs has the same test)', () => {
  // The engine's core takes `now` as an argument: a wall clock that steps back before nbf
  // (NTP, an operator) needs no waiting. The native side is pinned by a Rust unit test.
  const { Core } = require('../../js/authenticator')
  const { readSettings } = require('../../js/config')
  const core = new Core(readSettings({ ...ED, rateLimitMax: 0 }))
  const t = edToken({ sub: 'u', type: 'access', nbf: 100, exp: 200 })
  const at = (now) => {
    const r = core.verifyAccess(t, now)
    return r.code
  }
  assert.equal(at(150), undefined)
  assert.equal(core.cache.size, 1)
  assert.equal(at(50), 'token_not_yet_valid')
  assert.equal(core.cache.size, 1)
  assert.equal(at(199), undefined)
  // Another key set under the same kid: the entry is dropped, the signature checked and refused.
  core.setKeys([{ kid: 'ed', alg: 'EdDSA', publicKey: keyPair('Ed25519').publicKey }])
  assert.equal(core.cache.size, 0)
  assert.equal(at(150), 'invalid_signature')
  core.setKeys(ED.keys)
  assert.equal(at(150), undefined)
  assert.equal(at(200), 'token_expired')
  assert.equal(core.cache.size, 0)
})

test('a hit still resolves the tenant, takes from the rate limit and gets a fresh request id', () => {
  const t = edToken({ sub: 'u', exp: NOW + 60 })
  for (const [engine, auth] of both({ ...ED, rateLimitMax: 2, rateLimitRefillPerSec: 0.001 })) {
    const first = auth.authenticate(`Bearer ${t}`, 'acme')
    const second = auth.authenticate(`Bearer ${t}`, 'globex')
    assert.deepEqual([first.tenantId, second.tenantId], ['acme', 'globex'], engine)
    assert.deepEqual([first.rateLimitRemaining, second.rateLimitRemaining], [1, 0])
    assert.notEqual(first.requestId, second.requestId)
    assert.equal(auth.authenticate(`Bearer ${t}`).errorCode, 'rate_limited')
  }
  // claims checks too: a cached token for one authenticator says nothing to a stricter one.
  for (const [, auth] of both({ ...ED, audience: 'api' })) {
    assert.equal(auth.authenticate(`Bearer ${t}`).errorCode, 'invalid_audience')
  }
})

test('a hit is still checked against the revocation list, by jti and by subject', () => {
  const byJti = edToken({ sub: 'u', jti: 'j-1', iat: NOW - 10, exp: NOW + 60 })
  const bySubject = edToken({ sub: 'v', jti: 'j-2', iat: NOW - 10, exp: NOW + 60 })
  for (const [engine, auth] of both(ED)) {
    for (const t of [byJti, bySubject]) assert.equal(auth.authenticate(`Bearer ${t}`).authenticated, true)
    assert.equal(auth.verifiedTokenCacheEntries, 2)
    auth.revokeToken('j-1', NOW + 60)
    auth.revokeSubject('v', { issuedBeforeSec: NOW })
    for (const t of [byJti, bySubject]) {
      assert.equal(auth.authenticate(`Bearer ${t}`).errorCode, 'token_revoked', engine)
      assert.equal(auth.verifyAccessToken(t).errorCode, 'token_revoked', engine)
    }
  }
})

test('both engines agree on cache hits, field for field', () => {
  const tokens = ['u1', 'u2', 'u3'].map((sub) => edToken({ sub, exp: NOW + 60, tenant_id: 'acme', email: `${sub}@x` }))
  const [[, n], [, j]] = both({ ...ED, rateLimitMax: 5, rateLimitRefillPerSec: 0.001 })
  for (let round = 0; round < 4; round++) {
    for (const t of tokens) {
      const a = n.authenticate(`Bearer ${t}`, round % 2 ? 'acme' : undefined, 'acme.example.com')
      const b = j.authenticate(`Bearer ${t}`, round % 2 ? 'acme' : undefined, 'acme.example.com')
      if (a.errorCode === 'rate_limited') b.retryAfterMs = a.retryAfterMs
      assert.deepStrictEqual(withoutRequestId(b), withoutRequestId(a))
      assert.deepStrictEqual(j.verifyAccessToken(t), n.verifyAccessToken(t))
    }
  }
  assert.equal(n.verifiedTokenCacheEntries, j.verifiedTokenCacheEntries)
})

test('a flood of distinct valid tokens keeps the cache at its size', () => {
  const size = 50
  const pairs = both({ ...ED, verifiedTokenCacheMaxEntries: size })
  for (let i = 0; i < 3000; i++) {
    const t = edToken({ sub: `flood-${i}`, exp: NOW + 60 })
    for (const [engine, auth] of pairs) {
      assert.equal(auth.authenticate(`Bearer ${t}`).authenticated, true)
      if (i % 500 === 0 || i === 2999) assert.ok(auth.verifiedTokenCacheEntries <= size, `${engine}: ${auth.verifiedTokenCacheEntries}`)
    }
  }
  for (const [, auth] of pairs) assert.equal(auth.verifiedTokenCacheEntries, size)
})

test('verifiedTokenCacheMaxEntries is checked like any integer option', () => {
  for (const [, engine] of ENGINES) {
    assert.throws(() => new engine.Authenticator({ ...ED, verifiedTokenCacheMaxEntries: -1 }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' })
    assert.throws(() => new engine.Authenticator({ ...ED, verifiedTokenCacheMaxEntries: 1.5 }), { name: 'RangeError' })
    assert.throws(() => new engine.Authenticator({ ...ED, verifiedTokenCacheMaxEntries: 1_000_001 }), { name: 'RangeError' })
    assert.throws(() => new engine.Authenticator({ ...ED, verifiedTokenCacheMaxEntries: '5' }), { name: 'TypeError' })
  }
})
