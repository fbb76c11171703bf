'use strict'

// Failures as data: the code -> {status, message} table of contract/error-codes.json, from which
// the native core derives its AuthError (build.rs), plus the argument errors the
// native binding throws, with the same classes, codes and messages.

const TABLE = require('../contract/error-codes.json')
const { message } = require('../contract')

/** One failed check of the chain; `retryAfterMs` is non-zero only for `rate_limited`. */
class Failure {
  constructor(code, retryAfterMs = 0) {
    this.code = code
    this.retryAfterMs = retryAfterMs
  }
}

// Checks fail far more often than they need fresh objects: one shared instance per code.
const FAILURES = Object.fromEntries(Object.keys(TABLE).map((code) => [code, new Failure(code)]))

function fail(code) {
  return FAILURES[code]
}

function typeError(message) {
  const err = new TypeError(message)
  err.code = 'ERR_INVALID_ARG_TYPE'
  return err
}

function rangeError(message) {
  const err = new RangeError(message)
  err.code = 'ERR_OUT_OF_RANGE'
  return err
}

/**
 * An `Error` with a Node-style `code` (an `ERR_AUTH_SHIELD_*` code of the store, feed or JWKS
 * source) and, when given, the failure it stands for as `cause`. The one factory for coded
 * errors that are not argument errors: code first, as Node's own errors are made.
 */
function codedError(code, message, cause) {
  const err = new Error(message, cause === undefined ? undefined : { cause })
  err.code = code
  return err
}

/** `signRefreshToken` / `verifyRefreshToken` without `refreshSecret` or `signingKey` (src/binding/js_error.rs). */
function noRefreshSecret(method) {
  const err = new Error(message('noRefreshSecret', { method }))
  err.code = 'ERR_AUTH_SHIELD_NO_REFRESH_SECRET'
  return err
}

/** `signAccessToken` on an Authenticator built with keys (src/binding/js_error.rs). */
function noAccessSecret() {
  const err = new Error(message('noAccessSecret'))
  err.code = 'ERR_AUTH_SHIELD_NO_SIGNING_KEY'
  return err
}

/** `setKeys` on an authenticator from `Authenticator.shared` (src/binding/js_error.rs). */
function sharedKeys() {
  const err = new Error(message('sharedKeys'))
  err.code = 'ERR_AUTH_SHIELD_SHARED_KEYS'
  return err
}

module.exports = {
  TABLE,
  Failure,
  fail,
  typeError,
  rangeError,
  codedError,
  noRefreshSecret,
  noAccessSecret,
  sharedKeys,
}
