//! HS256 compact JWS signing.

use super::base64url;
use super::header::STANDARD_HEADER_B64;
use super::key::HmacKey;

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

    #[test]
    fn header_constant_is_the_hs256_header() {
        assert_eq!(
            base64url::encode(br#"{"alg":"HS256","typ":"JWT"}"#),
            STANDARD_HEADER_B64
        );
    }

    #[test]
    fn signature_is_the_hmac_of_the_signing_input() {
        let key = HmacKey::new(b"secret");
        let token = sign_payload(&key, br#"{"sub":"u"}"#);
        let dot = token.rfind('.').unwrap();
        let mut tag = Vec::new();
        base64url::decode_into(&token.as_bytes()[dot + 1..], &mut tag).unwrap();
        assert!(key.verify(&token.as_bytes()[..dot], &tag));
    }
}
