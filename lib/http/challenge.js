'use strict'

// The WWW-Authenticate challenge of a refused request (RFC 6750 §3, RFC 9728 §5.1), built once
// per middleware: every header value a failure code can get is written at construction, so a
// request only looks one up. The scheme is a parameter, so another token scheme with the same
// auth-params (DPoP, RFC 9449 §7.1) can reuse it.
//
// No byte of a request ever reaches a challenge: the realm, the scopes and the metadata URL are
// configuration, checked here; the description is the failure code's message from the contract.

const { typeError } = require('../../base/error')
const { TABLE } = require('../../base/error')

// RFC 9110 §5.6.4 quoted-string content we write: printable ASCII. `"` and `\` are escaped.
const PRINTABLE = /^[\x20-\x7e]*$/

/** `value` as an RFC 9110 quoted-string; a TypeError naming `label` for anything unprintable. */
function quoted(value, label) {
  if (typeof value !== 'string' || !PRINTABLE.test(value)) throw typeError(`${label} must be a string of printable ASCII`)
  return `"${value.replace(/["\\]/g, '\\$&')}"`
}

/**
 * The RFC 6750 §3.1 error code of one of our failure codes: `invalid_request` for a malformed
 * Authorization header or the DPoP scheme on a route without DPoP, `insufficient_scope` for a token that lacks a required scope,
 * `insufficient_user_authentication` (RFC 9470 §3) for a step-up, and `invalid_token` for
 * every other 401; null for failures that are not about the token (400,
 * 403 tenant_mismatch, 429, 503), which get no challenge.
 */
function bearerError(code) {
  if (code === 'invalid_authorization_format' || code === 'dpop_not_allowed') return 'invalid_request'
  if (code === 'insufficient_scope' || code === 'insufficient_user_authentication') return code
  const entry = TABLE[code]
  return entry !== undefined && entry.status === 401 ? 'invalid_token' : null
}

/**
 * The challenges of one middleware. `options`: `scheme` (default 'Bearer'), `realm`, `scope`
 * (the required scopes, named in the insufficient_scope challenge, RFC 6750 §3), `acrValues`
 * and `maxAge` (named in the insufficient_user_authentication challenge, RFC 9470 §3), and
 * `resourceMetadata` (the URL of the RFC 9728 metadata document, on every challenge), and
 * `algs` (the DPoP scheme's accepted proof algorithms, RFC 9449 §7.1), and `scopeOnUnauthorized`
 * (the `challengeScope` option: `scope` on the 401 challenges too, the bare one included; RFC 6750
 * §3 allows it on any challenge, and the MCP authorization specification asks a server to name
 * there what a client should request first).
 * `challenge.bare` is the header for a request without credentials of this scheme (RFC 6750
 * §3.1: no error); `challenge.of(code)` the header for a failure code, or undefined when the
 * failure gets none.
 */
class Challenge {
  constructor({ scheme = 'Bearer', realm, scope = [], acrValues = [], maxAge, resourceMetadata, algs, dpopAlgs, scopeOnUnauthorized = false } = {}) {
    const first = realm === undefined ? [] : [`realm=${quoted(realm, 'realm')}`]
    // The DPoP challenges (lib/http/dpop.js) name the same realm, and the authenticator's
    // proof algorithms (dpopAlgorithms) in algs.
    this.realm = realm
    this.resourceMetadata = resourceMetadata
    // `algs` (RFC 9449 §7.1): the proof algorithms a DPoP challenge names.
    this.dpopAlgs = dpopAlgs
    const last = resourceMetadata === undefined ? [] : [`resource_metadata=${quoted(resourceMetadata, 'resourceMetadata')}`]
    if (algs !== undefined) last.unshift(`algs=${quoted(algs, 'algs')}`)
    const write = (params) => {
      const all = [...first, ...params, ...last]
      return all.length === 0 ? scheme : `${scheme} ${all.join(', ')}`
    }
    const scopeParam = scope.length === 0 ? [] : [`scope=${quoted(scope.join(' '), 'scope')}`]
    const unauthorizedScope = scopeOnUnauthorized ? scopeParam : []
    this.bare = write(unauthorizedScope)
    this.byCode = new Map()
    // RFC 9470 §3: what a new authentication must satisfy.
    const stepUpParams = []
    if (acrValues.length > 0) stepUpParams.push(`acr_values=${quoted(acrValues.join(' '), 'acr_values')}`)
    if (maxAge !== undefined) stepUpParams.push(`max_age=${quoted(String(maxAge), 'max_age')}`)
    for (const [code, { message }] of Object.entries(TABLE)) {
      const error = bearerError(code)
      if (error === null) continue
      const params = [`error="${error}"`, `error_description=${quoted(message, 'error_description')}`]
      const extra = error === 'insufficient_scope' ? scopeParam : error === 'insufficient_user_authentication' ? [...stepUpParams, ...unauthorizedScope] : unauthorizedScope
      this.byCode.set(code, write([...params, ...extra]))
    }
  }

  of(code) {
    return this.byCode.get(code)
  }
}

module.exports = { Challenge, bearerError, quoted }
