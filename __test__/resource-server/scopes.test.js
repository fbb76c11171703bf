'use strict'

// requiredScope (issue 25): every required scope-token must be granted by the access token's
// space-delimited `scope` (RFC 9068 §2.2.3), its `scp` (a string or an array, Okta / Entra
// ID) or its `permissions` (an array, Auth0); otherwise 403 insufficient_scope, after every 401
// check. Both engines, one table.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { token, withoutRequestId } = require('../support/tokens')

const SECRET = 'resource-server-scopes-secret-0123456789'
const NOW = 1_700_000_000
const ENGINES = [
  ['native', native],
  ['js', js],
]

function make(engine, extra) {
  return new engine.Authenticator({ accessSecret: SECRET, refreshSecret: `${SECRET}-refresh`, clockTimestamp: NOW, rateLimitMax: 0, ...extra })
}

const bearer = (claims) => `Bearer ${token({ sub: 'u', exp: NOW + 60, ...claims }, SECRET)}`

// [claims, code for requiredScope ['read:orders', 'write']] — null: authenticated.
const CASES = [
  [{ scope: 'read:orders write' }, null],
  [{ scope: 'write read:orders other' }, null],
  [{ scope: '  write    read:orders  ' }, null],
  [{ scp: ['write', 'read:orders'] }, null],
  [{ scp: 'read:orders write' }, null],
  [{ scope: 'read:orders', scp: ['write'] }, null],
  // Auth0's RBAC permissions.
  [{ permissions: ['write', 'read:orders'] }, null],
  [{ scope: 'openid', permissions: ['read:orders', 'write'] }, null],
  [{ scope: 'read:orders', permissions: ['write'] }, null],
  [{ permissions: [] }, 'insufficient_scope'],
  [{ permissions: ['read:orders write'] }, 'insufficient_scope'],
  [{ permissions: 'read:orders write' }, 'invalid_claims'],
  [{ permissions: ['read:orders', 'write', 0] }, 'invalid_claims'],
  [{ permissions: null }, 'invalid_claims'],
  [{ scope: `${'x '.repeat(2000)}write read:orders` }, null],
  [{}, 'insufficient_scope'],
  [{ scope: '' }, 'insufficient_scope'],
  [{ scope: ' ' }, 'insufficient_scope'],
  [{ scope: 'read:orders' }, 'insufficient_scope'],
  [{ scope: 'read:orderswrite' }, 'insufficient_scope'],
  [{ scope: 'read:orders,write' }, 'insufficient_scope'],
  [{ scope: 'read:orders\twrite' }, 'insufficient_scope'],
  [{ scope: 'READ:ORDERS WRITE' }, 'insufficient_scope'],
  [{ scope: 'read:ordérs write' }, 'insufficient_scope'],
  [{ scope: 'read:orders\u0000 write' }, 'insufficient_scope'],
  [{ scope: 'read:orders\u00a0write' }, 'insufficient_scope'],
  [{ scp: [] }, 'insufficient_scope'],
  [{ scp: ['read:orders write'] }, 'insufficient_scope'],
  [{ scope: `${'x'.repeat(5000)}` }, 'insufficient_scope'],
  // The falsy and other values JS allows: a scope that is not a string is unreadable.
  [{ scope: ['read:orders', 'write'] }, 'invalid_claims'],
  [{ scope: null }, 'invalid_claims'],
  [{ scope: 0 }, 'invalid_claims'],
  [{ scope: false }, 'invalid_claims'],
  [{ scope: {} }, 'invalid_claims'],
  [{ scope: 'read:orders write', scp: ['read:orders', 1] }, 'invalid_claims'],
  [{ scp: null }, 'invalid_claims'],
  [{ scp: false }, 'invalid_claims'],
  // Every 401 reason wins over the 403.
  [{ scope: 'read:orders', exp: NOW - 1 }, 'token_expired'],
  [{ scope: 'read:orders', type: 'refresh' }, 'wrong_token_type'],
  [{ scope: 'read:orders', sub: '' }, 'missing_subject'],
]

for (const [name, engine] of ENGINES) {
  test(`${name}: requiredScope needs every scope from scope or scp (403 insufficient_scope)`, () => {
    const auth = make(engine, { requiredScope: ['read:orders', 'write'] })
    for (const [claims, code] of CASES) {
      const r = auth.authenticate(bearer(claims))
      const label = JSON.stringify(claims).slice(0, 120)
      if (code === null) assert.equal(r.authenticated, true, label)
      else {
        assert.equal(r.authenticated, false, label)
        assert.equal(r.errorCode, code, label)
        assert.equal(r.errorStatus, code === 'insufficient_scope' ? 403 : 401, label)
      }
    }
    // verifyAccessToken applies the same rule (it is a claim rule of access tokens).
    assert.equal(auth.verifyAccessToken(token({ sub: 'u', exp: NOW + 60, scope: 'read:orders' }, SECRET)).errorCode, 'insufficient_scope')
  })

  test(`${name}: without requiredScope, scope and scp of any type are not read`, () => {
    const auth = make(engine)
    for (const [claims, code] of CASES) {
      const r = auth.authenticate(bearer(claims))
      assert.notEqual(r.errorCode, 'insufficient_scope')
      assert.notEqual(r.errorCode, 'invalid_claims')
      if (code === null || code === 'insufficient_scope' || code === 'invalid_claims') assert.equal(r.authenticated, true, JSON.stringify(claims).slice(0, 80))
    }
  })

  test(`${name}: a single required scope (string form); refresh tokens are never checked for scopes`, () => {
    const auth = make(engine, { requiredScope: 'read' })
    assert.equal(auth.authenticate(bearer({ scope: 'read' })).authenticated, true)
    assert.equal(auth.authenticate(bearer({ scope: 'write' })).errorCode, 'insufficient_scope')
    const refresh = auth.signRefreshToken({ sub: 'u' })
    assert.equal(auth.verifyRefreshToken(refresh).valid, true)
  })

  test(`${name}: requiredScope must hold RFC 6749 scope-tokens`, () => {
    for (const bad of ['', 'read write', 'a"b', 'a\\b', 'café', 'tab\t', '\u0000', [], ['ok', ''], ['ok', 1], 5, {}, true]) {
      assert.throws(() => make(engine, { requiredScope: bad }), (err) => err instanceof TypeError || err instanceof RangeError, JSON.stringify(bad))
    }
    assert.doesNotThrow(() => make(engine, { requiredScope: ['!#[]~', 'read:orders', 'https://api.example/x'] }))
    // null and undefined mean "not checked", as for every option.
    for (const off of [null, undefined]) assert.equal(make(engine, { requiredScope: off }).authenticate(bearer({})).authenticated, true)
  })
}

test('both engines: the same verdicts, fields and config errors', () => {
  const configs = [{ requiredScope: ['read:orders', 'write'] }, { requiredScope: 'write' }, {}]
  for (const extra of configs) {
    const n = make(native, extra)
    const j = make(js, extra)
    for (const [claims] of CASES) {
      const t = bearer(claims)
      assert.deepStrictEqual(withoutRequestId(j.authenticate(t)), withoutRequestId(n.authenticate(t)), JSON.stringify(claims).slice(0, 80))
    }
  }
  for (const bad of ['', 'read write', 'a"b', 'café', [], ['ok', 1], 5]) {
    const errorOf = (engine) => {
      try {
        make(engine, { requiredScope: bad })
      } catch (err) {
        return { name: err.name, message: err.message, code: err.code }
      }
      return null
    }
    assert.deepStrictEqual(errorOf(js), errorOf(native), JSON.stringify(bad))
  }
})
