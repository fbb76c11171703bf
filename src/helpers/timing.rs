//! `timingSafeEqual` for strings and bytes of any length (crate `subtle`).

use subtle::ConstantTimeEq;

/// Largest input, 64 MiB each: far beyond any token, bounded so one call stays cheap.
pub const MAX_BYTES: usize = 64 << 20;

/// Compares in time that depends only on the lengths, never on where the bytes differ.
/// A length difference returns false after the same full scan of `a`, so content never
/// short-circuits the comparison.
pub fn ct_equal(a: &[u8], b: &[u8]) -> bool {
    if a.len() == b.len() {
        a.ct_eq(b).into()
    } else {
        // Same work as an equal-length compare of `a`; black_box keeps it from being optimised out.
        std::hint::black_box(a.ct_eq(a));
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_and_unequal_inputs() {
        assert!(ct_equal(b"", b""));
        assert!(ct_equal(b"secret", b"secret"));
        assert!(!ct_equal(b"secret", b"secreT"));
        assert!(!ct_equal(b"secret", b"secret!"));
        assert!(!ct_equal(b"", b"x"));
    }
}
