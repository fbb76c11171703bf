'use strict'

// The introspection stage of the request pipeline (lib/http/pipeline.js): opaque tokens of a
// trusted issuer with an `introspection` option (docs/resource-server.md#opaque-tokens-introspection).
//
// The engine holds the answers (its introspection cache, src/introspection.rs and
// js/introspection.js), so a token seen before is decided synchronously, by the same checks as
// a JWT's claims, and everything after (tenant, rate limit, revocation, scopes, step-up, DPoP
// and certificate binding, metrics) is unchanged. This stage only serves the misses: the engine
// answers `introspection_required`, the stage introspects, admits the answer with
// `admitIntrospection` into every engine of the middleware (the shadow one too), and the request
// runs again (AuthDecision#recover).
//
// - Coalesced: the requests of one token share one introspection, keyed by the token's SHA-256.
// - Per issuer, at most `maxConcurrent` exchanges in flight and `maxQueued` waiting; past that
//   503 introspection_unavailable at once. With the time-out this bounds the rate the endpoint
//   sees: maxConcurrent per round trip, whatever the load.
// - Failing closed: an endpoint down, slow, redirecting, oversized, not JSON, or whose answer
//   is not RFC 7662 (active missing or not a boolean), or a JWT answer that does not verify, is
//   503 introspection_unavailable with Retry-After, never a pass; then back-off (retryMinMs
//   doubling to retryMaxMs) during which new tokens get the 503 without a call.
// - `active: false` (or an answer for another issuer) is held negativeCacheSec: 401 token_inactive.
// - The token lives in this stage only while its exchange is in flight.

const { createHash } = require('node:crypto')
const { TABLE } = require('../../base/error')
const { resultTemplates } = require('../../base/schema')
const { LIMITS } = require('../../contract')
const { introspectToken, discoverEndpoint } = require('./client')
const { claimsOf } = require('./claims')
const { engineNowSec } = require('../../base/engine-clock')

const REQUIRED = 'introspection_required'
const UNAVAILABLE = 'introspection_unavailable'
const INACTIVE = 'token_inactive'
const MIN_RETRY_AFTER_MS = 1000
// Failures in a row of a discovered endpoint after which it is discovered again.
const REDISCOVER_AFTER_FAILURES = 3
// The engine's cache when the config does not size it: 10,000 answers (at most 16 MiB of claims).
const DEFAULT_CACHE_ENTRIES = 10000

/** The stage for `options.jwks`, or null when no trusted issuer introspects. */
function introspectionStage(options) {
  const registry = options.jwks
  if (registry === undefined || registry === null || typeof registry.introspecting !== 'function') return null
  const issuers = registry.introspecting()
  return issuers.length === 0 ? null : new IntrospectionStage(registry, issuers[0])
}

class IntrospectionStage {
  constructor(registry, entry) {
    this.name = 'introspection'
    this.registry = registry
    this.issuer = entry.issuer
    this.issuerUrl = entry.url
    this.audiences = entry.audiences
    this.settings = entry.introspection
    this.endpoint = entry.introspection.endpoint
    this.discovering = null
    this.targets = []
    // Exchanges by token digest (coalescing); the permits and the queue of the issuer.
    this.pending = new Map()
    this.inFlight = 0
    this.queue = []
    this.failures = 0
    this.blockedUntil = 0
    this.lastError = null
    this.closing = new AbortController()
    // Counters (introspections made and failed), for tests and metrics.
    this.calls = 0
    this.failed = 0
  }

  configure(config) {
    const copy = { ...config }
    if (copy.introspectionCacheMaxEntries == null) copy.introspectionCacheMaxEntries = DEFAULT_CACHE_ENTRIES
    // Every token asked of the endpoint, JWTs too (the engine's introspectJwts).
    if (this.settings.introspectJwts) copy.introspectJwts = true
    return copy
  }

  /** Whether the claims of every pass are the engine's (JWTs introspected too), not only an opaque token's. */
  get claimsOfEveryToken() {
    return this.settings.introspectJwts
  }

  attach(decision) {
    const { engine } = decision
    // In shadow mode the served engine hands each answer to the shadow engine too (lib/http/engine.js).
    this.targets = [engine.authenticator]
    // Entries end by the engine's clock (a fixed clockTimestamp in tests).
    this.fixedClock = decision.fixedClock
    // A miss is the way to a verdict, not one: the request is counted once, by its last result.
    // A miss that was not answered in time (callbackTimeoutMs while it waited in the queue), or
    // that the engine still misses after its attempt, is the documented 503, never the internal code.
    decision.recover(REQUIRED, (result, req, request) => this.recover(result, request), 1, (result) => refused(result, UNAVAILABLE, this.retryAfterMs()))
    this.registry.attachIntrospection(this)
  }

  /** The claims JSON the engine holds for the opaque token of a pass (lib/http/verified-claims.js). */
  claimsOf(authorization) {
    const token = tokenOf(authorization)
    return token === null || this.targets.length === 0 ? null : this.targets[0].introspectionClaims(token)
  }

  /** Resolves true once the token's answer is admitted (run again), or to the failure to answer. */
  recover(result, request) {
    const token = tokenOf(request.authorization)
    if (token === null) return false
    const digest = createHash('sha256').update(token).digest('base64url')
    let pending = this.pending.get(digest)
    if (pending === undefined) {
      pending = this.run(token).finally(() => this.pending.delete(digest))
      this.pending.set(digest, pending)
    }
    return pending.then((outcome) => (outcome === true ? true : refused(result, outcome.code, outcome.retryAfterMs)))
  }

  /** One introspection of `token`: true when admitted, else `{ code, retryAfterMs }`. */
  async run(token) {
    const now = Date.now()
    if (now < this.blockedUntil) return unavailable(this.blockedUntil - now)
    if (this.inFlight >= this.settings.maxConcurrent) {
      if (this.queue.length >= this.settings.maxQueued) return unavailable(MIN_RETRY_AFTER_MS)
      await new Promise((resolve) => this.queue.push(resolve))
      // A failure while this one waited starts the back-off for it too.
      const blocked = this.blockedUntil - Date.now()
      if (blocked > 0) {
        this.release()
        return unavailable(blocked)
      }
    } else this.inFlight++
    let answer
    try {
      this.calls++
      const endpoint = this.endpoint ?? (await this.discover())
      answer = await introspectToken(token, endpoint, { issuer: this.issuer, settings: this.settings, audiences: this.audiences, keysOf: () => this.keys() }, this.closing.signal)
      const mapped = claimsOf(answer, this.issuer, token)
      if (mapped.error !== undefined) throw new Error(`the introspection answer of ${this.issuer} is refused: ${mapped.error}`)
      this.failures = 0
      return this.admit(mapped, token)
    } catch (err) {
      this.failed++
      this.failures++
      this.lastError = err
      const { retryMinMs, retryMaxMs } = this.settings
      const wait = Math.min(retryMaxMs, retryMinMs * 2 ** Math.min(this.failures - 1, 31))
      this.blockedUntil = Math.max(this.blockedUntil, Date.now() + wait)
      // An endpoint discovered that keeps failing may have moved (as a key source discovers
      // again after failures): from the third failure in a row the next exchange, after the
      // back-off, discovers it again first. Bounded by the back-off: one discovery per step.
      if (this.failures >= REDISCOVER_AFTER_FAILURES && this.settings.endpoint == null && this.discovering !== null) {
        this.endpoint = null
        this.discovering = null
      }
      return unavailable(wait)
    } finally {
      this.release()
    }
  }

  /** Milliseconds a client should wait before asking again: the back-off left, at least a second. */
  retryAfterMs() {
    return Math.max(MIN_RETRY_AFTER_MS, Math.ceil(this.blockedUntil - Date.now()))
  }

  release() {
    const next = this.queue.shift()
    if (next !== undefined) next()
    else this.inFlight--
  }

  /** Admits `mapped` into every engine of the middleware. */
  admit(mapped, token) {
    const nowSec = engineNowSec(this.fixedClock)
    const { cacheMaxSec, negativeCacheSec } = this.settings
    if (!mapped.active) return negativeCacheSec > 0 && this.admitEach(token, null, nowSec + negativeCacheSec) ? true : { code: INACTIVE }
    // Until the token's exp and at most cacheMaxSec; an exp already past is held briefly, so the
    // engine answers token_expired rather than asking again.
    const exp = mapped.exp
    const until = exp === undefined ? nowSec + cacheMaxSec : exp > nowSec ? Math.min(exp, nowSec + cacheMaxSec) : nowSec + Math.max(1, negativeCacheSec)
    let json
    try {
      json = JSON.stringify(mapped.claims)
    } catch {
      return unavailable(MIN_RETRY_AFTER_MS)
    }
    if (Buffer.byteLength(json) > LIMITS.maxIntrospectionClaimsBytes) return unavailable(MIN_RETRY_AFTER_MS)
    try {
      return this.admitEach(token, json, until) ? true : unavailable(MIN_RETRY_AFTER_MS)
    } catch {
      // Claims the engine cannot read (a lone surrogate, say): not an answer it can hold.
      return unavailable(MIN_RETRY_AFTER_MS)
    }
  }

  admitEach(token, json, until) {
    let admitted = true
    for (const target of this.targets) admitted = target.admitIntrospection(token, json, until) && admitted
    return admitted
  }

  keys() {
    const entry = this.registry.entry(this.issuer)
    return entry === undefined ? null : entry.keys
  }

  /** The discovered endpoint, one discovery shared; a failure backs off as an exchange's does. */
  discover() {
    if (this.discovering === null) {
      const limits = { timeoutMs: this.settings.timeoutMs, maxBytes: this.settings.maxBytes }
      this.discovering = discoverEndpoint(this.issuer, this.issuerUrl, limits, this.closing.signal).then(
        (url) => {
          this.endpoint = url
          return url
        },
        (err) => {
          this.discovering = null
          throw err
        },
      )
    }
    return this.discovering
  }

  /** Counters and state, for status and metrics (never a token). */
  status() {
    return { issuer: this.issuer, endpoint: this.endpoint === null ? null : this.endpoint.href, introspections: this.calls, failures: this.failed, inFlight: this.inFlight, queued: this.queue.length, lastError: this.lastError }
  }

  close() {
    this.closing.abort()
  }
}

/** The bearer token of an Authorization value (`Bearer x` or `DPoP x`), or null. */
function tokenOf(authorization) {
  if (typeof authorization !== 'string') return null
  const space = authorization.indexOf(' ')
  if (space === -1) return null
  const token = authorization.slice(space + 1).trim()
  return token === '' ? null : token
}

function unavailable(retryAfterMs) {
  return { code: UNAVAILABLE, retryAfterMs: Math.max(MIN_RETRY_AFTER_MS, Math.ceil(retryAfterMs)) }
}

const { failure: FAILURE } = resultTemplates()

/** The failure `code` in place of `result`, with its request id and limit. */
function refused(result, code, retryAfterMs) {
  const { status, message } = TABLE[code]
  const failure = { ...FAILURE }
  failure.requestId = result.requestId
  failure.rateLimitLimit = result.rateLimitLimit
  failure.retryAfterMs = retryAfterMs === undefined ? 0 : retryAfterMs
  failure.error = message
  failure.errorCode = code
  failure.errorStatus = status
  return failure
}

module.exports = { introspectionStage, IntrospectionStage, tokenOf }
