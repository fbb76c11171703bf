//! The in-process replay cache of DPoP proofs (RFC 9449 §11.1): a proof is accepted once while
//! its `iat` is in the window. Keyed on SHA-256(thumbprint `.` jti), so an entry has a fixed
//! size whatever the client sends, and two keys with the same `jti` never collide. Bounded:
//! expired entries go first; when every entry is still live a new proof is refused
//! (`dpop_replay_cache_full`), never admitted by forgetting one that could then be replayed.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Mutex, PoisonError};

/// Whether a proof may pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    Fresh,
    Replayed,
    Full,
}

pub struct ReplayCache {
    capacity: usize,
    inner: Mutex<Entries>,
}

#[derive(Default)]
struct Entries {
    /// key -> the second after which the proof is stale (its `iat` plus the window).
    live: HashMap<[u8; 32], f64>,
    /// The same entries by expiry, soonest first (`f64::to_bits` orders non-negative numbers).
    by_expiry: BinaryHeap<Reverse<(u64, [u8; 32])>>,
}

impl ReplayCache {
    pub fn new(capacity: usize) -> Self {
        ReplayCache {
            capacity,
            inner: Mutex::new(Entries::default()),
        }
    }

    /// Records `key` until `expires_at` (seconds) unless it is held already. `now` is the same
    /// clock as `expires_at`; an entry stays until `now` is past it, so a proof at the very edge
    /// of its window is still a replay.
    pub fn admit(&self, key: [u8; 32], expires_at: f64, now: f64) -> Admission {
        let mut e = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        while let Some(Reverse((bits, old))) = e.by_expiry.peek().copied() {
            if f64::from_bits(bits) >= now {
                break;
            }
            e.by_expiry.pop();
            // A released key admitted again has a newer heap entry: only the one matching the
            // live expiry removes it.
            if e.live.get(&old).map(|at| at.to_bits()) == Some(bits) {
                e.live.remove(&old);
            }
        }
        if e.live.contains_key(&key) {
            return Admission::Replayed;
        }
        if e.live.len() >= self.capacity {
            return Admission::Full;
        }
        let expires_at = expires_at.max(0.0);
        e.live.insert(key, expires_at);
        e.by_expiry.push(Reverse((expires_at.to_bits(), key)));
        Admission::Fresh
    }

    /// Forgets `key` (a proof whose request was refused after the engine admitted it); true if
    /// it was held. Its heap entry stays until it expires or the heap holds twice the capacity,
    /// when the heap is rebuilt from the live entries: memory stays bounded whatever the rate
    /// of releases, at an amortised O(1) per release.
    pub fn release(&self, key: &[u8; 32]) -> bool {
        let mut e = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if e.live.remove(key).is_none() {
            return false;
        }
        if e.by_expiry.len() >= self.capacity.saturating_mul(2) {
            let rebuilt = e
                .live
                .iter()
                .map(|(k, at)| Reverse((at.to_bits(), *k)))
                .collect();
            e.by_expiry = rebuilt;
        }
        true
    }

    pub fn len(&self) -> usize {
        self.inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .live
            .len()
    }
}

/// The key of an `AuthResult.dpopReplayKey`: exactly 64 lowercase hex digits, as the result
/// writes it; anything else is `None`.
pub fn parse_replay_key(hex: &[u8]) -> Option<[u8; 32]> {
    if hex.len() != 64 {
        return None;
    }
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut key = [0u8; 32];
    for (byte, pair) in key.iter_mut().zip(hex.chunks_exact(2)) {
        *byte = (digit(pair[0])? << 4) | digit(pair[1])?;
    }
    Some(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(i: u32) -> [u8; 32] {
        let mut k = [0u8; 32];
        k[..4].copy_from_slice(&i.to_le_bytes());
        k
    }

    #[test]
    fn admits_once_then_refuses_until_expired() {
        let c = ReplayCache::new(4);
        assert_eq!(c.admit(key(1), 160.0, 100.0), Admission::Fresh);
        assert_eq!(c.admit(key(1), 160.0, 160.0), Admission::Replayed);
        assert_eq!(c.admit(key(1), 161.0, 161.0), Admission::Fresh);
    }

    #[test]
    fn a_flood_is_refused_at_the_bound_and_never_forgets_a_live_entry() {
        let c = ReplayCache::new(1000);
        for i in 0..1000 {
            assert_eq!(c.admit(key(i), 160.0, 100.0), Admission::Fresh);
        }
        for i in 1000..5000 {
            assert_eq!(c.admit(key(i), 160.0, 100.0), Admission::Full);
        }
        assert_eq!(c.len(), 1000);
        assert_eq!(c.admit(key(0), 160.0, 150.0), Admission::Replayed);
        // Past the window the old entries go and room is made.
        assert_eq!(c.admit(key(5000), 230.0, 170.0), Admission::Fresh);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn a_released_key_is_admitted_again_and_others_stay() {
        let c = ReplayCache::new(2);
        assert_eq!(c.admit(key(1), 160.0, 100.0), Admission::Fresh);
        assert_eq!(c.admit(key(2), 160.0, 100.0), Admission::Fresh);
        assert_eq!(c.admit(key(3), 160.0, 100.0), Admission::Full);
        assert!(c.release(&key(1)));
        assert!(!c.release(&key(1)));
        assert_eq!(c.admit(key(2), 160.0, 100.0), Admission::Replayed);
        assert_eq!(c.admit(key(3), 160.0, 100.0), Admission::Fresh);
        assert_eq!(c.len(), 2);
    }

    #[test]
    fn a_stale_heap_entry_never_drops_a_key_admitted_again() {
        let c = ReplayCache::new(4);
        assert_eq!(c.admit(key(1), 110.0, 100.0), Admission::Fresh);
        assert!(c.release(&key(1)));
        assert_eq!(c.admit(key(1), 200.0, 105.0), Admission::Fresh);
        // The first entry's expiry passes: the key admitted later is still a replay.
        assert_eq!(c.admit(key(1), 200.0, 150.0), Admission::Replayed);
    }

    #[test]
    fn releases_keep_the_heap_bounded() {
        let c = ReplayCache::new(8);
        for i in 0..10_000 {
            assert_eq!(c.admit(key(i), 160.0, 100.0), Admission::Fresh);
            assert!(c.release(&key(i)));
        }
        let e = c.inner.lock().unwrap();
        assert!(e.by_expiry.len() < 16, "{}", e.by_expiry.len());
    }

    #[test]
    fn parses_only_the_results_hex_form() {
        let hex = "00ff".repeat(16);
        let mut want = [0u8; 32];
        for pair in want.chunks_exact_mut(2) {
            pair[1] = 0xff;
        }
        assert_eq!(parse_replay_key(hex.as_bytes()), Some(want));
        assert_eq!(parse_replay_key(hex.to_uppercase().as_bytes()), None);
        assert_eq!(parse_replay_key(&hex.as_bytes()[..62]), None);
        assert_eq!(parse_replay_key(format!("{hex}0").as_bytes()), None);
        assert_eq!(parse_replay_key("g".repeat(64).as_bytes()), None);
    }
}
