'use strict'

// One authenticator attached to a RedisStore (lib/store/redis-store.js): the parameters of its
// shared bucket as the lease script takes them, the identities waiting for a batch or in one,
// and the local fallback bucket that answers while Redis is down.

const { RateLimiter } = require('../../js/seam')
const { intervalArg } = require('./lease-script')
const { storeSeam } = require('../../base/store-seam')
const { leaseKeys } = require('./key-layout')

/** One authenticator's shared limit: its bucket parameters, queued identities and fallback. */
class Attachment {
  constructor(authenticator, options, store) {
    const max = authenticator.rateLimitMax
    const refill = authenticator.rateLimitRefillPerSec
    this.authenticator = authenticator
    // The authenticator's store-facing functions (base/store-seam.js STORE_SEAM).
    this.seam = storeSeam(authenticator)
    this.strict = options.strict
    this.lease = options.strict ? 1 : options.lease !== undefined ? Math.min(options.lease, max) : Math.max(1, Math.min(100, Math.floor(max / 10)))
    // Credits left when an identity is queued for renewal (as src/rate_limit/lease.rs): the
    // slack its renewal has to arrive within. 0 in strict mode (nothing renewed ahead).
    this.slack = options.strict ? 0 : Math.floor(this.lease / 2)
    // The script's bucket arguments, as sent.
    this.capacityArg = String(max)
    this.intervalArg = intervalArg(refill)
    // The bucket key of each identity, and on a cluster its shard (lib/store/key-layout.js).
    this.keys = leaseKeys(store.options.prefix, options.name, store.topology)
    // Outage fallback: a local bucket holding `outageShare` of the shared one.
    this.fallback = new RateLimiter(Math.max(1, Math.floor(max * options.outageShare)), refill * options.outageShare, options.maxKeys)
    this.maxKeys = options.maxKeys
    // Identities taken from the authenticator and not yet sent: key → { want, seq }, oldest
    // first. At most `maxKeys`.
    this.waiting = new Map()
    // Identities in a batch awaiting Redis (bounded by the store: 4 batches of 100).
    this.sending = new Set()
    // Identities answered short of the requests waiting for them, to ask again before those
    // retry: key → { want, seq } (seq: their place when first queued). Each comes from an
    // answer, so at most `maxKeys`, and few at a time.
    this.again = new Map()
  }

  /** The identities waiting for a lease, `[{ key, want }]`; empties the authenticator's queue. */
  takeLeaseRequests() {
    return this.seam.takeLeaseRequests(this.authenticator)
  }

  /** Records an answer for `key` (`tokens` 0: refused, blocked for `retryAfterMs`). */
  grantLease(key, tokens, sharedRemaining, retryAfterMs) {
    this.seam.grantLease(this.authenticator, key, tokens, sharedRemaining, retryAfterMs)
  }

  /** A lease for `key` from the local fallback bucket (Redis down or failing). */
  fallbackLease(key, want) {
    let d = this.fallback.consume(key, want)
    if (d.allowed) return this.grantLease(key, want, d.remaining, 0)
    // Fewer than asked: what the bucket holds, as the script grants a partial lease.
    const some = Math.min(want - 1, d.remaining)
    if (some > 1) {
      d = this.fallback.consume(key, some)
      if (d.allowed) return this.grantLease(key, some, d.remaining, 0)
    }
    d = this.fallback.consume(key, 1)
    if (d.allowed) return this.grantLease(key, 1, d.remaining, 0)
    this.grantLease(key, 0, 0, d.retryAfterMs)
  }
}

module.exports = { Attachment }
