'use strict'

// One rule for lone UTF-16 surrogates, both engines (issue 22): a lone surrogate escape anywhere
// in a token's header or payload JSON is malformed_token, decided before alg and signature (so a
// forged token cannot make shadow mode report a mismatch); a RateLimiter key holding a lone
// surrogate (no UTF-8 form: natively it would read as U+FFFD and share a bucket) is a TypeError.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { rawToken, HS256 } = require('../support/tokens')

const SECRET = 'lone-surrogates-secret-0123456789abcdef'
const ENGINES = [
  ['native', native],
  ['js', js],
]

for (const [name, engine] of ENGINES) {
  test(`${name}: a lone surrogate in a nested key or value is malformed_token, before alg and signature`, () => {
    const auth = new engine.Authenticator({ accessSecret: SECRET, rateLimitMax: 0 })
    const cases = [
      [HS256, '{"sub":{"\\udc00":1},"exp":9999999999}'],
      [HS256, '{"sub":"u","exp":9999999999,"x":{"y":["\\ud800"]}}'],
      [HS256, '{"sub":"u","exp":9999999999,"x":"\\udc00\\ud800"}'],
      [HS256, '{"sub":"u","exp":9999999999,"aud":[1,"\\udbff"]}'],
      ['{"alg":{"\\udc00":1}}', '{"sub":"u","exp":9999999999}'],
      ['{"alg":"none","x":"\\ud800"}', '{"sub":"u","exp":9999999999}'],
      ['{"alg":"HS256","\\udfff":0}', '{"sub":"u","exp":9999999999}'],
    ]
    for (const [header, payload] of cases) {
      for (const secret of [SECRET, 'forged-secret-forged-secret-forged-sec']) {
        const t = rawToken(header, payload, secret)
        assert.equal(auth.authenticate(`Bearer ${t}`).errorCode, 'malformed_token', `${header} ${payload}`)
        assert.equal(auth.verifyAccessToken(t).errorCode, 'malformed_token', `${header} ${payload}`)
      }
    }
    // The same places holding a real pair are read as usual.
    const paired = rawToken('{"alg":"HS256","x":{"\\ud83d\\ude00":1}}', '{"sub":"\\ud83d\\ude00","exp":9999999999,"x":{"\\ud83d\\ude00":["\\ud83d\\ude00"]}}', SECRET)
    assert.equal(auth.authenticate(`Bearer ${paired}`).userId, '\u{1f600}')
  })

  test(`${name}: RateLimiter refuses a key holding a lone surrogate with a TypeError; paired and U+FFFD keys work`, () => {
    const limiter = new engine.RateLimiter({ capacity: 1, refillPerSec: 1e-3 })
    const refused = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'key must be well-formed UTF-16 (a lone surrogate has no UTF-8 form)' }
    for (const key of ['\ud800', 'a\udc00', 'x\udc00\ud800y', '\ud83dA', `${'é'.repeat(300)}\udfff`]) {
      assert.throws(() => limiter.consume(key), refused, JSON.stringify(key))
    }
    assert.equal(limiter.size, 0)
    // Keys that differ only where a lone surrogate would be stay apart: the replacement
    // character and a real pair are ordinary keys.
    assert.equal(limiter.consume('a\ufffd').allowed, true)
    assert.equal(limiter.consume('a\ud83d\ude00').allowed, true)
    assert.equal(limiter.consume('a\ufffd').allowed, false)
    assert.throws(() => limiter.consume('a\ud800'), refused)
    assert.equal(limiter.size, 2)
    // Over the size bound, the RangeError comes first (a lone surrogate counts 3 bytes, as U+FFFD).
    assert.throws(() => limiter.consume(`${'a'.repeat(1022)}\ud800`), { name: 'RangeError' })
    assert.throws(() => limiter.consume(`${'a'.repeat(1021)}\ud800`), refused)
  })
}
