'use strict'

// The public key of a DPoP proof's jwk header, as src/dpop/proof_key.rs: read strictly, bound
// to the proof's alg, never holding private members, named by its RFC 7638 SHA-256 thumbprint.

const { createHash, createPublicKey } = require('#node/crypto')
const { isUtf8 } = require('#node/buffer')
const { ALGS } = require('../../base/keys/normalize')
const { VerificationKey } = require('../jwt/key-set')
const { decodeSegment } = require('../jwt')
const { claimValue } = require('../jwt/claims')
const { Reader, MALFORMED } = require('../jwt/json-scan')
const { LIMITS } = require('../../contract')

// Members of private JWKs (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2).
const PRIVATE_MEMBERS = new Set(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'])
const MEMBERS = new Set(['kty', 'crv', 'x', 'y', 'n', 'e'])
// RFC 7518 §3.3's least; the most a client needs (contract/limits.json): a verification costs
// with the modulus and the exponent's bits, so larger ones are refused before any is checked.
const RSA_MIN_BITS = 2048
const { dpopRsaMaxBits: RSA_MAX_BITS, dpopRsaMaxExponent: RSA_MAX_EXPONENT } = LIMITS
// Base64url of the largest modulus, with a leading zero byte: no longer one is decoded.
const RSA_MAX_N_CHARS = Math.ceil((RSA_MAX_BITS / 8 + 1) / 3) * 4

/**
 * A ProofKey of `jwk` (the member's bytes) for `alg`, or null: its `thumbprint`, and
 * `verifies(input, signature)`, which imports the key only when first asked (the signature is the
 * chain's last DPoP check: a refused request never pays the import).
 */
function readProofKey(jwk, alg) {
  if (!isUtf8(jwk)) return null
  const m = {}
  const r = new Reader(jwk)
  try {
    r.topObject((name) => {
      if (PRIVATE_MEMBERS.has(name)) throw MALFORMED
      if (!MEMBERS.has(name)) return r.ignoreValue()
      if (Object.hasOwn(m, name)) throw MALFORMED
      m[name] = claimValue(r)
    })
  } catch (err) {
    if (err === MALFORMED) return null
    throw err
  }
  const text = (v) => (typeof v === 'string' ? v : null)
  const spec = ALGS[alg]
  const kty = text(m.kty)
  if (kty === null) return null
  let members
  if (spec.family === 'ec' || spec.family === 'ed25519') {
    const ec = spec.family === 'ec'
    const crv = text(m.crv)
    if (kty !== (ec ? 'EC' : 'OKP') || crv === null || crv !== spec.crv) return null
    const x = text(m.x)
    const want = ec ? spec.bytes : 32
    if (x === null || decodedLength(x) !== want) return null
    if (ec) {
      const y = text(m.y)
      if (y === null || decodedLength(y) !== want) return null
      members = { crv, kty, x, y }
    } else members = { crv, kty, x }
  } else {
    const n = text(m.n)
    const e = text(m.e)
    if (n === null || e === null || kty !== 'RSA' || n.length > RSA_MAX_N_CHARS) return null
    const modulus = decodeSegment(n)
    if (modulus === null || modulus.length === 0) return null
    const bits = modulus.length * 8 - (Math.clz32(modulus[0]) - 24)
    const exponent = decodeSegment(e)
    if (exponent === null) return null
    // Minimal big-endian, odd, 3 to RSA_MAX_EXPONENT.
    const small = exponent.length >= 1 && exponent.length <= 4 && exponent[0] !== 0
    const odd = exponent.length >= 1 && (exponent[exponent.length - 1] & 1) === 1
    const value = exponent.reduce((v, b) => v * 256 + b, 0)
    if (bits < RSA_MIN_BITS || bits > RSA_MAX_BITS || !small || !odd || value < 3 || value > RSA_MAX_EXPONENT) return null
    members = { e, kty, n }
  }
  // RFC 7638 §3.2: the required members only, in lexicographic order (as built above), no spaces.
  const thumbprint = createHash('sha256').update(JSON.stringify(members)).digest('base64url')
  return new ProofKey(alg, members, thumbprint)
}

class ProofKey {
  constructor(alg, members, thumbprint) {
    this.alg = alg
    this.members = members
    this.thumbprint = thumbprint
  }

  /** Whether `signature` is this key's of `input` under its alg; false for a key node:crypto refuses. */
  verifies(input, signature) {
    let keyObject
    try {
      keyObject = createPublicKey({ key: this.members, format: 'jwk' })
    } catch {
      // Not a point of the curve, or another key node:crypto refuses: no signature is its.
      return false
    }
    return new VerificationKey({ kid: undefined, alg: this.alg, key: undefined, keyObject, jwk: null }).verifies(input, signature)
  }
}

function decodedLength(segment) {
  const bytes = decodeSegment(segment)
  return bytes === null ? -1 : bytes.length
}

module.exports = { readProofKey }
