'use strict'

// Bounded memory under floods of distinct keys: the native rate limiter (a million distinct
// users, each with its own signed token) and the OTP store stay within their configured bound
// and within a documented RSS budget (docs/security-model.md), while a key under its own
// steady traffic keeps its state.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { execFile } = require('node:child_process')
const path = require('node:path')
const { promisify } = require('node:util')
const native = require('../..')
const { NOW, SECRET, bearerFor } = require('../support/flood-memory')

const MAX_KEYS = 1000
const USERS = 1_000_000
const MiB = 1024 * 1024
// Native memory (RSS growth after a full GC, young generation held at one size) may grow by
// at most this much across the flood. A limiter that kept every key holds a million buckets:
// the control below measures that at ~100 MiB or more.
const RSS_BUDGET_BYTES = 64 * MiB
// What the JS heap may keep after a GC: the flood's strings and results are all garbage.
const HEAP_BUDGET_BYTES = 4 * MiB

/**
 * Runs a scenario of support/flood-memory.js in a fresh process with a real GC and a fixed-size
 * young generation (see that file for why), and returns its measurements.
 */
async function measure(...args) {
  const probe = path.join(__dirname, '..', 'support', 'flood-memory.js')
  const flags = ['--expose-gc', '--max-semi-space-size=1']
  const { stdout } = await promisify(execFile)(process.execPath, [...flags, probe, ...args.map(String)], {
    maxBuffer: MiB,
  })
  return JSON.parse(stdout)
}

const mib = (bytes) => `${(bytes / MiB).toFixed(1)} MiB`

test('a million distinct users keep the limiter at its key bound and RSS within budget', async (t) => {
  // The control runs beside it: the same flood against a bound no flood reaches, so the budget
  // is shown to catch a limiter that keeps every key (the test can fail).
  const [bounded, unbounded] = await Promise.all([measure('limiter', USERS, MAX_KEYS), measure('limiter', USERS, 2 * USERS)])
  t.diagnostic(
    `${USERS} users: at most ${bounded.maxBuckets} buckets, RSS +${mib(bounded.rss)}, JS heap +${mib(bounded.heapUsed)}; ` +
      `with every key kept: ${unbounded.buckets} buckets, RSS +${mib(unbounded.rss)}`,
  )
  assert.equal(bounded.refused, null)
  assert.ok(bounded.maxBuckets <= MAX_KEYS + 1, `${bounded.maxBuckets} buckets > ${MAX_KEYS + 1}`)
  assert.ok(bounded.buckets >= 1)
  assert.ok(bounded.rss < RSS_BUDGET_BYTES, `RSS grew ${mib(bounded.rss)}`)
  assert.ok(bounded.heapUsed < HEAP_BUDGET_BYTES, `the JS heap kept ${mib(bounded.heapUsed)}`)
  assert.ok(unbounded.buckets > USERS, `the control kept only ${unbounded.buckets} buckets`)
  assert.ok(unbounded.rss > RSS_BUDGET_BYTES, `a limiter keeping ${unbounded.buckets} buckets grew RSS by only ${mib(unbounded.rss)}: the budget no longer tells`)
})

test('an actively used bucket is not evicted by a flood of other users', () => {
  const auth = new native.Authenticator({
    accessSecret: SECRET,
    clockTimestamp: NOW,
    rateLimitMax: 3,
    rateLimitRefillPerSec: 0.001,
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
    rateLimitRefillPerSec: 0.001,
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

test('the OTP store holds at most maxEntries codes under a flood of distinct keys', async (t) => {
  const result = await measure('otp', 300_000, 1000)
  t.diagnostic(`300000 keys: at most ${result.maxSize} codes, RSS +${mib(result.rss)}, JS heap +${mib(result.heapUsed)}`)
  assert.ok(result.maxSize <= 1000, `${result.maxSize} codes held`)
  assert.ok(result.rss < RSS_BUDGET_BYTES, `RSS grew ${mib(result.rss)}`)
  assert.ok(result.heapUsed < HEAP_BUDGET_BYTES, `the JS heap kept ${mib(result.heapUsed)}`)
  // The newest codes are the ones kept: a code issued just now still verifies.
  assert.equal(result.lastVerifies, true)
})
