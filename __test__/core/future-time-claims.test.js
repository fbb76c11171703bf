'use strict'
// A time claim in the future beyond the clock tolerance buys nothing (issue 34): an `iat` later
// than the revocation cut-off only because it lies in the future (an issuer writing
// milliseconds, 1e300) must not outlive revokeSubject, and a future `auth_time` must not
// satisfy maxAuthAgeSec. Both engines, the same codes. The clock is read in whole seconds while
// this library's own iat carries milliseconds, so an iat is "in the future" from the second
// after now + clockToleranceSec on (docs/security-model.md).
const test = require('node:test')
const assert = require('node:assert/strict')
const { token, SECRET, REFRESH_SECRET, NOW } = require('../support/tokens')

const ENGINES = [
  ['native', () => require('../..')],
  ['js', () => require('../../js')],
]
const access = (claims) => token({ sub: 'u', exp: NOW + 600, ...claims }, SECRET)

for (const [engine, load] of ENGINES) {
  const { Authenticator } = load()

  test(`${engine}: an iat in the future survives no revokeSubject (refused as token_not_yet_valid)`, () => {
    const auth = new Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 0 })
    const future = [1e300, NOW * 1000, NOW + 1, NOW + 86400, Number.MAX_VALUE]
    for (const iat of future) {
      const r = auth.authenticate(`Bearer ${access({ iat })}`)
      assert.deepEqual([r.authenticated, r.errorCode, r.errorStatus], [false, 'token_not_yet_valid', 401], `iat ${iat}`)
      assert.equal(auth.verifyAccessToken(access({ iat })).errorCode, 'token_not_yet_valid', `iat ${iat}`)
    }
    // After "log out everywhere" nothing issued before the call passes, whatever iat it claims.
    auth.revokeSubject('u')
    for (const iat of [...future, NOW - 10, NOW, NOW + 0.0005]) {
      assert.equal(auth.authenticate(`Bearer ${access({ iat })}`).authenticated, false, `iat ${iat}`)
    }
    // The next login (signed by this authenticator, a millisecond iat at the cut-off) passes.
    assert.equal(auth.authenticate(`Bearer ${auth.signAccessToken({ sub: 'u' })}`).authenticated, true)
  })

  test(`${engine}: an iat within the clock's second plus clockToleranceSec passes`, () => {
    const strict = new Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 0 })
    for (const iat of [NOW - 1e6, NOW, NOW + 0.001, NOW + 0.999, 0]) {
      assert.equal(strict.authenticate(`Bearer ${access({ iat })}`).authenticated, true, `iat ${iat}`)
    }
    const lenient = new Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 0, clockToleranceSec: 30 })
    assert.equal(lenient.authenticate(`Bearer ${access({ iat: NOW + 30.999 })}`).authenticated, true)
    assert.equal(lenient.authenticate(`Bearer ${access({ iat: NOW + 31 })}`).errorCode, 'token_not_yet_valid')
    // Its own tokens, millisecond iat included, on a live clock.
    const live = new Authenticator({ accessSecret: SECRET, rateLimitMax: 0 })
    for (let i = 0; i < 50; i++) {
      assert.equal(live.authenticate(`Bearer ${live.signAccessToken({ sub: 'u' })}`).authenticated, true)
    }
  })

  test(`${engine}: a refresh token with a future iat is refused too`, () => {
    const auth = new Authenticator({ accessSecret: SECRET, refreshSecret: REFRESH_SECRET, clockTimestamp: NOW })
    const refresh = (iat) => token({ sub: 'u', exp: NOW + 600, type: 'refresh', iat }, REFRESH_SECRET)
    assert.equal(auth.verifyRefreshToken(refresh(NOW * 1000)).errorCode, 'token_not_yet_valid')
    assert.equal(auth.verifyRefreshToken(refresh(NOW)).valid, true)
  })

  test(`${engine}: a future auth_time does not satisfy maxAuthAgeSec`, () => {
    const auth = new Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 0, maxAuthAgeSec: 300 })
    for (const authTime of [NOW + 1, NOW + 10, NOW * 1000, 1e300]) {
      const r = auth.authenticate(`Bearer ${access({ auth_time: authTime })}`)
      assert.deepEqual([r.errorCode, r.errorStatus], ['insufficient_user_authentication', 401], `auth_time ${authTime}`)
    }
    for (const authTime of [NOW, NOW + 0.999, NOW - 300]) {
      assert.equal(auth.authenticate(`Bearer ${access({ auth_time: authTime })}`).authenticated, true, `auth_time ${authTime}`)
    }
    const lenient = new Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 0, maxAuthAgeSec: 300, clockToleranceSec: 5 })
    assert.equal(lenient.authenticate(`Bearer ${access({ auth_time: NOW + 5.5 })}`).authenticated, true)
    assert.equal(lenient.authenticate(`Bearer ${access({ auth_time: NOW + 6 })}`).errorCode, 'insufficient_user_authentication')
  })
}
