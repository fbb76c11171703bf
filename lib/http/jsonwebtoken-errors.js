'use strict'

// express-jwt's `err.inner` is jsonwebtoken's error, and apps branch on it
// (`err.inner.name === 'TokenExpiredError'` to tell a client to refresh). The compatible export
// gives its failures the same names, messages and fields (`expiredAt`, `date`); the classes are
// ours (no dependency on jsonwebtoken), so `instanceof jwt.TokenExpiredError` does not hold.

/** jsonwebtoken's base error: `name` 'JsonWebTokenError'. */
class JsonWebTokenError extends Error {}

/** jsonwebtoken's `jwt expired`, with `expiredAt` (a Date, from `exp`). */
class TokenExpiredError extends JsonWebTokenError {
  constructor(message, expiredAt) {
    super(message)
    this.expiredAt = expiredAt
  }
}

/** jsonwebtoken's `jwt not active`, with `date` (a Date, from `nbf`). */
class NotBeforeError extends JsonWebTokenError {
  constructor(message, date) {
    super(message)
    this.date = date
  }
}

JsonWebTokenError.prototype.name = 'JsonWebTokenError'
TokenExpiredError.prototype.name = 'TokenExpiredError'
NotBeforeError.prototype.name = 'NotBeforeError'

// express-jwt's own messages for the failures it finds before jsonwebtoken runs.
const EXPRESS_JWT_MESSAGES = {
  missing_authorization: 'No authorization token was found',
  invalid_authorization_format: 'Format is Authorization: Bearer [token]',
  token_revoked: 'The token has been revoked.',
}

/**
 * express-jwt's `inner` for a failed 401 result: `{ message }` for its own checks, else
 * jsonwebtoken's error for the token failure (`expected` gives the configured `audiences` and
 * `issuers` for jsonwebtoken's messages; null when the middleware was given an Authenticator).
 * Failures jsonwebtoken has no words for keep our message under JsonWebTokenError.
 */
function jsonwebtokenError(result, authorization, expected) {
  const code = result.errorCode
  if (Object.hasOwn(EXPRESS_JWT_MESSAGES, code)) return { message: EXPRESS_JWT_MESSAGES[code] }
  switch (code) {
    case 'token_expired':
      return new TokenExpiredError('jwt expired', dateOf(payloadOf(authorization), 'exp'))
    case 'token_not_yet_valid':
      return new NotBeforeError('jwt not active', dateOf(payloadOf(authorization), 'nbf'))
    case 'invalid_signature':
      return new JsonWebTokenError('invalid signature')
    case 'unsupported_algorithm':
      return new JsonWebTokenError('invalid algorithm')
    case 'malformed_token':
      // jsonwebtoken: not three segments is 'jwt malformed', undecodable ones 'invalid token'.
      return new JsonWebTokenError(tokenOf(authorization).split('.').length === 3 ? 'invalid token' : 'jwt malformed')
    case 'invalid_audience':
      if (expected === null) break
      return new JsonWebTokenError(`jwt audience invalid. expected: ${expected.audiences.join(' or ')}`)
    case 'invalid_issuer':
      if (expected === null) break
      return new JsonWebTokenError(`jwt issuer invalid. expected: ${expected.issuers.join(',')}`)
  }
  return new JsonWebTokenError(result.error)
}

/** The token of a `Bearer <token>` or `DPoP <token>` value ('' for anything else). */
function tokenOf(authorization) {
  // Either scheme the engine takes: a DPoP request's token is a JWT as a Bearer one is.
  const m = typeof authorization === 'string' ? /^(?:bearer|dpop) +(\S*)\s*$/i.exec(authorization) : null
  return m === null ? '' : m[1]
}

/** jsonwebtoken's `jwt.decode(token, { complete: true })`: `{ header, payload, signature }`, or null. */
function decodeComplete(token) {
  const parts = typeof token === 'string' ? token.split('.') : []
  if (parts.length !== 3) return null
  const header = parseSegment(parts[0])
  const payload = parseSegment(parts[1])
  if (header === null || typeof header !== 'object' || payload === undefined) return null
  return { header, payload, signature: parts[2] }
}

function parseSegment(segment) {
  try {
    return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
}

function payloadOf(authorization) {
  const decoded = decodeComplete(tokenOf(authorization))
  return decoded === null ? null : decoded.payload
}

function dateOf(payload, claim) {
  const seconds = payload !== null && typeof payload === 'object' ? payload[claim] : undefined
  return typeof seconds === 'number' ? new Date(seconds * 1000) : undefined
}

module.exports = { jsonwebtokenError, decodeComplete, tokenOf, JsonWebTokenError, TokenExpiredError, NotBeforeError }
