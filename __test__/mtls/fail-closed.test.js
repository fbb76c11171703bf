'use strict'
// A certificate-bound token (cnf x5t#S256, RFC 8705 §3) on an authenticator that checks no
// certificate (certificateBoundTokens off, the default) is refused, as a DPoP-bound token sent as
// Bearer always is (RFC 9449 §7.1): a stolen bound token must not work as a plain bearer token
// on an app that never looks at the binding. Both engines, the same codes.
const test = require('node:test')
const assert = require('node:assert/strict')
const { token, SECRET, NOW } = require('../support/tokens')

const ENGINES = [
  ['native', () => require('../..')],
  ['js', () => require('../../js')],
]
const THUMB = 'Avv2uRvXGkvZRXCpVXMt6eDJ3AaIw7qOlRkE5wAmZZs'
const JKT = '0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I'
const bearer = (cnf) => `Bearer ${token({ sub: 'u', exp: NOW + 60, ...(cnf === undefined ? {} : { cnf }) }, SECRET)}`
const raw = (h) => h.slice('Bearer '.length)

for (const [engine, load] of ENGINES) {
  const { Authenticator } = load()
  const auth = new Authenticator({ accessSecret: SECRET, clockTimestamp: NOW })

  test(`${engine}: a certificate-bound token is refused where certificates are not checked`, () => {
    const h = bearer({ 'x5t#S256': THUMB })
    const r = auth.authenticate(h)
    assert.deepEqual([r.authenticated, r.errorCode, r.errorStatus], [false, 'certificate_required', 401])
    // A thumbprint handed in changes nothing: the app does not check certificates.
    assert.equal(auth.authenticate(h, undefined, undefined, { clientCertThumbprint: THUMB }).errorCode, 'certificate_required')
    const v = auth.verifyAccessToken(raw(h))
    assert.deepEqual([v.valid, v.errorCode], [false, 'certificate_required'])
  })

  test(`${engine}: a DPoP-bound token is refused there too (both bindings alike)`, () => {
    assert.equal(auth.authenticate(bearer({ jkt: JKT })).errorCode, 'dpop_bound_token_as_bearer')
  })

  test(`${engine}: a malformed certificate binding is invalid_claims where certificates are not checked`, () => {
    for (const x5t of [THUMB.slice(0, 42), `${THUMB}=`, '', 7, null, [THUMB], { v: THUMB }]) {
      assert.equal(auth.authenticate(bearer({ 'x5t#S256': x5t })).errorCode, 'invalid_claims', JSON.stringify(x5t))
      assert.equal(auth.verifyAccessToken(raw(bearer({ 'x5t#S256': x5t }))).errorCode, 'invalid_claims')
    }
  })

  test(`${engine}: tokens that claim no certificate binding still pass where certificates are not checked`, () => {
    // No cnf, a cnf with other members, or a cnf that is not an object (no binding in it, as for jkt).
    for (const cnf of [undefined, {}, { kid: 'k' }, 'x', 5, null]) {
      const r = auth.authenticate(bearer(cnf))
      assert.equal(r.authenticated, true, `${JSON.stringify(cnf)}: ${r.errorCode}`)
      assert.equal(auth.verifyAccessToken(raw(bearer(cnf))).valid, true)
    }
  })
}
