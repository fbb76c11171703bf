//! HS256 compact JWS signing.

use super::base64url;
use super::verify::HmacKey;

/// `{"alg":"HS256","typ":"JWT"}`, encoded once.
pub const STANDARD_HEADER_B64: &str = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9";

/// Signs a payload that is already serialized JSON.
pub fn sign_payload(key: &HmacKey, payload_json: &[u8]) -> String {
    let mut token =
        String::with_capacity(STANDARD_HEADER_B64.len() + payload_json.len() * 4 / 3 + 48);
    token.push_str(STANDARD_HEADER_B64);
    token.push('.');
    token.push_str(&base64url::encode(payload_json));
    let tag = key.sign(token.as_bytes());
    token.push('.');
    token.push_str(&base64url::encode(tag.as_ref()));
    token
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jwt::verify::decode_verified;

    #[test]
    fn header_constant_is_the_hs256_header() {
        assert_eq!(
            base64url::encode(br#"{"alg":"HS256","typ":"JWT"}"#),
            STANDARD_HEADER_B64
        );
    }

    #[test]
    fn signed_tokens_verify() {
        let key = HmacKey::new(b"secret");
        let token = sign_payload(&key, br#"{"sub":"u","exp":5}"#);
        let mut scratch = Vec::new();
        let claims = decode_verified(token.as_bytes(), &key, &mut scratch).unwrap();
        assert_eq!(claims.sub.as_str(), Some("u"));
    }

    #[test]
    fn interoperates_with_the_jsonwebtoken_crate() {
        use jsonwebtoken::{decode, encode, DecodingKey, EncodingKey, Header, Validation};
        let key = HmacKey::new(b"secret");
        let ours = sign_payload(&key, br#"{"sub":"u","exp":4000000000}"#);
        let decoded = decode::<serde_json::Value>(
            &ours,
            &DecodingKey::from_secret(b"secret"),
            &Validation::default(),
        );
        assert_eq!(decoded.unwrap().claims["sub"], "u");

        let theirs = encode(
            &Header::default(),
            &serde_json::json!({"sub": "v", "exp": 4000000000u64}),
            &EncodingKey::from_secret(b"secret"),
        )
        .unwrap();
        let mut scratch = Vec::new();
        let claims = decode_verified(theirs.as_bytes(), &key, &mut scratch).unwrap();
        assert_eq!(claims.sub.as_str(), Some("v"));
    }
}
