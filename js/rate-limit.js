'use strict'

// Per-key token buckets in a Map, refilled continuously on a monotonic clock, as
// src/rate_limit.rs. Memory is bounded the same way: past `maxKeys` buckets a sweep forgets
// full buckets first (an unknown key starts full, so nothing is lost), then, only if a flood
// of distinct keys keeps the map over its bound, the least recently used ones.

const { performance } = require('node:perf_hooks')

const NANOS_PER_SEC = 1e9
const U64_MAX = 2 ** 64

function monotonicNanos() {
  return performance.now() * 1e6
}

class RateLimiter {
  constructor(capacity, refillPerSec, maxKeys) {
    this.capacity = capacity
    this.refillPerNano = refillPerSec / NANOS_PER_SEC
    this.maxKeys = Math.max(maxKeys, 1)
    this.buckets = new Map()
  }

  get size() {
    return this.buckets.size
  }

  /**
   * Takes one token from `key`'s bucket: `{ allowed: true, remaining }` or
   * `{ allowed: false, retryAfterMs }`.
   */
  take(key, nowNanos = monotonicNanos()) {
    let bucket = this.buckets.get(key)
    if (bucket !== undefined) return this.takeFrom(bucket, nowNanos)
    bucket = { tokens: this.capacity, lastNanos: nowNanos }
    const decision = this.takeFrom(bucket, nowNanos)
    this.buckets.set(key, bucket)
    if (this.buckets.size > this.maxKeys) this.sweep(nowNanos)
    return decision
  }

  refilled(bucket, nowNanos) {
    const elapsed = Math.max(nowNanos - bucket.lastNanos, 0)
    return Math.min(bucket.tokens + elapsed * this.refillPerNano, this.capacity)
  }

  takeFrom(bucket, nowNanos) {
    const tokens = this.refilled(bucket, nowNanos)
    // A clock that seems to go backwards never adds tokens.
    bucket.lastNanos = Math.max(bucket.lastNanos, nowNanos)
    if (tokens >= 1) {
      bucket.tokens = tokens - 1
      return { allowed: true, remaining: Math.floor(bucket.tokens) }
    }
    bucket.tokens = tokens
    const waitNanos = (1 - tokens) / this.refillPerNano
    // Clamped like the native `as u64` conversion of an absurdly slow refill.
    return { allowed: false, retryAfterMs: Math.min(Math.max(Math.ceil(waitNanos / 1e6), 1), U64_MAX) }
  }

  sweep(nowNanos) {
    const target = this.maxKeys - Math.floor(this.maxKeys / 4)
    this.retain((b) => this.refilled(b, nowNanos) < this.capacity)
    const excess = this.buckets.size - target
    if (excess > 0) {
      const stamps = Array.from(this.buckets.values(), (b) => b.lastNanos).sort((x, y) => x - y)
      const cutoff = stamps[excess - 1]
      this.retain((b) => b.lastNanos > cutoff)
    }
  }

  retain(keep) {
    for (const [key, bucket] of this.buckets) {
      if (!keep(bucket)) this.buckets.delete(key)
    }
  }
}

module.exports = { RateLimiter, monotonicNanos }
