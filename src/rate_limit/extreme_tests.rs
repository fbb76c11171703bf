//! The limiter at the edges of its options: refills so small that `1e9 / refill` overflows
//! (subnormals, `Number.MIN_VALUE`), the largest capacities and refills, and values next to
//! each bound of contract/options.json. A refill of 1e-300 once made the interval infinite and
//! `∞ ≤ ∞` admitted every request.

use super::*;
use proptest::prelude::*;

const SEC: u64 = 1_000_000_000;

/// Refill rates: each bound of `rateLimitRefill` / `refillPerSec` (0 exclusive, 1e9), the
/// values next to them, subnormals and tiny normals, and ordinary rates.
fn refill() -> impl Strategy<Value = f64> {
    prop_oneof![
        prop::sample::select(vec![
            f64::from_bits(1), // Number.MIN_VALUE
            f64::from_bits(2),
            f64::from_bits(0x000f_ffff_ffff_ffff), // the largest subnormal
            f64::MIN_POSITIVE,
            1e-300,
            5e-300,
            1e-290,
            1e-281,
            1e-280,
            1e-9,
            1e-6,
            0.001,
            1.0,
            1e9,
            1e9 - 1e-7, // the double just below 1e9
            999_999_999.0,
        ]),
        (1u64..0x0010_0000_0000_0000).prop_map(f64::from_bits), // any subnormal
        (-320i32..10).prop_map(|e| 10f64.powi(e)),
        (1e-3f64..1e9),
    ]
}

/// Capacities: 1, 2, 3, the bound 1e9 and its neighbour, and anything between.
fn capacity() -> impl Strategy<Value = u32> {
    prop_oneof![
        prop::sample::select(vec![1u32, 2, 3, 999_999_999, 1_000_000_000]),
        1u32..=1_000_000_000,
    ]
}

/// Steps of the clock in nanoseconds: none, one, ordinary gaps and long ones.
fn step() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), Just(1u64), 0u64..SEC, SEC..100 * SEC,]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn admissions_never_exceed_capacity_plus_refill_times_elapsed(
        capacity in capacity(),
        refill in refill(),
        calls in prop::collection::vec((step(), any::<u32>()), 1..40),
        // The monotonic clock after 16 minutes, 11.6 days, 104 days of uptime.
        start in prop::sample::select(vec![1_000 * SEC, 1_000_000 * SEC, 1 << 53]),
    ) {
        let rl = RateLimiter::with_seeds(capacity, refill, 100, (3, 5));
        let mut now = start;
        let mut admitted: Vec<(u64, u64)> = Vec::new();
        for (step, draw) in calls {
            now += step;
            let cost = 1 + draw % capacity;
            match rl.consume(b"k", cost, now) {
                Decision::Allowed { remaining } => {
                    prop_assert!(remaining < capacity);
                    admitted.push((now, cost as u64));
                }
                Decision::Limited { remaining, retry_after_ms } => {
                    prop_assert!(remaining < cost && remaining <= capacity);
                    prop_assert!(retry_after_ms >= 1);
                }
            }
        }
        for i in 0..admitted.len() {
            let mut tokens = 0u64;
            for &(end, cost) in &admitted[i..] {
                tokens += cost;
                let elapsed = (end - admitted[i].0) as f64 / 1e9;
                let bound = capacity as f64 + refill * elapsed;
                // Float rounding of the TAT sums: at most a millionth of a token, plus a
                // billionth of the bound (one token at capacity 1e9).
                prop_assert!(
                    tokens as f64 <= bound + ROUNDING_SLACK + bound * 1e-9,
                    "{tokens} tokens in {elapsed} s at capacity {capacity}, refill {refill}"
                );
            }
        }
    }
}

#[test]
fn a_refill_too_small_to_represent_never_refills() {
    for refill in [f64::from_bits(1), f64::MIN_POSITIVE, 1e-300, 1e-290, 1e-281] {
        let rl = RateLimiter::with_seeds(3, refill, 100, (3, 5));
        let now = 1_000 * SEC;
        for left in [2, 1, 0] {
            assert_eq!(
                rl.take(b"u", now),
                Decision::Allowed { remaining: left },
                "{refill}"
            );
        }
        for later in [now, now + SEC, now + 1_000_000 * SEC, u64::MAX / 2] {
            assert_eq!(
                rl.take(b"u", later),
                Decision::Limited {
                    remaining: 0,
                    retry_after_ms: u64::MAX
                },
                "{refill}"
            );
        }
    }
}

#[test]
fn the_interval_saturates_and_stays_finite_for_every_capacity() {
    assert_eq!(interval_nanos(1e9), 1.0);
    assert_eq!(interval_nanos(f64::from_bits(1)), MAX_INTERVAL_NANOS);
    assert_eq!(interval_nanos(0.0), MAX_INTERVAL_NANOS);
    assert_eq!(interval_nanos(1e-281), MAX_INTERVAL_NANOS);
    let rl = RateLimiter::with_seeds(1_000_000_000, f64::from_bits(1), 100, (3, 5));
    assert_eq!(
        rl.consume(b"u", 1_000_000_000, SEC),
        Decision::Allowed { remaining: 0 }
    );
    assert!(rl.limit.is_finite() && (rl.limit + 2e9 * rl.interval).is_finite());
    assert_eq!(
        rl.take(b"u", SEC),
        Decision::Limited {
            remaining: 0,
            retry_after_ms: u64::MAX
        }
    );
}

#[test]
fn a_refill_near_the_bound_stays_exact_after_days_of_uptime() {
    // At 1e15 ns an f64 instant is exact to 1/8 ns: with the TAT kept as an instant, a refill
    // of 1e9/1.3 admitted 800,002 of 1,000,000 one-nanosecond-apart requests (bound 769,233)
    // and 758,252,799.8 admitted 727,274 (bound 758,255).
    for refill in [1e9 / 1.3, 758_252_799.798_156_4, 3e8, 1e9] {
        let rl = RateLimiter::with_seeds(3, refill, 100, (3, 5));
        let start = 1_000_000 * SEC;
        let mut admitted = 0u64;
        for i in 1..=1_000_000u64 {
            if let Decision::Allowed { .. } = rl.take(b"u", start + i) {
                admitted += 1;
            }
        }
        let bound = 3.0 + refill * 1e6 / 1e9;
        assert!(
            admitted as f64 <= bound && admitted as f64 >= (bound - 1.0).min(1e6),
            "{refill}: {admitted} admitted, bound {bound}"
        );
    }
}
