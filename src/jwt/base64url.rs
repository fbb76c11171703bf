//! Strict base64url without padding (RFC 7515 §2): one canonical spelling per byte string.
//!
//! Decoding runs on every request over the whole token, so it is a table-driven loop over
//! four characters at a time rather than a general-purpose engine.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::{alphabet, Engine};

/// The encoder (and the reference the decoder is tested against).
pub const STRICT: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::RequireNone)
        .with_decode_allow_trailing_bits(false),
);

const INVALID: u8 = 0xFF;

/// Sextet value of each base64url character, `INVALID` for everything else.
static SEXTETS: [u8; 256] = {
    let mut table = [INVALID; 256];
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut i = 0;
    while i < 64 {
        table[alphabet[i] as usize] = i as u8;
        i += 1;
    }
    table
};

/// Appends the decoded bytes of `input` to `out`; `None` when `input` is not canonical
/// base64url: a character outside the alphabet, `=` padding, a length of 1 mod 4, or non-zero
/// trailing bits (which would let two spellings decode to the same bytes).
pub fn decode_into(input: &[u8], out: &mut Vec<u8>) -> Option<usize> {
    let tail_len = input.len() % 4;
    if tail_len == 1 {
        return None;
    }
    let (body, tail) = input.split_at(input.len() - tail_len);
    let decoded_len = body.len() / 4 * 3 + tail_len.saturating_sub(1);
    let start = out.len();
    // One spare byte lets every quad be stored as a 4-byte word (the fourth byte is
    // overwritten by the next quad or cut off).
    out.resize(start + decoded_len + 1, 0);
    let dst = &mut out[start..];
    let mut invalid = 0u8;
    for (i, quad) in body.chunks_exact(4).enumerate() {
        let [a, b, c, d] = [quad[0], quad[1], quad[2], quad[3]].map(|ch| SEXTETS[ch as usize]);
        invalid |= a | b | c | d;
        let bits = (a as u32) << 26 | (b as u32) << 20 | (c as u32) << 14 | (d as u32) << 8;
        dst[i * 3..i * 3 + 4].copy_from_slice(&bits.to_be_bytes());
    }
    let rest = &mut dst[body.len() / 4 * 3..];
    match *tail {
        [] => {}
        [x, y] => {
            let [a, b] = [SEXTETS[x as usize], SEXTETS[y as usize]];
            invalid |= a | b | if b & 0x0F != 0 { INVALID } else { 0 }; // low 4 bits of `b` must be zero
            rest[0] = a << 2 | b >> 4;
        }
        [x, y, z] => {
            let [a, b, c] = [
                SEXTETS[x as usize],
                SEXTETS[y as usize],
                SEXTETS[z as usize],
            ];
            invalid |= a | b | c | if c & 0x03 != 0 { INVALID } else { 0 }; // low 2 bits of `c` must be zero
            rest[0] = a << 2 | b >> 4;
            rest[1] = b << 4 | c >> 2;
        }
        _ => unreachable!("tail length is 0, 2 or 3"),
    }
    if invalid & 0xC0 != 0 {
        out.truncate(start);
        return None;
    }
    out.truncate(start + decoded_len);
    Some(decoded_len)
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
        assert_eq!(decode_into(b"aR", &mut out), None);
        assert_eq!(decode_into(b"a", &mut out), None);
        assert_eq!(decode_into(b"a.b", &mut out), None);
        assert!(out.is_empty());
    }

    #[test]
    fn agrees_with_the_base64_crate_on_every_short_input() {
        // Every string of length 0..=3 over a mixed alphabet, and random longer ones.
        let chars = b"AQgw_-9z=+/.a";
        let mut inputs: Vec<Vec<u8>> = vec![vec![]];
        for len in 1..=3 {
            let mut next = Vec::new();
            for prefix in inputs.iter().filter(|p| p.len() == len - 1) {
                for &c in chars {
                    let mut s = prefix.clone();
                    s.push(c);
                    next.push(s);
                }
            }
            inputs.extend(next);
        }
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..5000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let len = (state % 40) as usize;
            inputs.push(
                (0..len)
                    .map(|i| chars[((state >> (i % 50)) as usize + i) % chars.len()])
                    .collect(),
            );
        }
        for input in inputs {
            let mut ours = vec![7u8];
            let result = decode_into(&input, &mut ours);
            let theirs = STRICT.decode(&input).ok();
            assert_eq!(
                result.is_some(),
                theirs.is_some(),
                "{:?}",
                String::from_utf8_lossy(&input)
            );
            if let Some(bytes) = theirs {
                assert_eq!(&ours[1..], &bytes[..]);
            } else {
                assert_eq!(ours, vec![7u8]);
            }
        }
    }
}
