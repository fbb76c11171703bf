'use strict'

// The JS engine's verification keys and selection rules, the same as src/jwt/key_set.rs:
// - a header `kid` must name a key (else unknown_key), and that key's alg must be the header's
//   (else unsupported_algorithm): an RSA public key can never become an HMAC secret;
// - without `kid`, exactly one key may have the header's alg (none: unsupported_algorithm;
//   several: unknown_key); keys are never tried one after another.
// Every KeyObject is built once, by base/keys/normalize.js, when the set is made.

const crypto = require('#node/crypto')
const { createHmac, createSecretKey, timingSafeEqual, constants } = crypto
const { ALGS } = require('../../base/keys/normalize')
const { Hs256Key } = require('./key')

// Curve orders (SEC 2 §2.4.2, §2.5.1): r and s must lie in [1, n) (RFC 7518 §3.4, FIPS 186-4
// §6.4); zero r and s are the "psychic signatures" of CVE-2022-21449.
const CURVE_ORDERS = {
  ES256: Buffer.from('ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551', 'hex'),
  ES384: Buffer.from(
    'ffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973',
    'hex',
  ),
}

/** One key bound to its one alg; `verifies(signingInput, signature)` checks a signature of it. */
class VerificationKey {
  constructor({ kid, alg, key, keyObject, jwk }) {
    this.kid = kid
    this.alg = alg
    this.jwk = jwk
    const spec = ALGS[alg]
    this.family = spec.family
    this.hash = spec.hash
    this.keyObject = keyObject
    if (alg === 'HS256') this.hs256 = new Hs256Key(key)
    else if (spec.family === 'hmac') this.macBytes = spec.bytes
    else if (spec.family === 'rsa') this.signatureBytes = Math.ceil(keyObject.asymmetricKeyDetails.modulusLength / 8)
    else if (spec.family === 'rsa-pss') {
      this.signatureBytes = Math.ceil(keyObject.asymmetricKeyDetails.modulusLength / 8)
      // RFC 7518 §3.5: the salt is as long as the hash, and nothing else is accepted (ring's rule).
      this.verifyKey = {
        key: keyObject,
        padding: constants.RSA_PKCS1_PSS_PADDING,
        saltLength: constants.RSA_PSS_SALTLEN_DIGEST,
      }
    } else if (spec.family === 'ec') {
      this.coordinateBytes = spec.bytes
      this.order = CURVE_ORDERS[alg]
      // JWS ECDSA is the fixed-width r || s (RFC 7518 §3.4): DER is refused by its length.
      this.verifyKey = { key: keyObject, dsaEncoding: 'ieee-p1363' }
    } else this.signatureBytes = 64
    if (this.verifyKey === undefined) this.verifyKey = keyObject
  }

  get isHmac() {
    return this.family === 'hmac'
  }

  /** Whether `signature` (bytes) is this key's signature of `signingInput` (an ASCII string). */
  verifies(signingInput, signature) {
    if (this.hs256 !== undefined) return this.hs256.verifies(signingInput, signature)
    if (this.macBytes !== undefined) {
      if (signature.length !== this.macBytes) return false
      const mac = createHmac(this.hash, this.keyObject).update(signingInput, 'latin1').digest()
      return timingSafeEqual(mac, signature)
    }
    if (this.coordinateBytes !== undefined) {
      const c = this.coordinateBytes
      if (signature.length !== 2 * c) return false
      if (!inScalarRange(signature.subarray(0, c), this.order) || !inScalarRange(signature.subarray(c), this.order)) {
        return false
      }
    } else if (signature.length !== this.signatureBytes) return false
    try {
      return crypto.verify(this.hash, Buffer.from(signingInput, 'latin1'), this.verifyKey, signature)
    } catch {
      // OpenSSL refuses some malformed signatures by throwing rather than answering false.
      return false
    }
  }
}

/** 0 < value < order, both big-endian of the same length. */
function inScalarRange(value, order) {
  let zero = true
  for (let i = 0; i < value.length; i++) {
    if (value[i] !== 0) {
      zero = false
      break
    }
  }
  return !zero && Buffer.compare(value, order) < 0
}

/** The keys of one authenticator at one moment; replaced whole by setKeys, never edited. */
class KeySet {
  /** `entries` from base/keys/normalize.js `normalizeKeys`; `generation` counts replacements. */
  constructor(entries, generation) {
    this.keys = entries.map((entry) => new VerificationKey(entry))
    this.generation = generation
    this.allHmac = this.keys.every((k) => k.isHmac)
  }

  /** One HS256 key without kid: the accessSecret / refreshSecret shorthand. */
  static hs256(secret) {
    return new KeySet([{ kid: undefined, alg: 'HS256', key: secret, keyObject: createSecretKey(secret), jwk: null }], 0)
  }

  /** The key a header with `alg` and `kid` selects, or a failure code. */
  select(alg, kid) {
    if (kid !== undefined) {
      const key = this.keys.find((k) => k.kid === kid)
      if (key === undefined) return 'unknown_key'
      return key.alg === alg ? key : 'unsupported_algorithm'
    }
    let found = null
    for (const key of this.keys) {
      if (key.alg !== alg) continue
      // Several candidates and no kid to choose: never try them in turn.
      if (found !== null) return 'unknown_key'
      found = key
    }
    return found === null ? 'unsupported_algorithm' : found
  }

  /** `{ keys }`: the public JWK of every asymmetric key, in configuration order. */
  jwks() {
    const keys = []
    for (const key of this.keys) if (key.jwk !== null) keys.push({ ...key.jwk })
    return { keys }
  }
}

module.exports = { KeySet, VerificationKey }
