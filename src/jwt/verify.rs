//! HS256 signature verification of a compact JWS with a key prepared once.

use ring::hmac;

use super::base64url;
use super::claims::Claims;
use super::header::Header;
use super::sign::STANDARD_HEADER_B64;
use crate::error::AuthError;

/// An HMAC-SHA256 key, prepared once (ring precomputes the inner and outer pads).
pub struct HmacKey(hmac::Key);

impl HmacKey {
    pub fn new(secret: &[u8]) -> Self {
        HmacKey(hmac::Key::new(hmac::HMAC_SHA256, secret))
    }

    pub fn sign(&self, data: &[u8]) -> hmac::Tag {
        hmac::sign(&self.0, data)
    }

    /// Constant-time comparison of the tag (ring compares with `constant_time::verify_slices_are_equal`).
    pub fn verify(&self, data: &[u8], tag: &[u8]) -> bool {
        hmac::verify(&self.0, data, tag).is_ok()
    }
}

/// Decodes `token` and checks its structure and signature; the claims borrow from `scratch`.
///
/// Structure is checked before the signature (so both engines classify junk the same way),
/// then the MAC; claims are validated by the caller.
pub fn decode_verified<'s>(
    token: &[u8],
    key: &HmacKey,
    scratch: &'s mut Vec<u8>,
) -> Result<Claims<'s>, AuthError> {
    let (header_b64, payload_b64, signature_b64) = split_compact(token)?;
    scratch.clear();
    // The header nearly every issuer writes (ours and jsonwebtoken's) is known to be valid:
    // comparing its exact text skips decoding and parsing it.
    let standard_header = header_b64 == STANDARD_HEADER_B64.as_bytes();
    let header_len = if standard_header {
        0
    } else {
        base64url::decode_into(header_b64, scratch).ok_or(AuthError::MalformedToken)?
    };
    let payload_len =
        base64url::decode_into(payload_b64, scratch).ok_or(AuthError::MalformedToken)?;
    let signature_len =
        base64url::decode_into(signature_b64, scratch).ok_or(AuthError::MalformedToken)?;

    let (header_json, rest) = scratch.split_at(header_len);
    let (payload_json, signature) = rest.split_at(payload_len);
    if !standard_header {
        Header::parse(header_json)?;
    }
    let claims = Claims::parse(payload_json).ok_or(AuthError::MalformedToken)?;

    let signing_input = &token[..header_b64.len() + 1 + payload_b64.len()];
    if signature_len != 32 || !key.verify(signing_input, signature) {
        return Err(AuthError::InvalidSignature);
    }
    Ok(claims)
}

/// The three segments of a compact JWS.
type Segments<'t> = (&'t [u8], &'t [u8], &'t [u8]);

/// Splits `header.payload.signature`; any other number of segments is malformed.
fn split_compact(token: &[u8]) -> Result<Segments<'_>, AuthError> {
    let mut dots = memchr::memchr_iter(b'.', token);
    match (dots.next(), dots.next(), dots.next()) {
        (Some(first), Some(second), None) => Ok((
            &token[..first],
            &token[first + 1..second],
            &token[second + 1..],
        )),
        _ => Err(AuthError::MalformedToken),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jwt::base64url::encode;

    fn token(header: &str, payload: &str, secret: &[u8]) -> String {
        let input = format!(
            "{}.{}",
            encode(header.as_bytes()),
            encode(payload.as_bytes())
        );
        let tag = HmacKey::new(secret).sign(input.as_bytes());
        format!("{input}.{}", encode(tag.as_ref()))
    }

    #[test]
    fn verifies_a_token_signed_with_the_key() {
        let t = token(r#"{"alg":"HS256"}"#, r#"{"sub":"u"}"#, b"k");
        let mut scratch = Vec::new();
        let claims = decode_verified(t.as_bytes(), &HmacKey::new(b"k"), &mut scratch).unwrap();
        assert_eq!(claims.sub.as_str(), Some("u"));
    }

    #[test]
    fn rejects_wrong_key_and_stripped_signature() {
        let t = token(r#"{"alg":"HS256"}"#, r#"{"sub":"u"}"#, b"k");
        let mut s = Vec::new();
        assert_eq!(
            decode_verified(t.as_bytes(), &HmacKey::new(b"x"), &mut s).err(),
            Some(AuthError::InvalidSignature)
        );
        let stripped = &t[..t.rfind('.').unwrap() + 1];
        assert_eq!(
            decode_verified(stripped.as_bytes(), &HmacKey::new(b"k"), &mut s).err(),
            Some(AuthError::InvalidSignature)
        );
    }

    #[test]
    fn rejects_wrong_segment_counts() {
        let key = HmacKey::new(b"k");
        let mut s = Vec::new();
        for t in ["", "a", "a.b", "a.b.c.d", "...", "a..b.c"] {
            assert_eq!(
                decode_verified(t.as_bytes(), &key, &mut s).err(),
                Some(AuthError::MalformedToken),
                "{t}"
            );
        }
    }

    #[test]
    fn verifies_rfc7515_a1_example() {
        // RFC 7515 Appendix A.1 (key from the JWK "k" member).
        let key = {
            let mut k = Vec::new();
            crate::jwt::base64url::decode_into(
                b"AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow",
                &mut k,
            )
            .unwrap();
            k
        };
        let t = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
        let mut s = Vec::new();
        let claims = decode_verified(t.as_bytes(), &HmacKey::new(&key), &mut s).unwrap();
        assert_eq!(claims.iss.as_str(), Some("joe"));
        assert_eq!(claims.exp.as_num(), Some(1300819380.0));
    }
}
