'use strict'

// HS256 token verification and claim rules on the `jsonwebtoken` package, with the structural
// pre-checks that make every verdict equal to the native core's (src/jwt/*.rs): strict
// base64url, the serde-equivalent JSON reading of jwt-json.js, and one fixed check order:
// structure, algorithm, signature, claim types, nbf, exp, missing exp, aud, iss, sub, type.

const jsonwebtoken = require('jsonwebtoken')
const { parseHeader, parseClaims } = require('./jwt-json')
const { fail } = require('./errors')

const BASE64URL = /^[A-Za-z0-9_-]*$/
const HMAC_SHA256_BYTES = 32
const STRING_CLAIMS = ['sub', 'iss', 'jti', 'email', 'role', 'tenant_id', 'type']
const NUMBER_CLAIMS = ['exp', 'nbf', 'iat']

/**
 * Strict base64url without padding (RFC 7515 §2): one spelling per byte string, so a mutated
 * character can never decode to the same bytes. null when not canonical.
 */
function decodeSegment(segment) {
  const rest = segment.length % 4
  if (rest === 1 || !BASE64URL.test(segment)) return null
  if (rest !== 0) {
    // The unused low bits of the last character must be zero.
    const last = base64urlValue(segment.charCodeAt(segment.length - 1))
    if ((last & (rest === 2 ? 0x0f : 0x03)) !== 0) return null
  }
  return Buffer.from(segment, 'base64url')
}

function base64urlValue(c) {
  if (c >= 65 && c <= 90) return c - 65
  if (c >= 97 && c <= 122) return c - 71
  if (c >= 48 && c <= 57) return c + 4
  return c === 45 ? 62 : 63
}

/** The claim checks one token kind gets, fixed at construction. */
class ClaimRules {
  constructor(settings, expectedType) {
    this.issuers = settings.issuers
    this.audiences = settings.audiences
    this.tolerance = settings.clockToleranceSec
    this.requireExpiration = settings.requireExpiration
    this.requireSubject = settings.requireSubject
    // A refresh token must always say it is one.
    this.requireTokenType = settings.requireTokenType || expectedType === 'refresh'
    this.expectedType = expectedType
    const audience = this.audiences.length > 0 ? this.audiences : undefined
    const issuer = this.issuers.length > 0 ? this.issuers : undefined
    const base = { algorithms: ['HS256'], clockTolerance: this.tolerance }
    // Signature only: for tokens whose claim types are wrong, and for the epoch-0 test clock
    // (jsonwebtoken reads `clockTimestamp: 0` as "unset" and would use the system clock).
    this.signatureOnly = { algorithms: ['HS256'], ignoreExpiration: true, ignoreNotBefore: true }
    this.timeOnly = base
    this.everything = { ...base, audience, issuer }
  }

  /** Verifies `token` with `key` at `now` (seconds): its claims, or a Failure. */
  verify(token, key, now) {
    const parts = token.split('.')
    if (parts.length !== 3) return fail('malformed_token')
    const headerJson = decodeSegment(parts[0])
    const payloadJson = headerJson && decodeSegment(parts[1])
    const signature = payloadJson && decodeSegment(parts[2])
    if (signature === null) return fail('malformed_token')
    const header = parseHeader(headerJson)
    if (header === null || header.hasCrit) return fail('malformed_token')
    // Case-sensitive on purpose: "none", "hs256" and every other spelling are refused.
    if (header.alg !== 'HS256') return fail('unsupported_algorithm')
    const claims = parseClaims(payloadJson)
    if (claims === null) return fail('malformed_token')
    if (signature.length !== HMAC_SHA256_BYTES) return fail('invalid_signature')

    const typesOk = hasValidTypes(claims)
    const missingExp = claims.exp === undefined && this.requireExpiration
    const library = typesOk && now !== 0
    let options = this.signatureOnly
    if (library) options = { ...(missingExp ? this.timeOnly : this.everything), clockTimestamp: now }
    try {
      jsonwebtoken.verify(token, key, options)
    } catch (err) {
      return failureOf(err)
    }
    if (!typesOk) return fail('invalid_claims')
    if (!library) {
      if (typeof claims.nbf === 'number' && claims.nbf > now + this.tolerance) return fail('token_not_yet_valid')
      if (typeof claims.exp === 'number' && now >= claims.exp + this.tolerance) return fail('token_expired')
    }
    if (missingExp) return fail('missing_expiration')
    if (!library) {
      if (this.audiences.length > 0 && !this.audienceMatches(claims.aud)) return fail('invalid_audience')
      if (this.issuers.length > 0 && !this.issuers.includes(claims.iss)) return fail('invalid_issuer')
    }
    if (this.requireSubject && (claims.sub === undefined || claims.sub === '')) return fail('missing_subject')
    // A refresh token must never pass as an access token, even under a shared secret.
    if (claims.type !== undefined ? claims.type !== this.expectedType : this.requireTokenType) {
      return fail('wrong_token_type')
    }
    return claims
  }

  audienceMatches(aud) {
    if (typeof aud === 'string') return this.audiences.includes(aud)
    return Array.isArray(aud) && aud.some((a) => this.audiences.includes(a))
  }
}

/** A registered claim of the wrong JSON type is an error, not a claim to ignore. */
function hasValidTypes(claims) {
  for (const name of STRING_CLAIMS) {
    const v = claims[name]
    if (v !== undefined && typeof v !== 'string') return false
  }
  for (const name of NUMBER_CLAIMS) {
    const v = claims[name]
    if (v !== undefined && typeof v !== 'number') return false
  }
  const aud = claims.aud
  return aud === undefined || typeof aud === 'string' || Array.isArray(aud)
}

function failureOf(err) {
  if (err instanceof jsonwebtoken.TokenExpiredError) return fail('token_expired')
  if (err instanceof jsonwebtoken.NotBeforeError) return fail('token_not_yet_valid')
  const message = String(err && err.message)
  if (message === 'invalid signature') return fail('invalid_signature')
  if (message.startsWith('jwt audience invalid')) return fail('invalid_audience')
  if (message.startsWith('jwt issuer invalid')) return fail('invalid_issuer')
  // The pre-checks leave jsonwebtoken nothing else to refuse; never let a token crash a request.
  return fail('malformed_token')
}

module.exports = { ClaimRules, decodeSegment }
