'use strict'

// Test support for `keys`: one key pair per supported alg (made once per process with
// node:crypto) and tokens signed by jose, a library no one here wrote.

const { generateKeyPairSync, randomBytes, createSecretKey } = require('node:crypto')

const ASYMMETRIC = {
  RS256: ['rsa', { modulusLength: 2048 }],
  RS384: ['rsa', { modulusLength: 2048 }],
  RS512: ['rsa', { modulusLength: 3072 }],
  PS256: ['rsa', { modulusLength: 2048 }],
  PS384: ['rsa', { modulusLength: 2048 }],
  PS512: ['rsa', { modulusLength: 2048 }],
  ES256: ['ec', { namedCurve: 'P-256' }],
  ES384: ['ec', { namedCurve: 'P-384' }],
  EdDSA: ['ed25519', {}],
  Ed25519: ['ed25519', {}],
}
const HMAC = { HS256: 32, HS384: 48, HS512: 64 }
const ALL_ALGS = [...Object.keys(HMAC), ...Object.keys(ASYMMETRIC)]

const pairs = new Map()

/** `{ publicKey, privateKey }` KeyObjects (HMAC: both the secret KeyObject) for `alg`, made once. */
function keyPair(alg) {
  let pair = pairs.get(alg)
  if (pair === undefined) {
    if (alg in HMAC) {
      const secret = createSecretKey(randomBytes(HMAC[alg]))
      pair = { publicKey: secret, privateKey: secret, secret: secret.export() }
    } else {
      const [type, options] = ASYMMETRIC[alg]
      pair = generateKeyPairSync(type, options)
    }
    pairs.set(alg, pair)
  }
  return pair
}

/** The `keys` entry verifying `alg` tokens, with `kid` (undefined: none) and the publicKey as `form`. */
function keyEntry(alg, kid, form = 'keyObject') {
  const pair = keyPair(alg)
  const entry = kid === undefined ? { alg } : { kid, alg }
  if (alg in HMAC) return { ...entry, secret: pair.secret }
  if (form === 'pem') entry.publicKey = pair.publicKey.export({ type: 'spki', format: 'pem' })
  else if (form === 'jwk') entry.publicKey = pair.publicKey.export({ format: 'jwk' })
  else entry.publicKey = pair.publicKey
  return entry
}

/** A token signed by jose with `alg`'s private key; `header` adds protected header members. */
async function joseToken(alg, claims, header = {}) {
  const jose = await import('jose')
  return new jose.SignJWT(claims).setProtectedHeader({ alg, ...header }).sign(keyPair(alg).privateKey)
}

module.exports = { ALL_ALGS, ASYMMETRIC, HMAC, keyPair, keyEntry, joseToken }
