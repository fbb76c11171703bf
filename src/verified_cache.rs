//! The verified-token cache: remembers that an exact token string passed every check under one
//! key set, so that its next presentation skips the signature check (the cost of RS/PS/ES/EdDSA
//! verification). Only the signature work is saved: the payload is still decoded and the
//! claims (`exp` and `nbf` against the clock, `iss`, `aud`, ...) checked on every hit, and
//! tenant, rate limit and request id run as for any request.
//!
//! - Keyed by the SHA-256 digest of the whole token string: a token that differs in any byte
//!   (another payload under a copied signature) has another key.
//! - Each entry carries the key-set generation it was verified under; `setKeys` also clears
//!   the cache, so a retired key's tokens are checked again, and refused.
//! - Only successes are stored, and an entry is dropped once its token's `exp` has passed.
//! - Bounded: at most `capacity` entries (first in, first out), each about 100 bytes with the
//!   map and queue overhead: 1000 entries (the default) hold ~100 KB, the maximum 1,000,000
//!   ~100 MB.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};

/// SHA-256 of a token.
pub type Digest = [u8; 32];

/// Default capacity when any verification key is asymmetric (`verifiedTokenCacheMaxEntries` unset).
pub const DEFAULT_CAPACITY: usize = 1000;

pub struct VerifiedCache {
    capacity: usize,
    inner: Mutex<Inner>,
    /// Lookups answered from the cache, and the others (`metrics()`, src/metrics.rs).
    hits: AtomicU64,
    misses: AtomicU64,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<Digest, Entry, BuildHasherDefault<DigestHasher>>,
    /// Insertion order, for eviction; never longer than `capacity`.
    order: VecDeque<Digest>,
}

struct Entry {
    generation: u64,
    /// The token's `exp` (infinite when it has none).
    exp: f64,
}

impl VerifiedCache {
    /// `None` for capacity 0 (the cache is off).
    pub fn new(capacity: usize) -> Option<VerifiedCache> {
        (capacity > 0).then(|| VerifiedCache {
            capacity,
            inner: Mutex::new(Inner::default()),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        })
    }

    pub fn digest(token: &[u8]) -> Digest {
        let mut out = [0u8; 32];
        out.copy_from_slice(ring::digest::digest(&ring::digest::SHA256, token).as_ref());
        out
    }

    fn inner(&self) -> std::sync::MutexGuard<'_, Inner> {
        // Nothing in here panics while holding the lock; a poisoned map is still consistent.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether `digest` was verified under `generation` and its token has not expired at `now`
    /// (a stale entry is dropped). A hit is counted here; a miss by the caller, with
    /// [`VerifiedCache::count_miss`], once it knows the token was one the JS engine looks up too.
    pub fn hit(&self, digest: &Digest, generation: u64, now: f64) -> bool {
        let mut inner = self.inner();
        let hit = match inner.entries.get(digest) {
            None => false,
            Some(e) if e.generation == generation && now < e.exp => true,
            Some(_) => {
                inner.entries.remove(digest);
                false
            }
        };
        drop(inner);
        if hit {
            self.hits.fetch_add(1, Relaxed);
        }
        hit
    }

    /// Counts a lookup that missed (see [`VerifiedCache::hit`]).
    pub fn count_miss(&self) {
        self.misses.fetch_add(1, Relaxed);
    }

    /// `(hits, misses)` since the cache was made (`clear` keeps them).
    pub fn lookups(&self) -> (u64, u64) {
        (self.hits.load(Relaxed), self.misses.load(Relaxed))
    }

    /// Remembers a token that passed every check under `generation`.
    pub fn insert(&self, digest: Digest, generation: u64, exp: Option<f64>) {
        let mut inner = self.inner();
        if inner.entries.contains_key(&digest) {
            return;
        }
        while inner.order.len() >= self.capacity {
            if let Some(oldest) = inner.order.pop_front() {
                inner.entries.remove(&oldest);
            }
        }
        inner.order.push_back(digest);
        let exp = exp.unwrap_or(f64::INFINITY);
        inner.entries.insert(digest, Entry { generation, exp });
    }

    pub fn clear(&self) {
        let mut inner = self.inner();
        inner.entries.clear();
        inner.order.clear();
    }

    pub fn len(&self) -> usize {
        self.inner().entries.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The digest is already uniform: its first 8 bytes are the hash.
#[derive(Default)]
pub struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // A `[u8; 32]` key is hashed as its length, then its bytes: keep the bytes.
        if bytes.len() >= 8 {
            let mut first = [0u8; 8];
            first.copy_from_slice(&bytes[..8]);
            self.0 = u64::from_le_bytes(first);
        }
    }
    fn write_usize(&mut self, _: usize) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_successes_per_generation_until_exp() {
        let cache = VerifiedCache::new(10).unwrap();
        let d = VerifiedCache::digest(b"a.b.c");
        assert!(!cache.hit(&d, 0, 1.0));
        cache.insert(d, 0, Some(100.0));
        assert!(cache.hit(&d, 0, 99.0));
        assert!(!cache.hit(&d, 1, 99.0), "another key set");
        assert!(!cache.hit(&d, 0, 99.0), "dropped when found stale");
        cache.insert(d, 0, Some(100.0));
        assert!(!cache.hit(&d, 0, 100.0), "expired");
        assert!(cache.is_empty());
        assert_eq!(cache.lookups(), (1, 0), "misses are the caller's to count");
        cache.count_miss();
        assert_eq!(cache.lookups(), (1, 1));
        assert_ne!(d, VerifiedCache::digest(b"a.b.d"));
    }

    #[test]
    fn a_flood_of_distinct_tokens_stays_within_capacity() {
        let cache = VerifiedCache::new(64).unwrap();
        for i in 0..100_000u32 {
            cache.insert(VerifiedCache::digest(&i.to_le_bytes()), 0, None);
            assert!(cache.len() <= 64);
            // Stale entries removed early must not let the queue outgrow the bound.
            if i % 3 == 0 {
                cache.hit(&VerifiedCache::digest(&i.to_le_bytes()), 1, 0.0);
            }
        }
        assert!(cache.inner().order.len() <= 64);
        // The newest are kept, the oldest evicted.
        assert!(cache.hit(&VerifiedCache::digest(&99_998u32.to_le_bytes()), 0, 0.0));
        assert!(!cache.hit(&VerifiedCache::digest(&0u32.to_le_bytes()), 0, 0.0));
        cache.clear();
        assert!(cache.is_empty());
        assert!(VerifiedCache::new(0).is_none());
    }
}
