//! Counters of one authenticator, kept where the work happens and read only when someone asks
//! (`metrics()`, docs/observability.md). A request adds to them with relaxed atomic increments
//! and nothing crosses into JS: a collector reads a [`Snapshot`] at its own pace.
//!
//! Bounded by construction: one counter per error code, one per duration bucket, a handful of
//! others; nothing is keyed on request content (user, tenant, token).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

use crate::error::AuthError;

/// Upper bounds of the call-duration buckets, in nanoseconds (the last bucket, past the final
/// bound, is unbounded). Fixed: the same in both engines and across releases, so that
/// histograms from different processes add up. An `authenticate` call is microseconds; the
/// upper buckets catch a stalled process.
pub const DURATION_BOUNDS_NANOS: [u64; 14] = [
    1_000,
    2_500,
    5_000,
    10_000,
    25_000,
    50_000,
    100_000,
    250_000,
    500_000,
    1_000_000,
    2_500_000,
    5_000_000,
    10_000_000,
    100_000_000,
];

const CODES: usize = AuthError::ALL.len();
const BUCKETS: usize = DURATION_BOUNDS_NANOS.len() + 1;

pub struct Metrics {
    succeeded: AtomicU64,
    /// Refusals by [`AuthError`] (its discriminant is its index in [`AuthError::ALL`]).
    failed: [AtomicU64; CODES],
    /// Successes with rate limiting on: each took a token (or a leased credit).
    rate_limit_allowed: AtomicU64,
    /// `revokeToken` / `revokeSubject` calls refused at the `maxRevocations` bound.
    revocations_refused: AtomicU64,
    /// Whether calls are timed (`setDurationMetrics`): off by default, since the second clock
    /// read per call costs more than every counter together on machines without a fast clock.
    timing: AtomicBool,
    duration_buckets: [AtomicU64; BUCKETS],
    duration_sum_nanos: AtomicU64,
}

// By hand: `Default` is derived for arrays of at most 32 elements, and there are more codes.
impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            succeeded: AtomicU64::new(0),
            failed: std::array::from_fn(|_| AtomicU64::new(0)),
            rate_limit_allowed: AtomicU64::new(0),
            revocations_refused: AtomicU64::new(0),
            timing: AtomicBool::new(false),
            duration_buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            duration_sum_nanos: AtomicU64::new(0),
        }
    }
}

/// What the counters held when read. Each counter only grows (until the process ends).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub succeeded: u64,
    /// `(code, count)` for every code, in [`AuthError::ALL`] order.
    pub failed: Vec<(&'static str, u64)>,
    pub rate_limit_allowed: u64,
    pub revocations_refused: u64,
    /// Count per bucket; `duration_buckets[i]` counts calls of at most
    /// `DURATION_BOUNDS_NANOS[i]` and more than the bound before it; the last is the overflow.
    pub duration_buckets: Vec<u64>,
    pub duration_sum_nanos: u64,
}

impl Metrics {
    /// One `authenticate` call: its verdict, whether the rate limiter admitted it, and how long
    /// it took.
    #[inline]
    pub fn record(&self, verdict: Result<bool, AuthError>, nanos: Option<u64>) {
        match verdict {
            Ok(limited) => {
                self.succeeded.fetch_add(1, Relaxed);
                if limited {
                    self.rate_limit_allowed.fetch_add(1, Relaxed);
                }
            }
            Err(err) => {
                self.failed[err as usize].fetch_add(1, Relaxed);
            }
        }
        if let Some(nanos) = nanos {
            let bucket = DURATION_BOUNDS_NANOS.partition_point(|&bound| bound < nanos);
            self.duration_buckets[bucket].fetch_add(1, Relaxed);
            self.duration_sum_nanos.fetch_add(nanos, Relaxed);
        }
    }

    /// Whether calls are timed.
    #[inline]
    pub fn timing(&self) -> bool {
        self.timing.load(Relaxed)
    }

    pub fn set_timing(&self, on: bool) {
        self.timing.store(on, Relaxed);
    }

    pub fn revocation_refused(&self) {
        self.revocations_refused.fetch_add(1, Relaxed);
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            succeeded: self.succeeded.load(Relaxed),
            failed: AuthError::ALL
                .iter()
                .map(|&err| (err.code(), self.failed[err as usize].load(Relaxed)))
                .collect(),
            rate_limit_allowed: self.rate_limit_allowed.load(Relaxed),
            revocations_refused: self.revocations_refused.load(Relaxed),
            duration_buckets: self
                .duration_buckets
                .iter()
                .map(|c| c.load(Relaxed))
                .collect(),
            duration_sum_nanos: self.duration_sum_nanos.load(Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_each_verdict_under_its_code() {
        let m = Metrics::default();
        m.record(Ok(true), Some(500));
        m.record(Ok(false), Some(1_000));
        m.record(Err(AuthError::RateLimited), Some(1_001));
        m.record(Err(AuthError::KeysUnavailable), Some(u64::MAX / 4));
        m.record(Ok(false), None);
        m.revocation_refused();
        let s = m.snapshot();
        assert_eq!(s.succeeded, 3);
        assert_eq!(s.rate_limit_allowed, 1);
        assert_eq!(s.revocations_refused, 1);
        assert_eq!(s.failed.len(), AuthError::ALL.len());
        for (code, n) in &s.failed {
            let want = matches!(*code, "rate_limited" | "keys_unavailable") as u64;
            assert_eq!(*n, want, "{code}");
        }
        // Bounds are inclusive upper bounds; past the last one is the overflow bucket.
        assert_eq!(s.duration_buckets[0], 2);
        assert_eq!(s.duration_buckets[1], 1);
        assert_eq!(s.duration_buckets[DURATION_BOUNDS_NANOS.len()], 1);
        assert_eq!(s.duration_buckets.iter().sum::<u64>(), 4);
    }

    #[test]
    fn variant_order_is_the_index_order() {
        for (i, &err) in AuthError::ALL.iter().enumerate() {
            assert_eq!(err as usize, i, "{}", err.code());
        }
    }
}
