//! Credits leased from a shared bucket (a store such as Redis), spent locally with no I/O.
//!
//! With a store attached, an identity's tokens live in one bucket shared by every process; each
//! process holds a small lease of at most `lease` tokens taken from it. A request spends a
//! credit here (one map lookup under an uncontended lock); when credits run low (at most half a
//! lease left) the key is queued, and the store's background loop fetches `lease − credits`
//! more (`drain` / `grant`). A refusal from the store becomes a local "blocked until" instant.
//! A key with no credit and no block answers `Pending` and counts one more request waiting: the
//! middleware waits for the store's round trip (the recovery seam of lib/http/decision.js) and
//! authenticates again. Requests of one key that find no credit while a fetch is in flight wait
//! for that fetch instead of failing: the table asks for a lease plus one credit per further
//! waiting request, and a grant that leaves fewer credits than requests waiting (they came after
//! the fetch left, or the shared bucket had fewer) queues the key again at once, so the store
//! asks once more before they retry; a refusal ends the wait (they are `Limited`).
//!
//! Bound (docs/scale-out.md): a process never holds more than `lease − 1 + max(1, waiting)`
//! unspent tokens of a key (`waiting`: requests that found no credit since the last answer, at
//! most `MAX_WAITERS`, each about to spend one), so across N processes admissions over any
//! interval never exceed what the shared bucket granted in it (`capacity + refill × elapsed`)
//! plus N times that.
//!
//! Memory: at most `max_keys` entries (past that, entries are forgotten down to half the bound,
//! unqueued and least recently used first: forgetting credits only makes a key stricter, and a
//! forgotten block is asked of the store again, which still holds the debt), and a renewal
//! queue of at most `max_keys` keys.

use crate::contract::{limits, messages};
use std::collections::HashMap;
use std::sync::Mutex;

/// What the lease table says about one request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LeaseDecision {
    /// A credit was spent; `remaining` estimates the tokens left (credits held here plus what
    /// the shared bucket had left at the last grant, at most the capacity).
    Allowed { remaining: u32 },
    /// The shared bucket refused this key; retry after this many milliseconds.
    Limited { retry_after_ms: u64 },
    /// No credit and no refusal yet: the key is queued for the store (one round trip).
    Pending,
}

#[derive(Debug, Clone, Copy)]
struct Lease {
    credits: u32,
    /// Tokens the shared bucket held after the last grant (for `remaining`).
    shared_remaining: u32,
    /// Monotonic nanoseconds until which the store refused this key; 0 when not blocked.
    blocked_until: u64,
    /// In the renewal queue (not yet handed to the store).
    queued: bool,
    /// Requests answered `Pending` since the last answer that covered them (at most
    /// `MAX_WAITERS`): each waits for the store and takes a credit when it retries.
    waiters: u32,
    /// The table's use counter at the last request or grant: least recently used first, with
    /// no ties (a clock could tie), so both engines evict the same keys.
    last_use: u64,
}

struct Table {
    entries: HashMap<Box<[u8]>, Lease>,
    queue: Vec<Box<[u8]>>,
    uses: u64,
}

pub struct LeaseTable {
    capacity: u32,
    lease: u32,
    /// Strict mode: no background renewal; every credit is fetched by the request that needs it.
    strict: bool,
    max_keys: usize,
    table: Mutex<Table>,
}

/// Largest `lease` accepted; the store checks it against the capacity too.
pub const MAX_LEASE: u32 = limits::MAX_LEASE as u32;
/// Most requests of one key counted as waiting for its credits; past that a request still gets
/// `Pending` but no credit is fetched for it.
pub const MAX_WAITERS: u32 = limits::MAX_LEASE_WAITERS as u32;
/// Largest `maxKeys` of a lease table (as the limiter's).
pub const MAX_LEASE_KEYS: f64 = limits::MAX_LEASE_KEYS as f64;
/// Largest token count or `sharedRemaining` a grant may carry.
pub const MAX_GRANT: f64 = limits::MAX_GRANT as f64;

/// Checks `enableSharedLimit`'s numbers; the message names the argument (`RangeError`).
pub fn check_lease_options(lease: f64, max_keys: f64) -> Result<(), String> {
    for (name, v, max) in [
        ("lease", lease, MAX_LEASE as f64),
        ("maxKeys", max_keys, MAX_LEASE_KEYS),
    ] {
        if !(v.fract() == 0.0 && (1.0..=max).contains(&v)) {
            return Err(messages::integer_out_of_range(name, 1.0, max, v));
        }
    }
    Ok(())
}

/// Checks a grant's numbers (`grantLease`): whole counts, and a non-negative wait.
pub fn check_grant(tokens: f64, shared_remaining: f64, retry_after_ms: f64) -> Result<(), String> {
    for (name, v) in [("tokens", tokens), ("sharedRemaining", shared_remaining)] {
        if !(v.fract() == 0.0 && (0.0..=MAX_GRANT).contains(&v)) {
            return Err(messages::integer_out_of_range(name, 0.0, MAX_GRANT, v));
        }
    }
    let max_wait = limits::MAX_RETRY_AFTER_MS as f64;
    if !(0.0..=max_wait).contains(&retry_after_ms) {
        return Err(messages::out_of_range(
            "retryAfterMs",
            0.0,
            max_wait,
            retry_after_ms,
        ));
    }
    Ok(())
}

impl LeaseTable {
    pub fn new(capacity: u32, lease: u32, strict: bool, max_keys: usize) -> Self {
        let lease = if strict { 1 } else { lease.clamp(1, MAX_LEASE) };
        LeaseTable {
            capacity,
            lease,
            strict,
            max_keys: max_keys.max(1),
            table: Mutex::new(Table {
                entries: HashMap::new(),
                queue: Vec::new(),
                uses: 0,
            }),
        }
    }

    #[cfg(test)]
    pub fn lease(&self) -> u32 {
        self.lease
    }

    /// Entries held (at most `max_keys`).
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Keys waiting for the store (at most `max_keys`).
    #[cfg(test)]
    pub fn queued(&self) -> usize {
        self.lock().queue.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        // A panic while holding the lock leaves plain numbers behind: still usable.
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Spends one credit of `key` at `now_nanos` (monotonic), or says why not.
    pub fn take(&self, key: &[u8], now_nanos: u64) -> LeaseDecision {
        let mut guard = self.lock();
        let table = &mut *guard;
        let low_water = self.lease / 2;
        let queue_room = table.queue.len() < self.max_keys;
        table.uses += 1;
        let use_count = table.uses;
        if let Some(entry) = table.entries.get_mut(key) {
            entry.last_use = use_count;
            if entry.credits > 0 {
                entry.credits -= 1;
                let remaining = entry
                    .credits
                    .saturating_add(entry.shared_remaining)
                    .min(self.capacity);
                if !self.strict && entry.credits <= low_water && !entry.queued && queue_room {
                    entry.queued = true;
                    table.queue.push(key.into());
                }
                return LeaseDecision::Allowed { remaining };
            }
            if entry.blocked_until > now_nanos {
                let ms = (entry.blocked_until - now_nanos).div_ceil(1_000_000);
                return LeaseDecision::Limited {
                    retry_after_ms: ms.max(1),
                };
            }
            if entry.waiters < MAX_WAITERS {
                entry.waiters += 1;
            }
            if !entry.queued && queue_room {
                entry.queued = true;
                table.queue.push(key.into());
            }
            return LeaseDecision::Pending;
        }
        if table.entries.len() >= self.max_keys {
            Self::sweep(table, self.max_keys);
        }
        let queued = table.queue.len() < self.max_keys;
        if queued {
            table.queue.push(key.into());
        }
        table.entries.insert(
            key.into(),
            Lease {
                credits: 0,
                shared_remaining: 0,
                blocked_until: 0,
                queued,
                last_use: use_count,
                waiters: 1,
            },
        );
        LeaseDecision::Pending
    }

    /// Most credits `entry` may hold: a lease, plus one for each further request waiting.
    fn target(&self, entry: &Lease) -> u32 {
        (self.lease - 1).saturating_add(entry.waiters.max(1))
    }

    /// Hands the queued keys to the store with how many tokens each wants (`lease − credits`,
    /// plus one for each further request waiting),
    /// clearing the queue. Keys forgotten or answered since they were queued are left out.
    pub fn drain(&self) -> Vec<(Box<[u8]>, u32)> {
        let mut guard = self.lock();
        let table = &mut *guard;
        let queue = std::mem::take(&mut table.queue);
        let mut wanted = Vec::with_capacity(queue.len());
        for key in queue {
            // Not queued any more: answered (or queued twice) since it was pushed.
            if let Some(entry) = table.entries.get_mut(&key).filter(|e| e.queued) {
                entry.queued = false;
                let want = self.target(entry).saturating_sub(entry.credits);
                if want > 0 {
                    wanted.push((key, want));
                }
            }
        }
        wanted
    }

    /// Records the store's answer for `key`: `tokens` granted (0 for a refusal, which blocks the
    /// key for `retry_after_ms`), and what the shared bucket held after it. Credits never exceed
    /// a lease plus one per further waiting request, so a late or repeated grant cannot loosen
    /// the bound. A grant that leaves fewer credits than requests waiting queues the key again.
    pub fn grant(
        &self,
        key: &[u8],
        tokens: u32,
        shared_remaining: u32,
        retry_after_ms: u64,
        now_nanos: u64,
    ) {
        let mut guard = self.lock();
        let table = &mut *guard;
        if !table.entries.contains_key(key) && table.entries.len() >= self.max_keys {
            Self::sweep(table, self.max_keys);
        }
        table.uses += 1;
        let use_count = table.uses;
        let entry = table.entries.entry(key.into()).or_insert(Lease {
            credits: 0,
            shared_remaining: 0,
            blocked_until: 0,
            queued: false,
            last_use: use_count,
            waiters: 0,
        });
        entry.last_use = use_count;
        // An answer settles whatever was queued for the key.
        entry.queued = false;
        entry.credits = entry.credits.saturating_add(tokens).min(self.target(entry));
        entry.shared_remaining = shared_remaining;
        entry.blocked_until = if tokens == 0 {
            now_nanos.saturating_add(retry_after_ms.max(1).saturating_mul(1_000_000))
        } else {
            0
        };
        if tokens > 0 && entry.credits < entry.waiters {
            // Short of the requests waiting (they came after it was asked for, or the shared
            // bucket had fewer): ask again before they retry. A refusal ends the wait (429).
            if table.queue.len() < self.max_keys {
                entry.queued = true;
                table.queue.push(key.into());
            }
        } else {
            entry.waiters = 0;
        }
    }

    /// Forgets the least recently used half of the bound, keeping queued keys when it can.
    fn sweep(table: &mut Table, max_keys: usize) {
        let target = max_keys / 2;
        let excess = table.entries.len().saturating_sub(target);
        if excess == 0 {
            return;
        }
        let mut stamps: Vec<(bool, u64)> = table
            .entries
            .values()
            .map(|e| (e.queued, e.last_use))
            .collect();
        let (_, &mut cutoff, _) = stamps.select_nth_unstable(excess - 1);
        table.entries.retain(|_, e| (e.queued, e.last_use) > cutoff);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn an_unseen_key_is_pending_once_queued() {
        let t = LeaseTable::new(100, 10, false, 100);
        assert_eq!(t.take(b"a", 0), LeaseDecision::Pending);
        assert_eq!(t.take(b"a", 1), LeaseDecision::Pending);
        // Queued once; two requests wait: a lease, and one more credit for the second.
        assert_eq!(t.drain(), vec![(Box::from(&b"a"[..]), 11)]);
        assert!(t.drain().is_empty());
    }

    #[test]
    fn spends_credits_locally_and_queues_renewal_at_half_a_lease() {
        let t = LeaseTable::new(100, 10, false, 100);
        t.take(b"a", 0);
        t.drain();
        t.grant(b"a", 10, 50, 0, 0);
        for i in 0..4 {
            assert_eq!(
                t.take(b"a", i),
                LeaseDecision::Allowed {
                    remaining: 59 - i as u32
                }
            );
            assert_eq!(t.queued(), 0);
        }
        assert_eq!(t.take(b"a", 5), LeaseDecision::Allowed { remaining: 55 });
        assert_eq!(t.drain(), vec![(Box::from(&b"a"[..]), 5)]);
    }

    #[test]
    fn a_refusal_blocks_until_the_retry_instant() {
        let t = LeaseTable::new(100, 10, false, 100);
        t.take(b"a", 0);
        t.grant(b"a", 0, 0, 250, 0);
        assert_eq!(
            t.take(b"a", 10 * MS),
            LeaseDecision::Limited {
                retry_after_ms: 240
            }
        );
        // The answer settled the queued request: nothing to ask while blocked.
        assert!(t.drain().is_empty());
        assert_eq!(t.take(b"a", 250 * MS), LeaseDecision::Pending);
        assert_eq!(t.drain(), vec![(Box::from(&b"a"[..]), 10)]);
    }

    #[test]
    fn credits_never_exceed_one_lease() {
        let t = LeaseTable::new(100, 10, false, 100);
        t.grant(b"a", 10, 0, 0, 0);
        t.grant(b"a", 10, 0, 0, 0);
        let allowed = (0..30)
            .filter(|&i| matches!(t.take(b"a", i), LeaseDecision::Allowed { .. }))
            .count();
        assert_eq!(allowed, 10);
    }

    #[test]
    fn strict_mode_fetches_one_credit_per_request_and_never_renews_early() {
        let t = LeaseTable::new(100, 10, true, 100);
        assert_eq!(t.lease(), 1);
        t.take(b"a", 0);
        assert_eq!(t.drain(), vec![(Box::from(&b"a"[..]), 1)]);
        t.grant(b"a", 1, 7, 0, 0);
        assert_eq!(t.take(b"a", 1), LeaseDecision::Allowed { remaining: 7 });
        assert_eq!(t.queued(), 0);
        assert_eq!(t.take(b"a", 2), LeaseDecision::Pending);
    }

    #[test]
    fn parallel_requests_without_credit_wait_for_one_fetch_sized_for_them() {
        let t = LeaseTable::new(100, 10, false, 100);
        for i in 0..30 {
            assert_eq!(t.take(b"a", i), LeaseDecision::Pending);
        }
        // A lease for the first, one more credit for each of the 29 others.
        assert_eq!(t.drain(), vec![(Box::from(&b"a"[..]), 39)]);
        t.grant(b"a", 39, 0, 0, 0);
        assert!(t.drain().is_empty());
        let allowed = (0..40)
            .filter(|&i| matches!(t.take(b"a", i), LeaseDecision::Allowed { .. }))
            .count();
        assert_eq!(allowed, 39);
    }

    #[test]
    fn a_grant_short_of_the_waiting_requests_asks_again_and_a_refusal_ends_the_wait() {
        let t = LeaseTable::new(100, 10, false, 100);
        t.take(b"a", 0);
        assert_eq!(t.drain(), vec![(Box::from(&b"a"[..]), 10)]);
        // 19 more arrive while that fetch is in flight.
        for i in 0..19 {
            assert_eq!(t.take(b"a", i), LeaseDecision::Pending);
        }
        t.drain();
        t.grant(b"a", 10, 0, 0, 0);
        // 10 credits for 20 waiting requests: queued again for the 10 others (a lease kept).
        assert_eq!(t.drain(), vec![(Box::from(&b"a"[..]), 19)]);
        // The shared bucket had 5: still short, asked again; then it refuses.
        t.grant(b"a", 5, 0, 0, 0);
        assert_eq!(t.drain(), vec![(Box::from(&b"a"[..]), 14)]);
        t.grant(b"a", 0, 0, 1000, 0);
        assert!(t.drain().is_empty());
        let decisions: Vec<_> = (0..20).map(|_| t.take(b"a", MS)).collect();
        assert_eq!(
            decisions
                .iter()
                .filter(|d| matches!(d, LeaseDecision::Allowed { .. }))
                .count(),
            15
        );
        assert!(decisions[15..]
            .iter()
            .all(|d| matches!(d, LeaseDecision::Limited { .. })));
    }

    #[test]
    fn waiting_requests_are_counted_up_to_the_bound() {
        let t = LeaseTable::new(1_000_000, 1, true, 100);
        for i in 0..(MAX_WAITERS as u64 + 500) {
            t.take(b"a", i);
        }
        assert_eq!(t.drain(), vec![(Box::from(&b"a"[..]), MAX_WAITERS)]);
        t.grant(b"a", 1_000_000, 0, 0, 0);
        let allowed = (0..3000)
            .filter(|&i| matches!(t.take(b"a", i), LeaseDecision::Allowed { .. }))
            .count();
        assert_eq!(allowed, MAX_WAITERS as usize);
    }

    #[test]
    fn bad_lease_arguments_name_the_argument_and_its_bounds() {
        assert_eq!(
            check_lease_options(0.0, 10.0),
            Err("lease must be an integer from 1 to 1000000, got 0".into())
        );
        assert_eq!(
            check_lease_options(5.0, 2.5),
            Err("maxKeys must be an integer from 1 to 100000000, got 2.5".into())
        );
        assert!(check_lease_options(1.0, 1.0).is_ok());
        assert!(check_grant(0.0, 0.0, 0.0).is_ok());
        assert!(check_grant(1.5, 0.0, 0.0).is_err());
        assert!(check_grant(1.0, -1.0, 0.0).is_err());
        assert!(check_grant(1.0, 0.0, f64::NAN).is_err());
    }

    #[test]
    fn a_flood_of_keys_stays_within_the_bound() {
        let t = LeaseTable::new(100, 10, false, 1000);
        for i in 0..100_000u64 {
            t.take(format!("k{i}").as_bytes(), i);
            assert!(t.len() <= 1000);
            assert!(t.queued() <= 1000);
            if i % 997 == 0 {
                for (key, want) in t.drain() {
                    t.grant(&key, want, 0, 0, i);
                }
            }
        }
    }
}
