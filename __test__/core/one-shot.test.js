'use strict'

// The one-shot authenticateRequest and Authenticator.shared keep one authenticator per distinct
// config, and never forget one (issue 22): before, both engines emptied the whole table at 64
// configs, so 64 other configs (per-tenant audiences, or configs a client can influence) reset
// an exhausted bucket and un-revoked a token revoked through Authenticator.shared(config); the
// JS engine, without native.js's per-object cache, lost them even for one constant config
// object. Now a 65th distinct config is refused with ERR_AUTH_SHIELD_CONFIG_LIMIT and the kept
// ones go on working. The table is per process, so this file runs its steps in one order.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { withoutRequestId } = require('../support/tokens')

const SECRET = 'one-shot-access-secret-0123456789abcdef'
const ENGINES = [
  ['native', native],
  ['js', js],
]
// Distinct configs kept per process and engine (docs/api.md).
const BOUND = 64

const signer = new native.Authenticator({ accessSecret: SECRET })
const bearer = (sub) => `Bearer ${signer.signAccessToken({ sub })}`

/** 'ok', an AuthResult errorCode, or the code of the thrown error. */
function outcome(call) {
  try {
    const r = call()
    return r.authenticated ? 'ok' : r.errorCode
  } catch (err) {
    return `throws ${err.name} ${err.code}`
  }
}

test('Authenticator.shared of the JS engine shares keys, buckets and revocations as the native one', () => {
  for (const [name, lib] of ENGINES) {
    const config = { accessSecret: SECRET, rateLimitMax: 2, rateLimitRefillPerSec: 1e-6, audience: `shared-${name}` }
    const a = lib.Authenticator.shared(config)
    const b = lib.Authenticator.shared({ ...config })
    assert.ok(a instanceof lib.Authenticator, name)
    const t = `Bearer ${new lib.Authenticator(config).signAccessToken({ sub: 'pat' })}`
    assert.deepEqual(
      [a.authenticate(t), b.authenticate(t), lib.authenticateRequest(t, null, null, { ...config })].map((r) => r.errorCode),
      [undefined, undefined, 'rate_limited'],
      name,
    )
    assert.throws(() => a.setKeys([{ alg: 'HS256', secret: SECRET }]), { name: 'Error', code: 'ERR_AUTH_SHIELD_SHARED_KEYS' }, name)
    assert.throws(() => lib.Authenticator.shared({ ...config, store: {} }), { name: 'TypeError', message: /config\.store is not a known option/ }, name)
  }
})

test('64 other configs neither reset an exhausted bucket nor un-revoke a token, in both engines alike', () => {
  const seen = {}
  for (const [name, lib] of ENGINES) {
    const steps = []
    // One constant config object, exhausted at capacity 3.
    const limited = { accessSecret: SECRET, rateLimitMax: 3, rateLimitRefillPerSec: 1e-6 }
    const user = bearer('exhausted-user')
    for (let i = 0; i < 4; i++) steps.push(outcome(() => lib.authenticateRequest(user, null, null, limited)))
    assert.deepEqual(steps, ['ok', 'ok', 'ok', 'rate_limited'], name)

    // A token revoked through Authenticator.shared(config).
    const revocable = { accessSecret: SECRET, rateLimitMax: 0, issuer: 'revocations' }
    const issuer = new lib.Authenticator(revocable)
    const revoked = issuer.signAccessToken({ sub: 'revoked-user' })
    const { jti, expiresAtSec } = issuer.verifyAccessToken(revoked)
    lib.Authenticator.shared(revocable).revokeToken(jti, expiresAtSec)
    assert.equal(lib.authenticateRequest(`Bearer ${revoked}`, null, null, revocable).errorCode, 'token_revoked', name)

    // 70 other configs, each a distinct audience: the table fills, then refuses.
    const others = []
    for (let i = 0; i < 70; i++) {
      const other = { accessSecret: SECRET, audience: `tenant-${i}` }
      others.push(other)
      steps.push(outcome(() => lib.authenticateRequest(bearer('other'), null, null, other)))
    }
    const kept = steps.slice(4).filter((s) => s === 'invalid_audience').length
    const refused = steps.slice(4).filter((s) => s === 'throws RangeError ERR_AUTH_SHIELD_CONFIG_LIMIT').length
    // The shared test above kept one config, this test two.
    assert.deepEqual([kept, refused], [BOUND - 3, 70 - (BOUND - 3)], name)
    assert.throws(() => lib.Authenticator.shared(others.at(-1)), { name: 'RangeError', code: 'ERR_AUTH_SHIELD_CONFIG_LIMIT', message: /new Authenticator\(config\)/ }, name)

    // The exhausted user is still limited: the same object, an equal one, Authenticator.shared.
    for (const config of [limited, { ...limited }]) {
      steps.push(outcome(() => lib.authenticateRequest(user, null, null, config)))
    }
    steps.push(outcome(() => lib.Authenticator.shared({ ...limited }).authenticate(user)))
    assert.deepEqual(steps.slice(-3), ['rate_limited', 'rate_limited', 'rate_limited'], name)
    // The revoked token is still refused; another user of that config is not.
    steps.push(outcome(() => lib.authenticateRequest(`Bearer ${revoked}`, null, null, { ...revocable })))
    steps.push(outcome(() => lib.Authenticator.shared(revocable).authenticate(`Bearer ${revoked}`)))
    steps.push(outcome(() => lib.authenticateRequest(`Bearer ${issuer.signAccessToken({ sub: 'x' })}`, null, null, revocable)))
    assert.deepEqual(steps.slice(-3), ['token_revoked', 'token_revoked', 'ok'], name)
    // A kept config goes on working; the refused ones stay refused, even as fresh objects.
    steps.push(outcome(() => lib.authenticateRequest(bearer('other'), null, null, { ...others[0] })))
    steps.push(outcome(() => lib.authenticateRequest(bearer('other'), null, null, { ...others.at(-1) })))
    assert.deepEqual(steps.slice(-2), ['invalid_audience', 'throws RangeError ERR_AUTH_SHIELD_CONFIG_LIMIT'], name)
    seen[name] = steps
  }
  assert.deepEqual(seen.js, seen.native)
  const message = (lib) => {
    try {
      lib.authenticateRequest(null, null, null, { accessSecret: SECRET, audience: 'one-more' })
    } catch (err) {
      return err.message
    }
  }
  assert.equal(message(js), message(native))
})

test('a config refused at the bound is not half-kept: results of kept configs are unchanged', () => {
  for (const [name, lib] of ENGINES) {
    const limited = { accessSecret: SECRET, rateLimitMax: 3, rateLimitRefillPerSec: 1e-6 }
    const r = lib.authenticateRequest(bearer('fresh-user'), null, null, limited)
    assert.deepEqual([r.authenticated, r.rateLimitRemaining, r.rateLimitLimit], [true, 2, 3], name)
  }
  const a = withoutRequestId(native.authenticateRequest(bearer('same'), null, null, { accessSecret: SECRET, audience: 'tenant-0' }))
  const b = withoutRequestId(js.authenticateRequest(bearer('same'), null, null, { accessSecret: SECRET, audience: 'tenant-0' }))
  assert.deepEqual(b, a)
})
