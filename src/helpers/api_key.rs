//! API keys: `<prefix>_<32 base62 random><6 base62 checksum>`, stored as HMAC-SHA256.
//!
//! The checksum (first 32 bits of SHA-256 over `<prefix>_<body>`) lets clients and secret
//! scanners reject typos offline; the HMAC under a server secret means a leaked database gives
//! neither usable keys nor an offline guessing oracle.

use ring::rand::{SecureRandom, SystemRandom};
use ring::{digest, hmac};
use subtle::ConstantTimeEq;

use crate::call_error::{CallError, CallResult};

const BASE62: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/// 32 base62 characters ≈ 190 bits of randomness.
pub const BODY_LEN: usize = 32;
pub const CHECKSUM_LEN: usize = 6;
pub const MIN_SECRET_BYTES: usize = 16;
pub const MAX_KEY_LEN: usize = 128;

/// `auth1_pk`: lowercase segments of letters/digits joined by `_`, starting with a letter, ≤ 32.
pub fn check_prefix(prefix: &str) -> CallResult<()> {
    let ok = !prefix.is_empty()
        && prefix.len() <= 32
        && prefix.starts_with(|c: char| c.is_ascii_lowercase())
        && prefix.split('_').all(|seg| {
            !seg.is_empty()
                && seg
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        });
    if !ok {
        return Err(CallError::arg_value("prefix", "must be 1-32 chars of lowercase segments [a-z0-9] joined by '_', starting with a letter (e.g. 'auth1_pk')"));
    }
    Ok(())
}

pub fn check_secret(secret: &[u8]) -> CallResult<()> {
    if secret.len() < MIN_SECRET_BYTES {
        return Err(CallError::out_of_range(
            "secret",
            &format!("must be at least {MIN_SECRET_BYTES} bytes"),
        ));
    }
    Ok(())
}

fn checksum(prefix_and_body: &str) -> String {
    let d = digest::digest(&digest::SHA256, prefix_and_body.as_bytes());
    let mut n =
        u32::from_be_bytes([d.as_ref()[0], d.as_ref()[1], d.as_ref()[2], d.as_ref()[3]]) as u64;
    let mut out = [b'0'; CHECKSUM_LEN];
    for slot in out.iter_mut().rev() {
        *slot = BASE62[(n % 62) as usize];
        n /= 62;
    }
    String::from_utf8(out.to_vec()).expect("base62 is ASCII")
}

fn random_base62(rng: &dyn SecureRandom, len: usize) -> CallResult<String> {
    let mut out = String::with_capacity(len);
    let mut buf = [0u8; 64];
    while out.len() < len {
        rng.fill(&mut buf).map_err(|_| CallError::random_failed())?;
        // 248 = 4 * 62: bytes at or above it are dropped so every character is equally likely.
        for &b in buf.iter().filter(|&&b| b < 248) {
            if out.len() < len {
                out.push(BASE62[(b % 62) as usize] as char);
            }
        }
    }
    Ok(out)
}

/// Lowercase hex HMAC-SHA256 of `key` under `secret`.
pub fn hmac_hex(secret: &[u8], message: &[u8]) -> String {
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, secret), message);
    tag.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Debug)]
pub struct GeneratedKey {
    pub key: String,
    pub hash: String,
    pub last_four: String,
}

pub fn generate(prefix: &str, secret: &[u8]) -> CallResult<GeneratedKey> {
    check_prefix(prefix)?;
    check_secret(secret)?;
    let body = random_base62(&SystemRandom::new(), BODY_LEN)?;
    let unsigned = format!("{prefix}_{body}");
    let key = format!("{unsigned}{}", checksum(&unsigned));
    Ok(GeneratedKey {
        hash: hmac_hex(secret, key.as_bytes()),
        last_four: key[key.len() - 4..].to_string(),
        key,
    })
}

/// Why a key failed `parse`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyProblem {
    Malformed,
    BadChecksum,
}

impl KeyProblem {
    /// Stable code (`ParsedApiKey.errorCode`).
    pub fn code(self) -> &'static str {
        match self {
            Self::Malformed => "malformed",
            Self::BadChecksum => "bad_checksum",
        }
    }

    /// Human-readable message (`ParsedApiKey.error`).
    pub fn message(self) -> &'static str {
        match self {
            Self::Malformed => "Malformed API key",
            Self::BadChecksum => "API key checksum mismatch",
        }
    }
}

/// Splits and checks a key; returns the prefix.
pub fn parse(key: &str) -> Result<&str, KeyProblem> {
    if key.len() > MAX_KEY_LEN {
        return Err(KeyProblem::Malformed);
    }
    let (prefix, tail) = key.rsplit_once('_').ok_or(KeyProblem::Malformed)?;
    if check_prefix(prefix).is_err()
        || tail.len() != BODY_LEN + CHECKSUM_LEN
        || !tail.bytes().all(|b| b.is_ascii_alphanumeric())
    {
        return Err(KeyProblem::Malformed);
    }
    let split = key.len() - CHECKSUM_LEN;
    let ok: bool = checksum(&key[..split])
        .as_bytes()
        .ct_eq(&key.as_bytes()[split..])
        .into();
    if !ok {
        return Err(KeyProblem::BadChecksum);
    }
    Ok(prefix)
}

/// Decodes a stored 64-char hex hash.
pub fn decode_stored_hash(stored: &str) -> CallResult<[u8; 32]> {
    let mut out = [0u8; 32];
    if stored.len() != 64 || !stored.is_ascii() {
        return Err(CallError::arg_value(
            "storedHash",
            "must be the 64-character hex hash from generateApiKey",
        ));
    }
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = u8::from_str_radix(&stored[2 * i..2 * i + 2], 16).map_err(|_| {
            CallError::arg_value(
                "storedHash",
                "must be the 64-character hex hash from generateApiKey",
            )
        })?;
    }
    Ok(out)
}

/// Constant-time check of `key` against its stored hash; malformed keys are simply false.
pub fn verify(key: &str, stored: &[u8; 32], secret: &[u8]) -> CallResult<bool> {
    check_secret(secret)?;
    if parse(key).is_err() {
        return Ok(false);
    }
    let tag = hmac::sign(&hmac::Key::new(hmac::HMAC_SHA256, secret), key.as_bytes());
    Ok(tag.as_ref().ct_eq(stored).into())
}

/// The lookup value of a presented key: the same lowercase hex HMAC-SHA256 that `generate`
/// returned as `hash`, so `WHERE key_hash = $1` finds its row. `None` when the key fails
/// [`parse`] (a typo or junk: no row can match, so there is nothing to look up). Deterministic by
/// design; the HMAC under a server secret keeps the database from being a guessing oracle, and
/// the key's 190 random bits make a lookup by it as safe as a constant-time compare.
pub fn lookup_hash(key: &str, secret: &[u8]) -> CallResult<Option<String>> {
    check_secret(secret)?;
    if parse(key).is_err() {
        return Ok(None);
    }
    Ok(Some(hmac_hex(secret, key.as_bytes())))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &[u8] = b"server-secret-0123456789";

    #[test]
    fn key_problems_have_a_stable_code_and_a_distinct_message() {
        let problems = [KeyProblem::Malformed, KeyProblem::BadChecksum];
        assert_eq!(
            problems.map(KeyProblem::code),
            ["malformed", "bad_checksum"]
        );
        assert_ne!(
            KeyProblem::Malformed.message(),
            KeyProblem::BadChecksum.message()
        );
    }

    #[test]
    fn generated_keys_parse_and_verify() {
        let g = generate("auth1_pk", SECRET).unwrap();
        assert!(g.key.starts_with("auth1_pk_") && g.key.len() == 9 + BODY_LEN + CHECKSUM_LEN);
        assert_eq!(parse(&g.key), Ok("auth1_pk"));
        let stored = decode_stored_hash(&g.hash).unwrap();
        assert!(verify(&g.key, &stored, SECRET).unwrap());
        assert!(!verify(&g.key, &stored, b"another-secret-0123456").unwrap());
        assert_eq!(g.last_four, &g.key[g.key.len() - 4..]);
    }

    #[test]
    fn lookup_hash_is_the_stored_hash_and_none_for_bad_keys() {
        let g = generate("auth1_pk", SECRET).unwrap();
        assert_eq!(
            lookup_hash(&g.key, SECRET).unwrap().as_deref(),
            Some(g.hash.as_str())
        );
        assert_eq!(
            lookup_hash(&g.key, SECRET).unwrap(),
            lookup_hash(&g.key, SECRET).unwrap()
        );
        assert_ne!(
            lookup_hash(&g.key, b"another-secret-0123456")
                .unwrap()
                .as_deref(),
            Some(g.hash.as_str())
        );
        assert_eq!(lookup_hash("auth1_pk_nope", SECRET).unwrap(), None);
        let mut typo = g.key.clone();
        typo.pop();
        typo.push(if g.key.ends_with('0') { '1' } else { '0' });
        assert_eq!(lookup_hash(&typo, SECRET).unwrap(), None);
        assert_eq!(
            lookup_hash(&g.key, b"short").unwrap_err().code,
            "ERR_OUT_OF_RANGE"
        );
    }

    #[test]
    fn detects_typos_and_malformed_keys() {
        let g = generate("auth1_pk", SECRET).unwrap();
        let mut typo = g.key.clone().into_bytes();
        let i = 12;
        typo[i] = if typo[i] == b'a' { b'b' } else { b'a' };
        assert_eq!(
            parse(std::str::from_utf8(&typo).unwrap()),
            Err(KeyProblem::BadChecksum)
        );
        for bad in [
            "",
            "auth1_pk_",
            "nounderscore",
            "Auth_0123456789012345678901234567890123456",
            "auth1_pk_!!",
        ] {
            assert_eq!(parse(bad), Err(KeyProblem::Malformed), "{bad}");
        }
    }

    #[test]
    fn validates_prefix_and_secret() {
        assert!(check_prefix("auth1_pk").is_ok());
        for bad in ["", "1abc", "a__b", "a_", "A", "a-b", &"a".repeat(33)] {
            assert!(check_prefix(bad).is_err(), "{bad}");
        }
        assert_eq!(
            generate("pk", b"short").unwrap_err().code,
            "ERR_OUT_OF_RANGE"
        );
    }

    #[test]
    fn hmac_matches_rfc4231() {
        let vectors: serde_json::Value =
            serde_json::from_str(include_str!("../../contract/vectors/hmac_sha256.json")).unwrap();
        for v in vectors["vectors"].as_array().unwrap() {
            let hex = |s: &str| {
                (0..s.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                    .collect::<Vec<u8>>()
            };
            let mac = hmac_hex(
                &hex(v["key_hex"].as_str().unwrap()),
                &hex(v["data_hex"].as_str().unwrap()),
            );
            let want = v["hmac_sha256_hex"].as_str().unwrap();
            assert_eq!(&mac[..want.len()], want, "case {}", v["test_case"]);
        }
    }
}
