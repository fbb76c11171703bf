//! Strict base64url without padding (RFC 7515 §2): one canonical spelling per byte string.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::{alphabet, Engine};

/// Rejects `=` padding and non-zero trailing bits, so a token has exactly one valid encoding
/// and a mutated character can never decode to the same bytes.
pub const STRICT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(false),
);

/// Appends the decoded bytes of `input` to `out`; `None` when `input` is not canonical base64url.
pub fn decode_into(input: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    let before = out.len();
    STRICT.decode_vec(input, out).ok()?;
    Some(out.len() - before)
}

pub fn encode(input: &[u8]) -> String {
    STRICT.encode(input)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let mut out = Vec::new();
        assert_eq!(
            decode_into(encode(b"hello?>").as_bytes(), &mut out),
            Some(7)
        );
        assert_eq!(out, b"hello?>");
    }

    #[test]
    fn rejects_padding_standard_alphabet_and_noncanonical_bits() {
        let mut out = Vec::new();
        assert_eq!(decode_into(b"aGk=", &mut out), None);
        assert_eq!(decode_into(b"a+b/", &mut out), None);
        // "aGk" is "hi"; "aGl" has non-zero trailing bits and must not alias it.
        assert_eq!(decode_into(b"aGl", &mut out), None);
        assert_eq!(decode_into(b"a", &mut out), None);
        assert_eq!(decode_into(b"a.b", &mut out), None);
    }
}
