'use strict'

// Token verification (key selection by js/jwt/key-set.js) and claim rules on node:crypto, with the structural checks that make
// every verdict equal to the native core's (src/jwt/*.rs): strict base64url, the serde-equivalent
// JSON reading of js/jwt/claims.js, and one fixed check order: structure, header (alg, kid), claims
// (typ with the access-token profile), JSON, key selection, signature, claim types, nbf, iat, exp,
// missing exp, aud, iss, sub, type, profile claims, step-up, scope.

const { parseHeader, parseClaims } = require('./jwt/claims')
const { fail, Failure } = require('../base/error')
const { SCOPE_TOKEN, SCOPE_LIST, hasScope } = require('../contract')
const { ALGS } = require('../base/keys/normalize')

const EMPTY = Buffer.alloc(0)

// Three segments of base64url characters (RFC 7515 §7.1); their lengths are checked below.
const COMPACT_JWS = /^[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/
const BASE64URL = /^[A-Za-z0-9_-]*$/

/**
 * Strict base64url without padding (RFC 7515 §2): one spelling per byte string, so a mutated
 * character can never decode to the same bytes. null when not canonical.
 */
function decodeSegment(segment) {
  return BASE64URL.test(segment) ? decodeBase64url(segment) : null
}

/** `segment`, known to hold only base64url characters, decoded; null when not canonical. */
function decodeBase64url(segment) {
  const rest = segment.length % 4
  if (rest === 1) return null
  // The unused low bits of the last character must be zero.
  if (rest !== 0 && (base64urlValue(segment.charCodeAt(segment.length - 1)) & (rest === 2 ? 0x0f : 0x03)) !== 0) {
    return null
  }
  return Buffer.from(segment, 'base64url')
}

function base64urlValue(c) {
  if (c >= 65 && c <= 90) return c - 65
  if (c >= 97 && c <= 122) return c - 71
  if (c >= 48 && c <= 57) return c + 4
  return c === 45 ? 62 : 63
}

/**
 * Whether a NumericDate lies a second or more past `now + tolerance` (src/jwt/validate.rs
 * `is_future`): `now` is a whole second, and this library signs a millisecond iat.
 */
function isFuture(at, now, tolerance) {
  return at >= now + tolerance + 1
}

/** The claim checks one token kind gets, fixed at construction. */
class ClaimRules {
  constructor(settings, expectedType) {
    this.issuers = settings.issuers
    this.audiences = settings.audiences
    this.tolerance = settings.clockToleranceSec
    // RFC 9068 (access tokens only): header typ at+jwt, and the profile's claims; exp and sub
    // are among them.
    this.accessTokenProfile = settings.requireAccessTokenProfile && expectedType === 'access'
    this.requireExpiration = settings.requireExpiration || this.accessTokenProfile
    this.requireSubject = settings.requireSubject || this.accessTokenProfile
    // A refresh token must always say it is one.
    this.requireTokenType = settings.requireTokenType || expectedType === 'refresh'
    this.expectedType = expectedType
    // Scopes are granted to access tokens; a refresh token is never checked for them.
    this.requiredScopes = expectedType === 'access' ? settings.requiredScopes : []
    // RFC 9470 step-up (access tokens only).
    this.requiredAcr = expectedType === 'access' ? settings.requiredAcrs : []
    this.maxAuthAgeSec = expectedType === 'access' ? settings.maxAuthAgeSec : null
    // The `header.` prefix of the last token whose header passed, and the key it selected in
    // the key set it was selected from; no token starts with a NUL.
    this.acceptedHeader = '\0'
    this.acceptedKey = null
    this.acceptedKeys = null
    this.acceptedIss = undefined
  }

  /** Verifies `token` with `keys` (a KeySet) at `now` (seconds): its claims, or a Failure. */
  verify(token, keys, now) {
    const claims = decodeVerified(token, keys, this)
    return claims instanceof Failure ? claims : this.rulesFor(keys, claims).validate(claims, now)
  }

  /** The rules for claims `keys` verified: these, or the trusted issuer's own (js/issuers.js). */
  rulesFor(keys, claims) {
    return keys.byIssuer === true ? keys.rulesOf(claims) : this
  }

  /** The claim checks of src/jwt/validate.rs, on claims whose signature was verified. */
  validate(claims, now) {
    if (!hasValidTypes(claims)) return fail('invalid_claims')
    const tolerance = this.tolerance
    if (claims.nbf !== undefined && claims.nbf > now + tolerance) return fail('token_not_yet_valid')
    // A future iat would outlive a subject revocation's cut-off (src/jwt/validate.rs).
    if (claims.iat !== undefined && isFuture(claims.iat, now, tolerance)) return fail('token_not_yet_valid')
    if (claims.exp !== undefined && now >= claims.exp + tolerance) return fail('token_expired')
    if (claims.exp === undefined && this.requireExpiration) return fail('missing_expiration')
    if (this.audiences.length > 0 && !this.audienceMatches(claims.aud)) return fail('invalid_audience')
    if (this.issuers.length > 0 && !this.issuers.includes(claims.iss)) return fail('invalid_issuer')
    if (this.requireSubject && (claims.sub === undefined || claims.sub === '')) return fail('missing_subject')
    // A refresh token must never pass as an access token, even under a shared secret.
    if (claims.type !== undefined ? claims.type !== this.expectedType : this.requireTokenType) {
      return fail('wrong_token_type')
    }
    if (this.accessTokenProfile) {
      const missing = checkProfileClaims(claims)
      if (missing !== null) return fail(missing)
    }
    if (this.requiredAcr.length > 0 || this.maxAuthAgeSec !== null) {
      const refused = this.checkAuthentication(claims, now)
      if (refused !== null) return fail(refused)
    }
    // Last: every 401 reason wins over the 403.
    if (this.requiredScopes.length > 0) {
      const refused = checkScopes(this.requiredScopes, claims)
      if (refused !== null) return fail(refused)
    }
    return claims
  }

  /** src/jwt/validate.rs `check_authentication` (RFC 9470 §3): null when it passes. */
  checkAuthentication({ acr, auth_time: authTime }, now) {
    if ((acr !== undefined && typeof acr !== 'string') || (authTime !== undefined && typeof authTime !== 'number')) return 'invalid_claims'
    if (this.requiredAcr.length > 0 && !this.requiredAcr.includes(acr)) return 'insufficient_user_authentication'
    if (this.maxAuthAgeSec !== null && !(typeof authTime === 'number' && now - authTime <= this.maxAuthAgeSec && !isFuture(authTime, now, this.tolerance))) {
      return 'insufficient_user_authentication'
    }
    return null
  }

  audienceMatches(aud) {
    if (typeof aud === 'string') return this.audiences.includes(aud)
    return Array.isArray(aud) && aud.some((a) => this.audiences.includes(a))
  }
}

/**
 * Structure, header, claims JSON, key selection and signature (src/jwt/verify.rs
 * `decode_verified`): the claims, or a Failure. `memo` (a ClaimRules, or null) remembers the
 * last accepted header and the key it selected: tokens of one issuer share their header, and
 * it is not read again while the key set is the same.
 */
function decodeVerified(token, keys, memo) {
  if (!COMPACT_JWS.test(token)) return fail('malformed_token')
  const firstDot = token.indexOf('.')
  const secondDot = token.indexOf('.', firstDot + 1)
  let knownHeader = memo !== null && memo.acceptedKeys === keys && token.startsWith(memo.acceptedHeader)
  const headerJson = knownHeader ? EMPTY : decodeBase64url(token.slice(0, firstDot))
  const payloadJson = headerJson && decodeBase64url(token.slice(firstDot + 1, secondDot))
  const signature = payloadJson && decodeBase64url(token.slice(secondDot + 1))
  if (signature === null) return fail('malformed_token')
  let header = null
  if (!knownHeader) {
    header = parseHeader(headerJson)
    if (header === null || header.hasCrit || header.badKid) return fail('malformed_token')
    // Case-sensitive on purpose: "none", "hs256" and every other spelling are refused.
    if (header.alg === undefined || !Object.hasOwn(ALGS, header.alg)) return fail('unsupported_algorithm')
    // An ID token or any other JWT is not an access token, whoever signed it.
    if (memo !== null && memo.accessTokenProfile && !header.atJwt) return fail('wrong_token_type')
  }
  const claims = parseClaims(payloadJson)
  if (claims === null) return fail('malformed_token')
  // With trusted issuers the key depends on `iss` too: the memo serves only the issuer it was
  // made for. The header passed before, so reading it again finds it good.
  if (knownHeader && keys.byIssuer === true && claims.iss !== memo.acceptedIss) {
    knownHeader = false
    header = parseHeader(decodeBase64url(token.slice(0, firstDot)))
  }
  let key
  if (knownHeader) key = memo.acceptedKey
  else {
    key = keys.select(header.alg, header.kid, claims)
    if (typeof key === 'string') return fail(key)
    if (memo !== null) {
      memo.acceptedIss = claims.iss
      // Bounded: one header segment, no longer than a token.
      memo.acceptedHeader = token.slice(0, firstDot + 1)
      memo.acceptedKey = key
      memo.acceptedKeys = keys
    }
  }
  if (!key.verifies(token.slice(0, secondDot), signature)) return fail('invalid_signature')
  return claims
}

/**
 * The claims of a token known to have passed decodeVerified under the key set in force (a
 * verified-token cache hit, src/jwt/verify.rs `decode_known_good`): only the payload is decoded.
 */
function decodeKnownGood(token) {
  const firstDot = token.indexOf('.')
  const payloadJson = decodeBase64url(token.slice(firstDot + 1, token.indexOf('.', firstDot + 1)))
  const claims = payloadJson && parseClaims(payloadJson)
  return claims === null ? fail('malformed_token') : claims
}

/**
 * Whether `token` carries a valid signature by one of `keys`, claims unchecked
 * (src/jwt/verify.rs `signed_with`): asked only after another key set refused the signature.
 */
function signedWith(token, keys) {
  return !(decodeVerified(token, keys, null) instanceof Failure)
}

/**
 * src/jwt/validate.rs `check_profile_claims`: iss, aud, client_id, iat and jti present (a
 * non-empty string, a non-empty list for aud, a number for iat); null when they are.
 */
function checkProfileClaims(c) {
  if (c.client_id !== undefined && typeof c.client_id !== 'string') return 'invalid_claims'
  const named = (v) => typeof v === 'string' && v !== ''
  const aud = Array.isArray(c.aud) ? c.aud.length > 0 : named(c.aud)
  return named(c.iss) && aud && named(c.client_id) && typeof c.iat === 'number' && named(c.jti) ? null : 'missing_profile_claim'
}

/**
 * src/jwt/validate.rs `check_scopes`: every required scope granted by `scope` (space-delimited),
 * `scp` (a string or an array of strings) or `permissions` (an array of strings, Auth0), read in
 * place (no split list per request); null when all are, else the failure code. A claim of
 * another JSON type is invalid_claims.
 */
function checkScopes(required, { scope, scp, permissions }) {
  if (
    (scope !== undefined && typeof scope !== 'string') ||
    (scp !== undefined && typeof scp !== 'string' && !Array.isArray(scp)) ||
    (permissions !== undefined && !Array.isArray(permissions))
  ) {
    return 'invalid_claims'
  }
  for (let i = 0; i < required.length; i++) {
    const wanted = required[i]
    if (!grants(scope, wanted) && !grants(scp, wanted) && !grants(permissions, wanted)) return 'insufficient_scope'
  }
  return null
}

/**
 * src/jwt/validate.rs `granted_scopes`, for `AuthResult.scope`: the scope-tokens `scope`
 * (space-delimited), `scp` (a string or a list) and `permissions` (a list) grant, in that order,
 * single-spaced; entries that are not RFC 6749 §3.3 scope-tokens are left out (no required
 * scope can match them). The usual `scope` claim, already in that form, is returned as it is.
 * undefined without any of the claims; null when one has a type checkScopes refuses.
 */
function grantedScopes({ scope, scp, permissions }) {
  if (scope === undefined && scp === undefined && permissions === undefined) return undefined
  if ((scope !== undefined && typeof scope !== 'string') || (scp !== undefined && typeof scp !== 'string' && !isStringList(scp)) || (permissions !== undefined && !isStringList(permissions))) {
    return null
  }
  if (scp === undefined && permissions === undefined && (scope === '' || SCOPE_LIST.test(scope))) return scope
  let granted = ''
  for (const claim of [scope, scp, permissions]) {
    if (claim === undefined) continue
    // A string already single-spaced is taken whole; any other is split.
    if (typeof claim === 'string' && SCOPE_LIST.test(claim)) {
      granted = granted === '' ? claim : `${granted} ${claim}`
      continue
    }
    const tokens = typeof claim === 'string' ? claim.split(' ') : claim
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]
      if (SCOPE_TOKEN.test(token)) granted = granted === '' ? token : `${granted} ${token}`
    }
  }
  return granted
}

function isStringList(value) {
  return Array.isArray(value) && value.every((s) => typeof s === 'string')
}

/** Whether `claim` holds the scope-token `wanted` (never empty): a space-delimited string, or a list. */
function grants(claim, wanted) {
  if (typeof claim === 'string') return hasScope(claim, wanted)
  return claim !== undefined && claim.includes(wanted)
}

/** A registered claim of the wrong JSON type is an error, not a claim to ignore. */
function hasValidTypes(c) {
  return (
    isOptional(c.sub, 'string') &&
    isOptional(c.iss, 'string') &&
    isOptional(c.jti, 'string') &&
    isOptional(c.email, 'string') &&
    isOptional(c.role, 'string') &&
    isOptional(c.tenant_id, 'string') &&
    isOptional(c.type, 'string') &&
    isOptional(c.exp, 'number') &&
    isOptional(c.nbf, 'number') &&
    isOptional(c.iat, 'number') &&
    (c.aud === undefined || typeof c.aud === 'string' || Array.isArray(c.aud))
  )
}

function isOptional(value, type) {
  return value === undefined || typeof value === type
}

module.exports = { ClaimRules, decodeSegment, decodeVerified, decodeKnownGood, signedWith, grantedScopes }
