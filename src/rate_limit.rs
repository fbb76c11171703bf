//! Per-key token buckets on a concurrent map, refilled continuously on a monotonic clock.
//!
//! Memory is bounded: once more than `max_keys` buckets exist, a sweep forgets buckets that
//! have refilled to capacity (forgetting a full bucket loses nothing: an unknown key starts
//! full). Only when a flood of distinct keys keeps the map over its bound after that are the
//! least recently used buckets forgotten, down to three quarters of the bound; a key under
//! its own traffic is among the most recently used and survives.

use dashmap::mapref::entry::Entry;
use dashmap::DashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

const NANOS_PER_SEC: f64 = 1e9;

pub use crate::clock::monotonic_nanos;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// One token was taken; `remaining` whole tokens are left.
    Allowed { remaining: u32 },
    /// The bucket is empty; one token will be back after `retry_after_ms`.
    Limited { retry_after_ms: u64 },
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    last_nanos: u64,
}

pub struct RateLimiter {
    capacity: f64,
    refill_per_nano: f64,
    max_keys: usize,
    buckets: DashMap<Box<[u8]>, Bucket>,
    len: AtomicUsize,
    sweeping: AtomicBool,
}

impl RateLimiter {
    /// `capacity` tokens per bucket, `refill_per_sec` tokens added per second (> 0), at most
    /// about `max_keys` buckets kept.
    pub fn new(capacity: u32, refill_per_sec: f64, max_keys: usize) -> Self {
        RateLimiter {
            capacity: capacity as f64,
            refill_per_nano: refill_per_sec / NANOS_PER_SEC,
            max_keys: max_keys.max(1),
            buckets: DashMap::new(),
            len: AtomicUsize::new(0),
            sweeping: AtomicBool::new(false),
        }
    }

    pub fn capacity(&self) -> u32 {
        self.capacity as u32
    }

    /// Number of buckets currently remembered.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes one token from `key`'s bucket at time `now_nanos` (see [`monotonic_nanos`]).
    pub fn take(&self, key: &[u8], now_nanos: u64) -> Decision {
        if let Some(mut bucket) = self.buckets.get_mut(key) {
            return self.take_from(&mut bucket, now_nanos);
        }
        let decision = match self.buckets.entry(key.into()) {
            Entry::Occupied(mut e) => self.take_from(e.get_mut(), now_nanos),
            Entry::Vacant(e) => {
                let mut bucket = Bucket {
                    tokens: self.capacity,
                    last_nanos: now_nanos,
                };
                let decision = self.take_from(&mut bucket, now_nanos);
                e.insert(bucket);
                self.len.fetch_add(1, Ordering::Relaxed);
                decision
            }
        };
        if self.len() > self.max_keys {
            self.sweep(now_nanos);
        }
        decision
    }

    fn refilled(&self, bucket: &Bucket, now_nanos: u64) -> f64 {
        let elapsed = now_nanos.saturating_sub(bucket.last_nanos) as f64;
        (bucket.tokens + elapsed * self.refill_per_nano).min(self.capacity)
    }

    fn take_from(&self, bucket: &mut Bucket, now_nanos: u64) -> Decision {
        let tokens = self.refilled(bucket, now_nanos);
        bucket.last_nanos = bucket.last_nanos.max(now_nanos);
        if tokens >= 1.0 {
            bucket.tokens = tokens - 1.0;
            Decision::Allowed {
                remaining: bucket.tokens as u32,
            }
        } else {
            bucket.tokens = tokens;
            let wait_nanos = (1.0 - tokens) / self.refill_per_nano;
            Decision::Limited {
                retry_after_ms: (wait_nanos / 1e6).ceil().max(1.0) as u64,
            }
        }
    }

    /// Forgets buckets until the map is back under its bound; one sweeper at a time.
    fn sweep(&self, now_nanos: u64) {
        if self.sweeping.swap(true, Ordering::Acquire) {
            return;
        }
        let target = self.max_keys - self.max_keys / 4;
        self.retain(|b| self.refilled(b, now_nanos) < self.capacity);
        let excess = self.len().saturating_sub(target);
        if excess > 0 {
            // Keep the `target` most recently used: cut at the excess-th oldest touch.
            let mut stamps: Vec<u64> = self.buckets.iter().map(|e| e.last_nanos).collect();
            if excess <= stamps.len() {
                let (_, &mut cutoff, _) = stamps.select_nth_unstable(excess - 1);
                self.retain(|b| b.last_nanos > cutoff);
            }
        }
        self.sweeping.store(false, Ordering::Release);
    }

    fn retain(&self, keep: impl Fn(&Bucket) -> bool) {
        let removed = AtomicUsize::new(0);
        self.buckets.retain(|_, b| {
            let kept = keep(b);
            if !kept {
                removed.fetch_add(1, Ordering::Relaxed);
            }
            kept
        });
        self.len.fetch_sub(removed.into_inner(), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEC: u64 = 1_000_000_000;

    #[test]
    fn allows_capacity_then_limits() {
        let rl = RateLimiter::new(3, 1.0, 100);
        assert_eq!(rl.take(b"u", 0), Decision::Allowed { remaining: 2 });
        assert_eq!(rl.take(b"u", 0), Decision::Allowed { remaining: 1 });
        assert_eq!(rl.take(b"u", 0), Decision::Allowed { remaining: 0 });
        assert_eq!(
            rl.take(b"u", 0),
            Decision::Limited {
                retry_after_ms: 1000
            }
        );
        assert_eq!(rl.take(b"other", 0), Decision::Allowed { remaining: 2 });
    }

    #[test]
    fn refills_continuously() {
        let rl = RateLimiter::new(2, 4.0, 100);
        rl.take(b"u", 0);
        rl.take(b"u", 0);
        assert_eq!(
            rl.take(b"u", SEC / 8),
            Decision::Limited {
                retry_after_ms: 125
            }
        );
        assert_eq!(rl.take(b"u", SEC / 4), Decision::Allowed { remaining: 0 });
        assert_eq!(rl.take(b"u", 10 * SEC), Decision::Allowed { remaining: 1 });
    }

    #[test]
    fn a_clock_going_backwards_never_adds_tokens() {
        let rl = RateLimiter::new(1, 1.0, 100);
        rl.take(b"u", 5 * SEC);
        assert!(matches!(rl.take(b"u", SEC), Decision::Limited { .. }));
    }

    #[test]
    fn memory_stays_bounded_under_a_flood_of_keys() {
        let rl = RateLimiter::new(10, 1.0, 1000);
        for i in 0..100_000u32 {
            rl.take(&i.to_le_bytes(), SEC * 100 + i as u64);
            assert!(rl.len() <= 1001);
        }
    }

    #[test]
    fn an_active_bucket_survives_a_flood() {
        let rl = RateLimiter::new(5, 0.001, 100);
        for _ in 0..5 {
            rl.take(b"busy", 0);
        }
        for i in 0..10_000u64 {
            rl.take(b"busy", i * 1000);
            rl.take(&i.to_le_bytes(), i * 1000);
        }
        assert!(matches!(
            rl.take(b"busy", 10_000_000),
            Decision::Limited { .. }
        ));
    }

    #[test]
    fn a_steady_user_survives_a_flood_faster_than_the_refill() {
        // 1,000 new keys per millisecond against a bound of 5,000: the user touching its bucket
        // every millisecond is always among the most recently used, so it is never reset.
        let rl = RateLimiter::new(1000, 1.0, 5000);
        let mut key = 0u64;
        for ms in 0..100u64 {
            let now = ms * 1_000_000;
            assert!(matches!(rl.take(b"steady", now), Decision::Allowed { .. }));
            for i in 0..1000u64 {
                key += 1;
                rl.take(&key.to_le_bytes(), now + i);
            }
        }
        assert_eq!(
            rl.take(b"steady", 100_000_000),
            Decision::Allowed { remaining: 899 }
        );
    }

    #[test]
    fn full_buckets_are_forgotten_first() {
        let rl = RateLimiter::new(2, 1000.0, 10);
        for i in 0..11u8 {
            rl.take(&[i], 0);
        }
        // Every bucket refilled long ago: the sweep forgets them all but the newest.
        rl.take(b"new", 10 * SEC);
        assert!(rl.len() <= 2);
    }

    #[test]
    fn concurrent_takes_never_exceed_capacity() {
        let rl = std::sync::Arc::new(RateLimiter::new(1000, 0.000_001, 100));
        let allowed = std::sync::Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (rl, allowed) = (rl.clone(), allowed.clone());
                std::thread::spawn(move || {
                    for _ in 0..1000 {
                        if let Decision::Allowed { .. } = rl.take(b"k", 1) {
                            allowed.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(allowed.load(Ordering::Relaxed), 1000);
    }
}
