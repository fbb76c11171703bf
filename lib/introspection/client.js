'use strict'

// One token introspection exchange (RFC 7662 §2): a POST of the token to the issuer's endpoint,
// the client authenticated (client_secret_basic, client_secret_post, or private_key_jwt, RFC
// 7523), fetched as a JWKS is (lib/jwks/fetch.js: no redirect followed, a byte cap, a time-out).
// The answer is JSON, or with `jwtResponse` an RFC 9701 JWT verified with the issuer's own keys
// before anything in it is believed. Any failure rejects with an IntrospectionError whose message
// names the endpoint, never the token.

const { randomUUID, sign, verify } = require('node:crypto')
const { fetchResponse, fetchDocument, HTTP_STATUS, causeText } = require('../jwks/fetch')
const { metadataUrls } = require('../jwks/discovery')
const { allowedEndpoint } = require('./options')

const JWT_TYPE = 'application/token-introspection+jwt'

class IntrospectionError extends Error {
  constructor(message, cause) {
    super(message, cause === undefined ? undefined : { cause })
    this.name = 'IntrospectionError'
    this.code = 'ERR_AUTH_SHIELD_INTROSPECTION'
  }
}

/**
 * The answer of `endpoint` for `token`: the RFC 7662 response object (from the JWT's
 * `token_introspection` member for an RFC 9701 answer). `keysOf()`: the issuer's key set in
 * force (or null), for a JWT answer.
 */
async function introspectToken(token, endpoint, { issuer, settings, audiences, keysOf }, closing) {
  const body = new URLSearchParams({ token, token_type_hint: 'access_token' })
  const headers = { 'content-type': 'application/x-www-form-urlencoded', accept: settings.jwtResponse ? JWT_TYPE : 'application/json' }
  const { clientId, authMethod } = settings
  if (authMethod === 'client_secret_basic') {
    // RFC 6749 §2.3.1: each part form-encoded before the Basic scheme's base64.
    headers.authorization = `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(settings.clientSecret)}`).toString('base64')}`
  } else if (authMethod === 'client_secret_post') {
    body.set('client_id', clientId)
    body.set('client_secret', settings.clientSecret)
  } else {
    body.set('client_id', clientId)
    body.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer')
    body.set('client_assertion', clientAssertion(settings, issuer))
  }
  let answer
  try {
    answer = await fetchResponse(endpoint, settings, closing, { method: 'POST', headers, body: body.toString() })
  } catch (err) {
    throw new IntrospectionError(`introspection at ${endpoint.href} failed: ${err.message}`, err)
  }
  const type = mediaType(answer.contentType)
  if (settings.jwtResponse) {
    // Asked for a signed answer: a plain JSON one could be anyone's (RFC 9701 §4).
    if (type !== JWT_TYPE) throw new IntrospectionError(`introspection at ${endpoint.href} answered ${type || 'no content type'}, not ${JWT_TYPE}`)
    return verifiedAnswer(answer.bytes.toString('utf8'), { issuer, clientId, audiences, keys: keysOf(), endpoint })
  }
  if (type !== 'application/json' && !type.endsWith('+json')) throw new IntrospectionError(`introspection at ${endpoint.href} answered ${type || 'no content type'}, not JSON`)
  return parseObject(answer.bytes.toString('utf8'), endpoint)
}

function parseObject(text, endpoint) {
  let value
  try {
    value = JSON.parse(text)
  } catch {
    throw new IntrospectionError(`introspection at ${endpoint.href} answered a body that is not JSON`)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new IntrospectionError(`introspection at ${endpoint.href} answered JSON that is not an object`)
  return value
}

function mediaType(contentType) {
  return typeof contentType === 'string' ? contentType.split(';')[0].trim().toLowerCase() : ''
}

function formEncode(value) {
  return encodeURIComponent(value).replace(/%20/g, '+')
}

/** RFC 7523 §3: a client assertion for this exchange, valid one minute, a fresh jti each. */
function clientAssertion({ clientId, privateKey, privateKeyAlg, privateKeyKid }, issuer) {
  const now = Math.floor(Date.now() / 1000)
  const header = { alg: privateKeyAlg, typ: 'JWT' }
  if (privateKeyKid !== undefined) header.kid = privateKeyKid
  // The audience is the issuer identifier (RFC 7523 §3 allows it; oidc-provider accepts it).
  const payload = { iss: clientId, sub: clientId, aud: issuer, jti: randomUUID(), iat: now, exp: now + 60 }
  const input = `${b64(JSON.stringify(header))}.${b64(JSON.stringify(payload))}`
  return `${input}.${sign(hashOf(privateKeyAlg), Buffer.from(input), keyFor(privateKeyAlg, privateKey)).toString('base64url')}`
}

function b64(text) {
  return Buffer.from(text, 'utf8').toString('base64url')
}

const HASHES = { RS256: 'sha256', PS256: 'sha256', ES256: 'sha256', RS384: 'sha384', PS384: 'sha384', ES384: 'sha384', RS512: 'sha512', PS512: 'sha512', ES512: 'sha512', EdDSA: null, Ed25519: null }

function hashOf(alg) {
  return HASHES[alg]
}

function keyFor(alg, key) {
  if (alg.startsWith('ES')) return { key, dsaEncoding: 'ieee-p1363' }
  if (alg.startsWith('PS')) return { key, padding: 6 /* RSA_PKCS1_PSS_PADDING */, saltLength: 32 + 16 * (Number(alg.slice(2)) / 128 - 2) }
  return key
}

/**
 * RFC 9701 §5: a JWS of type token-introspection+jwt signed by one of the issuer's keys (chosen by
 * kid and alg, never by a key the answer names), from the issuer, for this resource server
 * (`aud`: the client id or one of its audiences), with the RFC 7662 answer in
 * `token_introspection`.
 */
function verifiedAnswer(jwt, { issuer, clientId, audiences, keys, endpoint }) {
  const refused = (why) => new IntrospectionError(`the JWT introspection answer of ${endpoint.href} is refused: ${why}`)
  const parts = jwt.trim().split('.')
  if (parts.length !== 3) throw refused('not a compact JWS')
  let header
  let payload
  try {
    header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8'))
    payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8'))
  } catch {
    throw refused('its header or payload is not JSON')
  }
  if (typeof header !== 'object' || header === null || typeof payload !== 'object' || payload === null) throw refused('its header or payload is not an object')
  const typ = typeof header.typ === 'string' ? header.typ.toLowerCase() : ''
  if (typ !== 'token-introspection+jwt' && typ !== JWT_TYPE) throw refused(`typ ${JSON.stringify(header.typ)} is not token-introspection+jwt`)
  if (keys === null || keys.length === 0) throw refused("the issuer's keys are not in force yet")
  const candidates = keys.filter((k) => k.alg === header.alg && (header.kid === undefined || k.kid === header.kid))
  if (candidates.length !== 1) throw refused(candidates.length === 0 ? 'no key of the issuer has its kid and alg' : 'its key is ambiguous (no kid)')
  const { alg, publicKey } = candidates[0]
  if (!(alg in HASHES)) throw refused(`alg ${alg} is not a signature algorithm`)
  const ok = verify(hashOf(alg), Buffer.from(`${parts[0]}.${parts[1]}`), keyFor(alg, publicKey), Buffer.from(parts[2], 'base64url'))
  if (!ok) throw refused('its signature does not verify')
  if (payload.iss !== issuer) throw refused('it is from another issuer')
  const aud = typeof payload.aud === 'string' ? [payload.aud] : Array.isArray(payload.aud) ? payload.aud : []
  if (payload.aud !== undefined && !aud.some((a) => a === clientId || (audiences !== null && audiences.includes(a)))) throw refused('it is for another audience')
  const answer = payload.token_introspection
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw refused('it has no token_introspection object')
  return answer
}

/**
 * The issuer's `introspection_endpoint`, from its metadata (OpenID Connect, else RFC 8414; the
 * metadata's issuer must be the configured one, the endpoint https: or loopback http: as the issuer).
 */
async function discoverEndpoint(issuer, issuerUrl, limits, closing) {
  let bytes = null
  let last = null
  for (const url of metadataUrls(issuerUrl)) {
    try {
      bytes = await fetchDocument(url, limits, closing)
      break
    } catch (err) {
      last = err
      if (err[HTTP_STATUS] !== 404) break
    }
  }
  if (bytes === null) throw new IntrospectionError(`no metadata of ${issuer} for its introspection endpoint: ${causeText(last)}`, last)
  const doc = parseObject(bytes.toString('utf8'), new URL(issuer))
  if (doc.issuer !== issuer) throw new IntrospectionError(`the metadata fetched for ${issuer} names another issuer: refused (mix-up defence)`)
  let url
  try {
    url = new URL(doc.introspection_endpoint)
  } catch {
    throw new IntrospectionError(`the metadata of ${issuer} has no introspection_endpoint URL`)
  }
  if (!allowedEndpoint(url, issuerUrl)) throw new IntrospectionError(`the introspection_endpoint of ${issuer} must be https: (http: only on loopback for a loopback issuer)`)
  return url
}

module.exports = { introspectToken, discoverEndpoint, IntrospectionError }
