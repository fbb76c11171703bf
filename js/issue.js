'use strict'

// Token issuance with node:crypto, with the native binding's claim rules and errors
// (src/binding/tokens.rs): the library sets iat, exp, jti, type and iss; the payload is
// serialized with sorted keys, as the native side's serde_json map writes it.

const { randomUUID } = require('#node/crypto')
const { typeError, rangeError } = require('../base/error')
const { message } = require('../contract')
const { isValidTenantId } = require('./tenant')

// Claims auth-shield sets itself; a caller passing one is told so instead of being ignored.
const RESERVED = [
  ['iat', 'the signing time'],
  ['exp', 'accessTtlSec / refreshTtlSec'],
  ['jti', 'a fresh UUID'],
  ['type', 'the signing method'],
  ['iss', 'config.issuer'],
]
// The JOSE header every token gets, as the native signer writes it.
const HEADER_SEGMENT = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url')

/**
 * Signs `claims` as a `kind` ('access' | 'refresh') token with `key`, at `now` seconds
 * (millisecond precision, the iat): an
 * Hs256Key, or a signing key from base/keys/signing-key.js (its own header, with `kid`).
 */
function signToken(settings, key, claims, kind, now) {
  const payload = claimsToObject(claims)
  checkUserClaims(payload)
  const ttl = kind === 'access' ? settings.accessTtlSec : settings.refreshTtlSec
  // Millisecond precision (RFC 7519 §2 allows a fractional NumericDate), so "log out everywhere"
  // refuses every earlier token and accepts the next login (docs/revocation.md); exp stays whole.
  payload.iat = now
  payload.exp = Math.floor(now + ttl)
  if (settings.issuers.length > 0) payload.iss = settings.issuers[0]
  if (settings.audiences.length > 0 && !Object.hasOwn(payload, 'aud')) payload.aud = settings.audiences[0]
  payload.jti = randomUUID()
  payload.type = kind
  const asymmetric = key.headerSegment !== undefined
  const signingInput = `${asymmetric ? key.headerSegment : HEADER_SEGMENT}.${Buffer.from(canonicalJson(payload)).toString('base64url')}`
  const signature = asymmetric ? key.sign(signingInput) : key.mac(signingInput)
  const token = `${signingInput}.${signature.toString('base64url')}`
  if (token.length > settings.maxTokenBytes) {
    throw rangeError(message('signedTokenTooLarge', { bytes: token.length, max: settings.maxTokenBytes }))
  }
  return token
}

const NOT_SERIALIZABLE = message('claimsNotSerializable')

/** The claims as plain JSON data, through JSON.stringify as the native binding does. */
function claimsToObject(claims) {
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) {
    throw typeError(message('claimsNotObject'))
  }
  let text
  try {
    text = JSON.stringify(claims)
  } catch {
    // A cycle, a BigInt, nesting too deep or a throwing toJSON: the native binding's error.
    throw typeError(NOT_SERIALIZABLE)
  }
  if (typeof text !== 'string') throw typeError(message('claimsNotObject'))
  const value = JSON.parse(text)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const column = Array.isArray(value) ? 0 : text.length
    throw rangeError(`claims could not be encoded: invalid type: ${describe(value, text)}, expected a map at line 1 column ${column}`)
  }
  const surrogate = loneSurrogateError(text)
  if (surrogate !== null) throw rangeError(`claims could not be encoded: ${surrogate}`)
  // Null prototype: a "__proto__" claim stays an ordinary key.
  return Object.assign(Object.create(null), value)
}

/** serde_json's words for a JSON value of the wrong type. */
function describe(value, text) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'sequence'
  if (typeof value === 'string') return `string ${JSON.stringify(value)}`
  if (typeof value === 'boolean') return `boolean \`${value}\``
  return /[.eE]/.test(text) ? `floating point \`${text}\`` : `integer \`${text}\``
}

/**
 * JSON.stringify writes a lone UTF-16 surrogate as a `\udXXX` escape, which has no UTF-8 form;
 * serde_json refuses the first one it meets. Its message, with the same (byte) column.
 */
function loneSurrogateError(text) {
  if (!/\\ud[89a-f]/i.test(text)) return null
  for (let i = 0; i < text.length; i++) {
    if (text[i] !== '\\') continue
    if (text[i + 1] !== 'u') {
      i++
      continue
    }
    const unit = parseInt(text.slice(i + 2, i + 6), 16)
    const at = (index) => `at line 1 column ${Buffer.byteLength(text.slice(0, index)) + 1}`
    if (unit >= 0xdc00 && unit <= 0xdfff) return `lone leading surrogate in hex escape ${at(i + 5)}`
    if (unit >= 0xd800 && unit <= 0xdbff) {
      if (text[i + 6] !== '\\' || text[i + 7] !== 'u') return `unexpected end of hex escape ${at(i + 6)}`
      const low = parseInt(text.slice(i + 8, i + 12), 16)
      if (low < 0xdc00 || low > 0xdfff) return `lone leading surrogate in hex escape ${at(i + 11)}`
      i += 6
    }
    i += 5
  }
  return null
}

function checkUserClaims(p) {
  for (const [name, setter] of RESERVED) {
    if (Object.hasOwn(p, name)) throw typeError(`claims.${name} is set by auth-shield (${setter}); remove it`)
  }
  if (typeof p.sub !== 'string' || p.sub === '') {
    throw typeError(message('claimsSubRequired'))
  }
  for (const name of ['email', 'role']) {
    if (Object.hasOwn(p, name) && typeof p[name] !== 'string') throw typeError(message('mustBeString', { name: `claims.${name}` }))
  }
  if (Object.hasOwn(p, 'tenant_id') && !(typeof p.tenant_id === 'string' && isValidTenantId(p.tenant_id))) {
    throw rangeError(message('claimsTenantIdInvalid'))
  }
  if (Object.hasOwn(p, 'aud')) {
    const aud = p.aud
    if (!(typeof aud === 'string' || (Array.isArray(aud) && aud.every((a) => typeof a === 'string')))) {
      throw typeError(message('claimsAudInvalid'))
    }
  }
  if (Object.hasOwn(p, 'nbf') && typeof p.nbf !== 'number') throw typeError(message('mustBeNumber', { name: 'claims.nbf' }))
}

/** JSON with object keys sorted by their UTF-8 bytes at every level (serde_json's map order). */
function canonicalJson(value) {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value !== 'object' || value === null) return JSON.stringify(value)
  const keys = Object.keys(value).sort(compareUtf8)
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`
}

function compareUtf8(a, b) {
  return Buffer.compare(Buffer.from(a), Buffer.from(b))
}

module.exports = { signToken }
