'use strict'

// The lease table behind a shared limit (src/rate_limit/lease.rs, js/rate-limit/lease.js), driven
// through the store-facing Authenticator methods with no Redis: what a request sees before,
// during and after a lease, the refusal as a local block, strict mode, the bad-argument errors,
// and the memory bound under a flood of identities. Both engines.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { token } = require('../support/tokens')
const { plumbing } = require('../support/store-seam')

const SECRET = 'shared-limit-test-secret-0123456789abcd'
const NOW = Math.floor(Date.now() / 1000)
const bearer = (sub, extra = {}) => `Bearer ${token({ sub, exp: NOW + 600, ...extra }, SECRET)}`

for (const [engine, { Authenticator }] of [
  ['native', native],
  ['js', js],
]) {
  describe(`shared limit leases (${engine} engine)`, () => {
    const make = (config = {}) => new Authenticator({ accessSecret: SECRET, rateLimitMax: 100, rateLimitRefillPerSec: 10, ...config })

    it('answers rate_limit_pending (503) for an identity without a lease and queues it once', () => {
      const a = make()
      plumbing(a).enableSharedLimit(10, false, 1000)
      const first = a.authenticate(bearer('u1', { tenant_id: 'acme' }))
      assert.equal(first.authenticated, false)
      assert.equal(first.errorCode, 'rate_limit_pending')
      assert.equal(first.errorStatus, 503)
      assert.equal(first.rateLimitRemaining, undefined)
      assert.equal(first.rateLimitLimit, 100)
      assert.equal(a.authenticate(bearer('u1', { tenant_id: 'acme' })).errorCode, 'rate_limit_pending')
      // Queued once; two requests wait: a lease, and one more credit for the second.
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [{ key: 'acme:u1', want: 11 }])
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [])
      assert.equal(plumbing(a).sharedLimitKeys, 1)
    })

    it('spends granted credits locally and asks for a renewal at half a lease', () => {
      const a = make()
      plumbing(a).enableSharedLimit(10, false, 1000)
      a.authenticate(bearer('u1'))
      plumbing(a).takeLeaseRequests()
      plumbing(a).grantLease(':u1', 10, 50, 0)
      for (let i = 0; i < 5; i++) {
        const r = a.authenticate(bearer('u1'))
        assert.equal(r.authenticated, true)
        assert.equal(r.rateLimitRemaining, 59 - i)
      }
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [{ key: ':u1', want: 5 }])
      for (let i = 0; i < 5; i++) assert.equal(a.authenticate(bearer('u1')).authenticated, true)
      // Out of credits with the renewal not back yet: pending again, not refused.
      assert.equal(a.authenticate(bearer('u1')).errorCode, 'rate_limit_pending')
    })

    it('turns a refusal of the shared bucket into rate_limited with its retryAfterMs', () => {
      const a = make()
      plumbing(a).enableSharedLimit(10, false, 1000)
      a.authenticate(bearer('u1'))
      plumbing(a).grantLease(':u1', 0, 0, 5000)
      const r = a.authenticate(bearer('u1'))
      assert.equal(r.errorCode, 'rate_limited')
      assert.equal(r.errorStatus, 429)
      assert.equal(r.rateLimitRemaining, 0)
      assert.ok(r.retryAfterMs > 4900 && r.retryAfterMs <= 5000, String(r.retryAfterMs))
      // Blocked keys are not asked for again until the block ends.
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [])
    })

    it('never holds more than one lease of credits, whatever the grants', () => {
      const a = make()
      plumbing(a).enableSharedLimit(10, false, 1000)
      plumbing(a).grantLease(':u1', 10, 0, 0)
      plumbing(a).grantLease(':u1', 10, 0, 0)
      let admitted = 0
      for (let i = 0; i < 30; i++) if (a.authenticate(bearer('u1')).authenticated) admitted++
      assert.equal(admitted, 10)
    })

    it('parallel requests without credit share one fetch sized for them all', () => {
      const a = make()
      plumbing(a).enableSharedLimit(10, false, 1000)
      for (let i = 0; i < 30; i++) assert.equal(a.authenticate(bearer('u1')).errorCode, 'rate_limit_pending')
      // A lease for the first request, one more credit for each of the 29 others.
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [{ key: ':u1', want: 39 }])
      plumbing(a).grantLease(':u1', 39, 0, 0)
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [])
      let admitted = 0
      for (let i = 0; i < 50; i++) if (a.authenticate(bearer('u1')).authenticated) admitted++
      assert.equal(admitted, 39)
    })

    it('asks again when a grant is short of the requests waiting, until a refusal ends the wait', () => {
      const a = make()
      plumbing(a).enableSharedLimit(10, false, 1000)
      a.authenticate(bearer('u1'))
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [{ key: ':u1', want: 10 }])
      // 19 more arrive while that fetch is in flight; its answer covers 10 of the 20.
      for (let i = 0; i < 19; i++) a.authenticate(bearer('u1'))
      plumbing(a).takeLeaseRequests()
      plumbing(a).grantLease(':u1', 10, 0, 0)
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [{ key: ':u1', want: 19 }])
      // The shared bucket had 5 more, then none.
      plumbing(a).grantLease(':u1', 5, 0, 0)
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [{ key: ':u1', want: 14 }])
      plumbing(a).grantLease(':u1', 0, 0, 60_000)
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [])
      const codes = Array.from({ length: 20 }, () => a.authenticate(bearer('u1')).errorCode || 'ok')
      assert.deepEqual(codes, [...Array(15).fill('ok'), ...Array(5).fill('rate_limited')])
    })

    it('strict mode: parallel requests get one credit each from one fetch', () => {
      const a = make()
      plumbing(a).enableSharedLimit(50, true, 1000)
      for (let i = 0; i < 7; i++) a.authenticate(bearer('u1'))
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [{ key: ':u1', want: 7 }])
      plumbing(a).grantLease(':u1', 9, 0, 0)
      let admitted = 0
      for (let i = 0; i < 10; i++) if (a.authenticate(bearer('u1')).authenticated) admitted++
      assert.equal(admitted, 7)
    })

    it('counts at most 1,000 requests of one identity waiting for its credits', () => {
      const a = make({ rateLimitMax: 1_000_000 })
      plumbing(a).enableSharedLimit(1, true, 1000)
      for (let i = 0; i < 1500; i++) a.authenticate(bearer('u1'))
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [{ key: ':u1', want: 1000 }])
    })

    it('strict mode leases one credit per request and never renews ahead', () => {
      const a = make()
      plumbing(a).enableSharedLimit(50, true, 1000)
      assert.equal(a.authenticate(bearer('u1')).errorCode, 'rate_limit_pending')
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [{ key: ':u1', want: 1 }])
      plumbing(a).grantLease(':u1', 1, 7, 0)
      assert.equal(a.authenticate(bearer('u1')).rateLimitRemaining, 7)
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [])
      assert.equal(a.authenticate(bearer('u1')).errorCode, 'rate_limit_pending')
    })

    it('leaves authenticators without a store on their local buckets', () => {
      const a = make({ rateLimitMax: 2 })
      assert.equal(a.authenticate(bearer('u1')).authenticated, true)
      assert.equal(a.authenticate(bearer('u1')).authenticated, true)
      assert.equal(a.authenticate(bearer('u1')).errorCode, 'rate_limited')
      assert.deepEqual(plumbing(a).takeLeaseRequests(), [])
      assert.equal(plumbing(a).sharedLimitKeys, 0)
    })

    it('refuses a second store, a limit that is off, and bad lease arguments with coded errors', () => {
      const a = make()
      plumbing(a).enableSharedLimit(10, false, 1000)
      assert.throws(() => plumbing(a).enableSharedLimit(10, false, 1000), { code: 'ERR_AUTH_SHIELD_SHARED_LIMIT', message: 'a store is already attached to this authenticator' })
      assert.throws(() => plumbing(make({ rateLimitMax: 0 })).enableSharedLimit(10, false, 1000), {
        code: 'ERR_AUTH_SHIELD_SHARED_LIMIT',
        message: 'rate limiting is off (rateLimitMax: 0): there is no limit to share',
      })
      assert.throws(() => plumbing(make()).enableSharedLimit(0, false, 1000), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: 'lease must be an integer from 1 to 1000000, got 0' })
      assert.throws(() => plumbing(make()).enableSharedLimit(5, false, 2.5), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: 'maxKeys must be an integer from 1 to 100000000, got 2.5' })
      assert.throws(() => plumbing(make()).enableSharedLimit('5', false, 10), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'lease must be a number' })
      assert.throws(() => plumbing(make()).enableSharedLimit(5, 1, 10), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'strict must be a boolean' })
      assert.throws(() => plumbing(a).grantLease(7, 1, 1, 0), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'key must be a string' })
      assert.throws(() => plumbing(a).grantLease('k', 1.5, 1, 0), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: 'tokens must be an integer from 0 to 4294967295, got 1.5' })
      assert.throws(() => plumbing(a).grantLease('k', 1, 1, -1), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: 'retryAfterMs must be from 0 to 1000000000000000, got -1' })
    })

    it('holds at most maxKeys identities and queued keys under a flood of identities', () => {
      const a = make()
      plumbing(a).enableSharedLimit(10, false, 500)
      let most = 0
      for (let i = 0; i < 3000; i++) {
        assert.equal(a.authenticate(bearer(`flood-${i}`)).errorCode, 'rate_limit_pending')
        most = Math.max(most, plumbing(a).sharedLimitKeys)
        if (i % 700 === 699) assert.ok(plumbing(a).takeLeaseRequests().length <= 500)
      }
      assert.ok(most <= 500, `held ${most} identities`)
      assert.ok(plumbing(a).takeLeaseRequests().length <= 500)
    })
  })
}
