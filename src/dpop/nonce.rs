//! DPoP server nonces (RFC 9449 §8), stateless: the nonce of a time slot is an HMAC of the
//! slot number, so every process with the secret issues and accepts the same nonces with no
//! shared state. A nonce is accepted in its slot and the next, so a client that fetched one
//! just before the rotation is not turned away; two slots later it is refused (replayed
//! nonces of an old slot never pass).

use crate::jwt::base64url;
use crate::jwt::HmacKey;

pub struct NonceKey {
    key: HmacKey,
    lifetime_sec: f64,
}

impl NonceKey {
    pub fn new(secret: &[u8], lifetime_sec: f64) -> Self {
        NonceKey {
            key: HmacKey::new(secret),
            lifetime_sec,
        }
    }

    fn slot(&self, now: f64) -> f64 {
        (now / self.lifetime_sec).floor()
    }

    /// base64url(HMAC-SHA256(secret, "auth-shield dpop-nonce <slot>")), 43 characters.
    fn nonce_of(&self, slot: f64) -> String {
        let text = format!("auth-shield dpop-nonce {}", slot.max(0.0) as u64);
        base64url::encode(self.key.sign(text.as_bytes()).as_ref())
    }

    /// The nonce to hand out at `now` (seconds).
    pub fn current(&self, now: f64) -> String {
        self.nonce_of(self.slot(now))
    }

    /// Whether `nonce` is the current slot's or the previous one's.
    pub fn accepts(&self, nonce: &str, now: f64) -> bool {
        let slot = self.slot(now);
        nonce == self.nonce_of(slot) || nonce == self.nonce_of(slot - 1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::NonceKey;

    #[test]
    fn a_nonce_passes_in_its_slot_and_the_next_only() {
        let k = NonceKey::new(b"0123456789abcdef0123456789abcdef", 60.0);
        let n = k.current(6_000.0);
        assert_eq!(n.len(), 43);
        assert!(k.accepts(&n, 6_059.0));
        assert!(k.accepts(&n, 6_119.0));
        assert!(!k.accepts(&n, 6_120.0));
        assert!(!k.accepts(&n, 5_999.0));
        let other = NonceKey::new(b"another-secret-0123456789abcdef!", 60.0);
        assert!(!other.accepts(&n, 6_000.0));
    }
}
