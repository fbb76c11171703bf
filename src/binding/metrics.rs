//! `metrics()`: the counters of one authenticator (src/metrics.rs) written into a `Float64Array`
//! native.js hands in and reuses, which it turns into the documented snapshot
//! (docs/observability.md), the same shape as the JS engine's (js/metrics.js). Nothing is
//! allocated on either side of the boundary for the numbers, instead of some 70 properties set
//! one by one (about 17 µs a snapshot before; bench/sections/metrics.js).
//!
//! Layout, read by `countersToSnapshot` in native.js:
//! `[succeeded, rateLimitAllowed, cacheHits, cacheMisses, cacheEntries, revocationsHeld,
//!   revocationsRefusedAtLimit, revocationsUnavailable (1 or 0), durationSumNanos, B,
//!   …B bounds in nanoseconds, …B + 1 bucket counts, …one failure count per error code in the
//!   order of contract/error-codes.json]`.

use crate::authenticator::Authenticator as Core;
use crate::metrics::DURATION_BOUNDS_NANOS;

/// Writes the counters into `out` when it is long enough; returns the length they need either
/// way (the caller grows its array and asks again when it was short).
pub fn counters_into(core: &Core, out: &mut [f64]) -> u32 {
    let (counts, (hits, misses)) = core.metrics();
    let bounds = DURATION_BOUNDS_NANOS.len();
    let needed = 10 + 2 * bounds + 1 + counts.failed.len();
    if out.len() < needed {
        return needed as u32;
    }
    let head = [
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
    ];
    let values = head
        .into_iter()
        .chain(DURATION_BOUNDS_NANOS.iter().map(|&n| n as f64))
        .chain(counts.duration_buckets.iter().map(|&n| n as f64))
        .chain(counts.failed.iter().map(|&(_, n)| n as f64));
    for (slot, value) in out.iter_mut().zip(values) {
        *slot = value;
    }
    needed as u32
}
