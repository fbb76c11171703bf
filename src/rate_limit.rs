//! Per-key rate limits as GCRA (the generic cell rate algorithm, a token bucket kept as one
//! "theoretical arrival time" per key) on a concurrent map, on a monotonic clock.
//!
//! A bucket of `capacity` tokens refilled at `refill_per_sec` is one number, its TAT: the
//! instant the bucket will be full again (stored as its distance from the key's last request,
//! so its precision does not shrink as the process's uptime grows). A request costing `n`
//! tokens at `now` is admitted when `max(TAT, now) + n·T − now ≤ capacity·T` (`T` =
//! nanoseconds per token, at most [`MAX_INTERVAL_NANOS`]), which moves the TAT forward; a refused request changes nothing. Over any interval of `e` seconds a key is
//! admitted at most `capacity + refill_per_sec·e` tokens (to within a millionth of a token, the
//! allowance for float rounding).
//!
//! Memory is bounded: past `max_keys` buckets a sweep forgets full buckets (TAT in the past:
//! nothing owed), then, if a flood of distinct keys keeps the map over its bound, the least
//! recently used ones down to three quarters of the bound. Forgetting never forgets a debt: a
//! bucket that is not full is folded into the [`DebtSketch`] first, and an unknown key starts
//! from the sketch, never fresher than it left (see `debt_sketch.rs`).

mod debt_sketch;
mod lease;

use crate::contract::{limits, messages};
use dashmap::mapref::entry::Entry;
use dashmap::DashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

pub use self::debt_sketch::{width_for, DebtSketch, KeyHash};
pub use self::lease::{check_grant, check_lease_options, LeaseDecision, LeaseTable};
pub use crate::clock::monotonic_nanos;

/// Whether a token is a client's own (RFC 9068 §2.2, the client credentials grant): a
/// non-empty `client_id` claim, and a `sub` that is absent, empty or that same client id (the
/// RFC has `sub` name the client when no resource owner is involved). No user is behind it.
pub fn is_client_credentials(sub: &str, client_id: Option<&str>) -> bool {
    client_id.is_some_and(|c| !c.is_empty() && (sub.is_empty() || sub == c))
}

/// The bucket key of a verified identity, written into `key` (docs/rate-limiting.md): the
/// tenant the signature vouches for (`claim_tenant`: the token's own `tenant_id` claim or its
/// trusted issuer's tenant; a header or Host tenant must not buy a fresh bucket), `:`, then the
/// subject. A valid tenant id has no `:`, so no two (tenant, subject) pairs share a key. A
/// client-credentials token's subject is its client id; unless `limit_clients`
/// (`rateLimitClientCredentials`) it takes no bucket at all: `false`, a calling service is not
/// throttled as one user. User tokens always take one.
pub fn identity_key(
    key: &mut Vec<u8>,
    claim_tenant: Option<&[u8]>,
    sub: &str,
    client_id: Option<&str>,
    limit_clients: bool,
) -> bool {
    let subject = match client_id {
        Some(client) if is_client_credentials(sub, client_id) => {
            if !limit_clients {
                return false;
            }
            client
        }
        _ => sub,
    };
    key.clear();
    if let Some(tenant) = claim_tenant {
        key.extend_from_slice(tenant);
    }
    key.push(b':');
    key.extend_from_slice(subject.as_bytes());
    true
}

const NANOS_PER_SEC: f64 = 1e9;
/// Longest time one token takes to come back, in nanoseconds (about 3e273 years): a refill so
/// small that `1e9 / refill` is larger (or overflows to infinity, as `Number.MIN_VALUE` does)
/// means "never refills" and is held here. Unclamped, an infinite interval made every sum
/// below infinite and `∞ ≤ ∞` admitted every request; at this bound `(capacity + cost + 1)·T`
/// stays far below `f64::MAX` for every capacity (≤ 1e9), so the test stays exact.
pub const MAX_INTERVAL_NANOS: f64 = 1e290;
/// Slack on the admission test, in tokens: absorbs float rounding so `capacity` requests at one
/// instant are all admitted and `remaining` counts whole tokens exactly.
const ROUNDING_SLACK: f64 = 1e-6;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Decision {
    /// The tokens were taken; `remaining` whole tokens are left.
    Allowed { remaining: u32 },
    /// Not enough tokens (`remaining` whole ones are left); enough will be back after
    /// `retry_after_ms`.
    Limited { remaining: u32, retry_after_ms: u64 },
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    /// How far the theoretical arrival time (the bucket is full from then on) lies ahead of
    /// `last_nanos`, in nanoseconds; ≤ 0 when full. Kept relative, not as an instant: at a
    /// monotonic clock of 1e15 ns (11.6 days up) an f64 instant is exact only to 1/8 ns, so
    /// `TAT + T` with `T` ≈ 1.3 ns (a refill near the 1e9 bound) rounded by up to 5% of a token
    /// on every admission, and 1e9/1.3 tokens per second admitted 4% over the limit.
    debt: f64,
    /// Last request: the instant `debt` is measured from, and the least-recently-used order.
    last_nanos: u64,
    /// The key's sketch cells, hashed once when the bucket is created.
    hash: KeyHash,
}

impl Bucket {
    /// TAT − now: what the bucket owes at `now_nanos` (≤ 0: full). A clock read that lags
    /// `last_nanos` (another thread read it earlier) never adds tokens: the TAT stays put.
    fn owed(&self, now_nanos: u64) -> f64 {
        if now_nanos >= self.last_nanos {
            self.debt - (now_nanos - self.last_nanos) as f64
        } else {
            self.debt + (self.last_nanos - now_nanos) as f64
        }
    }

    /// The TAT as an instant, rounded up, for the sketch: a folded debt may come back a hair
    /// older, never fresher.
    fn tat(&self) -> f64 {
        let base = self.last_nanos as f64;
        let tat = base + self.debt;
        if tat - base < self.debt {
            tat.next_up()
        } else {
            tat
        }
    }
}

pub struct RateLimiter {
    capacity: u32,
    /// Nanoseconds per token.
    interval: f64,
    /// `capacity·T` plus the rounding slack: the most a TAT may run ahead of now.
    limit: f64,
    max_keys: usize,
    buckets: DashMap<Box<[u8]>, Bucket>,
    len: AtomicUsize,
    sweeping: AtomicBool,
    sketch: DebtSketch,
}

/// Bounds of the standalone limiter's options (`new RateLimiter(...)`).
pub const MAX_CAPACITY: f64 = limits::RATE_LIMITER_MAX_CAPACITY as f64;
pub const MAX_REFILL_PER_SEC: f64 = limits::RATE_LIMITER_MAX_REFILL_PER_SEC as f64;
pub const MAX_KEYS_BOUND: f64 = limits::RATE_LIMITER_MAX_KEYS as f64;
pub const DEFAULT_MAX_KEYS: usize = 100_000;
/// Longest key `consume` accepts, in UTF-8 bytes: bounds the table at `max_keys` × this.
pub const MAX_KEY_BYTES: usize = limits::RATE_LIMITER_MAX_KEY_BYTES as usize;

/// Checks the standalone limiter's options; the message names the option (`RangeError`).
pub fn check_options(
    capacity: f64,
    refill_per_sec: f64,
    max_keys: Option<f64>,
) -> Result<(), String> {
    if !(capacity.fract() == 0.0 && (1.0..=MAX_CAPACITY).contains(&capacity)) {
        return Err(messages::integer_out_of_range(
            "options.capacity",
            1.0,
            MAX_CAPACITY,
            capacity,
        ));
    }
    if !(refill_per_sec > 0.0 && refill_per_sec <= MAX_REFILL_PER_SEC) {
        return Err(messages::refill_out_of_range(
            "options.refillPerSec",
            MAX_REFILL_PER_SEC,
            refill_per_sec,
        ));
    }
    if let Some(n) = max_keys {
        if !(n.fract() == 0.0 && (1.0..=MAX_KEYS_BOUND).contains(&n)) {
            return Err(messages::integer_out_of_range(
                "options.maxKeys",
                1.0,
                MAX_KEYS_BOUND,
                n,
            ));
        }
    }
    Ok(())
}

/// Checks `consume`'s cost: a whole number of tokens the bucket can hold.
pub fn check_cost(cost: f64, capacity: u32) -> Result<u32, String> {
    if cost.fract() == 0.0 && cost >= 1.0 && cost <= capacity as f64 {
        Ok(cost as u32)
    } else {
        Err(messages::cost_out_of_range(capacity as f64, cost))
    }
}

/// Two random 32-bit seeds for a limiter's sketch hash.
pub fn random_seeds() -> (u32, u32) {
    use ring::rand::{SecureRandom, SystemRandom};
    let mut bytes = [0u8; 8];
    // The OS generator failing leaves fixed seeds: collisions stay as rare, only predictable.
    let _ = SystemRandom::new().fill(&mut bytes);
    let [a, b] = [&bytes[..4], &bytes[4..]].map(|s| u32::from_le_bytes(s.try_into().unwrap()));
    (a, b)
}

/// The domain label of [`seeds_from_secret`]: these seeds are for nothing else.
const SEED_LABEL: &[u8] = b"auth-shield rate-limit sketch seeds v1";

/// Sketch seeds derived from a secret (HMAC-SHA256 under the secret over a fixed label, its
/// first 8 bytes as two little-endian u32). As unpredictable to outsiders as the secret, and the
/// same in every process and engine built from it, so the JS engine and shadow mode agree with
/// the native one after a flood folds buckets into the sketch. Mirrored by `seedsFromSecret` in
/// js/rate-limit/debt-sketch.js.
pub fn seeds_from_secret(secret: &[u8]) -> (u32, u32) {
    let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
    let tag = ring::hmac::sign(&key, SEED_LABEL);
    let bytes = tag.as_ref();
    let lane =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    (lane(0), lane(4))
}

/// Nanoseconds per token at `refill_per_sec`, saturated at [`MAX_INTERVAL_NANOS`] (a refill of
/// 0, a subnormal or `Number.MIN_VALUE` never refills; it never switches the limit off).
pub fn interval_nanos(refill_per_sec: f64) -> f64 {
    let interval = NANOS_PER_SEC / refill_per_sec;
    // NaN cannot come from a checked option; were it to, it must not admit either.
    if interval.is_nan() || interval > MAX_INTERVAL_NANOS {
        MAX_INTERVAL_NANOS
    } else {
        interval
    }
}

impl RateLimiter {
    /// `capacity` tokens per bucket, `refill_per_sec` tokens added per second (> 0), at most
    /// about `max_keys` buckets kept, plus a debt sketch of `ROWS × width_for(max_keys)` cells.
    pub fn new(capacity: u32, refill_per_sec: f64, max_keys: usize) -> Self {
        Self::with_seeds(capacity, refill_per_sec, max_keys, random_seeds())
    }

    /// As [`RateLimiter::new`] with fixed sketch seeds (tests, and mirroring the JS engine).
    pub fn with_seeds(
        capacity: u32,
        refill_per_sec: f64,
        max_keys: usize,
        seeds: (u32, u32),
    ) -> Self {
        let max_keys = max_keys.max(1);
        let interval = interval_nanos(refill_per_sec);
        RateLimiter {
            capacity,
            interval,
            limit: (capacity as f64 + ROUNDING_SLACK) * interval,
            max_keys,
            buckets: DashMap::new(),
            len: AtomicUsize::new(0),
            sweeping: AtomicBool::new(false),
            sketch: DebtSketch::new(width_for(max_keys), seeds),
        }
    }

    pub fn capacity(&self) -> u32 {
        self.capacity
    }

    /// Number of buckets currently remembered.
    pub fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Bytes of the debt sketch (fixed at construction).
    #[cfg(test)]
    pub fn sketch_bytes(&self) -> usize {
        self.sketch.bytes()
    }

    /// Takes one token from `key`'s bucket at time `now_nanos` (see [`monotonic_nanos`]).
    pub fn take(&self, key: &[u8], now_nanos: u64) -> Decision {
        self.consume(key, 1, now_nanos)
    }

    /// Takes `cost` tokens from `key`'s bucket at `now_nanos`, or none if it holds fewer.
    pub fn consume(&self, key: &[u8], cost: u32, now_nanos: u64) -> Decision {
        if let Some(mut bucket) = self.buckets.get_mut(key) {
            return self.charge(&mut bucket, cost, now_nanos);
        }
        let decision = match self.buckets.entry(key.into()) {
            Entry::Occupied(mut e) => self.charge(e.get_mut(), cost, now_nanos),
            Entry::Vacant(e) => {
                // Under the shard lock: a sweep folding this key has finished with it.
                let hash = self.sketch.hash(key);
                let mut bucket = Bucket {
                    debt: self.sketch.tat_of(hash) - now_nanos as f64,
                    last_nanos: now_nanos,
                    hash,
                };
                let decision = self.charge(&mut bucket, cost, now_nanos);
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

    fn charge(&self, bucket: &mut Bucket, cost: u32, now_nanos: u64) -> Decision {
        // `start` and `ahead` are `max(TAT, now) − now` and the TAT after this request − now.
        let owed = bucket.owed(now_nanos);
        if now_nanos >= bucket.last_nanos {
            // Measured from now on: the same TAT, the debt as small as it can be.
            bucket.debt = owed;
            bucket.last_nanos = now_nanos;
        }
        let start = owed.max(0.0);
        let ahead = start + cost as f64 * self.interval;
        if ahead <= self.limit {
            // A clock that seems to go backwards never adds tokens: the TAT only moves forward.
            bucket.debt = ahead - (bucket.last_nanos - now_nanos) as f64;
            Decision::Allowed {
                remaining: ((self.limit - ahead) / self.interval) as u32,
            }
        } else {
            Decision::Limited {
                remaining: ((self.limit - start) / self.interval) as u32,
                retry_after_ms: ((ahead - self.limit) / 1e6).ceil().max(1.0) as u64,
            }
        }
    }

    /// Forgets buckets until the map is back under its bound; one sweeper at a time.
    fn sweep(&self, now_nanos: u64) {
        if self.sweeping.swap(true, Ordering::Acquire) {
            return;
        }
        let target = self.max_keys - self.max_keys / 4;
        // A full bucket owes nothing: forgetting it loses nothing.
        self.retain(|b| b.owed(now_nanos) > 0.0);
        let excess = self.len().saturating_sub(target);
        if excess > 0 {
            // Keep the `target` most recently used: cut at the excess-th oldest touch, and
            // fold what is cut into the sketch (inside the shard lock, before it is gone).
            let mut stamps: Vec<u64> = self.buckets.iter().map(|e| e.last_nanos).collect();
            if excess <= stamps.len() {
                let (_, &mut cutoff, _) = stamps.select_nth_unstable(excess - 1);
                self.retain(|b| {
                    let keep = b.last_nanos > cutoff;
                    if !keep && b.owed(now_nanos) > 0.0 {
                        self.sketch.fold(b.hash, b.tat());
                    }
                    keep
                });
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
mod extreme_tests;
#[cfg(test)]
mod tests;
