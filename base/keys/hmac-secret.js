'use strict'

// The rule that keeps key material out of HMAC secrets, the JS twin of src/jwt/hmac_secret.rs
// (the module doc there says why; docs/keys.md states the rule). Both run the cases of
// contract/vectors/hmac_secret_key_material.json. Used by the JS engine's config reader
// (js/config.js, the config's secrets) and by base/keys/normalize.js (each HS* key, for both
// engines), once per construction or setKeys, never per request.
//
// The rule reads bytes (a string as its UTF-8), with no parsing: a secret is key material when
// it contains `-----BEGIN` (a PEM block of any label), or a JSON member named `kty` or `keys`
// (the quoted name, optional JSON whitespace, a colon): a JWK or a JWK Set.

const { message } = require('../../contract')

const PEM_BOUNDARY = Buffer.from('-----BEGIN')
const JWK_MEMBERS = [Buffer.from('"kty"'), Buffer.from('"keys"')]

/** `'pem'`, `'jwk'`, or null for a secret the rule lets through; `secret` is a Buffer. */
function keyMaterial(secret) {
  if (secret.indexOf(PEM_BOUNDARY) !== -1) return 'pem'
  if (JWK_MEMBERS.some((name) => hasMember(secret, name))) return 'jwk'
  return null
}

/** `name` (quoted) followed by optional JSON whitespace (RFC 8259 §2) and `:`. */
function hasMember(bytes, name) {
  for (let at = bytes.indexOf(name); at !== -1; at = bytes.indexOf(name, at + 1)) {
    let i = at + name.length
    while (i < bytes.length && (bytes[i] === 0x20 || bytes[i] === 0x09 || bytes[i] === 0x0a || bytes[i] === 0x0d)) i++
    if (i < bytes.length && bytes[i] === 0x3a) return true
  }
  return false
}

const MESSAGE_OF = { pem: 'secretIsPem', jwk: 'secretIsJwk' }

/**
 * Throws the TypeError (`ERR_INVALID_ARG_VALUE`, as the core's) that names the fix when `secret`
 * (a Buffer) is key material; `name` names the secret (`config.accessSecret`, `keys[0]`).
 */
function checkHmacSecret(secret, name) {
  const material = keyMaterial(secret)
  if (material === null) return
  const err = new TypeError(message(MESSAGE_OF[material], { name }))
  err.code = 'ERR_INVALID_ARG_VALUE'
  throw err
}

module.exports = { keyMaterial, checkHmacSecret }
