//! Compact tokens for the unit tests, built from header and payload text so a test states the
//! exact bytes it sends (a wrong alg, a lone surrogate, an untrusted iss), signed by any signer.

use super::base64url::encode;
use super::HmacKey;

/// A compact JWS of `header` and `payload` (JSON text, not checked) signed by `signer`.
pub fn signed(header: &str, payload: &str, signer: impl Fn(&[u8]) -> Vec<u8>) -> String {
    let input = format!(
        "{}.{}",
        encode(header.as_bytes()),
        encode(payload.as_bytes())
    );
    let signature = signer(input.as_bytes());
    format!("{input}.{}", encode(&signature))
}

/// As [`signed`], with an HS256 tag of `secret` (whatever alg the header names).
pub fn hs256(header: &str, payload: &str, secret: &[u8]) -> String {
    let key = HmacKey::new(secret);
    signed(header, payload, |input| key.sign(input).as_ref().to_vec())
}
