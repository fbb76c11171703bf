//! The HS256 key, prepared once.

use ring::hmac;

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
