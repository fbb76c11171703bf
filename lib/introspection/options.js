'use strict'

// A trusted issuer's `introspection` option (createTrustedIssuers([{ issuer, introspection }]),
// docs/resource-server.md#opaque-tokens-introspection), read once when the registry is made: a
// bad option fails there, never on a request.

const { createPrivateKey } = require('node:crypto')
const { typeError, rangeError } = require('../../js/error')

const AUTH_METHODS = new Set(['client_secret_basic', 'client_secret_post', 'private_key_jwt'])
// RFC 7518 algorithms a client assertion may be signed with, by key type.
const ASSERTION_ALGS = { rsa: ['RS256', 'PS256'], 'rsa-pss': ['PS256'], ec: ['ES256', 'ES384'], ed25519: ['EdDSA'] }

// name: [default, min, max] (integers).
const LIMITS = {
  cacheMaxSec: [300, 1, 86400],
  negativeCacheSec: [10, 0, 3600],
  timeoutMs: [5000, 1, 60000],
  maxBytes: [65536, 256, 1048576],
  maxConcurrent: [8, 1, 1000],
  maxQueued: [1000, 0, 100000],
  retryMinMs: [1000, 100, 600000],
  retryMaxMs: [30000, 100, 3600000],
}
const FIELDS = new Set(['clientId', 'clientSecret', 'privateKey', 'privateKeyAlg', 'privateKeyKid', 'authMethod', 'endpoint', 'jwtResponse', 'introspectJwts', ...Object.keys(LIMITS)])

/** The checked introspection settings of `issuer` (an https: issuer URL object `issuerUrl`). */
function readIntrospection(spec, issuer, issuerUrl) {
  const where = `the introspection option of ${issuer}`
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec)) throw typeError(`${where} must be an object { clientId, clientSecret | privateKey, ... }`)
  for (const name of Object.keys(spec)) if (!FIELDS.has(name)) throw typeError(`${where}: unknown field ${JSON.stringify(name)}`)
  const read = { clientId: readString(spec.clientId, `${where}: clientId`) }
  const authMethod = spec.authMethod ?? (spec.privateKey !== undefined ? 'private_key_jwt' : 'client_secret_basic')
  if (!AUTH_METHODS.has(authMethod)) throw typeError(`${where}: authMethod must be one of ${[...AUTH_METHODS].join(', ')}`)
  read.authMethod = authMethod
  if (authMethod === 'private_key_jwt') {
    if (spec.clientSecret !== undefined) throw typeError(`${where}: private_key_jwt authenticates with privateKey, not clientSecret`)
    read.privateKey = readPrivateKey(spec.privateKey, where)
    const algs = ASSERTION_ALGS[read.privateKey.asymmetricKeyType] ?? []
    read.privateKeyAlg = spec.privateKeyAlg ?? algs[0]
    if (!algs.includes(read.privateKeyAlg)) throw typeError(`${where}: privateKeyAlg must be one of ${algs.join(', ') || '(none: an RSA, EC or Ed25519 key is needed)'} for this key`)
    read.privateKeyKid = spec.privateKeyKid === undefined ? undefined : readString(spec.privateKeyKid, `${where}: privateKeyKid`)
  } else {
    if (spec.privateKey !== undefined) throw typeError(`${where}: privateKey is for authMethod private_key_jwt`)
    read.clientSecret = readString(spec.clientSecret, `${where}: clientSecret`)
  }
  read.endpoint = spec.endpoint === undefined ? null : readEndpoint(spec.endpoint, issuerUrl, where)
  if (spec.jwtResponse !== undefined && typeof spec.jwtResponse !== 'boolean') throw typeError(`${where}: jwtResponse must be a boolean`)
  read.jwtResponse = spec.jwtResponse === true
  if (spec.introspectJwts !== undefined && typeof spec.introspectJwts !== 'boolean') throw typeError(`${where}: introspectJwts must be a boolean`)
  read.introspectJwts = spec.introspectJwts === true
  for (const [name, [def, min, max]] of Object.entries(LIMITS)) {
    const v = spec[name] ?? def
    if (typeof v !== 'number') throw typeError(`${where}: ${name} must be a number`)
    if (!Number.isInteger(v) || v < min || v > max) throw rangeError(`${where}: ${name} must be a whole number from ${min} to ${max}, got ${v}`)
    read[name] = v
  }
  if (read.retryMinMs > read.retryMaxMs) throw rangeError(`${where}: retryMinMs must not exceed retryMaxMs`)
  return Object.freeze(read)
}

function readString(value, name) {
  if (typeof value !== 'string' || value.length === 0 || value.length > 4096) throw typeError(`${name} must be a non-empty string`)
  return value
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
