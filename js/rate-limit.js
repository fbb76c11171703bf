'use strict'

// Per-key GCRA buckets (one theoretical arrival time per key) in a Map, on a monotonic clock,
// as src/rate_limit.rs: the same admission test, rounding slack, sweep and debt sketch, so both
// engines give the same verdicts. Past `maxKeys` buckets a sweep forgets full buckets, then the
// least recently used ones; a bucket that still owes tokens is folded into the sketch first, so
// an evicted key never comes back fresher than it left.

const { performance } = globalThis
const { DebtSketch, widthFor, randomSeeds } = require('./rate-limit/debt-sketch')
const { typeError, rangeError } = require('../base/error')
const { LIMITS, message } = require('../contract')
const { checkKnownOptions } = require('../base/schema')

const NANOS_PER_SEC = 1e9
const U64_MAX = 2 ** 64
const ROUNDING_SLACK = 1e-6
const MAX_CAPACITY = LIMITS.rateLimiterMaxCapacity
const MAX_REFILL_PER_SEC = LIMITS.rateLimiterMaxRefillPerSec
const MAX_KEYS_BOUND = LIMITS.rateLimiterMaxKeys
const DEFAULT_MAX_KEYS = 100000
const MAX_KEY_BYTES = LIMITS.rateLimiterMaxKeyBytes
// Longest time one token takes to come back, in nanoseconds (src/rate_limit.rs
// MAX_INTERVAL_NANOS): a refill so small that 1e9 / refill is larger, or Infinity (1e-300,
// Number.MIN_VALUE), never refills. Unclamped, Infinity <= Infinity admitted every request.
const MAX_INTERVAL_NANOS = 1e290

/**
 * Whether a token is a client's own (RFC 9068 §2.2, the client credentials grant), as
 * src/rate_limit.rs `is_client_credentials`: a non-empty string `client_id` claim, and a `sub`
 * that is absent, empty or that same client id. No user is behind it.
 */
function isClientCredentials(sub, clientId) {
  return typeof clientId === 'string' && clientId !== '' && (sub === '' || sub === clientId)
}

/**
 * The bucket key of a verified identity (src/rate_limit.rs `identity_key`, docs/rate-limiting.md):
 * the tenant the signature vouches for (`claimTenant`, '' for none), ':', the subject; a
 * client-credentials token's subject is its client id, and unless `limitClients`
 * (`rateLimitClientCredentials`) it takes no bucket: `undefined`.
 */
function identityKey(claimTenant, sub, clientId, limitClients) {
  if (isClientCredentials(sub, clientId)) return limitClients ? `${claimTenant}:${clientId}` : undefined
  return `${claimTenant}:${sub}`
}

function monotonicNanos() {
  return performance.now() * 1e6
}

// Float-to-u32/u64 conversion as Rust's `as`: truncation, saturating, NaN to 0.
const toU32 = (x) => (Number.isNaN(x) ? 0 : Math.min(Math.max(Math.trunc(x), 0), 4294967295))

/** Nanoseconds per token, saturated at MAX_INTERVAL_NANOS (src/rate_limit.rs interval_nanos). */
function intervalNanos(refillPerSec) {
  const interval = NANOS_PER_SEC / refillPerSec
  return Number.isNaN(interval) || interval > MAX_INTERVAL_NANOS ? MAX_INTERVAL_NANOS : interval
}

/** TAT - now: what `bucket` owes at `now` (<= 0: full); a lagging clock read adds nothing. */
function owedAt(bucket, now) {
  return now >= bucket.lastNanos ? bucket.debt - (now - bucket.lastNanos) : bucket.debt + (bucket.lastNanos - now)
}

const bits = new Float64Array(1)
const bitsAsInt = new BigUint64Array(bits.buffer)

/** The TAT as an instant, rounded up (f64::next_up), for the sketch: never fresher. */
function tatOf(bucket) {
  const tat = bucket.lastNanos + bucket.debt
  if (!(tat - bucket.lastNanos < bucket.debt) || !(tat > 0) || tat === Infinity) return tat
  bits[0] = tat
  bitsAsInt[0] += 1n
  return bits[0]
}

class RateLimiter {
  constructor(capacity, refillPerSec, maxKeys, seeds = randomSeeds()) {
    this.capacity = capacity
    this.interval = intervalNanos(refillPerSec)
    this.limit = (capacity + ROUNDING_SLACK) * this.interval
    this.maxKeys = Math.max(maxKeys, 1)
    this.buckets = new Map()
    this.sketch = new DebtSketch(widthFor(this.maxKeys), seeds)
  }

  get size() {
    return this.buckets.size
  }

  /** `take(key)`: one token; see `consume`. */
  take(key, nowNanos = monotonicNanos()) {
    return this.consume(key, 1, nowNanos)
  }

  /**
   * Takes `cost` tokens from `key`'s bucket, or none: `{ allowed: true, remaining }` or
   * `{ allowed: false, remaining, retryAfterMs }`.
   */
  consume(key, cost, nowNanos = monotonicNanos()) {
    let bucket = this.buckets.get(key)
    if (bucket !== undefined) return this.charge(bucket, cost, nowNanos)
    const hash = this.sketch.hash(key)
    // `debt`: how far the TAT lies ahead of `lastNanos` (<= 0: full). Relative, as in
    // src/rate_limit.rs: an instant near 1e15 ns (11.6 days up) is exact only to 1/8 ns, and
    // TAT + T rounded by up to 5% of a token per admission at refills near 1e9.
    bucket = { debt: this.sketch.tatOf(hash) - nowNanos, lastNanos: nowNanos, hash }
    const decision = this.charge(bucket, cost, nowNanos)
    this.buckets.set(key, bucket)
    if (this.buckets.size > this.maxKeys) this.sweep(nowNanos)
    return decision
  }

  charge(bucket, cost, now) {
    // `start` and `ahead` are max(TAT, now) - now and the TAT after this request - now.
    const owed = owedAt(bucket, now)
    if (now >= bucket.lastNanos) {
      // Measured from now on: the same TAT, the debt as small as it can be.
      bucket.debt = owed
      bucket.lastNanos = now
    }
    const start = Math.max(owed, 0)
    const ahead = start + cost * this.interval
    if (ahead <= this.limit) {
      // A clock that seems to go backwards never adds tokens: the TAT only moves forward.
      bucket.debt = ahead - (bucket.lastNanos - now)
      return { allowed: true, remaining: toU32((this.limit - ahead) / this.interval) }
    }
    // Clamped like the native `as u64` conversion of an absurdly slow refill.
    const retryAfterMs = Math.min(Math.max(Math.ceil((ahead - this.limit) / 1e6), 1), U64_MAX)
    return { allowed: false, remaining: toU32((this.limit - start) / this.interval), retryAfterMs }
  }

  sweep(now) {
    const target = this.maxKeys - Math.floor(this.maxKeys / 4)
    // A full bucket owes nothing: forgetting it loses nothing.
    this.retain((b) => owedAt(b, now) > 0)
    const excess = this.buckets.size - target
    if (excess > 0) {
      const stamps = Array.from(this.buckets.values(), (b) => b.lastNanos).sort((x, y) => x - y)
      const cutoff = stamps[excess - 1]
      this.retain((b) => {
        const keep = b.lastNanos > cutoff
        if (!keep && owedAt(b, now) > 0) this.sketch.fold(b.hash, tatOf(b))
        return keep
      })
    }
  }

  retain(keep) {
    for (const [key, bucket] of this.buckets) {
      if (!keep(bucket)) this.buckets.delete(key)
    }
  }
}

function isNumberOption(v) {
  return v === undefined || v === null || typeof v === 'number'
}

/**
 * `new RateLimiter({ capacity, refillPerSec, maxKeys })` of the public API, as the native
 * class in src/binding/rate_limiter.rs: same checks, error classes, codes and messages.
 */
class PublicRateLimiter {
  #core

  constructor(options) {
    if (typeof options !== 'object' || options === null || Array.isArray(options)) {
      throw typeError(message('mustBeObject', { name: 'options' }))
    }
    checkKnownOptions(options, 'RateLimiterOptions')
    const { capacity, refillPerSec, maxKeys } = options
    for (const [name, v] of [['capacity', capacity], ['refillPerSec', refillPerSec]]) {
      if (typeof v !== 'number') throw typeError(message('mustBeNumber', { name: `options.${name}` }))
    }
    if (!isNumberOption(maxKeys)) throw typeError(message('mustBeNumber', { name: 'options.maxKeys' }))
    if (!(Number.isInteger(capacity) && capacity >= 1 && capacity <= MAX_CAPACITY)) {
      throw rangeError(message('integerOutOfRange', { name: 'options.capacity', min: 1, max: MAX_CAPACITY, value: capacity }))
    }
    if (!(refillPerSec > 0 && refillPerSec <= MAX_REFILL_PER_SEC)) {
      throw rangeError(message('refillOutOfRange', { name: 'options.refillPerSec', max: MAX_REFILL_PER_SEC, value: refillPerSec }))
    }
    const keys = maxKeys ?? DEFAULT_MAX_KEYS
    if (!(Number.isInteger(keys) && keys >= 1 && keys <= MAX_KEYS_BOUND)) {
      throw rangeError(message('integerOutOfRange', { name: 'options.maxKeys', min: 1, max: MAX_KEYS_BOUND, value: keys }))
    }
    this.#core = new RateLimiter(capacity, refillPerSec, keys)
  }

  /** Takes `cost` tokens (default 1) from `key`'s bucket: `{ allowed, remaining, retryAfterMs }`. */
  consume(key, cost) {
    const core = this.#core
    if (cost === undefined || cost === null) cost = 1
    else if (typeof cost !== 'number') throw typeError(message('mustBeNumber', { name: 'cost' }))
    else if (!(Number.isInteger(cost) && cost >= 1 && cost <= core.capacity)) {
      throw rangeError(message('costOutOfRange', { capacity: core.capacity, value: cost }))
    }
    if (typeof key !== 'string') throw typeError(message('mustBeString', { name: 'key' }))
    if (key.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(key) > MAX_KEY_BYTES) {
      throw rangeError(message('keyTooLong', { name: 'key', max: MAX_KEY_BYTES }))
    }
    // Native reads a lone surrogate as U+FFFD: refused in both engines rather than shared there.
    if (!key.isWellFormed()) throw typeError(message('loneSurrogateKey'))
    const d = core.consume(key, cost)
    return { allowed: d.allowed, remaining: d.remaining, retryAfterMs: d.allowed ? 0 : d.retryAfterMs }
  }

  /** Keys currently held in the table (at most about `maxKeys`). */
  get size() {
    return this.#core.size
  }

  /** Bucket capacity. */
  get capacity() {
    return this.#core.capacity
  }
}

module.exports = { RateLimiter, PublicRateLimiter, identityKey, isClientCredentials, monotonicNanos, intervalNanos, MAX_INTERVAL_NANOS }
