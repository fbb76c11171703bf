'use strict'
// HOTP/TOTP against the RFC 4226 / RFC 6238 vectors, secrets and otpauth URIs, and OtpStore.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const vectors = require('../fixtures/hotp_totp.json')
const { hotp, totp, verifyHotp, verifyTotp, generateTotpSecret, totpUri, OtpStore } = require('../..')

const rfcHotp = vectors.hotp_rfc4226

/** The failure fields of an OtpStore#verify result: a message and a stable code. */
const OTP_MESSAGES = {
  not_found: 'No code was issued for this key, or it was already used',
  expired: 'The code has expired',
  mismatch: 'Wrong code',
  too_many_attempts: 'Too many wrong codes: request a new one',
}
const failed = (errorCode) => ({ error: OTP_MESSAGES[errorCode], errorCode })
const rfcTotp = vectors.totp_rfc6238

test('HOTP reproduces RFC 4226 Appendix D (base32 and raw secrets)', () => {
  const raw = Buffer.from(rfcHotp.secret_hex, 'hex')
  for (const v of rfcHotp.vectors) {
    assert.equal(hotp(rfcHotp.secret_base32, v.counter), v.hotp_6)
    assert.equal(hotp(raw, v.counter, { digits: 8 }), v.hotp_8_derived)
    assert.equal(hotp(raw, v.counter, { digits: 7 }), v.hotp_7_derived)
  }
})

test('TOTP reproduces RFC 6238 Appendix B for SHA1, SHA256 and SHA512', () => {
  assert.ok(rfcTotp.vectors.length >= 18)
  for (const v of rfcTotp.vectors) {
    const seed = rfcTotp.seeds[v.mode]
    const opts = { algorithm: v.mode, digits: 8, time: v.unix_time }
    assert.equal(totp(seed.base32, opts), v.totp_8, `${v.mode} @ ${v.unix_time}`)
    assert.equal(totp(Buffer.from(seed.hex, 'hex'), { ...opts, digits: 6 }), v.totp_6_derived)
    assert.deepEqual(verifyTotp(seed.base32, v.totp_8, { ...opts, window: 0 }), { valid: true, delta: 0 })
  }
})

test('verifyTotp accepts neighbouring steps inside the window only', () => {
  const secret = rfcTotp.seeds.SHA1.base32
  const t = 1111111109
  const previous = totp(secret, { time: t - 30 })
  assert.deepEqual(verifyTotp(secret, previous, { time: t }), { valid: true, delta: -1 })
  assert.equal(verifyTotp(secret, previous, { time: t, window: 0 }).valid, false)
  const twoAhead = totp(secret, { time: t + 60 })
  assert.equal(verifyTotp(secret, twoAhead, { time: t }).valid, false)
  assert.deepEqual(verifyTotp(secret, twoAhead, { time: t, window: 2 }), { valid: true, delta: 2 })
  for (const junk of ['', '12345', '1234567', 'abcdef', ' 08180', '081804 ']) {
    assert.deepEqual(verifyTotp(secret, junk, { time: t }), { valid: false, delta: null }, junk)
  }
})

test('verifyTotp works against the real clock by default', () => {
  const secret = generateTotpSecret()
  assert.equal(verifyTotp(secret, totp(secret)).valid, true)
})

test('verifyHotp looks ahead by the window', () => {
  const s = rfcHotp.secret_base32
  assert.deepEqual(verifyHotp(s, '969429', 3), { valid: true, delta: 0 })
  assert.equal(verifyHotp(s, '969429', 1).valid, false)
  assert.deepEqual(verifyHotp(s, '969429', 1, { window: 2 }), { valid: true, delta: 2 })
})

test('OTP helpers refuse bad input with typed errors', () => {
  const s = rfcHotp.secret_base32
  assert.throws(() => hotp('GEZDGNBV', 0), (e) => e instanceof RangeError && /secret/.test(e.message))
  assert.throws(() => hotp('not base32!!', 0), (e) => e instanceof TypeError && /secret/.test(e.message))
  assert.throws(() => hotp(s, -1), RangeError)
  assert.throws(() => hotp(s, 1.5), RangeError)
  assert.throws(() => hotp(s, '1'), TypeError)
  assert.throws(() => hotp(s, 0, { digits: 9 }), RangeError)
  assert.throws(() => hotp(s, 0, { algorithm: 'MD5' }), (e) => e instanceof TypeError && /algorithm/.test(e.message))
  assert.throws(() => totp(s, { period: 0 }), RangeError)
  assert.throws(() => totp(s, { time: -1 }), RangeError)
  assert.throws(() => totp(s, { time: Infinity }), RangeError)
  assert.equal(totp(s, { time: 59.9, digits: 8 }), '94287082')
  assert.throws(() => verifyTotp(s, '123456', { window: 11 }), RangeError)
  assert.throws(() => totp(42), TypeError)
})

test('verifyTotp takes a code sent as a JSON number, zero-padded to the digits', () => {
  const seed = rfcTotp.seeds.SHA1.base32
  // RFC 6238 Appendix B: SHA1 at T=1111111109 is 07081804 (8 digits), 081804 with 6.
  const t = 1111111109
  assert.equal(totp(seed, { time: t }), '081804')
  assert.deepEqual(verifyTotp(seed, 81804, { time: t }), { valid: true, delta: 0 })
  assert.deepEqual(verifyTotp(seed, JSON.parse('{"code":81804}').code, { time: t }), { valid: true, delta: 0 })
  assert.deepEqual(verifyTotp(seed, 7081804, { time: t, digits: 8 }), { valid: true, delta: 0 })
  const code = Number(totp(seed, { time: t - 30 }))
  assert.deepEqual(verifyTotp(seed, code, { time: t }), { valid: true, delta: -1 })
  assert.deepEqual(verifyHotp(rfcHotp.secret_base32, 969429, 3), { valid: true, delta: 0 })
})

test('verifyTotp and verifyHotp treat any malformed code as invalid, never a throw (user input)', () => {
  const seed = rfcTotp.seeds.SHA1.base32
  const t = 1111111109
  const junk = [81804.5, -81804, 1e6, 1081804, NaN, Infinity, undefined, null, true, {}, [81804], Buffer.from('081804'), 'x'.repeat(1 << 20), 10n]
  for (const code of junk) {
    assert.deepEqual(verifyTotp(seed, code, { time: t }), { valid: false, delta: null }, String(code).slice(0, 20))
    assert.deepEqual(verifyHotp(rfcHotp.secret_base32, code, 0), { valid: false, delta: null }, String(code).slice(0, 20))
  }
  assert.deepEqual(verifyTotp(seed, undefined), { valid: false, delta: null })
  // The application's own mistakes still throw: a bad secret or options.
  assert.throws(() => verifyTotp('GEZDGNBV', 81804), (e) => e instanceof RangeError && e.code === 'ERR_OUT_OF_RANGE')
  assert.throws(() => verifyTotp(seed, '081804', { digits: 9 }), (e) => e instanceof RangeError && e.code === 'ERR_OUT_OF_RANGE')
  assert.throws(() => verifyTotp(seed, '081804', { algorithm: 'MD5' }), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_VALUE')
})

test('every error thrown by the OTP helpers carries an ERR_ code', () => {
  const s = rfcHotp.secret_base32
  const calls = [
    () => hotp('GEZDGNBV', 0),
    () => hotp('not base32!!', 0),
    () => hotp(s, -1),
    () => hotp(s, '1'),
    () => hotp(s, 0, 'opts'),
    () => totp(42),
    () => totp(s, { period: 'x' }),
    () => generateTotpSecret('20'),
    () => totpUri(),
    () => totpUri({ secret: s }),
    () => new OtpStore({ digits: 3 }),
    () => new OtpStore().issue(5),
  ]
  for (const call of calls) {
    assert.throws(call, (e) => e instanceof Error && /^ERR_[A-Z_]+$/.test(e.code), call.toString())
  }
})

test('generateTotpSecret gives base32 of the requested size', () => {
  const s = generateTotpSecret()
  assert.match(s, /^[A-Z2-7]{32}$/)
  assert.notEqual(s, generateTotpSecret())
  assert.match(generateTotpSecret(32), /^[A-Z2-7]{52}$/)
  assert.throws(() => generateTotpSecret(8), RangeError)
})

test('totpUri builds a percent-encoded otpauth URI', () => {
  const uri = totpUri({ secret: 'gezdgnbvgy3tqojqgezdgnbvgy3tqojq', account: 'alice+1@example.com', issuer: 'ACME & Co' })
  assert.equal(uri, 'otpauth://totp/ACME%20%26%20Co:alice%2B1%40example.com?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=ACME%20%26%20Co&algorithm=SHA1&digits=6&period=30')
  const u = new URL(uri)
  assert.equal(u.searchParams.get('issuer'), 'ACME & Co')
  assert.equal(decodeURIComponent(u.pathname.split(':')[1]), 'alice+1@example.com')
  assert.throws(() => totpUri({ secret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', account: 'a:b' }), TypeError)
  assert.throws(() => totpUri({ secret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ', account: '' }), RangeError)
  assert.throws(() => totpUri(), TypeError)
})

test('OtpStore codes are numeric, single use and report attempts', () => {
  const store = new OtpStore()
  const code = store.issue('user:1')
  assert.match(code, /^\d{6}$/)
  assert.deepEqual(store.verify('user:1', code), { valid: true, attemptsRemaining: 0 })
  assert.deepEqual(store.verify('user:1', code), { valid: false, attemptsRemaining: 0, ...failed('not_found') })
  assert.equal(new OtpStore({ digits: 8 }).issue('k').length, 8)
})

test('OtpStore burns a code after maxAttempts wrong guesses', () => {
  const store = new OtpStore({ maxAttempts: 3 })
  const code = store.issue('k')
  const wrong = code === '000000' ? '000001' : '000000'
  assert.deepEqual(store.verify('k', wrong), { valid: false, attemptsRemaining: 2, ...failed('mismatch') })
  assert.deepEqual(store.verify('k', 'abc'), { valid: false, attemptsRemaining: 1, ...failed('mismatch') })
  assert.deepEqual(store.verify('k', wrong), { valid: false, attemptsRemaining: 0, ...failed('mismatch') })
  assert.deepEqual(store.verify('k', code), { valid: false, attemptsRemaining: 0, ...failed('too_many_attempts') })
  // A new code for the key starts over.
  const again = store.issue('k')
  assert.equal(store.verify('k', again).valid, true)
})

test('OtpStore codes expire after ttlSec', async () => {
  const store = new OtpStore({ ttlSec: 1 })
  const code = store.issue('k')
  await new Promise((r) => setTimeout(r, 1100))
  assert.deepEqual(store.verify('k', code), { valid: false, attemptsRemaining: 0, ...failed('expired') })
})

test('OtpStore memory is bounded by maxEntries, evicting the oldest', () => {
  const store = new OtpStore({ maxEntries: 1000 })
  const first = store.issue('first')
  for (let i = 0; i < 20000; i++) store.issue(`user${i}`)
  assert.ok(store.size <= 1000)
  assert.equal(store.verify('first', first).errorCode, 'not_found')
  assert.equal(store.delete('user19999'), true)
  assert.equal(store.delete('user19999'), false)
})

test('OtpStore digits are uniform (no modulo bias)', () => {
  const store = new OtpStore({ digits: 10 })
  const counts = new Array(10).fill(0)
  for (let i = 0; i < 5000; i++) for (const ch of store.issue(`k${i % 50}`)) counts[ch.charCodeAt(0) - 48]++
  // 50000 digits, 5000 expected each; chi-square with 9 d.o.f. stays far below 40 unless biased.
  const chi = counts.reduce((acc, n) => acc + (n - 5000) ** 2 / 5000, 0)
  assert.ok(chi < 40, `chi-square ${chi} for ${counts}`)
})

test('OtpStore validates its options and arguments', () => {
  assert.throws(() => new OtpStore({ digits: 3 }), RangeError)
  assert.throws(() => new OtpStore({ ttlSec: 0 }), RangeError)
  assert.throws(() => new OtpStore({ maxAttempts: 0 }), RangeError)
  assert.throws(() => new OtpStore({ maxEntries: -1 }), RangeError)
  assert.throws(() => new OtpStore('x'), TypeError)
  const store = new OtpStore()
  assert.throws(() => store.issue(''), TypeError)
  assert.throws(() => store.issue(5), (e) => e instanceof TypeError && /key/.test(e.message))
  assert.throws(() => store.issue('k'.repeat(257)), RangeError)
})

test('OtpStore.verify takes a numeric code (zero-padded) and counts other values as wrong codes', () => {
  const store = new OtpStore({ maxAttempts: 10 })
  let code = store.issue('k')
  assert.deepEqual(store.verify('k', Number(code)), { valid: true, attemptsRemaining: 0 })
  // A code with a leading zero arrives from JSON without it.
  do code = store.issue('z')
  while (!code.startsWith('0'))
  assert.equal(store.verify('z', Number(code)).valid, true)
  store.issue('j')
  let left = 10
  for (const junk of [undefined, null, {}, true, 1.5, -1, 1e7, NaN]) {
    assert.deepEqual(store.verify('j', junk), { valid: false, attemptsRemaining: --left, ...failed('mismatch') }, String(junk))
  }
})
