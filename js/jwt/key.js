'use strict'

// HS256 keys: HMAC-SHA256 (RFC 2104) with the key's padded blocks prepared once. Node's
// createHmac builds a stream object and re-derives both padded key blocks on every call, about
// a third of the JS engine's time per request; two one-shot hashes over buffers made at
// construction give the same MAC for less. Where crypto.hash is missing (Node before 20.12),
// or a message is longer than the prepared buffer, createHmac with a prepared KeyObject does it.

const crypto = require('#node/crypto')

const { createHmac, createSecretKey, timingSafeEqual } = crypto
const hash = typeof crypto.hash === 'function' ? crypto.hash : null

const BLOCK_BYTES = 64 // SHA-256 block size (RFC 6234)
const MAC_BYTES = 32
// Messages up to this long go through the prepared buffer: a signing input of the default
// maxTokenBytes (8192) fits; longer ones take createHmac.
const PREPARED_MESSAGE_BYTES = 8192

/** An HS256 key: the secret bound to the one algorithm it may verify and sign with. */
class Hs256Key {
  constructor(secret) {
    this.key = createSecretKey(secret)
    if (hash === null) return
    // RFC 2104 §2: a key longer than the block is hashed first, a shorter one padded with zeros.
    const k = Buffer.alloc(BLOCK_BYTES)
    ;(secret.length > BLOCK_BYTES ? hash('sha256', secret, 'buffer') : secret).copy(k)
    // inner: K ^ ipad, then the message; outer: K ^ opad, then the inner hash.
    this.inner = Buffer.alloc(BLOCK_BYTES + PREPARED_MESSAGE_BYTES)
    this.outer = Buffer.alloc(BLOCK_BYTES + MAC_BYTES)
    for (let i = 0; i < BLOCK_BYTES; i++) {
      this.inner[i] = k[i] ^ 0x36
      this.outer[i] = k[i] ^ 0x5c
    }
    k.fill(0)
  }

  /** HMAC-SHA256 of `text`, which is ASCII (base64url and dots). */
  mac(text) {
    if (hash === null || text.length > PREPARED_MESSAGE_BYTES) {
      return createHmac('sha256', this.key).update(text, 'latin1').digest()
    }
    const length = this.inner.write(text, BLOCK_BYTES, 'latin1')
    hash('sha256', this.inner.subarray(0, BLOCK_BYTES + length), 'buffer').copy(this.outer, BLOCK_BYTES)
    return hash('sha256', this.outer, 'buffer')
  }

  /** Whether `signature` (bytes) is the MAC of `signingInput`, compared in constant time. */
  verifies(signingInput, signature) {
    return signature.length === MAC_BYTES && timingSafeEqual(this.mac(signingInput), signature)
  }
}

module.exports = { Hs256Key }
