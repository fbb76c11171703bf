'use strict'

// Bounded memory under floods of distinct keys: the native rate limiter (a million distinct
// users, each with its own signed token) and the OTP store stay within their configured bound
// and within a documented RSS budget (docs/security-model.md), while a key under its own
// steady traffic keeps its state.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { createHmac } = require('node:crypto')
const native = require('..')

const NOW = 1_700_000_000
const SECRET = 'flood-access-secret-0123456789abcdefgh'
const MAX_KEYS = 1000
const USERS = 1_000_000
// RSS may grow by at most this much across the flood (GC'd JS garbage included). A limiter
// that kept every key would hold a million buckets: well over 100 MB.
const RSS_BUDGET_BYTES = 64 * 1024 * 1024

const HEADER_B64 = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')
const EXP = NOW + 3600

/** A valid Bearer header for user `u` (hand-signed: cheaper than the full signer a million times). */
function bearerFor(sub) {
  const input = `${HEADER_B64}.${Buffer.from(`{"sub":"${sub}","exp":${EXP}}`).toString('base64url')}`
  return `Bearer ${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`
}

function settle() {
  if (global.gc) global.gc()
  return process.memoryUsage().rss
}

test('a million distinct users keep the limiter at its key bound and RSS within budget', (t) => {
  // A refill fast enough that one request's debt is repaid within a millisecond: a million
  // slowly-repaid debts would not fit the bounded debt sketch, and the limiter (which never
  // forgets a debt) would rightly start refusing new users (docs/rate-limiting.md).
  const auth = new native.Authenticator({
    accessSecret: SECRET,
    clockTimestamp: NOW,
    rateLimitMax: 5,
    rateLimitRefill: 1000,
    rateLimitMaxKeys: MAX_KEYS,
  })
  // Warm up allocators and the limiter's table at its working size before measuring.
  for (let i = 0; i < 5 * MAX_KEYS; i++) auth.authenticate(bearerFor(`warm${i}`))
  const before = settle()
  let maxBuckets = 0
  for (let i = 0; i < USERS; i++) {
    const r = auth.authenticate(bearerFor(`user${i}`))
    if (!r.authenticated) assert.fail(`user${i}: ${r.errorCode}`)
    if ((i & 1023) === 0) maxBuckets = Math.max(maxBuckets, auth.rateLimitBuckets)
  }
  maxBuckets = Math.max(maxBuckets, auth.rateLimitBuckets)
  const after = settle()
  t.diagnostic(`${USERS} users: at most ${maxBuckets} buckets, RSS ${((after - before) / 1048576).toFixed(1)} MiB growth`)
  assert.ok(maxBuckets <= MAX_KEYS + 1, `${maxBuckets} buckets > ${MAX_KEYS + 1}`)
  assert.ok(auth.rateLimitBuckets >= 1)
  assert.ok(after - before < RSS_BUDGET_BYTES, `RSS grew ${((after - before) / 1048576).toFixed(1)} MiB`)
})

test('an actively used bucket is not evicted by a flood of other users', () => {
  const auth = new native.Authenticator({
    accessSecret: SECRET,
    clockTimestamp: NOW,
    rateLimitMax: 3,
    rateLimitRefill: 0.001,
    rateLimitMaxKeys: MAX_KEYS,
  })
  const busy = bearerFor('busy')
  for (let i = 0; i < 3; i++) assert.equal(auth.authenticate(busy).authenticated, true)
  assert.equal(auth.authenticate(busy).errorCode, 'rate_limited')
  // The busy user keeps asking (every 10 requests) while 100,000 others flood in: its empty
  // bucket must stay empty, not be forgotten and handed back full.
  let leaked = 0
  for (let i = 0; i < 100_000; i++) {
    auth.authenticate(bearerFor(`other${i}`))
    if (i % 10 === 0 && auth.authenticate(busy).authenticated) leaked++
  }
  assert.equal(leaked, 0, `the busy user got ${leaked} extra requests through`)
})

test('idle buckets are forgotten before a recently used one', () => {
  // 100 users each take a token and go quiet; then one user drains its bucket and new users
  // arrive. The sweeps must forget the quiet users (least recently used), not the busy one.
  const auth = new native.Authenticator({
    accessSecret: SECRET,
    clockTimestamp: NOW,
    rateLimitMax: 3,
    rateLimitRefill: 0.001,
    rateLimitMaxKeys: 100,
  })
  for (let i = 0; i < 100; i++) auth.authenticate(bearerFor(`idle${i}`))
  const busy = bearerFor('busy')
  for (let i = 0; i < 3; i++) auth.authenticate(busy)
  assert.equal(auth.authenticate(busy).errorCode, 'rate_limited')
  for (let i = 0; i < 500; i++) {
    auth.authenticate(bearerFor(`new${i}`))
    if (i % 50 === 0) assert.equal(auth.authenticate(busy).errorCode, 'rate_limited', `the busy bucket was forgotten after ${i} new users`)
    assert.ok(auth.rateLimitBuckets <= 101)
  }
  // A quiet user from the first wave was forgotten from the table, but not its spent token:
  // it comes back with what it had left (issue 12), from the debt sketch.
  assert.equal(auth.authenticate(bearerFor('idle0')).rateLimitRemaining, 1)
})

test('the OTP store holds at most maxEntries codes under a flood of distinct keys', (t) => {
  const store = new native.OtpStore({ maxEntries: 1000 })
  const before = settle()
  let maxSize = 0
  for (let i = 0; i < 300_000; i++) {
    store.issue(`user${i}@example.com`)
    if ((i & 1023) === 0) maxSize = Math.max(maxSize, store.size)
  }
  maxSize = Math.max(maxSize, store.size)
  const after = settle()
  t.diagnostic(`300000 keys: at most ${maxSize} codes, RSS ${((after - before) / 1048576).toFixed(1)} MiB growth`)
  assert.ok(maxSize <= 1000, `${maxSize} codes held`)
  assert.ok(after - before < RSS_BUDGET_BYTES, `RSS grew ${((after - before) / 1048576).toFixed(1)} MiB`)
  // The newest codes are the ones kept: a code issued just now still verifies.
  const code = store.issue('last@example.com')
  assert.equal(store.verify('last@example.com', code).valid, true)
})
