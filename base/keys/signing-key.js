'use strict'

// The `signingKey` option (`{ kid, alg, privateKey }`): issuing tokens with an asymmetric key.
// Read once at construction with node:crypto into what both engines need: a KeyObject for the
// JS signer, the PKCS#8 DER the native core builds its ring key pair from, the public JWK that
// `jwks()` publishes, and the token header. Only algorithms whose keys ring can sign with are
// offered: RS256, PS256, ES256, EdDSA.

const { createPrivateKey, createPublicKey, sign, constants, KeyObject } = require('#node/crypto')
const { typeError, rangeError } = require('../error')
const { message } = require('../../contract')

// For each algorithm: the node:crypto key type it needs and how to sign with it.
const SIGNERS = {
  RS256: { type: 'rsa', sign: (input, key) => sign('sha256', input, key) },
  PS256: {
    type: 'rsa',
    // RFC 7518 §3.5: MGF1 with the same hash, a salt as long as the hash.
    sign: (input, key) => sign('sha256', input, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }),
  },
  // JWS ECDSA signatures are the fixed-width r || s (RFC 7518 §3.4), not DER.
  ES256: { type: 'ec', curve: 'prime256v1', sign: (input, key) => sign('sha256', input, { key, dsaEncoding: 'ieee-p1363' }) },
  EdDSA: { type: 'ed25519', sign: (input, key) => sign(null, input, key) },
}
const SIGNING_ALGORITHMS = Object.freeze(Object.keys(SIGNERS))
// The RSA sizes and exponents ring signs with (2048-4096 bits, e >= 65537).
const RSA_MIN_BITS = 2048
const RSA_MAX_BITS = 4096
const RSA_MIN_EXPONENT = 65537n
// A kid goes into every token header as is: printable ASCII without quotes or backslashes
// needs no JSON escaping, so both engines write the same header bytes.
const KID_PATTERN = /^[\x21\x23-\x5b\x5d-\x7e]{1,256}$/

/**
 * `config.signingKey` read and checked: `{ kid, alg, privateKey, pkcs8, publicJwk, headerSegment }`,
 * or null when absent. Throws a TypeError or RangeError naming the problem.
 */
function readSigningKey(value) {
  if (value === undefined || value === null) return null
  if (typeof value !== 'object' || Array.isArray(value)) throw typeError('config.signingKey must be an object { kid, alg, privateKey }')
  const { kid, alg } = value
  if (typeof kid !== 'string' || !KID_PATTERN.test(kid)) {
    throw typeError(message('signingKidInvalid'))
  }
  if (typeof alg !== 'string') throw typeError('config.signingKey.alg must be a string')
  const signer = SIGNERS[alg]
  if (signer === undefined) throw rangeError(`config.signingKey.alg ${JSON.stringify(alg)} is not one of ${SIGNING_ALGORITHMS.join(', ')}`)
  const privateKey = readPrivateKey(value.privateKey)
  const type = privateKey.asymmetricKeyType
  if (type !== signer.type) throw rangeError(`config.signingKey: ${alg} needs a ${signer.type} private key, not ${type}`)
  const details = privateKey.asymmetricKeyDetails
  if (signer.curve !== undefined && details.namedCurve !== signer.curve) {
    throw rangeError(`config.signingKey: ${alg} needs a P-256 key, not ${details.namedCurve}`)
  }
  if (type === 'rsa') {
    if (details.modulusLength < RSA_MIN_BITS || details.modulusLength > RSA_MAX_BITS) {
      throw rangeError(`config.signingKey: RSA key of ${details.modulusLength} bits, outside ${RSA_MIN_BITS}-${RSA_MAX_BITS}`)
    }
    if (details.publicExponent < RSA_MIN_EXPONENT) {
      throw rangeError(`config.signingKey: RSA public exponent ${details.publicExponent} is under 65537`)
    }
  }
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' })
  const publicJwk = Object.freeze({ ...jwk, kid, alg, use: 'sig' })
  const header = `{"alg":"${alg}","kid":"${kid}","typ":"JWT"}`
  return Object.freeze({
    kid,
    alg,
    privateKey,
    pkcs8: privateKey.export({ type: 'pkcs8', format: 'der' }),
    publicJwk,
    headerSegment: Buffer.from(header).toString('base64url'),
    sign: (signingInput) => signer.sign(Buffer.from(signingInput), privateKey),
  })
}

/** A private KeyObject from a KeyObject, a PEM (string or Buffer) or a private JWK. */
function readPrivateKey(key) {
  if (key instanceof KeyObject) {
    if (key.type !== 'private') throw typeError('config.signingKey.privateKey must be a private key')
    return key
  }
  const input =
    typeof key === 'string' || Buffer.isBuffer(key)
      ? { key, format: 'pem' }
      : typeof key === 'object' && key !== null && !Array.isArray(key)
        ? { key, format: 'jwk' }
        : null
  if (input === null) throw typeError('config.signingKey.privateKey must be a PEM string, a private JWK or a KeyObject')
  try {
    return createPrivateKey(input)
  } catch (err) {
    throw typeError(`config.signingKey.privateKey could not be read as a ${input.format === 'pem' ? 'PEM' : 'JWK'} private key (${err.message})`)
  }
}

module.exports = { readSigningKey, SIGNING_ALGORITHMS }
