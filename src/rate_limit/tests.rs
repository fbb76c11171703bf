use super::debt_sketch::ROWS;
use super::*;

const SEC: u64 = 1_000_000_000;

fn limiter(capacity: u32, refill: f64, max_keys: usize) -> RateLimiter {
    RateLimiter::with_seeds(capacity, refill, max_keys, (7, 11))
}

#[test]
fn allows_capacity_then_limits() {
    let rl = limiter(3, 1.0, 100);
    assert_eq!(rl.take(b"u", 0), Decision::Allowed { remaining: 2 });
    assert_eq!(rl.take(b"u", 0), Decision::Allowed { remaining: 1 });
    assert_eq!(rl.take(b"u", 0), Decision::Allowed { remaining: 0 });
    assert_eq!(
        rl.take(b"u", 0),
        Decision::Limited {
            remaining: 0,
            retry_after_ms: 1000
        }
    );
    assert_eq!(rl.take(b"other", 0), Decision::Allowed { remaining: 2 });
}

#[test]
fn refills_continuously() {
    let rl = limiter(2, 4.0, 100);
    rl.take(b"u", 0);
    rl.take(b"u", 0);
    assert_eq!(
        rl.take(b"u", SEC / 8),
        Decision::Limited {
            remaining: 0,
            retry_after_ms: 125
        }
    );
    assert_eq!(rl.take(b"u", SEC / 4), Decision::Allowed { remaining: 0 });
    assert_eq!(rl.take(b"u", 10 * SEC), Decision::Allowed { remaining: 1 });
}

#[test]
fn a_cost_takes_several_tokens_or_none() {
    let rl = limiter(10, 1.0, 100);
    assert_eq!(rl.consume(b"u", 7, 0), Decision::Allowed { remaining: 3 });
    assert_eq!(
        rl.consume(b"u", 5, 0),
        Decision::Limited {
            remaining: 3,
            retry_after_ms: 2000
        }
    );
    // The refused request took nothing.
    assert_eq!(rl.consume(b"u", 3, 0), Decision::Allowed { remaining: 0 });
}

#[test]
fn awkward_refill_rates_still_admit_exactly_capacity_at_once() {
    for (capacity, refill) in [(3, 3.0), (7, 0.7), (100, 10.0), (1000, 1.0 / 3.0), (5, 1e9)] {
        let rl = limiter(capacity, refill, 100);
        let now = 123_456_789_012;
        for left in (0..capacity).rev() {
            assert_eq!(rl.take(b"u", now), Decision::Allowed { remaining: left });
        }
        assert!(matches!(rl.take(b"u", now), Decision::Limited { .. }));
    }
}

#[test]
fn a_clock_going_backwards_never_adds_tokens() {
    let rl = limiter(1, 1.0, 100);
    rl.take(b"u", 5 * SEC);
    assert!(matches!(rl.take(b"u", SEC), Decision::Limited { .. }));
}

#[test]
fn memory_stays_bounded_under_a_flood_of_keys() {
    let rl = limiter(10, 1.0, 1000);
    for i in 0..100_000u32 {
        rl.take(&i.to_le_bytes(), SEC * 100 + i as u64);
        assert!(rl.len() <= 1001);
    }
    assert_eq!(rl.sketch_bytes(), ROWS * 1024 * 8);
}

#[test]
fn an_active_bucket_survives_a_flood() {
    let rl = limiter(5, 0.001, 100);
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
fn an_evicted_debt_is_not_forgotten() {
    // Issue 12: an exhausted key pushed out of a 1000-key table by 5000 others came back full.
    let rl = limiter(5, 0.001, 1000);
    for _ in 0..5 {
        rl.take(b"acme:alice", 0);
    }
    for i in 0..5000u64 {
        rl.take(format!("t{i}:alice").as_bytes(), i);
    }
    assert!(rl.len() <= 1001);
    assert!(matches!(
        rl.take(b"acme:alice", 5000),
        Decision::Limited { .. }
    ));
}

#[test]
fn an_exhausted_key_stays_limited_after_300k_other_keys_at_the_default_bound() {
    let rl = RateLimiter::new(5, 0.001, 100_000);
    for _ in 0..5 {
        rl.take(b":victim", 0);
    }
    for i in 0..300_000u64 {
        rl.take(&i.to_le_bytes(), i);
    }
    assert!(matches!(
        rl.take(b":victim", 300_000),
        Decision::Limited { .. }
    ));
}

#[test]
fn a_partly_spent_bucket_comes_back_with_what_it_had_left() {
    let rl = limiter(5, 0.001, 10);
    for _ in 0..3 {
        rl.take(b"k", 0);
    }
    for i in 0..100u64 {
        rl.take(&i.to_le_bytes(), 1 + i);
    }
    assert!(
        rl.buckets.get(&b"k"[..]).is_none(),
        "k should have been evicted"
    );
    assert_eq!(rl.take(b"k", 200), Decision::Allowed { remaining: 1 });
}

#[test]
fn a_steady_user_survives_a_flood_faster_than_the_refill() {
    // 1,000 new keys per millisecond against a bound of 5,000: the user touching its bucket
    // every millisecond is always among the most recently used, so it keeps its exact state.
    let rl = limiter(1000, 1.0, 5000);
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
    let rl = limiter(2, 1000.0, 10);
    for i in 0..11u8 {
        rl.take(&[i], 0);
    }
    // Every bucket refilled long ago: the sweep forgets them all but the newest.
    rl.take(b"new", 10 * SEC);
    assert!(rl.len() <= 2);
}

/// xorshift64*: a tiny deterministic generator for the sequence tests.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn no_key_ever_exceeds_capacity_plus_refill_over_any_interval() {
    // Random traffic from a few watched keys among floods of others, a tiny table (so watched
    // keys are evicted and come back through the sketch) and a tiny sketch hit by collisions.
    for seed in 1..40u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let capacity = 1 + rng.below(6) as u32;
        let refill = [0.5, 2.0, 10.0][rng.below(3) as usize];
        let rl = RateLimiter::with_seeds(capacity, refill, 1 + rng.below(20) as usize, (1, 2));
        let mut admitted: Vec<Vec<u64>> = vec![Vec::new(); 4];
        let mut now = 0u64;
        let mut flood = 0u64;
        for _ in 0..3000 {
            now += rng.below(SEC / 20);
            if rng.below(3) == 0 {
                for _ in 0..rng.below(50) {
                    flood += 1;
                    rl.consume(
                        &flood.to_le_bytes(),
                        1 + rng.below(capacity as u64) as u32,
                        now,
                    );
                }
            }
            let k = rng.below(4) as usize;
            if let Decision::Allowed { .. } = rl.take(format!("watched{k}").as_bytes(), now) {
                admitted[k].push(now);
            }
        }
        for times in &admitted {
            for (i, &start) in times.iter().enumerate() {
                for (j, &end) in times.iter().enumerate().skip(i) {
                    let bound =
                        capacity as f64 + refill * (end - start) as f64 / 1e9 + ROUNDING_SLACK;
                    assert!(
                        (j - i + 1) as f64 <= bound,
                        "seed {seed}: {} admitted in {} ns",
                        j - i + 1,
                        end - start
                    );
                }
            }
        }
    }
}

#[test]
fn concurrent_takes_never_exceed_capacity() {
    let rl = std::sync::Arc::new(limiter(1000, 0.000_001, 100));
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

#[test]
fn concurrent_floods_never_reset_an_exhausted_key() {
    let rl = std::sync::Arc::new(limiter(3, 0.000_001, 64));
    for _ in 0..3 {
        rl.take(b"victim", 1);
    }
    let leaked = std::sync::Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let (rl, leaked) = (rl.clone(), leaked.clone());
            std::thread::spawn(move || {
                for i in 0..20_000u64 {
                    rl.take(&(t << 32 | i).to_le_bytes(), 2 + i);
                    if i % 100 == 0 && matches!(rl.take(b"victim", 2 + i), Decision::Allowed { .. })
                    {
                        leaked.fetch_add(1, Ordering::Relaxed);
                    }
                }
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
    assert_eq!(leaked.load(Ordering::Relaxed), 0);
}

#[test]
fn sketch_seeds_derive_from_a_secret_as_in_the_js_engine() {
    // HMAC-SHA256(secret, label), first 8 bytes little-endian; computed with Python's hmac
    // module, pinned in __test__/core/limiter.test.js too.
    assert_eq!(
        crate::rate_limit::seeds_from_secret(b"key-of-the-seeds-vector"),
        (3_886_601_657, 3_471_708_251)
    );
    assert_ne!(
        crate::rate_limit::seeds_from_secret(b"key-of-the-seeds-vector!"),
        (3_886_601_657, 3_471_708_251)
    );
}

#[test]
fn client_credentials_tokens_take_no_bucket_unless_asked() {
    let mut key = b"stale".to_vec();
    // RFC 9068 §2.2: sub absent (empty) or the client id itself.
    assert!(!identity_key(&mut key, None, "svc", Some("svc"), false));
    assert!(!identity_key(
        &mut key,
        Some(b"acme"),
        "",
        Some("svc"),
        false
    ));
    assert!(identity_key(&mut key, Some(b"acme"), "", Some("svc"), true));
    assert_eq!(key, b"acme:svc");
    assert!(identity_key(&mut key, None, "svc", Some("svc"), true));
    assert_eq!(key, b":svc");
}

#[test]
fn user_tokens_are_keyed_by_tenant_claim_and_sub_whatever_their_client() {
    let mut key = Vec::new();
    for (sub, client) in [("alice", Some("web")), ("alice", None), ("alice", Some(""))] {
        for limit_clients in [false, true] {
            assert!(identity_key(
                &mut key,
                Some(b"t"),
                sub,
                client,
                limit_clients
            ));
            assert_eq!(key, b"t:alice");
        }
    }
    // No sub and no client: the one shared key of sub-less tokens, as before.
    assert!(identity_key(&mut key, None, "", None, false));
    assert_eq!(key, b":");
    assert!(!is_client_credentials("", Some("")));
}
