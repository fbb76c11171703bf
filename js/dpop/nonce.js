'use strict'

// DPoP server nonces (RFC 9449 §8), as src/dpop/nonce.rs: the nonce of a time slot is
// base64url(HMAC-SHA256(secret, "auth-shield dpop-nonce <slot>")), accepted in its slot and the
// next; every process with the secret agrees with no shared state.

const { createHmac } = require('#node/crypto')

class NonceKey {
  constructor(secret, lifetimeSec) {
    this.secret = secret
    this.lifetimeSec = lifetimeSec
  }

  slot(now) {
    return Math.floor(now / this.lifetimeSec)
  }

  nonceOf(slot) {
    return createHmac('sha256', this.secret).update(`auth-shield dpop-nonce ${Math.max(slot, 0)}`).digest('base64url')
  }

  /** The nonce to hand out at `now` (seconds). */
  current(now) {
    return this.nonceOf(this.slot(now))
  }

  /** Whether `nonce` is the current slot's or the previous one's. */
  accepts(nonce, now) {
    const slot = this.slot(now)
    return nonce === this.nonceOf(slot) || nonce === this.nonceOf(slot - 1)
  }
}

module.exports = { NonceKey }
