'use strict'

// Memory probe for __test__/core/flood.test.js, run in its own process as
//   node --expose-gc --max-semi-space-size=1 flood-memory.js <scenario> [maxKeys]
// and prints one JSON line. The flood tests share its token maker.
//
// Why a child process with these flags: RSS is meant to show what the native state (limiter
// buckets, OTP codes) holds, but a flood also makes a million short-lived JS strings and result
// objects. Without a real GC the test measured that garbage, and V8 grows its young generation
// with the allocation rate: on Node 24 (V8 13.6) `heapTotal` alone grew by ~64 MiB across the
// flood with heapUsed back at zero after a GC, which is what failed the 64 MiB budget there.
// `--expose-gc` lets the probe collect before each reading, and `--max-semi-space-size=1` (MiB)
// keeps the young generation at one size, so the remaining RSS growth is the native memory plus
// a few MiB of allocator and V8 bookkeeping. The JS heap is reported separately.

const { createHmac } = require('node:crypto')
const native = require('../..')

const NOW = 1_700_000_000
const SECRET = 'flood-access-secret-0123456789abcdefgh'
const HEADER_B64 = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')
const EXP = NOW + 3600

/** A valid Bearer header for `sub` (hand-signed: cheaper than the full signer a million times). */
function bearerFor(sub) {
  const input = `${HEADER_B64}.${Buffer.from(`{"sub":"${sub}","exp":${EXP}}`).toString('base64url')}`
  return `Bearer ${input}.${createHmac('sha256', SECRET).update(input).digest('base64url')}`
}

function settle() {
  if (typeof global.gc !== 'function') throw new Error('run with --expose-gc')
  global.gc()
  global.gc()
  const { rss, heapUsed, heapTotal } = process.memoryUsage()
  return { rss, heapUsed, heapTotal }
}

const growth = (before, after) => Object.fromEntries(Object.keys(before).map((k) => [k, after[k] - before[k]]))

/** `users` distinct users, one request each, against a limiter bounded at `maxKeys` buckets. */
function limiter(users, maxKeys) {
  // A refill fast enough that one request's debt is repaid within a millisecond: a million
  // slowly-repaid debts would not fit the bounded debt sketch, and the limiter (which never
  // forgets a debt) would rightly start refusing new users (docs/rate-limiting.md).
  const auth = new native.Authenticator({
    accessSecret: SECRET,
    clockTimestamp: NOW,
    rateLimitMax: 5,
    rateLimitRefillPerSec: 1000,
    rateLimitMaxKeys: maxKeys,
  })
  // Warm up allocators and the limiter's table at its working size before measuring.
  for (let i = 0; i < Math.min(5 * maxKeys, 5000); i++) auth.authenticate(bearerFor(`warm${i}`))
  const before = settle()
  let maxBuckets = 0
  let refused = null
  for (let i = 0; i < users; i++) {
    const r = auth.authenticate(bearerFor(`user${i}`))
    if (!r.authenticated && refused === null) refused = `user${i}: ${r.errorCode}`
    if ((i & 1023) === 0) maxBuckets = Math.max(maxBuckets, auth.rateLimitBuckets)
  }
  maxBuckets = Math.max(maxBuckets, auth.rateLimitBuckets)
  const after = settle()
  return { ...growth(before, after), maxBuckets, buckets: auth.rateLimitBuckets, refused }
}

/** `keys` distinct OTP keys against a store bounded at `maxEntries` codes. */
function otp(keys, maxEntries) {
  const store = new native.OtpStore({ maxEntries })
  const before = settle()
  let maxSize = 0
  for (let i = 0; i < keys; i++) {
    store.issue(`user${i}@example.com`)
    if ((i & 1023) === 0) maxSize = Math.max(maxSize, store.size)
  }
  maxSize = Math.max(maxSize, store.size)
  const after = settle()
  // The newest codes are the ones kept: a code issued just now still verifies.
  const code = store.issue('last@example.com')
  return { ...growth(before, after), maxSize, lastVerifies: store.verify('last@example.com', code).valid }
}

module.exports = { NOW, SECRET, bearerFor }

if (require.main === module) {
  const [scenario, count, bound] = process.argv.slice(2)
  const scenarios = { limiter, otp }
  if (!scenarios[scenario]) throw new Error(`unknown scenario ${scenario}`)
  console.log(JSON.stringify(scenarios[scenario](Number(count), Number(bound))))
}
