'use strict'
// Token issuance and refresh verification.
const test = require('node:test')
const assert = require('node:assert/strict')
const jwt = require('jsonwebtoken')
const { Authenticator } = require('../..')
const { SECRET, REFRESH_SECRET, NOW } = require('../support/tokens')

const config = { accessSecret: SECRET, refreshSecret: REFRESH_SECRET, issuer: 'auth.example', accessTtlSec: 60, refreshTtlSec: 3600 }

test('access tokens carry iat, exp, iss, jti and type and authenticate', () => {
  const auth = new Authenticator(config)
  const token = auth.signAccessToken({ sub: 'u1', email: 'e@x.io', role: 'admin', tenant_id: 'acme', custom: { a: 1 } })
  const claims = jwt.verify(token, SECRET, { algorithms: ['HS256'] })
  assert.equal(claims.type, 'access')
  assert.equal(claims.iss, 'auth.example')
  assert.equal(claims.exp - Math.floor(claims.iat), 60)
  assert.deepEqual(claims.custom, { a: 1 })
  const r = auth.authenticate(`Bearer ${token}`)
  assert.equal(r.authenticated, true)
  assert.deepEqual([r.userId, r.email, r.role, r.tenantId], ['u1', 'e@x.io', 'admin', 'acme'])
})

test('refresh tokens use their own secret and type, and only verify as refresh tokens', () => {
  const auth = new Authenticator(config)
  const refresh = auth.signRefreshToken({ sub: 'u1', tenant_id: 'acme' })
  assert.throws(() => jwt.verify(refresh, SECRET), /invalid signature/)
  const claims = jwt.verify(refresh, REFRESH_SECRET)
  assert.equal(claims.type, 'refresh')
  assert.equal(claims.exp - Math.floor(claims.iat), 3600)
  const v = auth.verifyRefreshToken(refresh)
  assert.equal(v.valid, true)
  assert.equal(v.userId, 'u1')
  assert.equal(v.tenantId, 'acme')
  assert.equal(v.jti, claims.jti)
  assert.equal(v.expiresAtSec, claims.exp)
  // The access key refuses it; the refresh key made it: one of ours, of the wrong type.
  assert.equal(auth.authenticate(`Bearer ${refresh}`).errorCode, 'wrong_token_type')

  const access = auth.signAccessToken({ sub: 'u1' })
  assert.equal(auth.verifyRefreshToken(access).errorCode, 'wrong_token_type')
  // Signed with the refresh secret but typed access (or untyped): still not a refresh token.
  const forged = jwt.sign({ sub: 'u1', type: 'access', iss: 'auth.example' }, REFRESH_SECRET, { expiresIn: 60 })
  assert.equal(auth.verifyRefreshToken(forged).errorCode, 'wrong_token_type')
  assert.equal(auth.verifyRefreshToken(jwt.sign({ sub: 'u1', iss: 'auth.example' }, REFRESH_SECRET, { expiresIn: 60 })).errorCode, 'wrong_token_type')
})

test('verification reports expired and garbage tokens without throwing', () => {
  const past = new Authenticator({ ...config, clockTimestamp: NOW - 10_000 })
  const old = past.signRefreshToken({ sub: 'u' })
  const v = new Authenticator({ ...config, clockTimestamp: NOW }).verifyRefreshToken(old)
  assert.deepEqual([v.valid, v.errorCode, v.errorStatus], [false, 'token_expired', 401])
  for (const junk of ['', 'a.b.c', 'x'.repeat(100000)]) assert.equal(past.verifyRefreshToken(junk).valid, false)
  assert.throws(() => past.verifyRefreshToken(5), TypeError)
})

test('signing refuses reserved or malformed claims with a clear error', () => {
  const auth = new Authenticator(config)
  for (const claims of [{}, { sub: '' }, { sub: 5 }, { sub: 'u', exp: 1 }, { sub: 'u', type: 'refresh' }, { sub: 'u', iat: 1 }, { sub: 'u', jti: 'x' }, { sub: 'u', email: 1 }]) {
    assert.throws(() => auth.signAccessToken(claims), TypeError, JSON.stringify(claims))
  }
  assert.throws(() => auth.signAccessToken({ sub: 'u', tenant_id: 'bad:tenant' }), RangeError)
  assert.throws(() => auth.signAccessToken('sub'), TypeError)
  assert.throws(() => auth.signAccessToken(null), TypeError)
  const cyclic = { sub: 'u' }
  cyclic.self = cyclic
  assert.throws(() => auth.signAccessToken(cyclic), TypeError)
  assert.throws(() => auth.signAccessToken({ sub: 'u', big: 1n }), TypeError)
  assert.throws(() => auth.signAccessToken({ sub: 'u', blob: 'x'.repeat(10000) }), RangeError)
})

test('refresh methods without a refresh secret throw a clear error', () => {
  const auth = new Authenticator({ accessSecret: SECRET })
  assert.throws(() => auth.signRefreshToken({ sub: 'u' }), /refreshSecret/)
  assert.throws(() => auth.verifyRefreshToken('a.b.c'), /refreshSecret/)
})
