//! `metrics()`: the counters of one authenticator (src/metrics.rs) as one `Float64Array`, which
//! native.js turns into the documented snapshot (docs/observability.md), the same shape as the
//! JS engine's (js/metrics.js). One typed array crosses the boundary instead of some 70
//! properties set one by one (about 27 µs a snapshot; bench/sections/metrics.js).
//!
//! Layout, read by `countersToSnapshot` in native.js:
//! `[succeeded, rateLimitAllowed, cacheHits, cacheMisses, cacheEntries, revocationsHeld,
//!   revocationsRefusedAtLimit, revocationsUnavailable (1 or 0), durationSumNanos, B,
//!   …B bounds in nanoseconds, …B + 1 bucket counts, …one failure count per error code in the
//!   order of contract/error-codes.json]`.

use napi::bindgen_prelude::*;

use crate::authenticator::Authenticator as Core;
use crate::metrics::DURATION_BOUNDS_NANOS;

pub fn counters(core: &Core) -> Float64Array {
    let (counts, (hits, misses)) = core.metrics();
    let bounds = DURATION_BOUNDS_NANOS.len();
    let mut out = Vec::with_capacity(10 + 2 * bounds + 1 + counts.failed.len());
    out.extend_from_slice(&[
        counts.succeeded as f64,
        counts.rate_limit_allowed as f64,
        hits as f64,
        misses as f64,
        core.verified_token_cache_len() as f64,
        core.revocation_count() as f64,
        counts.revocations_refused as f64,
        f64::from(u8::from(core.revocation_unavailable())),
        counts.duration_sum_nanos as f64,
        bounds as f64,
    ]);
    out.extend(DURATION_BOUNDS_NANOS.iter().map(|&n| n as f64));
    out.extend(counts.duration_buckets.iter().map(|&n| n as f64));
    out.extend(counts.failed.iter().map(|&(_, n)| n as f64));
    Float64Array::new(out)
}
