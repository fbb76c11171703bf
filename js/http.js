'use strict'

// What the Express middleware and the Fastify plugin share: their options, the one decision
// taken for every request (skip, pass with an identity, pass anonymously, or fail), the HTTP
// form of an AuthResult (status, JSON body, X-Request-Id, RateLimit-*, Retry-After,
// WWW-Authenticate), and the error handed to onError. The adapters only translate a decision
// into their framework's calls.

const { typeError } = require('./errors')
const { createEngine } = require('./engine')

const OPTION_NAMES = new Set([
  'credentialsRequired',
  'getToken',
  'skip',
  'onError',
  'engine',
  'shadow',
  'onMismatch',
  'retryAfterToleranceMs',
  'realm',
  'jwks',
])

/** Validated middleware options; `ignored` names keys owned by the host framework. */
function readOptions(options, ignored = new Set()) {
  if (options === undefined || options === null) options = {}
  if (typeof options !== 'object' || Array.isArray(options)) throw typeError('options must be an object')
  for (const name of Object.keys(options)) {
    if (!OPTION_NAMES.has(name) && !ignored.has(name)) throw typeError(`options.${name} is not a known option`)
  }
  const { credentialsRequired = true, getToken, onError, realm } = options
  if (typeof credentialsRequired !== 'boolean') throw typeError('options.credentialsRequired must be a boolean')
  for (const [name, value] of [
    ['getToken', getToken],
    ['onError', onError],
  ]) {
    if (value !== undefined && typeof value !== 'function') throw typeError(`options.${name} must be a function`)
  }
  // A realm is a quoted-string (RFC 7235 §2.2): no quotes, backslashes or control characters.
  if (realm !== undefined && (typeof realm !== 'string' || !/^[\x20-\x7e]*$/.test(realm) || /["\\]/.test(realm))) {
    throw typeError('options.realm must be a string of printable ASCII without quotes or backslashes')
  }
  return { credentialsRequired, getToken, onError, realm, skip: readSkip(options.skip) }
}

/** `skip`: a path string, a RegExp, an array of those, or `(req, path) => boolean`. */
function readSkip(skip) {
  if (skip === undefined) return null
  if (typeof skip === 'function') return skip
  const list = Array.isArray(skip) ? skip : [skip]
  for (const p of list) {
    if (typeof p !== 'string' && !(p instanceof RegExp)) {
      throw typeError('options.skip must be a path, a RegExp, an array of them, or a function')
    }
  }
  const exact = new Set(list.filter((p) => typeof p === 'string'))
  const patterns = list.filter((p) => p instanceof RegExp)
  return (req, path) => exact.has(path) || patterns.some((re) => re.test(path))
}

/** The path of a request URL, without the query string. */
function pathOf(url) {
  const q = url.indexOf('?')
  return q < 0 ? url : url.slice(0, q)
}

/** The engine for a middleware: `source` is a config or an Authenticator. */
function engineFor(source, options) {
  if (options === undefined || options === null) options = {}
  return createEngine(source, {
    engine: options.engine,
    shadow: options.shadow,
    onMismatch: options.onMismatch,
    retryAfterToleranceMs: options.retryAfterToleranceMs,
  })
}

/** The Authorization value to authenticate: from `getToken(req)` (a bare token) or the header. */
function authorizationOf(req, getToken) {
  if (getToken === undefined) return headerValue(req.headers.authorization)
  const token = getToken(req)
  if (token === undefined || token === null || token === '') return undefined
  if (typeof token !== 'string') throw typeError('options.getToken must return a string, null or undefined')
  return `Bearer ${token}`
}

/** Node joins repeated headers into one string; a hand-built request may carry an array. */
function headerValue(value) {
  return Array.isArray(value) ? value.join(', ') : value
}

// A skipped request: the adapter leaves it and the response untouched.
const SKIP = Object.freeze({ action: 'skip' })

/**
 * The decision behind every adapter, made once per middleware from its source (a config or an
 * Authenticator) and options. `decide(req, path)` returns one of:
 * - `{ action: 'skip' }`: a skipped path; nothing is authenticated, set or sent.
 * - `{ action: 'pass', requestId, headers, identity }`: call the next handler with `identity`
 *   (`{ user, tenantId, tenantSource }`) on the request. An anonymous request (no credentials
 *   while `credentialsRequired` is false) passes with all three `undefined`, as an AuthResult
 *   leaves absent fields.
 * - `{ action: 'fail', requestId, headers, status, body, result }`: answer `status` with the
 *   JSON `body`, or hand `new AuthShieldError(result)` to onError.
 * `headers` are [name, value] pairs to set on the response in every case but skip.
 */
class AuthDecision {
  constructor(source, options, ignoredOptions) {
    this.options = readOptions(options, ignoredOptions)
    // A remote key set (auth-shield/jwks) gives a config without keys its keys, and makes
    // unknown_key wait for its one shared refresh.
    const jwks = options && options.jwks !== undefined ? require('./jwks-source') : null
    this.engine = engineFor(jwks === null ? source : jwks.withSourceKeys(source, options.jwks), options)
    this.refillPerSec = this.engine.authenticator.rateLimitRefill
    this.recoveries = new Map()
    if (jwks !== null) jwks.useJwksSource(this, options.jwks)
  }

  /**
   * Registers `recover(result, req)` for failures with `code`: instead of failing at once, the
   * decision waits for the Promise it returns and, when it resolves to true, authenticates the
   * request once more, reading its credentials again (never a third time). For failures that background state can repair: a
   * key set refreshed on an unknown `kid`, a rate-limit lease fetched from a shared store. A
   * rejection or `false` keeps the first failure. Only these paths are asynchronous.
   */
  recover(code, recover) {
    if (typeof recover !== 'function') throw typeError('recover must be a function')
    this.recoveries.set(code, recover)
  }

  /** The decision for a request: a decision object, or a Promise of one on a recovery path. */
  decide(req, path) {
    const { skip, getToken } = this.options
    if (skip !== null && skip(req, path)) return SKIP
    return this.decideFor(req, authorizationOf(req, getToken), false)
  }

  decideFor(req, authorization, retried) {
    const headers = req.headers
    const result = this.engine.authenticate(authorization, headerValue(headers['x-tenant-id']), headerValue(headers.host))
    if (!result.authenticated && !retried && this.recoveries.size !== 0) {
      const recover = this.recoveries.get(result.errorCode)
      if (recover !== undefined) {
        const verdict = () => this.verdict(result, authorization)
        return Promise.resolve()
          .then(() => recover(result, req))
          .then((again) => (again === true ? this.decideFor(req, authorizationOf(req, this.options.getToken), true) : verdict()), verdict)
      }
    }
    return this.verdict(result, authorization)
  }

  verdict(result, authorization) {
    const { credentialsRequired, realm } = this.options
    const requestId = result.requestId
    if (result.authenticated) {
      const user = { userId: result.userId, email: result.email, role: result.role }
      const identity = { user, tenantId: result.tenantId, tenantSource: result.tenantSource }
      return { action: 'pass', requestId, headers: responseHeaders(result, authorization, this.refillPerSec, realm), identity }
    }
    // Optional auth: anonymous requests pass, without a challenge; a bad token is still refused.
    if (!credentialsRequired && result.errorCode === 'missing_authorization') {
      return { action: 'pass', requestId, headers: [['X-Request-Id', requestId]], identity: ANONYMOUS }
    }
    return {
      action: 'fail',
      requestId,
      headers: responseHeaders(result, authorization, this.refillPerSec, realm),
      status: result.errorStatus,
      body: errorBody(result),
      result,
    }
  }
}

/** True for a Promise-like decision (a recovery path). */
function isPending(decision) {
  return typeof decision.then === 'function'
}

const ANONYMOUS = Object.freeze({ user: undefined, tenantId: undefined, tenantSource: undefined })

/** Response headers for a result, as [name, value] pairs (X-Request-Id always). */
function responseHeaders(result, authorization, refillPerSec, realm) {
  const headers = [['X-Request-Id', result.requestId]]
  const limit = result.rateLimitLimit
  if (limit !== undefined && (result.authenticated || result.errorCode === 'rate_limited')) {
    const remaining = result.rateLimitRemaining
    // Seconds until the bucket is full again (success) or holds one token (429).
    const reset = result.authenticated
      ? Math.ceil((limit - remaining) / refillPerSec)
      : Math.ceil(result.retryAfterMs / 1000)
    headers.push(['RateLimit-Limit', String(limit)], ['RateLimit-Remaining', String(remaining)])
    headers.push(['RateLimit-Reset', String(reset)])
    if (!result.authenticated) headers.push(['Retry-After', String(reset)])
  }
  if (result.errorStatus === 401) headers.push(['WWW-Authenticate', challenge(result, authorization, realm)])
  return headers
}

// Bearer schemes as written by a client that sent one (RFC 7235 §2.1: case-insensitive).
const BEARER_SCHEME = /^bearer(?: |$)/i

/**
 * RFC 6750 §3.1: a request without bearer credentials (none, or another scheme) gets a bare
 * challenge; a malformed Authorization header is `invalid_request`; any other 401 is
 * `invalid_token`. The status stays 401 in every case, as the AuthResult says.
 */
function challenge(result, authorization, realm) {
  const params = realm === undefined ? [] : [`realm="${realm}"`]
  const code = result.errorCode
  const noBearer = code === 'missing_authorization' || !BEARER_SCHEME.test(authorization || '')
  if (!noBearer) {
    params.push(`error="${code === 'invalid_authorization_format' ? 'invalid_request' : 'invalid_token'}"`)
    params.push(`error_description="${result.error}"`)
  }
  return params.length === 0 ? 'Bearer' : `Bearer ${params.join(', ')}`
}

/** The error an onError hook receives: `status`, `code`, `message` and the whole `result`. */
class AuthShieldError extends Error {
  constructor(result) {
    super(result.error)
    this.name = 'AuthShieldError'
    this.status = result.errorStatus
    this.statusCode = result.errorStatus
    this.code = result.errorCode
    this.requestId = result.requestId
    this.retryAfterMs = result.retryAfterMs
    this.result = result
  }
}

function errorBody(result) {
  return JSON.stringify({ error: result.error, code: result.errorCode })
}

module.exports = { AuthDecision, isPending, pathOf, AuthShieldError }
