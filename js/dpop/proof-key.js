'use strict'

// The public key of a DPoP proof's jwk header, as src/dpop/proof_key.rs: read strictly, bound
// to the proof's alg, never holding private members, named by its RFC 7638 SHA-256 thumbprint.

const { createHash, createPublicKey } = require('#node/crypto')
const { isUtf8 } = require('#node/buffer')
const { ALGS } = require('../../lib/keys/normalize')
const { VerificationKey } = require('../jwt/key-set')
const { decodeSegment } = require('../jwt')
const { claimValue } = require('../jwt/claims')
const { Reader, MALFORMED } = require('../jwt/json-scan')

// Members of private JWKs (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2).
const PRIVATE_MEMBERS = new Set(['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'])
const MEMBERS = new Set(['kty', 'crv', 'x', 'y', 'n', 'e'])
const RSA_MIN_BITS = 2048
const RSA_MAX_BITS = 8192

/** `{ key: VerificationKey, thumbprint }` of `jwk` (the member's bytes) for `alg`, or null. */
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
    if (n === null || e === null || kty !== 'RSA') return null
    const modulus = decodeSegment(n)
    if (modulus === null || modulus.length === 0) return null
    const bits = modulus.length * 8 - (Math.clz32(modulus[0]) - 24)
    const exponent = decodeSegment(e)
    if (exponent === null) return null
    // Minimal big-endian, odd, at least 3, at most 32 bits: what ring accepts.
    const small = exponent.length >= 1 && exponent.length <= 4 && exponent[0] !== 0
    const odd = exponent.length >= 1 && (exponent[exponent.length - 1] & 1) === 1
    const value = exponent.reduce((v, b) => v * 256 + b, 0)
    if (bits < RSA_MIN_BITS || bits > RSA_MAX_BITS || !small || !odd || value < 3) return null
    members = { e, kty, n }
  }
  let keyObject
  try {
    keyObject = createPublicKey({ key: members, format: 'jwk' })
  } catch {
    // Not a point of the curve, or another key node:crypto refuses.
    return null
  }
  // RFC 7638 §3.2: the required members only, in lexicographic order (as built above), no spaces.
  const thumbprint = createHash('sha256').update(JSON.stringify(members)).digest('base64url')
  return { key: new VerificationKey({ kid: undefined, alg, key: undefined, keyObject, jwk: null }), thumbprint }
}

function decodedLength(segment) {
  const bytes = decodeSegment(segment)
  return bytes === null ? -1 : bytes.length
}

module.exports = { readProofKey }
