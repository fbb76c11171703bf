//! Compact JWS / JWT (RFC 7515, RFC 7519): strict decoding, key selection, verification with
//! HS*/RS*/PS*/ES256/ES384/EdDSA keys, HS256 signing.

pub mod alg;
pub mod base64url;
pub mod claims;
pub mod header;
pub mod hmac_secret;
pub mod json_scan;
pub mod key;
pub mod key_set;
pub mod kind;
pub mod public_key;
pub mod sign;
#[cfg(test)]
pub mod test_tokens;
pub mod validate;
pub mod verify;

pub use alg::Alg;
pub use claims::{Claim, Claims, Confirmation};
pub use key::HmacKey;
pub use key_set::{KeySet, KeySpec};
pub use kind::TokenKind;
pub use validate::ClaimRules;
pub use verify::{signed_with, KeyLookup, Verifier};
