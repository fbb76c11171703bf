'use strict'

// One authenticator attached to a RedisStore (js/store/redis-store.js): the parameters of its
// shared bucket as the lease script takes them, the identities waiting for a batch or in one,
// and the local fallback bucket that answers while Redis is down.

const { RateLimiter } = require('../rate-limit')
const { intervalArg } = require('./lease-script')

/** One authenticator's shared limit: its bucket parameters, queued identities and fallback. */
class Attachment {
  constructor(authenticator, options, store) {
    const max = authenticator.rateLimitMax
    const refill = authenticator.rateLimitRefillPerSec
    this.authenticator = authenticator
    this.strict = options.strict
    this.lease = options.strict ? 1 : options.lease !== undefined ? Math.min(options.lease, max) : Math.max(1, Math.min(100, Math.floor(max / 10)))
    // Credits left when an identity is queued for renewal (as src/rate_limit/lease.rs): the
    // slack its renewal has to arrive within. 0 in strict mode (nothing renewed ahead).
    this.slack = options.strict ? 0 : Math.floor(this.lease / 2)
    // The script's bucket arguments, as sent.
    this.capacityArg = String(max)
    this.intervalArg = intervalArg(refill)
    this.keyPrefix = `${store.options.prefix}rl:${options.name}:`
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

  /** A lease for `key` from the local fallback bucket (Redis down or failing). */
  fallbackLease(key, want) {
    let d = this.fallback.consume(key, want)
    if (d.allowed) return this.authenticator.grantLease(key, want, d.remaining, 0)
    // Fewer than asked: what the bucket holds, as the script grants a partial lease.
    const some = Math.min(want - 1, d.remaining)
    if (some > 1) {
      d = this.fallback.consume(key, some)
      if (d.allowed) return this.authenticator.grantLease(key, some, d.remaining, 0)
    }
    d = this.fallback.consume(key, 1)
    if (d.allowed) return this.authenticator.grantLease(key, 1, d.remaining, 0)
    this.authenticator.grantLease(key, 0, 0, d.retryAfterMs)
  }
}

module.exports = { Attachment }
