//! The introspection cache (RFC 7662): what an authorization server said of an opaque token,
//! held so that `authenticate` stays synchronous for a token it has seen. The middleware's
//! introspection stage (lib/introspection/) asks the endpoint on a miss and admits the answer
//! (`admitIntrospection`); a hit hands the claims to the same checks a verified JWT's get.
//!
//! - Keyed by the SHA-256 digest of the token (never the token: a heap dump holds no bearer
//!   credential), like the verified-token cache (src/verified_cache.rs).
//! - An entry lives until its `until` (the stage gives min(token exp, now + cacheMaxSec)); an
//!   inactive answer (`active: false`) is a negative entry of its own, briefly.
//! - Bounded in entries and in bytes (claims + [`ENTRY_OVERHEAD`] each). A new answer that does
//!   not fit first evicts inactive answers, oldest first; an active one then evicts the oldest
//!   active; an inactive one never evicts an active one and is refused instead, so a flood of
//!   made-up tokens cannot push out the tokens of real clients.

use std::collections::{HashMap, VecDeque};
use std::hash::BuildHasherDefault;
use std::sync::{Mutex, MutexGuard, PoisonError};

use crate::contract::limits;
use crate::verified_cache::{Digest, DigestHasher};

/// Bytes counted per entry beside its claims (contract/limits.json).
pub const ENTRY_OVERHEAD: usize = limits::INTROSPECTION_ENTRY_OVERHEAD_BYTES as usize;
/// Largest claims JSON an entry holds (contract/limits.json).
pub const MAX_CLAIMS_BYTES: usize = limits::MAX_INTROSPECTION_CLAIMS_BYTES as usize;

/// What the cache holds for a token.
#[derive(Debug, PartialEq, Eq)]
pub enum Lookup {
    /// Active: its claims were copied into the caller's buffer.
    Active,
    /// Answered `active: false` (or refused by the stage) not long ago.
    Inactive,
    /// Nothing in force: the token must be introspected.
    Missing,
}

pub struct IntrospectionCache {
    max_entries: usize,
    max_bytes: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<Digest, Entry, BuildHasherDefault<DigestHasher>>,
    /// Admission order per kind, `(digest, seq)`: an item whose seq is not its entry's is stale
    /// (the entry was replaced or dropped) and skipped.
    active: VecDeque<(Digest, u64)>,
    inactive: VecDeque<(Digest, u64)>,
    bytes: usize,
    seq: u64,
}

struct Entry {
    /// `None`: an inactive token.
    claims: Option<Box<[u8]>>,
    /// Seconds since the epoch; the entry answers while `now < until`.
    until: f64,
    seq: u64,
}

impl Entry {
    fn cost(&self) -> usize {
        ENTRY_OVERHEAD + self.claims.as_ref().map_or(0, |c| c.len())
    }
}

impl IntrospectionCache {
    /// `None` for 0 entries (off).
    pub fn new(max_entries: usize, max_bytes: usize) -> Option<IntrospectionCache> {
        (max_entries > 0).then(|| IntrospectionCache {
            max_entries,
            max_bytes,
            inner: Mutex::new(Inner::default()),
        })
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        // Nothing in here panics while holding the lock; a poisoned map is still consistent.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// What is held for `digest` at `now`; an active entry's claims are copied into `out`.
    pub fn lookup(&self, digest: &Digest, now: f64, out: &mut Vec<u8>) -> Lookup {
        let inner = self.inner();
        match inner.entries.get(digest) {
            Some(e) if now < e.until => match &e.claims {
                Some(claims) => {
                    out.clear();
                    out.extend_from_slice(claims);
                    Lookup::Active
                }
                None => Lookup::Inactive,
            },
            _ => Lookup::Missing,
        }
    }

    /// Holds `claims` (None: inactive) for `digest` until `until`. False when it was refused:
    /// larger than the whole byte budget, or an inactive answer with only active ones to evict.
    pub fn admit(&self, digest: Digest, claims: Option<Box<[u8]>>, until: f64) -> bool {
        let mut guard = self.inner();
        let inner = &mut *guard;
        let active = claims.is_some();
        inner.seq += 1;
        let entry = Entry {
            claims,
            until,
            seq: inner.seq,
        };
        let cost = entry.cost();
        if cost > self.max_bytes {
            return false;
        }
        if let Some(old) = inner.entries.remove(&digest) {
            inner.bytes -= old.cost();
        }
        while inner.entries.len() >= self.max_entries || inner.bytes + cost > self.max_bytes {
            // Inactive answers go first; an active one may then make room among the active.
            let made_room = inner.evict_oldest(false) || (active && inner.evict_oldest(true));
            if !made_room {
                return false;
            }
        }
        inner.bytes += cost;
        let queue = if active {
            &mut inner.active
        } else {
            &mut inner.inactive
        };
        queue.push_back((digest, entry.seq));
        inner.entries.insert(digest, entry);
        inner.compact(self.max_entries);
        true
    }

    /// Entries held (live or past their `until`, until evicted or replaced).
    pub fn len(&self) -> usize {
        self.inner().entries.len()
    }

    /// Bytes counted against the budget.
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.inner().bytes
    }
}

impl Inner {
    /// Drops the oldest live entry of one kind; false when there is none.
    fn evict_oldest(&mut self, active: bool) -> bool {
        let queue = if active {
            &mut self.active
        } else {
            &mut self.inactive
        };
        while let Some((digest, seq)) = queue.pop_front() {
            if self.entries.get(&digest).is_some_and(|e| e.seq == seq) {
                if let Some(e) = self.entries.remove(&digest) {
                    self.bytes -= e.cost();
                }
                return true;
            }
        }
        false
    }

    /// Stale queue items (replaced entries) are dropped once they outnumber the live ones.
    fn compact(&mut self, max_entries: usize) {
        if self.active.len() + self.inactive.len() <= 2 * max_entries + 16 {
            return;
        }
        let entries = &self.entries;
        let live = |(d, s): &(Digest, u64)| entries.get(d).is_some_and(|e| e.seq == *s);
        self.active.retain(live);
        self.inactive.retain(live);
    }
}

/// A token in compact JWS form (three dot-separated segments) is verified locally; any other
/// token is introspected.
pub fn is_jwt_shaped(token: &[u8]) -> bool {
    memchr::memchr_iter(b'.', token).count() == 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verified_cache::VerifiedCache;

    fn d(i: u32) -> Digest {
        VerifiedCache::digest(&i.to_le_bytes())
    }

    #[test]
    fn answers_until_its_end_then_misses() {
        let cache = IntrospectionCache::new(10, 1 << 20).unwrap();
        let mut out = Vec::new();
        assert_eq!(cache.lookup(&d(1), 0.0, &mut out), Lookup::Missing);
        assert!(cache.admit(d(1), Some(br#"{"sub":"u"}"#.to_vec().into()), 100.0));
        assert_eq!(cache.lookup(&d(1), 99.0, &mut out), Lookup::Active);
        assert_eq!(out, br#"{"sub":"u"}"#);
        assert_eq!(cache.lookup(&d(1), 100.0, &mut out), Lookup::Missing);
        assert!(cache.admit(d(2), None, 50.0));
        assert_eq!(cache.lookup(&d(2), 10.0, &mut out), Lookup::Inactive);
        // Re-admitted: the new answer replaces the old, its bytes counted once.
        assert!(cache.admit(d(1), Some(br#"{}"#.to_vec().into()), 200.0));
        assert_eq!(cache.len(), 2);
        assert_eq!(cache.bytes(), 2 * ENTRY_OVERHEAD + 2);
        assert!(IntrospectionCache::new(0, 1).is_none());
    }

    #[test]
    fn a_flood_of_inactive_tokens_never_evicts_an_active_one() {
        let cache = IntrospectionCache::new(64, 1 << 20).unwrap();
        for i in 0..8 {
            assert!(cache.admit(d(i), Some(b"{}".to_vec().into()), 1e9));
        }
        for i in 1000..101_000 {
            cache.admit(d(i), None, 1e9);
            assert!(cache.len() <= 64);
        }
        let mut out = Vec::new();
        for i in 0..8 {
            assert_eq!(cache.lookup(&d(i), 0.0, &mut out), Lookup::Active);
        }
        // Full of active answers: an inactive one is refused, an active one evicts the oldest.
        for i in 8..64 {
            assert!(cache.admit(d(i), Some(b"{}".to_vec().into()), 1e9));
        }
        assert!(!cache.admit(d(5000), None, 1e9));
        assert!(cache.admit(d(64), Some(b"{}".to_vec().into()), 1e9));
        assert_eq!(cache.lookup(&d(0), 0.0, &mut out), Lookup::Missing);
        assert_eq!(cache.len(), 64);
    }

    #[test]
    fn bounded_in_bytes() {
        let cache = IntrospectionCache::new(1000, 10 * (ENTRY_OVERHEAD + 100)).unwrap();
        for i in 0..1000 {
            assert!(cache.admit(d(i), Some(vec![b' '; 100].into()), 1e9));
            assert!(cache.bytes() <= 10 * (ENTRY_OVERHEAD + 100));
        }
        assert_eq!(cache.len(), 10);
        assert!(!cache.admit(d(1), Some(vec![b' '; 100_000].into()), 1e9));
    }

    #[test]
    fn replaced_entries_leave_no_unbounded_queue() {
        let cache = IntrospectionCache::new(4, 1 << 20).unwrap();
        for i in 0..10_000u32 {
            cache.admit(
                d(i % 2),
                if i % 3 == 0 {
                    None
                } else {
                    Some(b"{}".to_vec().into())
                },
                1e9,
            );
        }
        let inner = cache.inner();
        assert!(inner.active.len() + inner.inactive.len() <= 2 * 4 + 17);
    }

    #[test]
    fn jwt_shape_is_three_segments() {
        assert!(is_jwt_shaped(b"a.b.c"));
        assert!(!is_jwt_shaped(b"opaque"));
        assert!(!is_jwt_shaped(b"ory_at_x.y"));
        assert!(!is_jwt_shaped(b"a.b.c.d.e"));
    }
}
