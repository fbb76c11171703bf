//! The two clocks of a request, read once: monotonic time for the rate limiter and the Unix
//! time for `exp`/`nbf`.
//!
//! The Unix time is derived from the monotonic reading plus an offset refreshed from the
//! system clock every 50 ms, so a request costs one clock read instead of two while a wall
//! clock step (NTP, an operator) is still picked up within 50 ms.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

const REFRESH_NANOS: u64 = 50_000_000;

/// Nanoseconds on a monotonic clock shared by everything in the process.
pub fn monotonic_nanos() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// Whole seconds since the Unix epoch at monotonic time `mono` (like `Math.floor(Date.now() / 1000)`).
pub fn unix_seconds_at(mono: u64) -> f64 {
    // Wall clock minus monotonic clock, in nanoseconds, and when that was measured.
    static OFFSET: AtomicI64 = AtomicI64::new(0);
    static MEASURED_AT: AtomicU64 = AtomicU64::new(u64::MAX);
    let measured_at = MEASURED_AT.load(Ordering::Acquire);
    let offset = if measured_at != u64::MAX && mono.wrapping_sub(measured_at) < REFRESH_NANOS {
        OFFSET.load(Ordering::Acquire)
    } else {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i64);
        let now = monotonic_nanos();
        let offset = wall - now as i64;
        OFFSET.store(offset, Ordering::Release);
        MEASURED_AT.store(now, Ordering::Release);
        offset + (mono as i64 - now as i64)
    };
    ((mono as i64 + offset).max(0) / 1_000_000_000) as f64
}

/// Whole milliseconds since the Unix epoch, from the system clock (like `Date.now()`): the
/// precision of the `iat` this library signs and of a subject revocation's default cut-off.
pub fn unix_millis() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_millis() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_system_clock_to_the_second() {
        for _ in 0..3 {
            let mono = monotonic_nanos();
            let derived = unix_seconds_at(mono);
            let wall = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs() as f64;
            assert!((wall - derived).abs() <= 1.0, "{wall} vs {derived}");
            std::thread::sleep(std::time::Duration::from_millis(60));
        }
    }
}
