'use strict'

// metrics() (docs/observability.md): after a scripted workload every counter equals what the
// workload did, in both engines, and the histogram holds every call.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { token, SECRET, NOW } = require('../support/tokens')
const CODES = Object.keys(require('../../contract/error-codes.json'))

const OTHER = 'another-secret-of-sufficient-length-0123456789'

/** Runs the script; returns what it did, by outcome. */
function workload(engine) {
  const auth = new engine.Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 3, rateLimitRefill: 0.001, verifiedTokenCacheSize: 16, maxRevocations: 1 })
  auth.setDurationMetrics(true)
  const call = (authorization) => auth.authenticate(authorization)
  for (let i = 0; i < 3; i++) call(undefined) // missing_authorization x3
  call('Basic abc') // invalid_authorization_format
  for (let i = 0; i < 2; i++) call(`Bearer ${token({ sub: 'forged', exp: NOW + 60 }, OTHER)}`) // invalid_signature x2
  call(`Bearer ${token({ sub: 'late', exp: NOW - 60 }, SECRET)}`) // token_expired
  // One identity, five calls: three allowed, two rate_limited; one miss then four hits.
  const good = `Bearer ${token({ sub: 'alice', exp: NOW + 600, jti: 'a-1' }, SECRET)}`
  for (let i = 0; i < 5; i++) call(good)
  // Revoked: a miss (another token), then token_revoked.
  const bob = token({ sub: 'bob', exp: NOW + 600, jti: 'b-1', iat: NOW - 10 }, SECRET)
  auth.revokeToken('b-1', NOW + 600)
  assert.throws(() => auth.revokeToken('b-2', NOW + 600), { code: 'ERR_AUTH_SHIELD_REVOCATION_LIMIT' })
  call(`Bearer ${bob}`)
  return auth.metrics()
}

const failures = Object.fromEntries(CODES.map((c) => [c, 0]))
Object.assign(failures, { missing_authorization: 3, invalid_authorization_format: 1, invalid_signature: 2, token_expired: 1, rate_limited: 2, token_revoked: 1 })

for (const [name, engine] of [['native', native], ['js', js]]) {
  test(`metrics() counts exactly what a scripted workload did (${name} engine)`, () => {
    const m = workload(engine)
    assert.deepStrictEqual(m.authentication, { succeeded: 3, failed: 10, failures })
    assert.deepStrictEqual(m.rateLimit, { allowed: 3, limited: 2, pending: 0 })
    // alice: 1 miss + 4 hits (the rate-limited calls verify too); the forged, expired and bob
    // tokens are misses; requests without a bearer never reach the cache.
    assert.deepStrictEqual(m.verifiedTokenCache, { hits: 4, misses: 5, entries: 2 })
    assert.deepStrictEqual(m.revocations, { held: 1, refusedAtLimit: 1, unavailable: false })
    const { duration } = m
    assert.equal(duration.count, 13)
    assert.equal(duration.buckets.length, duration.boundsSeconds.length + 1)
    assert.equal(duration.buckets.reduce((a, b) => a + b, 0), 13)
    assert.ok(duration.sumSeconds > 0 && duration.sumSeconds < 60)
    assert.deepEqual(duration.boundsSeconds, [...duration.boundsSeconds].sort((a, b) => a - b))
  })
}

test('the snapshot is a fresh plain object each time, and bounded: one counter per code, fixed buckets', () => {
  for (const engine of [native, js]) {
    const auth = new engine.Authenticator({ accessSecret: SECRET })
    const a = auth.metrics()
    for (let i = 0; i < 2000; i++) auth.authenticate(`Bearer x${i}`, `tenant-${i}`, `h${i}.example.com`)
    const b = auth.metrics()
    assert.equal(a.authentication.succeeded, 0)
    assert.deepEqual(Object.keys(b.authentication.failures), CODES)
    assert.equal(b.authentication.failures.malformed_token + b.authentication.failures.invalid_authorization_format, 2000)
    assert.equal(b.duration.buckets.length, a.duration.buckets.length)
    b.authentication.failures.malformed_token = -1
    assert.notEqual(auth.metrics().authentication.failures.malformed_token, -1)
  }
})

test('the duration histogram is off until setDurationMetrics(true), and stops again with false', () => {
  for (const engine of [native, js]) {
    const auth = new engine.Authenticator({ accessSecret: SECRET })
    auth.authenticate(undefined)
    assert.equal(auth.metrics().duration.count, 0)
    auth.setDurationMetrics(true)
    auth.authenticate(undefined)
    auth.setDurationMetrics(false)
    auth.authenticate(undefined)
    const m = auth.metrics()
    assert.equal(m.duration.count, 1)
    assert.equal(m.authentication.failures.missing_authorization, 3)
    assert.throws(() => auth.setDurationMetrics('yes'), { name: 'TypeError', message: 'enabled must be a boolean' })
  }
})

test('authenticators from shared() with equal settings share their counters', () => {
  for (const engine of [native, js]) {
    const config = { accessSecret: SECRET, rateLimitMax: 0, issuer: `metrics-shared-${engine === js}` }
    const a = engine.Authenticator.shared(config)
    const b = engine.Authenticator.shared(config)
    a.authenticate(undefined)
    b.authenticate(undefined)
    assert.equal(a.metrics().authentication.failures.missing_authorization, 2)
  }
})
