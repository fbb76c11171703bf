'use strict'

// The engines' introspection cache (src/introspection.rs, js/introspection.js), without the
// middleware: admitIntrospection holds an answer, authenticate runs every check a verified JWT's
// claims get on it (issue 36 §1), the same in both engines.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { createHash } = require('node:crypto')
const native = require('../..')
const js = require('../../js')
const { clientKey, proof, URL: DPOP_URL } = require('../support/dpop')
const { token: jwt } = require('../support/tokens')

const NOW = 1_700_000_000
const SECRET = 'introspection-engine-secret-0123456789abcdef'
const ENGINES = [
  ['native', native],
  ['js', js],
]
const THUMB = createHash('sha256').update('client certificate').digest('base64url')

function make(engine, extra = {}) {
  return new engine.Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, introspectionCacheMaxEntries: 100, rateLimitMax: 0, ...extra })
}

const claims = (extra = {}) => JSON.stringify({ sub: 'user-1', iss: 'https://idp.example/', aud: 'api', exp: NOW + 60, scope: 'read write', jti: 'j-1', iat: NOW - 5, ...extra })
const code = (r) => (r.authenticated ? 'ok' : r.errorCode)

for (const [name, engine] of ENGINES) {
  test(`${name}: a held answer passes with every check a JWT's claims get`, () => {
    const auth = make(engine, { audience: 'api', issuer: 'https://idp.example/', requiredScope: 'read', rateLimitMax: 2, rateLimitRefillPerSec: 0.001 })
    assert.equal(code(auth.authenticate('Bearer opaque-1')), 'introspection_required')
    assert.equal(auth.admitIntrospection('opaque-1', claims(), NOW + 60), true)
    const r = auth.authenticate('Bearer opaque-1')
    assert.equal(code(r), 'ok')
    assert.equal(r.userId, 'user-1')
    assert.equal(r.scope, 'read write')
    assert.equal(r.rateLimitRemaining, 1)
    assert.equal(code(auth.authenticate('Bearer opaque-1')), 'ok')
    assert.equal(code(auth.authenticate('Bearer opaque-1')), 'rate_limited')
    assert.deepEqual(JSON.parse(auth.introspectionClaims('opaque-1')), JSON.parse(claims()))
    const refused = [
      ['aud', claims({ aud: 'other' }), 'invalid_audience'],
      ['iss', claims({ iss: 'https://evil.example/' }), 'invalid_issuer'],
      ['exp', claims({ exp: NOW - 1 }), 'token_expired'],
      ['nbf', claims({ nbf: NOW + 100 }), 'token_not_yet_valid'],
      ['scope', claims({ scope: 'write' }), 'insufficient_scope'],
      ['sub', claims({ sub: undefined }), 'missing_subject'],
      ['types', claims({ scope: 5 }), 'invalid_claims'],
    ]
    for (const [i, [what, json, expected]] of refused.entries()) {
      auth.admitIntrospection(`opaque-r${i}`, json, NOW + 60)
      assert.equal(code(auth.authenticate(`Bearer opaque-r${i}`)), expected, what)
    }
  })

  test(`${name}: an inactive answer is token_inactive until its end; an entry past its end is asked again`, () => {
    const auth = make(engine)
    auth.admitIntrospection('gone', null, NOW + 10)
    const r = auth.authenticate('Bearer gone')
    assert.equal(r.errorCode, 'token_inactive')
    assert.equal(r.errorStatus, 401)
    assert.equal(auth.introspectionClaims('gone'), null)
    auth.admitIntrospection('ended', claims(), NOW)
    assert.equal(code(auth.authenticate('Bearer ended')), 'introspection_required')
    assert.equal(auth.introspectionClaims('ended'), null)
  })

  test(`${name}: only opaque tokens are looked up; a JWT verifies as before, a non-b64token is a format error`, () => {
    const auth = make(engine)
    const t = jwt({ sub: 'u', exp: NOW + 60 }, SECRET)
    auth.admitIntrospection(t, claims({ sub: 'from-introspection' }), NOW + 60)
    assert.equal(auth.authenticate(`Bearer ${t}`).userId, 'u')
    assert.equal(code(auth.authenticate('Bearer a.b.c')), 'malformed_token')
    assert.equal(code(auth.authenticate('Bearer ory_at_x.y')), 'introspection_required')
    assert.equal(code(auth.authenticate('Bearer a=b')), 'invalid_authorization_format')
    // Off (the default): an opaque token is malformed_token, as before.
    const off = new engine.Authenticator({ accessSecret: SECRET, clockTimestamp: NOW })
    assert.equal(code(off.authenticate('Bearer opaque')), 'malformed_token')
  })

  test(`${name}: introspectJwts looks JWTs up too`, () => {
    const auth = make(engine, { introspectJwts: true })
    const t = jwt({ sub: 'u', exp: NOW + 60 }, SECRET)
    assert.equal(code(auth.authenticate(`Bearer ${t}`)), 'introspection_required')
    auth.admitIntrospection(t, claims({ sub: 'from-introspection' }), NOW + 60)
    assert.equal(auth.authenticate(`Bearer ${t}`).userId, 'from-introspection')
    auth.admitIntrospection('opaque', null, NOW + 60)
    assert.equal(code(auth.authenticate('Bearer opaque')), 'token_inactive')
  })

  test(`${name}: revokeToken and revokeSubject apply to introspected tokens`, () => {
    const auth = make(engine)
    auth.admitIntrospection('t1', claims({ jti: 'j-1' }), NOW + 60)
    auth.admitIntrospection('t2', claims({ jti: 'j-2' }), NOW + 60)
    auth.revokeToken('j-1', NOW + 60, { iss: 'https://idp.example/' })
    assert.equal(code(auth.authenticate('Bearer t1')), 'token_revoked')
    assert.equal(code(auth.authenticate('Bearer t2')), 'ok')
    auth.revokeSubject('user-1', { iss: 'https://idp.example/', issuedBeforeSec: NOW })
    assert.equal(code(auth.authenticate('Bearer t2')), 'token_revoked')
  })

  test(`${name}: a certificate-bound introspected token (cnf x5t#S256) needs its certificate`, () => {
    const auth = make(engine, { certificateBoundTokens: true })
    auth.admitIntrospection('bound', claims({ cnf: { 'x5t#S256': THUMB } }), NOW + 60)
    assert.equal(code(auth.authenticate('Bearer bound', null, null, {})), 'certificate_required')
    assert.equal(code(auth.authenticate('Bearer bound', null, null, { clientCertThumbprint: THUMB.replace(/^./, THUMB[0] === 'A' ? 'B' : 'A') })), 'certificate_mismatch')
    assert.equal(code(auth.authenticate('Bearer bound', null, null, { clientCertThumbprint: THUMB })), 'ok')
  })

  test(`${name}: a DPoP-bound introspected token (cnf.jkt): the proof's ath is the hash of the opaque token`, async () => {
    const key = await clientKey()
    const other = await clientKey()
    const auth = new engine.Authenticator({ accessSecret: SECRET, introspectionCacheMaxEntries: 100, rateLimitMax: 0, dpop: true })
    const now = Math.floor(Date.now() / 1000)
    auth.admitIntrospection('dpop-bound', claims({ exp: now + 60, iat: now, cnf: { jkt: key.jkt } }), now + 60)
    const send = async (scheme, k, token = 'dpop-bound') => code(auth.authenticate(`${scheme} dpop-bound`, null, null, { dpop: k === undefined ? undefined : await proof(k, { token }), method: 'GET', url: DPOP_URL }))
    assert.equal(await send('DPoP', key), 'ok')
    assert.equal(await send('Bearer'), 'dpop_bound_token_as_bearer')
    assert.equal(await send('DPoP', other), 'dpop_key_mismatch')
    assert.equal(await send('DPoP', key, 'another-token'), 'dpop_proof_mismatch')
  })

  test(`${name}: the tenant and the rate-limit key come from the introspected claims`, () => {
    const auth = make(engine, { baseDomain: 'example.com', enforceTenantMatch: true, rateLimitMax: 1, rateLimitRefillPerSec: 0.001 })
    auth.admitIntrospection('acme-user', claims({ tenant_id: 'acme' }), NOW + 60)
    const r = auth.authenticate('Bearer acme-user', null, 'acme.example.com')
    assert.equal(r.tenantId, 'acme')
    assert.equal(code(auth.authenticate('Bearer acme-user', null, 'globex.example.com')), 'tenant_mismatch')
    assert.equal(code(auth.authenticate('Bearer acme-user', null, 'acme.example.com')), 'rate_limited')
  })

  test(`${name}: bad arguments are TypeErrors; the bounds refuse rather than grow`, () => {
    const auth = make(engine, { introspectionCacheMaxEntries: 2 })
    for (const args of [[5, null, NOW], ['', null, NOW], ['t', '{"sub":', NOW], ['t', '[]', NOW], ['t', 5, NOW], ['t', null, NaN], ['t', null, '1'], ['x'.repeat(9000), null, NOW]]) {
      assert.throws(() => auth.admitIntrospection(...args), { name: 'TypeError' }, JSON.stringify(args).slice(0, 80))
    }
    assert.equal(auth.admitIntrospection('a', claims(), NOW + 60), true)
    assert.equal(auth.admitIntrospection('b', claims(), NOW + 60), true)
    // Full of active answers: an inactive one is refused, an active one evicts the oldest.
    assert.equal(auth.admitIntrospection('c', null, NOW + 60), false)
    assert.equal(auth.admitIntrospection('d', claims(), NOW + 60), true)
    assert.equal(auth.introspectionCacheEntries, 2)
    assert.equal(code(auth.authenticate('Bearer a')), 'introspection_required')
    assert.equal(code(auth.authenticate('Bearer d')), 'ok')
  })
}
