//! HOTP (RFC 4226), TOTP (RFC 6238), base32 secrets (RFC 4648) and `otpauth://` URIs.

use data_encoding::BASE32_NOPAD;
use ring::hmac;
use ring::rand::{SecureRandom, SystemRandom};
use subtle::ConstantTimeEq;

use crate::call_error::{CallError, CallResult};

/// RFC 4226 §4 R6: the shared secret is at least 128 bits.
pub const MIN_SECRET_BYTES: usize = 16;
pub const MAX_SECRET_BYTES: usize = 1024;
/// Largest verification window, in steps each side.
pub const MAX_WINDOW: u64 = 10;

/// The HMAC behind the one-time password.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OtpAlgorithm {
    Sha1,
    Sha256,
    Sha512,
}

impl OtpAlgorithm {
    pub fn parse(name: Option<&str>) -> CallResult<Self> {
        match name.map(|s| s.to_ascii_uppercase()).as_deref() {
            None | Some("SHA1") => Ok(Self::Sha1),
            Some("SHA256") => Ok(Self::Sha256),
            Some("SHA512") => Ok(Self::Sha512),
            Some(_) => Err(CallError::arg_value(
                "options.algorithm",
                "must be 'SHA1', 'SHA256' or 'SHA512'",
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Sha1 => "SHA1",
            Self::Sha256 => "SHA256",
            Self::Sha512 => "SHA512",
        }
    }

    fn ring(self) -> hmac::Algorithm {
        match self {
            // SHA-1 is what RFC 4226 and every authenticator app use; HMAC-SHA-1 is still sound.
            Self::Sha1 => hmac::HMAC_SHA1_FOR_LEGACY_USE_ONLY,
            Self::Sha256 => hmac::HMAC_SHA256,
            Self::Sha512 => hmac::HMAC_SHA512,
        }
    }
}

/// Checks a raw secret's length.
pub fn check_secret(secret: &[u8]) -> CallResult<()> {
    if secret.len() < MIN_SECRET_BYTES || secret.len() > MAX_SECRET_BYTES {
        return Err(CallError::out_of_range(
      "secret",
      &format!(
        "must be {MIN_SECRET_BYTES}..={MAX_SECRET_BYTES} bytes (RFC 4226 asks for at least 128 bits), got {}",
        secret.len()
      ),
    ));
    }
    Ok(())
}

/// Decodes an RFC 4648 base32 secret: case-insensitive, `=` padding and spaces optional.
pub fn decode_base32(text: &str) -> CallResult<Vec<u8>> {
    let cleaned: String = text
        .chars()
        .filter(|c| *c != ' ' && *c != '=')
        .map(|c| c.to_ascii_uppercase())
        .collect();
    if cleaned.len() > MAX_SECRET_BYTES * 2 {
        return Err(CallError::out_of_range("secret", "is too long"));
    }
    BASE32_NOPAD
        .decode(cleaned.as_bytes())
        .map_err(|_| CallError::arg_value("secret", "must be RFC 4648 base32 (A-Z, 2-7)"))
}

pub fn encode_base32(bytes: &[u8]) -> String {
    BASE32_NOPAD.encode(bytes)
}

/// A fresh random secret of `bytes` bytes, base32 without padding.
pub fn generate_secret(bytes: usize) -> CallResult<String> {
    let mut buf = vec![0u8; bytes];
    SystemRandom::new()
        .fill(&mut buf)
        .map_err(|_| CallError::random_failed())?;
    Ok(encode_base32(&buf))
}

/// RFC 4226 §5.3: HMAC over the 8-byte big-endian counter, dynamic truncation, modulo 10^digits.
pub fn hotp(secret: &[u8], counter: u64, digits: u32, alg: OtpAlgorithm) -> String {
    let key = hmac::Key::new(alg.ring(), secret);
    let mac = hmac::sign(&key, &counter.to_be_bytes());
    let mac = mac.as_ref();
    let offset = (mac[mac.len() - 1] & 0x0f) as usize;
    let bin = u32::from_be_bytes([
        mac[offset],
        mac[offset + 1],
        mac[offset + 2],
        mac[offset + 3],
    ]) & 0x7fff_ffff;
    let code = bin as u64 % 10u64.pow(digits);
    format!("{code:0width$}", width = digits as usize)
}

/// RFC 6238 §4.2: the time-step counter T = floor((time - T0) / period), T0 = 0.
pub fn totp_counter(unix_seconds: u64, period: u64) -> u64 {
    unix_seconds / period
}

/// Checks `code` against the counters `from..=to` without stopping at the first match, so the
/// time taken says nothing about which step (if any) matched. Returns the matching counter.
pub fn verify_range(
    secret: &[u8],
    code: &str,
    from: u64,
    to: u64,
    digits: u32,
    alg: OtpAlgorithm,
) -> Option<u64> {
    if code.len() != digits as usize || !code.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut found = None;
    for counter in from..=to {
        let ok: bool = hotp(secret, counter, digits, alg)
            .as_bytes()
            .ct_eq(code.as_bytes())
            .into();
        if ok && found.is_none() {
            found = Some(counter);
        }
    }
    found
}

/// A code that arrived as a number (a JSON body's `123456`): a whole number `0 <= n <
/// 10^digits`, zero-padded to `digits` digits because JSON numbers drop leading zeros (the code
/// "012345" arrives as 12345). Numbers and codes correspond one to one, so this accepts no
/// extra guesses. Anything else (negative, fractional, too many digits, NaN) is `None`: no code.
pub fn code_from_number(n: f64, digits: u32) -> Option<String> {
    let limit = 10u64.checked_pow(digits)? as f64;
    if !n.is_finite() || n.fract() != 0.0 || n < 0.0 || n >= limit {
        return None;
    }
    Some(format!("{:0width$}", n as u64, width = digits as usize))
}

/// The current Unix time in seconds.
pub fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Checks an issuer or account name for the `otpauth://` label: 1 ..= 256 bytes, no ':' (the
/// label separator) and no control characters.
pub fn check_label_part(name: &str, value: &str) -> CallResult<()> {
    if value.is_empty() || value.len() > 256 {
        return Err(CallError::out_of_range(name, "must be 1 to 256 bytes"));
    }
    if value.contains(':') || value.chars().any(char::is_control) {
        return Err(CallError::arg_value(
            name,
            "must not contain ':' or control characters",
        ));
    }
    Ok(())
}

fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The Key Uri Format authenticator apps scan: `otpauth://totp/Issuer:account?secret=..&issuer=..`.
pub fn totp_uri(
    secret_b32: &str,
    account: &str,
    issuer: Option<&str>,
    alg: OtpAlgorithm,
    digits: u32,
    period: u64,
) -> String {
    let label = match issuer {
        Some(i) => format!("{}:{}", percent_encode(i), percent_encode(account)),
        None => percent_encode(account),
    };
    let mut uri = format!("otpauth://totp/{label}?secret={secret_b32}");
    if let Some(i) = issuer {
        uri.push_str(&format!("&issuer={}", percent_encode(i)));
    }
    uri.push_str(&format!(
        "&algorithm={}&digits={digits}&period={period}",
        alg.name()
    ));
    uri
}

#[cfg(test)]
mod tests {
    use super::*;

    const RFC_SECRET: &[u8] = b"12345678901234567890";

    #[test]
    fn reproduces_rfc4226_appendix_d() {
        let want = [
            "755224", "287082", "359152", "969429", "338314", "254676", "287922", "162583",
            "399871", "520489",
        ];
        for (counter, code) in want.iter().enumerate() {
            assert_eq!(
                hotp(RFC_SECRET, counter as u64, 6, OtpAlgorithm::Sha1),
                *code
            );
        }
    }

    #[test]
    fn reproduces_rfc6238_appendix_b() {
        let sha256 = b"12345678901234567890123456789012";
        let sha512 = b"1234567890123456789012345678901234567890123456789012345678901234";
        let cases: [(u64, &str, &str, &str); 3] = [
            (59, "94287082", "46119246", "90693936"),
            (1111111109, "07081804", "68084774", "25091201"),
            (20000000000, "65353130", "77737706", "47863826"),
        ];
        for (t, s1, s256, s512) in cases {
            let c = totp_counter(t, 30);
            assert_eq!(hotp(RFC_SECRET, c, 8, OtpAlgorithm::Sha1), s1);
            assert_eq!(hotp(sha256, c, 8, OtpAlgorithm::Sha256), s256);
            assert_eq!(hotp(sha512, c, 8, OtpAlgorithm::Sha512), s512);
        }
    }

    #[test]
    fn window_finds_neighbouring_steps_only() {
        let c = totp_counter(1111111109, 30);
        let code = hotp(RFC_SECRET, c - 1, 6, OtpAlgorithm::Sha1);
        assert_eq!(
            verify_range(RFC_SECRET, &code, c - 1, c + 1, 6, OtpAlgorithm::Sha1),
            Some(c - 1)
        );
        assert_eq!(
            verify_range(RFC_SECRET, &code, c, c + 1, 6, OtpAlgorithm::Sha1),
            None
        );
        assert_eq!(
            verify_range(RFC_SECRET, "12345", c, c, 6, OtpAlgorithm::Sha1),
            None
        );
        assert_eq!(
            verify_range(RFC_SECRET, "12345a", c, c, 6, OtpAlgorithm::Sha1),
            None
        );
    }

    #[test]
    fn numeric_codes_are_zero_padded_and_bounded() {
        assert_eq!(code_from_number(123456.0, 6).as_deref(), Some("123456"));
        assert_eq!(code_from_number(12345.0, 6).as_deref(), Some("012345"));
        assert_eq!(code_from_number(0.0, 8).as_deref(), Some("00000000"));
        for bad in [-1.0, 1.5, 1_000_000.0, f64::NAN, f64::INFINITY, 1e300] {
            assert_eq!(code_from_number(bad, 6), None, "{bad}");
        }
        let c = totp_counter(59, 30);
        let code = hotp(RFC_SECRET, c, 6, OtpAlgorithm::Sha1);
        let n: f64 = code.parse().unwrap();
        let padded = code_from_number(n, 6).unwrap();
        assert_eq!(
            verify_range(RFC_SECRET, &padded, c, c, 6, OtpAlgorithm::Sha1),
            Some(c)
        );
    }

    #[test]
    fn base32_round_trips_and_rejects_garbage() {
        assert_eq!(
            decode_base32("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ").unwrap(),
            RFC_SECRET
        );
        assert_eq!(
            decode_base32("gezd gnbv gy3t qojq gezd gnbv gy3t qojq").unwrap(),
            RFC_SECRET
        );
        assert!(decode_base32("GEZDGNBVGY3TQOJ1").is_err());
        let s = generate_secret(20).unwrap();
        assert_eq!(s.len(), 32);
        assert_eq!(decode_base32(&s).unwrap().len(), 20);
    }

    #[test]
    fn uri_percent_encodes_label_and_issuer() {
        let uri = totp_uri(
            "JBSWY3DPEHPK3PXP",
            "alice@example.com",
            Some("ACME Co"),
            OtpAlgorithm::Sha1,
            6,
            30,
        );
        assert_eq!(
      uri,
      "otpauth://totp/ACME%20Co:alice%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=ACME%20Co&algorithm=SHA1&digits=6&period=30"
    );
    }
}
