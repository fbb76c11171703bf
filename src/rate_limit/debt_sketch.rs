//! Where evicted debts go: a fixed-size, count-min style table of GCRA theoretical arrival
//! times (TATs), so a bucket forgotten under memory pressure comes back no fresher than it was.
//!
//! Each key hashes to one cell in each of [`ROWS`] rows. Folding a key keeps, in each of its
//! cells, the latest TAT folded there (`max`); a returning key starts from the earliest of its
//! cells (`min`). Every cell a key folded into holds at least that key's TAT, so the `min` is
//! never below it: a collision can only make a key stricter, never hand it tokens it had spent.
//! A TAT in the past means "full bucket", so stale cells need no clearing.
//!
//! The hash is two 32-bit lanes over the key's UTF-8 bytes (FNV-1a and a second odd multiplier,
//! each finished with MurmurHash3's `fmix32`), combined per row as `h1 + row * h2`
//! (Kirsch–Mitzenmacher). It uses only 32-bit multiply, xor and shifts so `js/rate-limit/debt-sketch.js`
//! computes the same cells with `Math.imul`. The two lane seeds are random per limiter, so
//! nobody outside the process can aim keys at a chosen user's cells.

use std::sync::atomic::{AtomicU64, Ordering};

/// Cells per key (rows of the table).
pub const ROWS: usize = 4;
/// Row width bounds; the width is `max_keys` rounded up to a power of two, within them.
pub const MIN_WIDTH: usize = 1 << 10;
pub const MAX_WIDTH: usize = 1 << 20;

const FNV_PRIME: u32 = 0x0100_0193;
const LANE2_MULTIPLIER: u32 = 0x5bd1_e995;

/// The two hash lanes of a key under a sketch's seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyHash(pub u32, pub u32);

fn fmix32(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// Hashes `key` under `seeds` (mirrored by `hashKey` in js/rate-limit/debt-sketch.js).
pub fn hash_key(seeds: (u32, u32), key: &[u8]) -> KeyHash {
    let (mut h1, mut h2) = seeds;
    for &b in key {
        h1 = (h1 ^ b as u32).wrapping_mul(FNV_PRIME);
        h2 = (h2 ^ b as u32).wrapping_mul(LANE2_MULTIPLIER);
    }
    let len = key.len() as u32;
    // The second lane is odd so the rows of one key never share an offset pattern of period 2.
    KeyHash(fmix32(h1 ^ len), fmix32(h2 ^ len) | 1)
}

/// Row width for a limiter keeping `max_keys` buckets.
pub fn width_for(max_keys: usize) -> usize {
    max_keys.clamp(MIN_WIDTH, MAX_WIDTH).next_power_of_two()
}

pub struct DebtSketch {
    /// `ROWS` rows of `width` cells, each the bits of a non-negative `f64` TAT in nanoseconds
    /// (for non-negative floats the bit patterns order like the numbers, so `fetch_max` works).
    cells: Box<[AtomicU64]>,
    mask: u32,
    seeds: (u32, u32),
}

impl DebtSketch {
    pub fn new(width: usize, seeds: (u32, u32)) -> Self {
        debug_assert!(width.is_power_of_two() && width <= MAX_WIDTH);
        DebtSketch {
            cells: (0..ROWS * width).map(|_| AtomicU64::new(0)).collect(),
            mask: (width - 1) as u32,
            seeds,
        }
    }

    pub fn hash(&self, key: &[u8]) -> KeyHash {
        hash_key(self.seeds, key)
    }

    /// Bytes held by the cells.
    #[cfg(test)]
    pub fn bytes(&self) -> usize {
        self.cells.len() * std::mem::size_of::<AtomicU64>()
    }

    /// The cell of `hash` in each row.
    pub fn cells_of(&self, hash: KeyHash) -> [usize; ROWS] {
        let width = self.mask as usize + 1;
        std::array::from_fn(|row| {
            let h = hash.0.wrapping_add((row as u32).wrapping_mul(hash.1));
            row * width + (h & self.mask) as usize
        })
    }

    /// Remembers a debt: the key's cells keep at least `tat`.
    pub fn fold(&self, hash: KeyHash, tat: f64) {
        debug_assert!(tat >= 0.0);
        for i in self.cells_of(hash) {
            self.cells[i].fetch_max(tat.to_bits(), Ordering::Relaxed);
        }
    }

    /// The TAT an unknown key starts from: never earlier than any TAT it was folded with.
    pub fn tat_of(&self, hash: KeyHash) -> f64 {
        self.cells_of(hash)
            .iter()
            .map(|&i| self.cells[i].load(Ordering::Relaxed))
            .min()
            .map_or(0.0, f64::from_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_match_the_js_engine_vectors() {
        // The same vectors are asserted in __test__/core/limiter.test.js against js/rate-limit/debt-sketch.js.
        assert_eq!(hash_key((0, 0), b""), KeyHash(0, 1));
        let seeds = (0x9e37_79b9, 0x7f4a_7c15);
        assert_eq!(
            hash_key(seeds, b"acme:alice"),
            KeyHash(0xb565_4bdc, 0x669f_0d7b)
        );
        assert_eq!(hash_key(seeds, b":bob"), KeyHash(0xeaf7_006b, 0x6cee_6b17));
        assert_eq!(
            hash_key(seeds, "\u{e9}t\u{e9}:\u{1f600}".as_bytes()),
            KeyHash(0x02b6_29ba, 0x1637_3b81)
        );
        let sketch = DebtSketch::new(MIN_WIDTH, seeds);
        assert_eq!(
            sketch.cells_of(sketch.hash(b"acme:alice")),
            [988, 1024 + 343, 2048 + 722, 3072 + 77]
        );
    }

    #[test]
    fn width_is_a_power_of_two_within_bounds() {
        assert_eq!(width_for(1), MIN_WIDTH);
        assert_eq!(width_for(100_000), 131_072);
        assert_eq!(width_for(100_000_000), MAX_WIDTH);
    }

    #[test]
    fn a_folded_key_never_comes_back_fresher() {
        let sketch = DebtSketch::new(MIN_WIDTH, (1, 2));
        for i in 0..10_000u32 {
            let key = i.to_le_bytes();
            let h = sketch.hash(&key);
            sketch.fold(h, (i as f64) * 10.0);
            assert!(sketch.tat_of(h) >= (i as f64) * 10.0);
        }
        // Every earlier key too, whatever folded on top of it.
        for i in 0..10_000u32 {
            assert!(sketch.tat_of(sketch.hash(&i.to_le_bytes())) >= (i as f64) * 10.0);
        }
    }

    #[test]
    fn an_unknown_key_starts_from_nothing_owed() {
        let sketch = DebtSketch::new(MIN_WIDTH, (3, 4));
        assert_eq!(sketch.tat_of(sketch.hash(b"never-seen")), 0.0);
        assert_eq!(sketch.bytes(), ROWS * MIN_WIDTH * 8);
    }
}
