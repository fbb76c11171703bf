'use strict'

// Verification keys as users give them (`{ kid?, alg, secret }` or `{ kid?, alg, publicKey }`
// with a PEM string, a JWK object or a KeyObject), checked once with node:crypto and turned
// into what both engines need: the raw material the native core takes (`{ kid, alg, key }`,
// key = HMAC secret | PKCS#1 RSAPublicKey DER | uncompressed EC point | 32-byte Ed25519 key),
// plus the prebuilt KeyObject the JS engine verifies with and the public JWK `jwks()` lists.
// Used by the package entry point (native.js) for the native engine and by js/config.js.

const { createPublicKey, createSecretKey, KeyObject } = require('#node/crypto')
const { message } = require('../../contract')
const { checkHmacSecret } = require('./hmac-secret')

// RFC 7518 §3.1 and RFC 8037 §3.1 (plus RFC 9864's fully-specified `Ed25519`): each alg, the
// key it takes and the size rule. Anything else (ES512, none, any other spelling) is refused.
const ALGS = {
  HS256: { family: 'hmac', hash: 'sha256', bytes: 32 },
  HS384: { family: 'hmac', hash: 'sha384', bytes: 48 },
  HS512: { family: 'hmac', hash: 'sha512', bytes: 64 },
  RS256: { family: 'rsa', hash: 'sha256' },
  RS384: { family: 'rsa', hash: 'sha384' },
  RS512: { family: 'rsa', hash: 'sha512' },
  PS256: { family: 'rsa-pss', hash: 'sha256' },
  PS384: { family: 'rsa-pss', hash: 'sha384' },
  PS512: { family: 'rsa-pss', hash: 'sha512' },
  ES256: { family: 'ec', hash: 'sha256', curve: 'prime256v1', crv: 'P-256', bytes: 32 },
  ES384: { family: 'ec', hash: 'sha384', curve: 'secp384r1', crv: 'P-384', bytes: 48 },
  EdDSA: { family: 'ed25519', hash: null, crv: 'Ed25519' },
  Ed25519: { family: 'ed25519', hash: null, crv: 'Ed25519' },
}

// The RSA moduli ring verifies with (RSA_*_2048_8192_*); fewer bits are weak.
const RSA_MIN_BITS = 2048
const RSA_MAX_BITS = 8192
// The same bounds as src/jwt/key_set.rs.
const MAX_KEYS = 100
const MAX_KID_BYTES = 256

function keyError(Class, code, message) {
  const err = new Class(message)
  err.code = code
  return err
}

/** `config.keys[2] (kid "a")`: every error names the key by index and kid. */
function keyName(label, index, kid) {
  return typeof kid === 'string' ? message('keyNameWithKid', { label, index, kid }) : `${label}[${index}]`
}

/**
 * Checks `keys` and returns one entry per key: `{ kid, alg, key, keyObject, jwk }`. `label`
 * names the list in errors (`config.keys`, `keys`). Throws a TypeError (wrong shape) or a
 * RangeError (unsupported alg, weak key, duplicate kid) with an ERR_AUTH_SHIELD_* code.
 */
function normalizeKeys(keys, { label = 'config.keys', allowShortSecret = false } = {}) {
  if (!Array.isArray(keys)) {
    // A wrong kind of value, like any option's (src/config.rs says the same).
    throw keyError(TypeError, 'ERR_INVALID_ARG_TYPE', `${label} must be an array of keys`)
  }
  if (keys.length === 0) throw keyError(RangeError, 'ERR_AUTH_SHIELD_INVALID_KEY', message('mustNotBeEmpty', { name: label }))
  if (keys.length > MAX_KEYS) {
    throw keyError(
      RangeError,
      'ERR_AUTH_SHIELD_INVALID_KEY',
      `${label} holds ${keys.length} keys; at most ${MAX_KEYS} are accepted`,
    )
  }
  const out = []
  const kids = new Set()
  for (let i = 0; i < keys.length; i++) {
    const entry = normalizeKey(keys[i], i, label, allowShortSecret)
    if (entry.kid !== undefined) {
      if (kids.has(entry.kid)) {
        throw keyError(RangeError, 'ERR_AUTH_SHIELD_DUPLICATE_KID', `${keyName(label, i, entry.kid)}: duplicate kid`)
      }
      kids.add(entry.kid)
    }
    out.push(entry)
  }
  return out
}

function normalizeKey(input, index, label, allowShortSecret) {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw keyError(
      TypeError,
      'ERR_AUTH_SHIELD_INVALID_KEY',
      `${label}[${index}] must be an object { kid?, alg, secret } or { kid?, alg, publicKey }`,
    )
  }
  const { kid, alg } = input
  const name = keyName(label, index, kid)
  if (kid !== undefined) {
    if (typeof kid !== 'string') throw keyError(TypeError, 'ERR_AUTH_SHIELD_INVALID_KEY', `${name}.kid must be a string`)
    const bytes = Buffer.byteLength(kid)
    if (bytes === 0 || bytes > MAX_KID_BYTES) {
      throw keyError(RangeError, 'ERR_AUTH_SHIELD_INVALID_KEY', `${name}: kid must be 1 to ${MAX_KID_BYTES} bytes`)
    }
  }
  if (typeof alg !== 'string') throw keyError(TypeError, 'ERR_AUTH_SHIELD_INVALID_KEY', `${name}.alg must be a string`)
  const spec = Object.hasOwn(ALGS, alg) ? ALGS[alg] : undefined
  if (spec === undefined) {
    throw keyError(
      RangeError,
      'ERR_AUTH_SHIELD_UNSUPPORTED_ALGORITHM',
      `${name}: unsupported algorithm ${JSON.stringify(alg)} (supported: ${Object.keys(ALGS).join(', ')})`,
    )
  }
  if (spec.family === 'hmac') return hmacKey(input, name, kid, alg, spec, allowShortSecret)
  return publicKey(input, name, kid, alg, spec)
}

function hmacKey(input, name, kid, alg, spec, allowShortSecret) {
  if (input.publicKey !== undefined) {
    throw keyError(TypeError, 'ERR_AUTH_SHIELD_INVALID_KEY', `${name}: an ${alg} key takes a secret, not a publicKey`)
  }
  const { secret } = input
  let key
  if (typeof secret === 'string') key = Buffer.from(secret, 'utf8')
  else if (ArrayBuffer.isView(secret)) key = Buffer.from(new Uint8Array(secret.buffer, secret.byteOffset, secret.byteLength))
  else if (secret instanceof KeyObject && secret.type === 'secret') key = secret.export()
  else throw keyError(TypeError, 'ERR_AUTH_SHIELD_INVALID_KEY', `${name}.secret must be a string, Buffer or secret KeyObject`)
  if (key.length === 0 || (key.length < spec.bytes && !allowShortSecret)) {
    throw keyError(
      RangeError,
      'ERR_AUTH_SHIELD_WEAK_KEY',
      message('keySecretTooShort', { name, alg, min: spec.bytes }),
    )
  }
  // The same rule as the config's secrets (base/keys/hmac-secret.js): never a key's text.
  checkHmacSecret(key, name)
  return { kid, alg, key, keyObject: createSecretKey(key), jwk: null }
}

function publicKey(input, name, kid, alg, spec) {
  if (input.secret !== undefined) {
    throw keyError(TypeError, 'ERR_AUTH_SHIELD_INVALID_KEY', `${name}: an ${alg} key takes a publicKey, not a secret`)
  }
  const keyObject = toPublicKeyObject(input.publicKey, name, alg)
  const type = keyObject.asymmetricKeyType
  const wrongKind = (what) =>
    keyError(TypeError, 'ERR_AUTH_SHIELD_INVALID_KEY', `${name}: ${alg} needs ${what}, got a ${type} key`)
  const jwkOut = { kty: '', kid, alg, use: 'sig' }
  let key
  if (spec.family === 'rsa' || spec.family === 'rsa-pss') {
    if (type !== 'rsa') throw wrongKind('an RSA key')
    const bits = keyObject.asymmetricKeyDetails.modulusLength
    if (bits < RSA_MIN_BITS || bits > RSA_MAX_BITS) {
      throw keyError(
        RangeError,
        'ERR_AUTH_SHIELD_WEAK_KEY',
        `${name}: an RSA key must have ${RSA_MIN_BITS} to ${RSA_MAX_BITS} bits, got ${bits}`,
      )
    }
    const { n, e } = keyObject.export({ format: 'jwk' })
    // Encoded here from the JWK, not by export({ type: 'pkcs1' }): Node 22's OpenSSL refuses to
    // re-encode some keys that were read from a PKCS#1 PEM ("Failed to encode public key").
    key = rsaPublicKeyDer(Buffer.from(n, 'base64url'), Buffer.from(e, 'base64url'))
    Object.assign(jwkOut, { kty: 'RSA', n, e })
  } else if (spec.family === 'ec') {
    if (type !== 'ec') throw wrongKind('an EC key')
    const curve = keyObject.asymmetricKeyDetails.namedCurve
    if (curve !== spec.curve) {
      throw keyError(RangeError, 'ERR_AUTH_SHIELD_INVALID_KEY', `${name}: ${alg} needs a ${spec.crv} key, got curve ${curve}`)
    }
    const { x, y } = keyObject.export({ format: 'jwk' })
    key = Buffer.concat([Buffer.of(4), Buffer.from(x, 'base64url'), Buffer.from(y, 'base64url')])
    Object.assign(jwkOut, { kty: 'EC', crv: spec.crv, x, y })
  } else {
    if (type !== 'ed25519') throw wrongKind('an Ed25519 key')
    const { x } = keyObject.export({ format: 'jwk' })
    key = Buffer.from(x, 'base64url')
    Object.assign(jwkOut, { kty: 'OKP', crv: 'Ed25519', x })
  }
  if (kid === undefined) delete jwkOut.kid
  return { kid, alg, key, keyObject, jwk: jwkOut }
}

/** DER of a PKCS#1 RSAPublicKey (RFC 8017 A.1.1): SEQUENCE { INTEGER n, INTEGER e }. */
function rsaPublicKeyDer(n, e) {
  return derTlv(0x30, Buffer.concat([derUnsignedInteger(n), derUnsignedInteger(e)]))
}

/** An INTEGER from unsigned big-endian bytes: no leading zeros, one 0x00 when the top bit is set. */
function derUnsignedInteger(bytes) {
  let start = 0
  while (start < bytes.length - 1 && bytes[start] === 0) start++
  const body = bytes.subarray(start)
  return derTlv(0x02, body[0] & 0x80 ? Buffer.concat([Buffer.of(0), body]) : body)
}

function derTlv(tag, body) {
  const len = body.length
  const header = len < 0x80 ? Buffer.of(tag, len) : len < 0x100 ? Buffer.of(tag, 0x81, len) : Buffer.of(tag, 0x82, len >> 8, len & 0xff)
  return Buffer.concat([header, body])
}

/** A public KeyObject from a PEM string, a JWK object or a KeyObject (a private one gives its public half). */
function toPublicKeyObject(publicKey, name, alg) {
  const invalid = (why) => keyError(TypeError, 'ERR_AUTH_SHIELD_INVALID_KEY', `${name}.publicKey ${why}`)
  // A WebCrypto CryptoKey (what jose's generateKeyPair and importJWK give on Node).
  if (typeof CryptoKey === 'function' && publicKey instanceof CryptoKey) publicKey = KeyObject.from(publicKey)
  if (publicKey instanceof KeyObject) {
    if (publicKey.type === 'secret') throw invalid('is a secret KeyObject; an asymmetric alg needs a public key')
    return publicKey.type === 'public' ? publicKey : createPublicKey(publicKey)
  }
  if (typeof publicKey === 'string') {
    try {
      return createPublicKey(publicKey)
    } catch (err) {
      throw invalid(`is not a PEM key node:crypto can read (${err.code || err.message})`)
    }
  }
  if (typeof publicKey === 'object' && publicKey !== null && !ArrayBuffer.isView(publicKey)) {
    if (publicKey.alg !== undefined && publicKey.alg !== alg) {
      throw invalid(`is a JWK for ${JSON.stringify(publicKey.alg)}, not ${alg}`)
    }
    if (publicKey.use !== undefined && publicKey.use !== 'sig') throw invalid(`is a JWK with use ${JSON.stringify(publicKey.use)}`)
    if (publicKey.kty === 'oct') throw invalid('is a symmetric JWK; an asymmetric alg needs a public key')
    // Only the public members: a private JWK is not needed to verify and never kept.
    const key = {}
    for (const member of ['kty', 'crv', 'n', 'e', 'x', 'y']) if (publicKey[member] !== undefined) key[member] = publicKey[member]
    try {
      return createPublicKey({ key, format: 'jwk' })
    } catch (err) {
      throw invalid(`is not a JWK node:crypto can read (${err.code || err.message})`)
    }
  }
  throw invalid('must be a PEM string, a JWK object, a KeyObject or a CryptoKey')
}

/** What the native core takes: `{ kid, alg, key }` per key. */
function rawKeys(entries) {
  return entries.map(({ kid, alg, key }) => (kid === undefined ? { alg, key } : { kid, alg, key }))
}

module.exports = { ALGS, MAX_KEYS, MAX_KID_BYTES, normalizeKeys, rawKeys, keyName }
