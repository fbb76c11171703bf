//! Compact JWS / JWT (RFC 7515, RFC 7519) for HS256: strict decoding, verification, signing.

pub mod base64url;
pub mod claims;
pub mod header;
pub mod json_scan;
pub mod key;
pub mod kind;
pub mod sign;
pub mod validate;
pub mod verify;

pub use claims::{Claim, Claims};
pub use key::HmacKey;
pub use kind::TokenKind;
pub use validate::ClaimRules;
pub use verify::{decode_verified, signed_with, Verifier};
