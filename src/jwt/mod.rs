//! Compact JWS / JWT (RFC 7515, RFC 7519) for HS256: strict decoding, verification, signing.

pub mod base64url;
pub mod claims;
pub mod header;
pub mod json_scan;
pub mod sign;
pub mod validate;
pub mod verify;

pub use claims::{Claim, Claims};
pub use validate::ClaimRules;
pub use verify::{decode_verified, HmacKey};
