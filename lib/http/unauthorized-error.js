'use strict'

// The error a middleware hands to the framework with `errors: 'next'`: what express-jwt's
// error handlers already test for (`err.name === 'UnauthorizedError'`, `err.code` in its
// vocabulary, `err.status`, `err.inner`), with our own code, status and headers kept.

const { TABLE } = require('../../base/error')
const { warnDeprecated, renamedName } = require('../../base/deprecation')

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
  // The DPoP scheme on a route that takes Bearer only: another scheme, as express-jwt sees it.
  if (errorCode === 'dpop_not_allowed') return 'credentials_bad_scheme'
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
 * express-jwt's error, with its constructor: `new UnauthorizedError(code, { message })` gives
 * `code`, `status` 401, `inner` (the second argument) and its `message`, as express-jwt's does,
 * so a `getToken` that throws one keeps its meaning. The failures auth-shield itself hands to
 * the framework (`errors: 'next'`) are built by `unauthorizedErrorOf`: `code` in
 * express-jwt's vocabulary, `errorCode` ours (`authCode`, its deprecated name), `status` / `statusCode` the result's (401, 403 or
 * 400), `inner` the AuthShieldError behind it (jsonwebtoken's names in the compatible export),
 * `headers` the response headers already set (finalhandler and Fastify's default handler
 * apply them again).
 */
class UnauthorizedError extends Error {
  constructor(code, error) {
    super(error !== null && typeof error === 'object' && error.message !== undefined ? String(error.message) : code)
    this.code = code
    this.status = 401
    this.statusCode = 401
    this.inner = error
  }
}

/**
 * Ours, for a failed result (a function, not a second constructor: the class keeps
 * express-jwt's). `inner` (default: the AuthShieldError of `result`) gives the message, as in
 * express-jwt, whose message is its inner error's.
 */
function unauthorizedErrorOf(result, authorization, headers, inner = new AuthShieldError(result)) {
  const err = new UnauthorizedError(expressJwtCode(result.errorCode, authorization), inner)
  err.errorCode = result.errorCode
  err.status = result.errorStatus
  err.statusCode = result.errorStatus
  err.requestId = result.requestId
  err.headers = Object.fromEntries(headers)
  return err
}

/**
 * A failure that is not about credentials (http-errors' conventions: `name`, `status`,
 * `statusCode`, `expose`, `headers`), so an error handler written for express-jwt
 * (`if (err.name === 'UnauthorizedError') res.status(401)`) keeps its 429 or 503. `code` and
 * `errorCode` are our code (express-jwt has none for these), `inner` the AuthShieldError.
 */
class HttpStatusError extends Error {
  constructor(result, headers) {
    super(result.error)
    this.code = result.errorCode
    this.errorCode = result.errorCode
    this.status = result.errorStatus
    this.statusCode = result.errorStatus
    // http-errors exposes the message of client errors only.
    this.expose = result.errorStatus < 500
    this.requestId = result.requestId
    this.retryAfterMs = result.retryAfterMs
    this.headers = Object.fromEntries(headers)
    this.inner = new AuthShieldError(result)
  }
}

// `authCode`: the deprecated name of `errorCode` (base/deprecation.js), a getter so that reading it
// warns once; no longer an own property.
for (const ErrorClass of [UnauthorizedError, HttpStatusError]) {
  Object.defineProperty(ErrorClass.prototype, 'authCode', {
    get() {
      warnDeprecated(renamedName('UnauthorizedError', 'authCode'), 'err')
      return this.errorCode
    },
    // An application that sets its own authCode keeps it.
    set(value) {
      Object.defineProperty(this, 'authCode', { value, writable: true, enumerable: true, configurable: true })
    },
    configurable: true,
    enumerable: false,
  })
}

/** 429 `rate_limited`: the client is throttled, not unauthenticated. */
class TooManyRequestsError extends HttpStatusError {}

/** 503 (`rate_limit_pending`, `revocation_unavailable`, …): we cannot decide yet; retry. */
class ServiceUnavailableError extends HttpStatusError {}

/**
 * The error `errors: 'next'` hands to the framework for a failed result: a TooManyRequestsError
 * for 429, a ServiceUnavailableError for 503, else an UnauthorizedError (`inner` as in
 * `unauthorizedErrorOf`).
 */
function errorForNext(result, authorization, headers, inner) {
  if (result.errorStatus === 429) return new TooManyRequestsError(result, headers)
  if (result.errorStatus === 503) return new ServiceUnavailableError(result, headers)
  return unauthorizedErrorOf(result, authorization, headers, inner)
}

// On the prototypes, so that `err.stack` starts with the name (V8 reads it at construction).
AuthShieldError.prototype.name = 'AuthShieldError'
UnauthorizedError.prototype.name = 'UnauthorizedError'
TooManyRequestsError.prototype.name = 'TooManyRequestsError'
ServiceUnavailableError.prototype.name = 'ServiceUnavailableError'

module.exports = {
  AuthShieldError,
  UnauthorizedError,
  TooManyRequestsError,
  ServiceUnavailableError,
  errorForNext,
  unauthorizedErrorOf,
  expressJwtCode,
  isOtherScheme,
}
