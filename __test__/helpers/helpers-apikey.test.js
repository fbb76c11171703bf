'use strict'
// API keys (format, checksum, HMAC storage, constant-time verify) and timingSafeEqual.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const { generateApiKey, verifyApiKey, parseApiKey, hashApiKey, timingSafeEqual } = require('../..')

const SECRET = 'a-server-secret-of-32-characters'
const MALFORMED = { valid: false, error: 'Malformed API key', errorCode: 'malformed' }
const BAD_CHECKSUM = 'API key checksum mismatch'

test('generateApiKey returns key, HMAC-SHA256 hash, prefix and lastFour', () => {
  const k = generateApiKey({ prefix: 'auth1_pk', secret: SECRET })
  assert.match(k.key, /^auth1_pk_[0-9A-Za-z]{38}$/)
  assert.equal(k.prefix, 'auth1_pk')
  assert.equal(k.lastFour, k.key.slice(-4))
  assert.equal(k.hash, crypto.createHmac('sha256', SECRET).update(k.key).digest('hex'))
  assert.notEqual(k.key, generateApiKey({ secret: SECRET }).key)
  assert.match(generateApiKey({ secret: Buffer.alloc(16, 7) }).key, /^auth1_pk_/)
})

test('verifyApiKey accepts the key and nothing else', () => {
  const k = generateApiKey({ prefix: 'acme_live', secret: SECRET })
  assert.equal(verifyApiKey(k.hash, k.key, { secret: SECRET }), true)
  assert.equal(verifyApiKey(k.hash, k.key, { secret: Buffer.from(SECRET) }), true)
  assert.equal(verifyApiKey(k.hash, k.key, { secret: 'another-secret-of-enough-length' }), false)
  const other = generateApiKey({ prefix: 'acme_live', secret: SECRET })
  assert.equal(verifyApiKey(k.hash, other.key, { secret: SECRET }), false)
  assert.equal(verifyApiKey(k.hash, 'garbage', { secret: SECRET }), false)
  assert.equal(verifyApiKey(k.hash, k.key.slice(0, -1) + (k.key.endsWith('a') ? 'b' : 'a'), { secret: SECRET }), false)
})

test('parseApiKey checks format and checksum offline', () => {
  const { key } = generateApiKey({ prefix: 'auth1_pk', secret: SECRET })
  assert.deepEqual(parseApiKey(key), { valid: true, prefix: 'auth1_pk' })
  // Every single-character typo in the random part is caught by the checksum (or the format).
  let caught = 0
  for (let i = 9; i < key.length; i++) {
    const c = key[i] === 'x' ? 'y' : 'x'
    const typo = key.slice(0, i) + c + key.slice(i + 1)
    if (!parseApiKey(typo).valid) caught++
  }
  assert.equal(caught, key.length - 9)
  assert.deepEqual(parseApiKey(key.slice(0, -1) + (key.endsWith('0') ? '1' : '0')), { valid: false, error: BAD_CHECKSUM, errorCode: 'bad_checksum' })
  for (const bad of ['', 'auth1_pk_', 'auth1_pk_short', 'Auth1_pk_' + key.slice(9), key + '_', key.replace('auth1_pk_', 'auth1_pk-'), 'x'.repeat(10000)]) {
    assert.deepEqual(parseApiKey(bad), MALFORMED, bad.slice(0, 30))
  }
})

test('parseApiKey gives a result, never a throw, for any presented value (user input)', () => {
  for (const bad of [12, undefined, null, {}, ['auth1_pk_x'], true, 'k'.repeat(1 << 20)]) {
    assert.deepEqual(parseApiKey(bad), MALFORMED, String(bad).slice(0, 30))
  }
  assert.deepEqual(parseApiKey(), MALFORMED)
})

test('verifyApiKey is false, not a throw, for a missing or non-string presented key', () => {
  const k = generateApiKey({ secret: SECRET })
  for (const bad of [undefined, null, 42, {}, Buffer.from(k.key), 'k'.repeat(1 << 20)]) {
    assert.equal(verifyApiKey(k.hash, bad, { secret: SECRET }), false, typeof bad)
  }
})

test('hashApiKey returns the stored hash, so the row can be found by it', () => {
  const rows = new Map()
  for (let i = 0; i < 5; i++) {
    const k = generateApiKey({ prefix: 'acme_live', secret: SECRET })
    rows.set(k.hash, { id: i, key: k.key })
  }
  for (const [hash, row] of rows) {
    assert.equal(hashApiKey(row.key, { secret: SECRET }), hash)
    assert.equal(rows.get(hashApiKey(row.key, { secret: Buffer.from(SECRET) })).id, row.id)
    assert.equal(hashApiKey(row.key, { secret: SECRET }), crypto.createHmac('sha256', SECRET).update(row.key).digest('hex'))
  }
  const { key, hash } = generateApiKey({ secret: SECRET })
  assert.notEqual(hashApiKey(key, { secret: 'another-secret-of-enough-length' }), hash)
})

test('hashApiKey is null for malformed or mistyped keys and throws only for a short secret', () => {
  const { key } = generateApiKey({ secret: SECRET })
  const typo = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0')
  for (const bad of [typo, 'garbage', '', undefined, null, 7, {}, 'x'.repeat(100000)]) {
    assert.equal(hashApiKey(bad, { secret: SECRET }), null, String(bad).slice(0, 30))
  }
  assert.throws(() => hashApiKey(key, { secret: 'short' }), (e) => e instanceof RangeError && e.code === 'ERR_OUT_OF_RANGE' && /secret/.test(e.message))
  assert.throws(() => hashApiKey(key), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_TYPE')
})

test('bad secrets, prefixes and stored hashes throw typed errors', () => {
  assert.throws(() => generateApiKey({ secret: 'short' }), (e) => e instanceof RangeError && /secret/.test(e.message))
  assert.throws(() => generateApiKey({}), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_TYPE' && /secret/.test(e.message))
  assert.throws(() => generateApiKey({ prefix: 'auth1_pk' }), (e) => e instanceof TypeError && /options\.secret/.test(e.message))
  assert.throws(() => generateApiKey({ secret: 42 }), (e) => e instanceof TypeError && /options\.secret/.test(e.message))
  assert.throws(() => generateApiKey({ secret: SECRET, prefix: 7 }), (e) => e instanceof TypeError && /options\.prefix/.test(e.message))
  assert.throws(() => generateApiKey(), TypeError)
  assert.throws(() => generateApiKey('secret'), TypeError)
  for (const prefix of ['', 'UPPER', '1abc', 'a__b', 'has space', 'a'.repeat(33), 'emoji😀']) {
    assert.throws(() => generateApiKey({ prefix, secret: SECRET }), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_VALUE' && /prefix/.test(e.message), prefix)
  }
  const k = generateApiKey({ secret: SECRET })
  assert.throws(() => verifyApiKey('nothex', k.key, { secret: SECRET }), (e) => e instanceof TypeError && /storedHash/.test(e.message))
  assert.throws(() => verifyApiKey(k.hash, k.key, { secret: 'short' }), RangeError)
  assert.throws(() => verifyApiKey(k.hash, k.key), TypeError)
})

test('the secret of verifyApiKey and hashApiKey is the option secret: a positional secret throws, naming the options form', () => {
  const k = generateApiKey({ secret: SECRET })
  const named = (call) => (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_TYPE' && e.message.includes(call)
  // verifyApiKey(key, storedHash, secret), the positional form: the stored hash is first, the secret an option.
  assert.throws(() => verifyApiKey(k.key, k.hash, SECRET), (e) => e instanceof TypeError && /storedHash/.test(e.message))
  assert.throws(() => verifyApiKey(k.hash, k.key, SECRET), named('verifyApiKey(storedHash, key, { secret })'))
  assert.throws(() => verifyApiKey(k.hash, k.key, Buffer.from(SECRET)), named('verifyApiKey(storedHash, key, { secret })'))
  assert.throws(() => hashApiKey(k.key, SECRET), named('hashApiKey(key, { secret })'))
  assert.throws(() => verifyApiKey(k.hash, k.key, {}), (e) => e instanceof TypeError && /options\.secret/.test(e.message))
  assert.throws(() => hashApiKey(k.key, { secret: 'short' }), (e) => e instanceof RangeError && /options\.secret/.test(e.message))
})

test('timingSafeEqual compares strings and buffers of any length', () => {
  assert.equal(timingSafeEqual('secret', 'secret'), true)
  assert.equal(timingSafeEqual('secret', 'secreT'), false)
  assert.equal(timingSafeEqual('secret', 'secret-longer'), false)
  assert.equal(timingSafeEqual('', ''), true)
  assert.equal(timingSafeEqual('', 'x'), false)
  assert.equal(timingSafeEqual(Buffer.from([1, 2, 3]), Buffer.from([1, 2, 3])), true)
  assert.equal(timingSafeEqual(Buffer.from([1, 2, 3]), new Uint8Array([1, 2, 4])), false)
  assert.equal(timingSafeEqual('abc', Buffer.from('abc')), true)
  assert.equal(timingSafeEqual('é', Buffer.from('é')), true)
  const big = crypto.randomBytes(1 << 20)
  assert.equal(timingSafeEqual(big, Buffer.from(big)), true)
  assert.throws(() => timingSafeEqual('a', 1), (e) => e instanceof TypeError && /\bb\b/.test(e.message))
  assert.throws(() => timingSafeEqual(null, 'a'), (e) => e instanceof TypeError && /\ba\b/.test(e.message))
})
