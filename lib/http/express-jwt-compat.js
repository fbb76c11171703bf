'use strict'

// `expressjwt` of `auth-shield/express`: the same middleware as `authShield`, with express-jwt
// 8's defaults and callback shapes, so an app written for express-jwt keeps its meaning when only
// its import changes (docs/migrating.md):
// - failures go to `next(err)` (`errors: 'next'` by default);
// - `isRevoked(req, { header, payload, signature })`, `getToken(req)`, a secret getter
//   `secret: (req, token) => key` (GetVerificationKey, for multi-tenant apps) and
//   `onExpired(req, err)`;
// - `err.message` / `err.inner` with jsonwebtoken's names and messages;
// - express-jwt's preflight rule and its start-up errors.
// The security defaults stay ours (32-byte secrets, `exp` and `sub` required): those differences
// are documented with the option that restores express-jwt's behaviour.

const { randomBytes, KeyObject } = require('node:crypto')
const { AuthDecision, isPending, pathOf } = require('./decision')
const { UnauthorizedError, errorForNext, unauthorizedErrorOf } = require('./unauthorized-error')
const { isExpressJwtPreflight } = require('./request-match')
const { authorizationOf } = require('./token-source')
const { jsonwebtokenError, decodeComplete, tokenOf } = require('./jsonwebtoken-errors')
const { Failure, TABLE, typeError, codedError } = require('../../base/error')
const { resultTemplates } = require('../../base/schema')
const { keyMaterial } = require('../../base/keys/hmac-secret')
const { unexpectedAnswer } = require('./callback-fence')
const { ReplayCache, accessClaimRules } = require('../../js/seam')
const { engineNowSec } = require('../../base/engine-clock')
const { defaultOf } = require('../../contract')
const { KeyedAuthenticator } = require('./keyed-authenticator')

// Distinct keys a secret getter may return: one prepared Authenticator (native or JS) each, so
// every request after the first of a key stays one engine call. At the bound a new key is
// refused (the request fails, nothing is evicted: each entry holds that key's rate-limit and
// revocation state).
const MAX_GETTER_KEYS = 1000

const SKIP = Object.freeze({ action: 'skip' })
const { failure: FAILURE } = resultTemplates()

/** `expressjwt` for the Express adapter's `{ middlewareOf, urlOf, EXPRESS_OPTIONS }`. */
function expressJwtOn(adapter) {
  return function expressjwt(source, options) {
    return compatMiddleware(adapter, source, options)
  }
}

function compatMiddleware(adapter, source, options) {
  checkExpressJwtArguments(source, options)
  const isConfig = isPlainConfig(source)
  if (options === undefined || options === null) options = {}
  if (typeof options !== 'object' || Array.isArray(options)) throw typeError('options must be an object')
  source = isConfig ? { ...source } : source
  options = { ...options }
  // The options this layer answers itself, taken from wherever they were given.
  const take = (name) => {
    const inConfig = isConfig && name in source
    if (inConfig && name in options) throw typeError(`options.${name} is given twice: in the config and in the options`)
    const value = inConfig ? source[name] : options[name]
    if (isConfig) delete source[name]
    delete options[name]
    return value
  }
  const onExpired = take('onExpired')
  const isRevoked = take('isRevoked')
  const skipPreflight = take('skipPreflight') ?? true
  for (const [name, value] of [
    ['onExpired', onExpired],
    ['isRevoked', isRevoked],
  ]) {
    if (value !== undefined && typeof value !== 'function') throw typeError(`options.${name} must be a function`)
  }
  if (typeof skipPreflight !== 'boolean') throw typeError('options.skipPreflight must be a boolean')
  const getKey = isConfig && typeof source.secret === 'function' ? take('secret') : undefined
  // express-jwt's only behaviour: failures go to the app's error handler.
  const hasOwn = (name) => name in options || (isConfig && name in source)
  if (!hasOwn('errors') && !hasOwn('onError')) options.errors = 'next'
  // The layer checks preflights itself (express-jwt's rule).
  options.skipPreflight = false

  if (getKey !== undefined) {
    if (hasOwn('store') || hasOwn('jwks')) throw typeError('a secret getter cannot be combined with store or jwks: give the keys in the config')
    if ('accessSecret' in source || 'keys' in source) throw typeError('a secret getter gives the key: config.accessSecret and config.keys cannot be given with it')
  }
  return adapter.middlewareOf((form) => {
    let keyed = null
    let base
    if (getKey !== undefined) {
      // Requests whose credentials never reach key selection (none, another scheme, a malformed
      // header) are answered by a decision whose key nobody knows.
      base = new AuthDecision({ ...source, accessSecret: randomBytes(32) }, options, adapter.EXPRESS_OPTIONS, undefined, form)
      keyed = new KeyedDecisions(source, options, adapter.EXPRESS_OPTIONS, base, form.routeRefusal)
    } else {
      base = new AuthDecision(source, options, adapter.EXPRESS_OPTIONS, undefined, form)
    }
    const config = isAuthenticator(base.source) ? null : base.source
    if (onExpired !== undefined && config === null) throw typeError('options.onExpired needs a config, not an Authenticator')
    const rules = config === null ? null : lazyRules(config)

    // Fenced already, as every callback of the middleware (lib/http/callback-fence.js).
    const getToken = base.options.getToken
    // The callbacks of this layer go through the middleware's fence as every other one
    // (lib/http/callback-fence.js): a throw or rejection of any value is a real Error, a Promise that
    // does not settle within callbackTimeoutMs refuses the request.
    const { fence } = base.options
    const wrap = (name, fn) => (fn === undefined ? undefined : fence.wrap(`options.${name}`, fn))
    const compat = {
      base,
      keyed,
      getKey: wrap('secret', getKey),
      onExpired: wrap('onExpired', onExpired),
      // A yes or a no, as the middleware's own isRevoked: anything else refuses.
      isRevoked: isRevoked === undefined ? undefined : fence.predicate('options.isRevoked', isRevoked),
      rules,
      skipPreflight,
      getToken,
    }
    const decide = (req) => observed(base, () => decideCompat(compat, req, pathOf(adapter.urlOf(req))))
    const parts = { decision: base, decide, nextError: (d) => nextError(d, rules) }
    if (keyed === null) return parts
    // With a getter, the requests are decided by one decision per key: the middleware's
    // `authenticator` reaches all of them (revocations, metrics), and shadow mode's comparisons
    // are theirs, summed with the base decision's.
    return { ...parts, authenticator: keyed.authenticator, stats: () => keyed.stats() }
  })
}

/**
 * `decideOne()`, its failures observed by `decision` as the middleware's own are (counted and
 * traced with their code: lib/metrics/ledger.js).
 */
function observed(decision, decideOne) {
  let d
  try {
    d = decideOne()
  } catch (err) {
    throw decision.callbackRefused(err, undefined)
  }
  return isPending(d) ? d.then(undefined, (err) => Promise.reject(decision.callbackRefused(err, undefined))) : d
}

/** express-jwt's start-up errors (RangeError, its messages), for express-jwt's single object. */
function checkExpressJwtArguments(source, options) {
  if (source === undefined || source === null) throw expressJwtRangeError('`secret` is a required option')
  if (!isPlainConfig(source) || !('secret' in source)) return
  if (!source.secret) throw expressJwtRangeError('`secret` is a required option')
  const algorithms = 'algorithms' in source ? source.algorithms : options && options.algorithms
  if (!algorithms) throw expressJwtRangeError('`algorithms` is a required option')
  if (!Array.isArray(algorithms)) throw expressJwtRangeError('`algorithms` must be an array')
}

function expressJwtRangeError(what) {
  const err = new RangeError(`express-jwt: ${what}`)
  err.code = 'ERR_INVALID_ARG_VALUE'
  return err
}

function isAuthenticator(value) {
  return value !== null && typeof value === 'object' && typeof value.authenticate === 'function'
}

function isPlainConfig(value) {
  return value !== null && typeof value === 'object' && !isAuthenticator(value)
}

/**
 * What jsonwebtoken's messages name (`audiences`, `issuers`, as the config gives them) and the
 * claim rules of `config` for onExpired, read on first use: the native engine's middleware loads
 * the JS engine's config reader only when onExpired lets a token through.
 */
function lazyRules(config) {
  let claims = null
  return {
    audiences: listOf(config.audience),
    issuers: listOf(config.issuer),
    get claims() {
      if (claims === null) claims = accessClaimRules(config)
      return claims
    },
  }
}

function listOf(value) {
  return value === undefined || value === null ? [] : [].concat(value)
}

/**
 * One AuthDecision per key a secret getter returns, made on first use from the config with that
 * key as `accessSecret` and kept (at most MAX_GETTER_KEYS; past it a new key is an error).
 */
class KeyedDecisions {
  constructor(config, options, adapterOptions, base, routeRefusal) {
    this.config = config
    this.options = options
    this.adapterOptions = adapterOptions
    // The adapter's answer to a route requirement's refusal, the same for every key's decision.
    this.routeRefusal = routeRefusal
    this.decisions = new Map()
    // The middleware's `authenticator`: every revocation made through it reaches every key's
    // engine, those made later too; its metrics() sum them all (lib/http/keyed-authenticator.js).
    this.authenticator = new KeyedAuthenticator(base, this.decisions, config)
    // The decision of the requests answered before key selection (its shadow-mode stats are summed with the keys').
    this.base = base
    // One DPoP replay cache for every key's decision (js/dpop/replay.js, keyed on the proof's
    // replay key): each decision's engine keeps its own, so a key the getter spells two ways
    // (HMAC pads a key with zero bytes, RFC 2104 §2) would take one proof once per spelling.
    this.proofs = config.dpop === true ? new ReplayCache(config.dpopMaxReplayEntries ?? defaultOf('dpopMaxReplayEntries')) : null
  }

  /** `d` once its DPoP proof (if any) is new to this middleware, else the replay refusal; called last. */
  admitProofOnce(decision, d) {
    const result = d.action === 'pass' ? d.result : undefined
    if (this.proofs === null || result === undefined || typeof result.dpopReplayKey !== 'string') return d
    const now = engineNowSec(decision.fixedClock)
    const admission = this.proofs.admit(result.dpopReplayKey, result.dpopReplayUntilSec, now)
    if (admission === 'fresh') return d
    // Counted with the code it is answered with, in place of the engine's success.
    const refused = failedResult(admission === 'replayed' ? 'dpop_proof_replayed' : 'dpop_replay_cache_full', d.requestId, decision)
    decision.ledger.replaced(result, refused)
    return decision.verdict(refused, d.authorization)
  }

  get(key) {
    if (typeof key !== 'string' && !Buffer.isBuffer(key)) {
      // jwks-rsa's getters answer a public key: never an HMAC secret, and the fix is a key source.
      if (isAsymmetricKey(key)) throw getterReturnedKey(`a ${key.type} key object`)
      return null
    }
    // Keyed on the bytes: a string and a Buffer of the same bytes are one key.
    const bytes = Buffer.from(key)
    const id = bytes.toString('base64')
    let decision = this.decisions.get(id)
    if (decision !== undefined) return decision
    // A new key only (a kept one passed already): a PEM or JWK the getter answered (jwks-rsa's
    // expressJwtSecret gives a PEM string) is refused with the getter's fix, not accessSecret's.
    const material = keyMaterial(bytes)
    if (material !== null) throw getterReturnedKey(material === 'pem' ? 'a PEM block (-----BEGIN)' : 'a JWK or JWK Set')
    if (this.decisions.size >= MAX_GETTER_KEYS) {
      throw codedError('ERR_AUTH_SHIELD_KEY_LIMIT', `the secret getter returned more than ${MAX_GETTER_KEYS} distinct keys; this one is refused`)
    }
    // A refused key (too short, say) throws here, every time, and is not kept. A route
    // requirement's refusal of a request it passed is answered as the middleware answers its
    // own; one refusing a request after admitProofOnce releases its proof from the shared cache.
    const form = { routeRefusal: this.routeRefusal, sharedProofs: this.proofs === null ? undefined : this.proofs }
    decision = new AuthDecision({ ...this.config, accessSecret: key }, this.options, this.adapterOptions, undefined, form)
    // Every revocation made so far, before the engine decides a request (a refused one throws:
    // the key is not kept and the request fails).
    this.authenticator.replayOnto(decision.engine.authenticator)
    this.decisions.set(id, decision)
    return decision
  }

  /** The engines' stats() (shadow mode) of the base decision and every key's, summed. */
  stats() {
    const total = this.base.engine.stats()
    const byField = { ...total.mismatchesByField }
    for (const decision of this.decisions.values()) {
      const s = decision.engine.stats()
      total.requests += s.requests
      total.mismatches += s.mismatches
      total.onMismatchErrors += s.onMismatchErrors
      for (const field in s.mismatchesByField) byField[field] = (byField[field] || 0) + s.mismatchesByField[field]
    }
    return { ...total, mismatchesByField: byField }
  }
}

/** A KeyObject or WebCrypto CryptoKey of an asymmetric key (public or private). */
function isAsymmetricKey(key) {
  if (key instanceof KeyObject) return key.type !== 'secret'
  return typeof CryptoKey === 'function' && key instanceof CryptoKey && key.type !== 'secret'
}

/** What a secret getter answered instead of an HMAC secret, as the TypeError that names the fix. */
function getterReturnedKey(what) {
  // The middleware's message (no engine throws it), so not in contract/messages.json.
  const err = new TypeError(
    `options.secret: the secret getter returned ${what}; a getter gives an HMAC secret only (a string or Buffer): for an identity provider's keys (jwks-rsa's expressJwtSecret) use jwks: createRemoteJwks(url), for a fixed public key keys: [{ alg: 'RS256', publicKey }]`,
  )
  err.code = 'ERR_INVALID_ARG_VALUE'
  return err
}

function decideCompat(compat, req, path) {
  const { skip } = compat.base.options
  if (skip === null) return decideUnskipped(compat, req)
  // The fenced predicate answers true, false or a Promise of one: a Promise is awaited, never
  // read as truthy (an `async () => false` would skip authentication).
  const skipped = skip(req, path)
  if (skipped === true) return SKIP
  if (skipped === false) return decideUnskipped(compat, req)
  return skipped.then((s) => (s ? SKIP : decideUnskipped(compat, req)))
}

function decideUnskipped(compat, req) {
  const { base, skipPreflight } = compat
  const { cookie } = base.options
  const getToken = compat.getToken
  if (skipPreflight && isExpressJwtPreflight(req)) return SKIP
  const authorization = authorizationOf(req, getToken, cookie)
  if (typeof authorization === 'object') return authorization.then((a) => decideFor(compat, req, a))
  return decideFor(compat, req, authorization)
}

function decideFor(compat, req, authorization) {
  if (compat.keyed === null || tokenOf(authorization) === '') return settle(compat, compat.base, req, compat.base.decideFor(req, authorization, false))
  // express-jwt calls the getter with jsonwebtoken's decoding (null when it cannot decode).
  const token = tokenOf(authorization)
  return Promise.resolve()
    .then(() => compat.getKey(req, decodeComplete(token)))
    .then(null, (err) => Promise.reject(asError(err, 'secret')))
    .then((key) => {
      const decision = compat.keyed.get(key)
      // jsonwebtoken's answer to a missing key.
      if (decision === null) throw new UnauthorizedError('invalid_token', { message: 'secret or public key must be provided' })
      return Promise.resolve(settle(compat, decision, req, decision.decideFor(req, authorization, false))).then((d) => compat.keyed.admitProofOnce(decision, d))
    })
}

/** After the engine: onExpired for an expired token, then isRevoked for a verified one. */
function settle(compat, decision, req, d) {
  if (isPending(d)) return d.then((d) => settle(compat, decision, req, d))
  if (d.action === 'fail' && d.result.errorCode === 'token_expired' && compat.onExpired !== undefined) {
    const err = nextError(d, compat.rules)
    return Promise.resolve()
      .then(() => compat.onExpired(req, err))
      .then(
        () => checkRevoked(compat, decision, req, acceptExpired(compat, decision, d)),
        (thrown) => Promise.reject(asError(thrown, 'onExpired')),
      )
  }
  return checkRevoked(compat, decision, req, d)
}

/**
 * An expired token onExpired let through, as express-jwt does: its signature and nbf were
 * verified (both engines check them before exp); the claim checks after exp (aud, iss, sub,
 * type) run here as of the second before it expired. The rate limit and tenant checks of the
 * engine do not run for it (docs/migrating.md).
 */
function acceptExpired(compat, decision, d) {
  const decoded = decodeComplete(tokenOf(d.authorization))
  // A sender-constrained token (cnf: a DPoP key, a certificate) is never revived: the engine
  // stopped at exp, before the binding was checked, and this path checks no proof or certificate.
  if (decoded === null || decoded.payload === null || typeof decoded.payload !== 'object' || decoded.payload.cnf !== undefined) return d
  const claims = decoded.payload
  // iat was judged by the engine on the real clock (before exp); at the instant before expiry a
  // token jsonwebtoken signed already expired (iat after exp) would look issued in the future.
  const verdict = compat.rules.claims.validate({ ...claims, iat: undefined }, claims.exp - compat.rules.claims.tolerance - 1)
  if (verdict instanceof Failure) return decision.verdict(failedResult(verdict.code, d.requestId, decision), d.authorization)
  const user = { userId: claims.sub, email: claims.email, role: claims.role }
  const identity = { user, tenantId: undefined, tenantSource: undefined }
  return { action: 'pass', requestId: d.requestId, headers: [['X-Request-Id', d.requestId]], identity, authorization: d.authorization, claims }
}

/** express-jwt's `isRevoked(req, { header, payload, signature })` for a verified token. */
function checkRevoked(compat, decision, req, d) {
  if (compat.isRevoked === undefined || d.action !== 'pass' || d.authorization === undefined) return d
  const token = decodeComplete(tokenOf(d.authorization))
  return Promise.resolve()
    .then(() => compat.isRevoked(req, { header: token.header, payload: d.claims, signature: token.signature }))
    .then(
      // Fail closed, as the middleware's own isRevoked: `true` or `false`, nothing else (a
      // forgotten `return` is an error, not "not revoked").
      (revoked) => {
        if (revoked === false) return d
        if (revoked === true) return refusedAfter(decision, d, failedResult('token_revoked', d.requestId, decision))
        throw decision.callbackRefused(unexpectedAnswer('options.isRevoked', revoked, 'true or false'), d.result)
      },
      (thrown) => Promise.reject(decision.callbackRefused(asError(thrown, 'isRevoked'), d.result)),
    )
}

/** The fail decision for `result`, refusing the pass `d`: counted in place of the engine's success. */
function refusedAfter(decision, d, result) {
  // The engine admitted its DPoP proof: released, as the middleware's own isRevoked does.
  decision.releaseProof(d.result)
  if (d.result !== undefined && d.result.authenticated) decision.ledger.replaced(d.result, result)
  return decision.verdict(result, d.authorization)
}

/** A failure AuthResult for `code`, with the request id already given to the request. */
function failedResult(code, requestId, decision) {
  const { status, message } = TABLE[code]
  const result = { ...FAILURE }
  const limit = decision.engine.authenticator.rateLimitMax
  result.requestId = requestId
  result.rateLimitLimit = limit > 0 ? limit : undefined
  result.retryAfterMs = 0
  result.error = message
  result.errorCode = code
  result.errorStatus = status
  return result
}

/**
 * The error handed to `next`: express-jwt's UnauthorizedError with jsonwebtoken's `inner` and
 * message for a 401; 429 and 503 as TooManyRequestsError / ServiceUnavailableError; tenant
 * failures (400, 403) keep our AuthShieldError as `inner`.
 */
function nextError(d, rules) {
  const { result, authorization, headers } = d
  if (result.errorStatus !== 401) return errorForNext(result, authorization, headers)
  return unauthorizedErrorOf(result, authorization, headers, jsonwebtokenError(result, authorization, rules))
}

/** A callback's throw or rejection as a real Error: an Error as is, anything else in `cause`. */
function asError(value, name) {
  if (value instanceof Error) return value
  return new Error(`${name} threw or rejected with a non-Error value`, { cause: value })
}

module.exports = { expressJwtOn, MAX_GETTER_KEYS }
