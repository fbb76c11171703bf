'use strict'

// A trusted issuer's `introspection` option (createTrustedIssuers([{ issuer, introspection }]),
// docs/resource-server.md#opaque-tokens-introspection), read once when the registry is made: a
// bad option fails there, never on a request.

const { createPrivateKey } = require('node:crypto')
const { typeError, rangeError } = require('../../base/error')

const { readOptionBag } = require('../options/reader')

// The client assertion algorithms a key can make (RFC 7518), its default first.
function assertionAlgs(key) {
  const type = key.asymmetricKeyType
  if (type === 'rsa') return ['RS256', 'PS256']
  if (type === 'rsa-pss') return ['PS256']
  if (type === 'ed25519') return ['EdDSA']
  if (type === 'ec') {
    const curve = key.asymmetricKeyDetails && key.asymmetricKeyDetails.namedCurve
    return curve === 'prime256v1' ? ['ES256'] : curve === 'secp384r1' ? ['ES384'] : []
  }
  return []
}

/**
 * The checked introspection settings of `issuer` (its URL `issuerUrl`): the `introspectionOptions`
 * of contract/options.json (names, kinds, bounds, defaults), then what the schema cannot say.
 */
function readIntrospection(spec, issuer, issuerUrl) {
  const where = `the introspection option of ${issuer}`
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw typeError(`${where} must be an object { clientId, clientSecret | privateKey, ... }`)
  const read = readOptionBag(spec, 'introspectionOptions', { where: 'introspection' })
  if (read.clientId === undefined) throw typeError(`${where} needs clientId`)
  const authMethod = read.authMethod ?? (read.privateKey !== undefined ? 'private_key_jwt' : 'client_secret_basic')
  read.authMethod = authMethod
  if (authMethod === 'private_key_jwt') {
    if (read.clientSecret !== undefined) throw typeError(`${where}: private_key_jwt authenticates with privateKey, not clientSecret`)
    read.privateKey = readPrivateKey(read.privateKey, where)
    const algs = assertionAlgs(read.privateKey)
    read.privateKeyAlg = read.privateKeyAlg ?? algs[0]
    if (!algs.includes(read.privateKeyAlg)) throw typeError(`${where}: privateKeyAlg must be one of ${algs.join(', ') || '(none: an RSA, EC P-256/P-384 or Ed25519 key is needed)'} for this key`)
  } else {
    if (read.privateKey !== undefined) throw typeError(`${where}: privateKey is for authMethod private_key_jwt`)
    if (read.clientSecret === undefined) throw typeError(`${where}: ${authMethod} needs clientSecret`)
  }
  read.endpoint = read.endpoint === undefined ? null : readEndpoint(read.endpoint, issuerUrl, where)
  if (read.retryMinMs > read.retryMaxMs) throw rangeError(`${where}: retryMinMs must not exceed retryMaxMs`)
  return Object.freeze(read)
}

function readPrivateKey(key, where) {
  if (key === undefined) throw typeError(`${where}: private_key_jwt needs privateKey (a PEM, a private JWK or a KeyObject)`)
  try {
    if (typeof key === 'object' && key !== null && key.type === 'private' && typeof key.export === 'function') return key
    if (typeof key === 'object' && key !== null && typeof key.kty === 'string') return createPrivateKey({ key, format: 'jwk' })
    return createPrivateKey(key)
  } catch (err) {
    throw typeError(`${where}: privateKey is not a private key (${err.message})`)
  }
}

/** A configured endpoint: https:, or http: on loopback for a loopback issuer (as a discovered one). */
function readEndpoint(value, issuerUrl, where) {
  let url
  try {
    url = new URL(value)
  } catch {
    throw typeError(`${where}: endpoint is not a valid URL`)
  }
  if (!allowedEndpoint(url, issuerUrl)) throw typeError(`${where}: endpoint must be https: (http: only on loopback for a loopback issuer)`)
  return url
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost'])

function allowedEndpoint(url, issuerUrl) {
  const loopback = (u) => u.protocol === 'http:' && LOOPBACK.has(u.hostname)
  return url.protocol === 'https:' || (loopback(url) && loopback(issuerUrl))
}

module.exports = { readIntrospection, allowedEndpoint }
