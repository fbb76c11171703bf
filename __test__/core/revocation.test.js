'use strict'

// The in-process deny list (docs/revocation.md), both engines: what a revocation refuses, which
// issuer it names, and its memory bound under a flood.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { token, NOW } = require('../support/tokens')

// A collector for the memory readings, so the flood's thrown (garbage) errors are not counted
// as held entries: the test runner is not started with --expose-gc.
require('node:v8').setFlagsFromString('--expose-gc')
const collect = require('node:vm').runInNewContext('gc')

const ACCESS = 'revocation-access-secret-0123456789ab'
const REFRESH = 'revocation-refresh-secret-0123456789a'
const ENGINES = [
  ['native', native],
  ['js', js],
]

for (const [name, engine] of ENGINES) {
  test(`${name}: revokeToken refuses the access and refresh tokens it names, with token_revoked (401)`, () => {
    const auth = new engine.Authenticator({ accessSecret: ACCESS, refreshSecret: REFRESH, rateLimitMax: 0 })
    const access = auth.signAccessToken({ sub: 'u' })
    const refresh = auth.signRefreshToken({ sub: 'u' })
    const a = auth.verifyAccessToken(access)
    const r = auth.verifyRefreshToken(refresh)
    assert.equal(auth.revokeToken(a.jti, a.expiresAtSec), undefined)
    auth.revokeToken(r.jti, r.expiresAtSec)
    const result = auth.authenticate(`Bearer ${access}`)
    assert.deepEqual([result.authenticated, result.errorCode, result.errorStatus, result.error], [false, 'token_revoked', 401, 'Token has been revoked'])
    assert.equal(auth.verifyRefreshToken(refresh).errorCode, 'token_revoked')
    assert.equal(auth.authenticate(`Bearer ${auth.signAccessToken({ sub: 'u' })}`).authenticated, true)
    assert.equal(auth.revocationCount, 2)
  })

  test(`${name}: a revocation names the first configured issuer unless options.iss says otherwise`, () => {
    const auth = new engine.Authenticator({ accessSecret: ACCESS, issuer: ['main', 'legacy'], clockTimestamp: NOW, rateLimitMax: 0 })
    const main = token({ sub: 'u', jti: 'j', iss: 'main', exp: NOW + 60 }, ACCESS)
    const legacy = token({ sub: 'u', jti: 'j', iss: 'legacy', exp: NOW + 60 }, ACCESS)
    auth.revokeToken('j', NOW + 60)
    assert.equal(auth.authenticate(`Bearer ${main}`).errorCode, 'token_revoked')
    assert.equal(auth.authenticate(`Bearer ${legacy}`).authenticated, true)
    auth.revokeSubject('u', { issuedBeforeSec: NOW + 1, iss: 'legacy' })
    assert.equal(auth.authenticate(`Bearer ${legacy}`).errorCode, 'token_revoked')
  })

  test(`${name}: revokeSubject refuses tokens issued before the cut-off and those without iat, not later ones`, () => {
    const auth = new engine.Authenticator({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0 })
    const at = (iat) => `Bearer ${token({ sub: 'u', exp: NOW + 60, ...(iat === undefined ? {} : { iat }) }, ACCESS)}`
    auth.revokeSubject('u') // before: the millisecond after now
    assert.equal(auth.authenticate(at(NOW - 1)).errorCode, 'token_revoked')
    assert.equal(auth.authenticate(at(undefined)).errorCode, 'token_revoked')
    // Issued in the second of the call, by an issuer writing whole seconds: refused (fail closed).
    assert.equal(auth.authenticate(at(NOW)).errorCode, 'token_revoked')
    assert.equal(auth.authenticate(at(NOW + 0.001)).authenticated, true)
    assert.equal(auth.authenticate(`Bearer ${token({ sub: 'v', exp: NOW + 60 }, ACCESS)}`).authenticated, true)
  })

  test(`${name}: a flood of revocations stays within maxRevocations, refusing the excess and keeping the held ones`, () => {
    const max = 50_000
    // Six times the bound here (each refusal builds an Error, slow on a debug build); the core's
    // unit test (src/revocation.rs) floods two million.
    const flood = 300_000
    const auth = new engine.Authenticator({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0, maxRevocations: max })
    // What the entries hold: V8's heap for the JS engine (its RSS keeps the pages the flood's
    // garbage grew), the process's RSS for the native one (its table lives outside the heap).
    const held = () => (engine === js ? process.memoryUsage().heapUsed : process.memoryUsage().rss)
    collect()
    const before = held()
    let refused = 0
    for (let i = 0; i < flood; i++) {
      try {
        // jti of a UUID's length, like the ones auth-shield issues.
        if (i % 10 === 0) auth.revokeSubject(`subject-${String(i).padStart(28, '0')}`, { before: NOW })
        else auth.revokeToken(`${String(i).padStart(36, '0')}`, NOW + 3600)
      } catch (err) {
        assert.equal(err.code, 'ERR_AUTH_SHIELD_REVOCATION_LIMIT')
        refused++
      }
    }
    assert.equal(auth.revocationCount, max)
    assert.equal(refused, flood - max)
    collect()
    const grown = held() - before
    // docs/revocation.md: at most ~(key bytes + 160) bytes per entry natively, about twice that
    // in the JS engine; 36-byte keys here.
    const perEntry = (37 + 160) * (engine === js ? 2 : 1)
    assert.ok(grown < max * perEntry + 32 * 1024 * 1024, `memory grew ${(grown / 1048576).toFixed(1)} MiB for ${max} entries`)
    assert.equal(auth.authenticate(`Bearer ${token({ sub: 'x', jti: String(1).padStart(36, '0'), exp: NOW + 60 }, ACCESS)}`).errorCode, 'token_revoked')
  })
}

test('Authenticator.shared instances of one config share their deny list', () => {
  const config = { accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0, maxRevocations: 7 }
  const a = native.Authenticator.shared(config)
  const b = native.Authenticator.shared({ ...config })
  a.revokeToken('shared-jti', NOW + 60)
  assert.equal(b.authenticate(`Bearer ${token({ sub: 'u', jti: 'shared-jti', exp: NOW + 60 }, ACCESS)}`).errorCode, 'token_revoked')
})
