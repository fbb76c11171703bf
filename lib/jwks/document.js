'use strict'

// A fetched JWKS document (RFC 7517 §5) read into the verification keys `setKeys` takes, or
// refused as a whole. The document comes from the network: every key is checked before any is
// used, and a document with one suspicious key (private members, a weak RSA modulus, a curve
// that contradicts its `alg`, two keys with one `kid`, a key type we do not know) is refused,
// so that the key set in force stays the last good one. Keys that are merely not for us (an
// encryption key, an algorithm outside the supported list or outside `algorithms`) are
// skipped, as identity providers publish them beside their signing keys.

const { createPublicKey } = require('node:crypto')
const { codedError, typeError, rangeError } = require('../../base/error')

// The signature algorithms a key may be bound to, with the key type each needs.
const KTY_OF_ALG = {
  RS256: 'RSA',
  RS384: 'RSA',
  RS512: 'RSA',
  PS256: 'RSA',
  PS384: 'RSA',
  PS512: 'RSA',
  ES256: 'EC',
  ES384: 'EC',
  EdDSA: 'OKP',
  Ed25519: 'OKP',
}
const SUPPORTED_ALGORITHMS = Object.freeze(Object.keys(KTY_OF_ALG))
// The one curve of each EC/OKP algorithm, and the algorithm a curve implies when `alg` is absent.
const CURVE_OF_ALG = { ES256: 'P-256', ES384: 'P-384', EdDSA: 'Ed25519', Ed25519: 'Ed25519' }
const ALG_OF_CURVE = { 'P-256': 'ES256', 'P-384': 'ES384', Ed25519: 'EdDSA' }
// Coordinate sizes in bytes (RFC 7518 §6.2.1.2, RFC 8037 §2): a shorter or longer one is malformed.
const COORDINATE_BYTES = { 'P-256': 32, 'P-384': 48, Ed25519: 32 }
// Curves that exist but sign with an algorithm we do not support (skipped, not refused).
// (`Ed25519` is RFC 9864's fully-specified name for EdDSA on Ed25519; a key without alg gets EdDSA.)
const OTHER_CURVES = new Set(['P-521', 'Ed448', 'X25519', 'X448', 'secp256k1'])
// The public members of each key type: the only ones passed on (and fingerprinted).
const PUBLIC_MEMBERS = { RSA: ['n', 'e'], EC: ['crv', 'x', 'y'], OKP: ['crv', 'x'] }
// Members only a private (or symmetric) key has (RFC 7518 §6.2.2, §6.3.2, §6.4.1; RFC 8037 §2).
// A JWKS that publishes one has leaked a key: refuse it rather than pass the secret along.
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']
// RSA modulus bounds: below 2048 bits is forgeable in practice; above 8192 is the largest the
// native verifier (ring) accepts and would make every verification needlessly slow.
const RSA_MIN_BITS = 2048
const RSA_MAX_BITS = 8192
// An RSA key without `alg` (Microsoft Entra publishes them so) is bound to RS256, the
// algorithm every such provider signs with; a key is never bound to two algorithms.
const RSA_DEFAULT_ALG = 'RS256'
const RSA_MAX_EXPONENT = 2n ** 33n - 1n
// The Authenticator's own bound on a kid (base/keys/normalize.js, src/jwt/key_set.rs).
const KID_MAX_BYTES = 256

/** A refused document or an unreachable source: `code` is one of the ERR_AUTH_SHIELD_JWKS_* codes. */
const jwksError = codedError

function invalid(message) {
  return jwksError('ERR_AUTH_SHIELD_JWKS_INVALID', `JWKS refused: ${message}`)
}

/**
 * The document's verification keys: `{ keys, skipped, fingerprint }`, where `keys` are
 * `{ kid?, alg, publicKey }` (a KeyObject) in document order, `skipped` counts the keys not for
 * us, and `fingerprint` is a string equal for two documents with the same keys. Throws an
 * ERR_AUTH_SHIELD_JWKS_INVALID error for a document to refuse.
 */
function readJwksDocument(bytes, { maxKeys, algorithms }) {
  let doc
  try {
    doc = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes))
  } catch {
    throw invalid('the document is not JSON (UTF-8)')
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc) || !Array.isArray(doc.keys)) {
    throw invalid('the document is not an object with a "keys" array')
  }
  if (doc.keys.length > maxKeys) throw invalid(`${doc.keys.length} keys, over maxKeys (${maxKeys})`)
  const keys = []
  const fingerprints = []
  const kids = new Set()
  let skipped = 0
  doc.keys.forEach((jwk, index) => {
    const key = readJwk(jwk, index, algorithms)
    if (key === null) {
      skipped++
      return
    }
    if (key.kid !== undefined) {
      // Two keys under one kid: which one a token means would depend on the order we read them.
      if (kids.has(key.kid)) throw invalid(`keys[${index}]: kid ${JSON.stringify(key.kid)} appears twice`)
      kids.add(key.kid)
    }
    keys.push(key.entry)
    fingerprints.push(key.fingerprint)
  })
  // An empty set would lock every user out; that is never what a refresh should do.
  if (keys.length === 0) throw invalid('no usable signing key')
  return { keys, skipped, fingerprint: JSON.stringify(fingerprints) }
}

/** One key: `{ kid, entry, fingerprint }`, null to skip, or throws to refuse the document. */
function readJwk(jwk, index, algorithms) {
  const at = `keys[${index}]`
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) throw invalid(`${at} is not an object`)
  const { kty, kid, use } = jwk
  if (kid !== undefined && (typeof kid !== 'string' || kid.length === 0 || Buffer.byteLength(kid) > KID_MAX_BYTES)) {
    throw invalid(`${at}: kid must be a string of 1 to ${KID_MAX_BYTES} bytes`)
  }
  const name = kid === undefined ? at : `${at} (kid ${JSON.stringify(kid)})`
  if (kty !== 'RSA' && kty !== 'EC' && kty !== 'OKP') {
    throw invalid(`${name}: key type ${JSON.stringify(kty)} is not RSA, EC or OKP`)
  }
  for (const member of PRIVATE_MEMBERS) {
    if (Object.hasOwn(jwk, member)) throw invalid(`${name}: has the private member "${member}"`)
  }
  if (use !== undefined && use !== 'sig' && use !== 'enc') throw invalid(`${name}: use must be "sig" or "enc"`)
  if (use === 'enc') return null
  if (jwk.key_ops !== undefined) {
    if (!Array.isArray(jwk.key_ops) || !jwk.key_ops.every((op) => typeof op === 'string')) {
      throw invalid(`${name}: key_ops must be an array of strings`)
    }
    if (!jwk.key_ops.includes('verify')) return null
  }
  for (const member of PUBLIC_MEMBERS[kty]) {
    if (typeof jwk[member] !== 'string') throw invalid(`${name}: "${member}" must be a string`)
  }
  if (kty !== 'RSA' && OTHER_CURVES.has(jwk.crv)) return null
  if (kty !== 'RSA' && ALG_OF_CURVE[jwk.crv] === undefined) throw invalid(`${name}: unknown curve ${JSON.stringify(jwk.crv)}`)
  if (kty !== 'RSA' && (kty === 'OKP') !== (jwk.crv === 'Ed25519')) throw invalid(`${name}: curve ${jwk.crv} is not a ${kty} curve`)

  let alg = jwk.alg
  if (alg === undefined) alg = kty === 'RSA' ? RSA_DEFAULT_ALG : ALG_OF_CURVE[jwk.crv]
  if (typeof alg !== 'string') throw invalid(`${name}: alg must be a string`)
  if (alg === 'none' || /^HS/.test(alg)) throw invalid(`${name}: alg ${alg} has no place in a public key set`)
  if (KTY_OF_ALG[alg] === undefined) return null // a signature algorithm we do not verify
  if (KTY_OF_ALG[alg] !== kty) throw invalid(`${name}: alg ${alg} needs a ${KTY_OF_ALG[alg]} key, not ${kty}`)
  if (kty !== 'RSA' && CURVE_OF_ALG[alg] !== jwk.crv) throw invalid(`${name}: alg ${alg} needs curve ${CURVE_OF_ALG[alg]}, not ${jwk.crv}`)
  if (algorithms !== null && !algorithms.includes(alg)) return null

  const pub = { kty }
  for (const member of PUBLIC_MEMBERS[kty]) pub[member] = jwk[member]
  for (const member of PUBLIC_MEMBERS[kty]) {
    if (!/^[A-Za-z0-9_-]+$/.test(pub[member]) && member !== 'crv') throw invalid(`${name}: "${member}" is not base64url`)
  }
  if (kty !== 'RSA') {
    const size = COORDINATE_BYTES[pub.crv]
    for (const member of kty === 'EC' ? ['x', 'y'] : ['x']) {
      if (Buffer.from(pub[member], 'base64url').length !== size) {
        throw invalid(`${name}: "${member}" must be ${size} bytes for ${pub.crv}`)
      }
    }
  }
  let publicKey
  try {
    // OpenSSL checks an EC point is on its curve here.
    publicKey = createPublicKey({ key: pub, format: 'jwk' })
  } catch (err) {
    throw invalid(`${name}: not a valid ${kty} public key (${err.message})`)
  }
  if (kty === 'RSA') {
    const bits = publicKey.asymmetricKeyDetails.modulusLength
    if (bits < RSA_MIN_BITS || bits > RSA_MAX_BITS) {
      throw invalid(`${name}: RSA modulus of ${bits} bits, outside ${RSA_MIN_BITS}-${RSA_MAX_BITS}`)
    }
    // e = 1 makes every "signature" its own message; ring takes odd exponents from 3 to 2^33-1.
    const e = publicKey.asymmetricKeyDetails.publicExponent
    if (e < 3n || e > RSA_MAX_EXPONENT || e % 2n === 0n) throw invalid(`${name}: RSA public exponent ${e} is not an odd number from 3 to 2^33-1`)
  }
  const entry = kid === undefined ? { alg, publicKey } : { kid, alg, publicKey }
  return { kid, entry: Object.freeze(entry), fingerprint: [kid === undefined ? null : kid, alg, pub] }
}

/** `algorithms`: undefined (all supported), or a non-empty array of supported names. */
function readAlgorithms(algorithms) {
  if (algorithms === undefined) return null
  if (!Array.isArray(algorithms) || algorithms.length === 0) {
    throw typeError('options.algorithms must be a non-empty array of algorithm names')
  }
  for (const alg of algorithms) {
    if (!SUPPORTED_ALGORITHMS.includes(alg)) {
      throw rangeError(`options.algorithms: ${JSON.stringify(alg)} is not one of ${SUPPORTED_ALGORITHMS.join(', ')}`)
    }
  }
  return [...algorithms]
}

module.exports = { readJwksDocument, readAlgorithms, jwksError, SUPPORTED_ALGORITHMS }
