'use strict'

// Failures as data: the code -> {status, message} table shared with the native core
// (src/error.rs keeps its copy equal to js/error-codes.json), plus the argument errors the
// native binding throws, with the same classes, codes and messages.

const TABLE = require('./error-codes.json')

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
  const err = new Error(`${method} needs a refresh key: set refreshSecret (or signingKey) in the Authenticator config`)
  err.code = 'ERR_AUTH_SHIELD_NO_REFRESH_SECRET'
  return err
}

/** `signAccessToken` on an Authenticator built with keys (src/binding/js_error.rs). */
function noAccessSecret() {
  const err = new Error('signAccessToken needs accessSecret or signingKey: an Authenticator built with keys alone only verifies')
  err.code = 'ERR_AUTH_SHIELD_NO_SIGNING_KEY'
  return err
}

/** `setKeys` on an authenticator from `Authenticator.shared` (src/binding/js_error.rs). */
function sharedKeys() {
  const err = new Error(
    'setKeys cannot change a shared authenticator: its keys belong to every user of its config; build one with new Authenticator(config)',
  )
  err.code = 'ERR_AUTH_SHIELD_SHARED_KEYS'
  return err
}

/**
 * An f64 written the way Rust's `Display` writes it (the native messages embed numbers so):
 * shortest round-trip digits, never an exponent, `inf`, `-inf`, `NaN`, and `-0`.
 */
function rustNumber(n) {
  if (Number.isNaN(n)) return 'NaN'
  if (n === Infinity) return 'inf'
  if (n === -Infinity) return '-inf'
  if (Object.is(n, -0)) return '-0'
  const text = String(n)
  const e = text.indexOf('e')
  if (e < 0) return text
  const sign = text[0] === '-' ? '-' : ''
  const mantissa = text.slice(sign.length, e)
  const exponent = Number(text.slice(e + 1))
  const [whole, fraction = ''] = mantissa.split('.')
  const digits = whole + fraction
  const point = whole.length + exponent
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`
  if (point >= digits.length) return sign + digits + '0'.repeat(point - digits.length)
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`
}

const DEBUG_ESCAPES = { '\t': '\\t', '\r': '\\r', '\n': '\\n', '"': '\\"', '\\': '\\\\', '\0': '\\0' }

/** A string quoted the way Rust's `{:?}` quotes it (control characters as `\u{..}`). */
function rustDebugString(s) {
  let out = '"'
  for (const ch of s) {
    const cp = ch.codePointAt(0)
    if (DEBUG_ESCAPES[ch]) out += DEBUG_ESCAPES[ch]
    else if (cp < 0x20 || (cp >= 0x7f && cp < 0xa0)) out += `\\u{${cp.toString(16)}}`
    else out += ch
  }
  return out + '"'
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
  rustNumber,
  rustDebugString,
}
