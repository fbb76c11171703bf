//! `timingSafeEqual` for strings and bytes of any length (crate `subtle`).

use napi::bindgen_prelude::Unknown;
use napi::Env;
use napi_derive::napi;
use subtle::ConstantTimeEq;

use super::args;
use super::errors::to_js;

/// Largest input, 64 MiB each: far beyond any token, bounded so one call stays cheap.
const MAX_BYTES: usize = 64 << 20;

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

/// Constant-time equality of two strings (compared as UTF-8) or Buffers/Uint8Arrays, any
/// lengths (up to 64 MiB each); different lengths give `false` rather than throwing (unlike
/// `crypto.timingSafeEqual`). A string and a Buffer holding the same bytes are equal.
#[napi(
    catch_unwind,
    ts_args_type = "a: string | Buffer | Uint8Array, b: string | Buffer | Uint8Array"
)]
pub fn timing_safe_equal(env: Env, a: Unknown<'_>, b: Unknown<'_>) -> napi::Result<bool> {
    let a = to_js(&env, args::bytes(&a, "a", MAX_BYTES))?;
    let b = to_js(&env, args::bytes(&b, "b", MAX_BYTES))?;
    Ok(ct_equal(&a, &b))
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
