'use strict'

// The counters of one authenticator in the JS engine, the same as src/metrics.rs: plain numbers
// added to per call, read by `metrics()` in the documented shape (docs/observability.md). Bounded
// by construction: one counter per error code and per duration bucket, nothing keyed on request
// content.

const { TABLE } = require('../base/error')

// Upper bounds of the call-duration buckets in nanoseconds, the last bucket (past the final
// bound) unbounded; fixed, and the same as the native engine's.
const DURATION_BOUNDS_NANOS = Object.freeze([
  1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000,
  100_000_000,
])
const BOUNDS_SECONDS = DURATION_BOUNDS_NANOS.map((n) => n / 1e9)
const CODES = Object.keys(TABLE)

class Metrics {
  constructor() {
    this.succeeded = 0
    this.failed = Object.fromEntries(CODES.map((code) => [code, 0]))
    this.rateLimitAllowed = 0
    this.revocationsRefused = 0
    // Whether calls are timed (setDurationMetrics); off by default, as in the native engine.
    this.timing = false
    this.durationBuckets = new Array(DURATION_BOUNDS_NANOS.length + 1).fill(0)
    this.durationSumNanos = 0
  }

  /** One authenticate call: its error code (undefined on success), whether the limiter admitted it, its duration (undefined when not timed). */
  record(code, limited, nanos) {
    if (code === undefined) {
      this.succeeded++
      if (limited) this.rateLimitAllowed++
    } else {
      this.failed[code]++
    }
    if (nanos === undefined) return
    let bucket = 0
    while (bucket < DURATION_BOUNDS_NANOS.length && DURATION_BOUNDS_NANOS[bucket] < nanos) bucket++
    this.durationBuckets[bucket]++
    this.durationSumNanos += nanos
  }

  /** The documented snapshot; `cache` is the verified-token cache or null, `revocations` the table. */
  snapshot(cache, revocations, now) {
    let failed = 0
    for (const code of CODES) failed += this.failed[code]
    let count = 0
    for (const n of this.durationBuckets) count += n
    return {
      authentication: { succeeded: this.succeeded, failed, failures: { ...this.failed } },
      rateLimit: { allowed: this.rateLimitAllowed, limited: this.failed.rate_limited, pending: this.failed.rate_limit_pending },
      verifiedTokenCache: {
        hits: cache === null ? 0 : cache.hits,
        misses: cache === null ? 0 : cache.misses,
        entries: cache === null ? 0 : cache.size,
      },
      revocations: { held: revocations.count(now), refusedAtLimit: this.revocationsRefused, unavailable: revocations.unavailable },
      duration: { count, sumSeconds: this.durationSumNanos / 1e9, boundsSeconds: [...BOUNDS_SECONDS], buckets: [...this.durationBuckets] },
    }
  }
}

module.exports = { Metrics, DURATION_BOUNDS_NANOS }
