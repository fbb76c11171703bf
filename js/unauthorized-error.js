'use strict'

// The error a middleware hands to the framework with `errors: 'next'`: what express-jwt's
// error handlers already test for (`err.name === 'UnauthorizedError'`, `err.code` in its
// vocabulary, `err.status`, `err.inner`), with our own code, status and headers kept.

const { TABLE } = require('./errors')

// An Authorization value with a scheme other than Bearer (RFC 7235 §2.1 auth-scheme SP ...).
const OTHER_SCHEME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ +\S/
const BEARER = /^bearer(?: |$)/i

/** True for `Basic …`, `Digest …` and the like: credentials, but not ours. */
function isOtherScheme(authorization) {
  return typeof authorization === 'string' && !BEARER.test(authorization) && OTHER_SCHEME.test(authorization)
}

/**
 * express-jwt's code for a failure where it has one, else ours. Every other 401 is a failure
 * of the token itself, which express-jwt calls `invalid_token` (codes added later included);
 * tenant checks (400, 403) and rate limiting (429) have no express-jwt counterpart.
 */
function expressJwtCode(errorCode, authorization) {
  if (errorCode === 'missing_authorization') return 'credentials_required'
  if (errorCode === 'invalid_authorization_format') {
    return isOtherScheme(authorization) ? 'credentials_bad_scheme' : 'credentials_bad_format'
  }
  if (errorCode === 'token_revoked') return 'revoked_token'
  const entry = TABLE[errorCode]
  return entry !== undefined && entry.status === 401 ? 'invalid_token' : errorCode
}

/** The error an onError hook receives: `status`, `code`, `message` and the whole `result`. */
class AuthShieldError extends Error {
  constructor(result) {
    super(result.error)
    this.status = result.errorStatus
    this.statusCode = result.errorStatus
    this.code = result.errorCode
    this.requestId = result.requestId
    this.retryAfterMs = result.retryAfterMs
    this.result = result
  }
}

/**
 * `errors: 'next'`'s error. `code` in express-jwt's vocabulary, `authCode` ours, `status` /
 * `statusCode` the result's (401, 403, 429 or 400), `inner` the AuthShieldError behind it,
 * `headers` the response headers already set (finalhandler and Fastify's default handler
 * apply them again).
 */
class UnauthorizedError extends Error {
  constructor(result, authorization, headers) {
    super(result.error)
    this.code = expressJwtCode(result.errorCode, authorization)
    this.authCode = result.errorCode
    this.status = result.errorStatus
    this.statusCode = result.errorStatus
    this.requestId = result.requestId
    this.inner = new AuthShieldError(result)
    this.headers = Object.fromEntries(headers)
  }
}

// On the prototypes, so that `err.stack` starts with the name (V8 reads it at construction).
AuthShieldError.prototype.name = 'AuthShieldError'
UnauthorizedError.prototype.name = 'UnauthorizedError'

module.exports = { AuthShieldError, UnauthorizedError, expressJwtCode, isOtherScheme }
