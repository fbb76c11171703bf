'use strict'

// Per-route requirements (issue 25): `requireScopes`, `requireAnyScope`, `requireClaims` and
// `requireAuthentication` (RFC 9470 step-up), one set of factories shared by every adapter; each
// adapter only wraps a compiled requirement in its own middleware shape. A requirement runs
// after the adapter's authentication on the same request and refuses with the codes, statuses
// and challenges of the config-level checks (`requiredScope`, `requiredAcr`, `maxAuthAgeSec`):
// 403 insufficient_scope with `scope="…"`, 401 insufficient_user_authentication with
// `acr_values="…"` / `max_age="…"`, 401 invalid_claims for a scope claim of the wrong type,
// in the DPoP scheme when the request used it (RFC 9449 §7.1).
//
// Everything a requirement names is checked and compiled when it is made. A scope check searches
// the engine's `AuthResult.scope`, the list both engines build while they check the token (no
// second parse of the payload in JS, no split); `requireClaims` and `requireAuthentication` read the
// verified payload the decision parses once per token (lib/http/verified-claims.js).

const { typeError, TABLE } = require('../../base/error')
const { resultTemplates } = require('../../base/schema')
const { Challenge } = require('./challenge')
const { DPOP_ALGS } = require('./dpop')
const { engineNowSec } = require('../../base/engine-clock')

// Where an adapter leaves the pass decision of an authenticated (or anonymous) request for the
// requirements of its route: on the request (Express, Fastify), on ctx.state (Koa), on the
// Verified answer (Fetch).
const ROUTE_PASS = Symbol('auth-shield.route-pass')

// RFC 6749 §3.3 scope-token, the same rule as the config's `requiredScope` (src/config.rs): so
// the challenge names it without escaping.
const { SCOPE_TOKEN, hasScope } = require('../../contract')
const DPOP_SCHEME = /^dpop(?: |$)/i
const { failure: FAILURE } = resultTemplates()

/**
 * The error a requirement raises on a request the adapter's authentication did not see (the
 * middleware not mounted before it, or a path its skip rules skipped): never a pass.
 */
function notAuthenticated(name) {
  const err = new Error(`${name} runs after the auth-shield middleware of its route: this request was not authenticated by it (not mounted before, or skipped)`)
  err.code = 'ERR_AUTH_SHIELD_NOT_AUTHENTICATED'
  // A server error, as ERR_AUTH_SHIELD_CALLBACK's: the app's wiring, not the client, is at fault.
  err.status = err.statusCode = 500
  return err
}

function scopeList(name, scopes) {
  const list = scopes.length === 1 && Array.isArray(scopes[0]) ? scopes[0] : scopes
  if (list.length === 0) throw typeError(`${name} needs at least one scope`)
  for (const s of list) {
    if (typeof s !== 'string' || !SCOPE_TOKEN.test(s)) {
      throw typeError(`${name}: each scope must be printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3 scope-tokens)`)
    }
  }
  return Object.freeze([...new Set(list)])
}

/**
 * A compiled requirement: `test(pass)` gives null when the request meets it, else the failure
 * code; `challenge` the parameters its refusal names (scope, acrValues, maxAge).
 */
class Requirement {
  constructor(name, test, challenge) {
    this.name = name
    this.test = test
    this.challengeOptions = challenge
    // The challenges of each decision (middleware) it ran behind: its realm and metadata URL.
    this.challenges = new Map()
  }

  /** null when `pass` meets the requirement, else the fail decision to answer. */
  refusal(pass) {
    const code = pass.authorization === undefined ? 'missing_authorization' : this.test(pass)
    if (code === null) return null
    const d = this.fail(pass, code)
    // The observation stage: counted, traced and evented as every refusal (lib/metrics/ledger.js).
    if (pass.decision !== undefined) pass.decision.routeRefused(d, pass)
    return d
  }

  fail(pass, code) {
    const { requestId } = pass
    const { status, message } = TABLE[code]
    const result = { ...FAILURE }
    result.requestId = requestId
    result.rateLimitLimit = pass.result === undefined ? undefined : pass.result.rateLimitLimit
    result.retryAfterMs = 0
    result.error = message
    result.errorCode = code
    result.errorStatus = status
    const dpop = pass.authorization !== undefined && DPOP_SCHEME.test(pass.authorization)
    const challenges = this.challengesOf(pass.decision)
    const set = dpop ? challenges.dpop : challenges.bearer
    const challenge = code === 'missing_authorization' ? set.bare : set.of(code)
    return {
      action: 'fail',
      requestId,
      headers: [
        ['X-Request-Id', requestId],
        ['WWW-Authenticate', challenge],
      ],
      status,
      body: JSON.stringify({ error: message, code }),
      result,
      authorization: pass.authorization,
    }
  }

  challengesOf(decision) {
    let kept = this.challenges.get(decision)
    if (kept === undefined) {
      // A requirement usually runs behind one middleware; a few more are kept, never an unbounded number.
      if (this.challenges.size >= 16) this.challenges.clear()
      const { realm, resourceMetadata } = decision.challenge
      const common = { realm, resourceMetadata, ...this.challengeOptions }
      kept = { bearer: new Challenge(common), dpop: new Challenge({ ...common, scheme: 'DPoP', algs: DPOP_ALGS }) }
      this.challenges.set(decision, kept)
    }
    return kept
  }
}

/** `requireScopes('a', 'b')` (or an array): the token grants every one (scope, scp or permissions). */
function requireScopes(...scopes) {
  return scopeRequirement('requireScopes', scopes, true)
}

/**
 * `requireAnyScope('a', 'b')` (or an array): the token grants at least one of them. RFC 6750 §3
 * names the scopes "necessary": any one of these is; the challenge lists them all.
 */
function requireAnyScope(...scopes) {
  return scopeRequirement('requireAnyScope', scopes, false)
}

/** Both scope requirements: `every` of the scopes granted, or at least one. */
function scopeRequirement(name, scopes, every) {
  const list = scopeList(name, scopes)
  return new Requirement(
    name,
    (pass) => {
      const scope = pass.result.scope
      if (scope === null) return 'invalid_claims'
      if (scope === undefined) return 'insufficient_scope'
      // Every: the first scope not granted refuses. Any: the first one granted passes.
      for (let i = 0; i < list.length; i++) if (hasScope(scope, list[i]) !== every) return every ? 'insufficient_scope' : null
      return every ? null : 'insufficient_scope'
    },
    { scope: list },
  )
}

/**
 * `requireClaims({ claim: value | [values] | { nested } })`: each named claim holds the value
 * (equal to it, or an array claim that includes it), every value of a list, and a nested object
 * is matched inside the claim's object (Keycloak's `realm_access: { roles: 'admin' }`). Values
 * are strings, finite numbers or booleans. A refusal is 403 insufficient_scope: the token is
 * valid but grants less than the route needs (RFC 6750 §3.1).
 */
function requireClaims(spec) {
  const match = compileClaims(spec, 'requireClaims', 0)
  return new Requirement('requireClaims', (pass) => (match(pass.payload) ? null : 'insufficient_scope'), {})
}

const MAX_CLAIM_DEPTH = 8

function compileClaims(spec, label, depth) {
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec) || Object.getPrototypeOf(spec) !== Object.prototype && Object.getPrototypeOf(spec) !== null) {
    throw typeError(`${label} must be a plain object of claim names and values`)
  }
  if (depth > MAX_CLAIM_DEPTH) throw typeError(`${label} nests deeper than ${MAX_CLAIM_DEPTH} objects`)
  const entries = Object.keys(spec)
  if (entries.length === 0) throw typeError(`${label} names no claim`)
  const checks = entries.map((name) => {
    const value = spec[name]
    const at = `${label}.${name}`
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      const inner = compileClaims(value, at, depth + 1)
      return (object) => {
        const claim = own(object, name)
        return claim !== null && typeof claim === 'object' && !Array.isArray(claim) && inner(claim)
      }
    }
    const wanted = Array.isArray(value) ? [...value] : [value]
    if (wanted.length === 0) throw typeError(`${at} must not be an empty list`)
    for (const w of wanted) {
      if (typeof w !== 'string' && typeof w !== 'boolean' && !(typeof w === 'number' && Number.isFinite(w))) {
        throw typeError(`${at} must be a string, a finite number, a boolean, a list of them or an object`)
      }
    }
    return (object) => {
      const claim = own(object, name)
      for (let i = 0; i < wanted.length; i++) if (!holds(claim, wanted[i])) return false
      return true
    }
  })
  return (object) => {
    if (object === null || typeof object !== 'object') return false
    for (let i = 0; i < checks.length; i++) if (!checks[i](object)) return false
    return true
  }
}

/** An own property only: a claim named `constructor` or `__proto__` is never an inherited value. */
function own(object, name) {
  return Object.prototype.hasOwnProperty.call(object, name) ? object[name] : undefined
}

function holds(claim, wanted) {
  return claim === wanted || (Array.isArray(claim) && claim.includes(wanted))
}

/**
 * `requireAuthentication({ acrValues, maxAgeSec })` (RFC 9470): the token's `acr` equals one of
 * `acrValues`, and its `auth_time` is at most `maxAgeSec` seconds old (by the engine's clock: base/engine-clock.js), as
 * the config's `requiredAcr` / `maxAuthAgeSec` check them; 401 insufficient_user_authentication,
 * the challenge naming `acr_values` and `max_age`.
 */
function requireAuthentication(options) {
  if (options === null || typeof options !== 'object') throw typeError('requireAuthentication needs { acrValues, maxAgeSec }')
  for (const key of Object.keys(options)) {
    if (key !== 'acrValues' && key !== 'maxAgeSec') throw typeError(`requireAuthentication: ${key} is not an option (acrValues, maxAgeSec)`)
  }
  let { acrValues, maxAgeSec } = options
  if (acrValues === undefined && maxAgeSec === undefined) throw typeError('requireAuthentication needs acrValues or maxAgeSec')
  if (acrValues !== undefined) {
    acrValues = typeof acrValues === 'string' ? [acrValues] : acrValues
    if (!Array.isArray(acrValues) || acrValues.length === 0 || !acrValues.every((a) => typeof a === 'string' && SCOPE_TOKEN.test(a))) {
      throw typeError('requireAuthentication: acrValues must be a value or a non-empty list of printable ASCII without spaces, quotes or backslashes')
    }
    acrValues = Object.freeze([...acrValues])
  }
  if (maxAgeSec !== undefined && !(Number.isInteger(maxAgeSec) && maxAgeSec >= 0 && maxAgeSec <= 0x7fffffff)) {
    throw typeError('requireAuthentication: maxAgeSec must be an integer from 0 to 2147483647')
  }
  return new Requirement(
    'requireAuthentication',
    (pass) => {
      const payload = pass.payload
      const acr = payload.acr
      const authTime = payload.auth_time
      if ((acr !== undefined && typeof acr !== 'string') || (authTime !== undefined && typeof authTime !== 'number')) return 'invalid_claims'
      if (acrValues !== undefined && !acrValues.includes(acr)) return 'insufficient_user_authentication'
      if (maxAgeSec !== undefined) {
        // An auth_time in the future proves no recent authentication (src/jwt/validate.rs; the
        // route does not know clockToleranceSec, so from the clock's next second on).
        const now = engineNowSec(pass.decision.fixedClock)
        if (!(typeof authTime === 'number' && now - authTime <= maxAgeSec && authTime < now + 1)) return 'insufficient_user_authentication'
      }
      return null
    },
    { acrValues: acrValues || [], maxAge: maxAgeSec },
  )
}

/**
 * The four factories for one adapter: `wrap(requirement)` turns a compiled requirement into
 * that adapter's middleware (or check).
 */
function routeRequirements(wrap) {
  const named = (factory) => (...args) => wrap(factory(...args))
  return {
    requireScopes: named(requireScopes),
    requireAnyScope: named(requireAnyScope),
    requireClaims: named(requireClaims),
    requireAuthentication: named(requireAuthentication),
  }
}

module.exports = { ROUTE_PASS, routeRequirements, notAuthenticated, requireScopes, requireAnyScope, requireClaims, requireAuthentication }
