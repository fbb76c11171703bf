'use strict'

// What every adapter (Express, Fastify, Koa, the Fetch entry and Hono on it, and expressjwt)
// shares: their options, the one decision
// taken for every request (skip, pass with an identity, pass anonymously, or fail), the HTTP
// form of an AuthResult (status, JSON body, X-Request-Id, RateLimit-*, Retry-After,
// WWW-Authenticate), and the error handed to onError. The adapters only translate a decision
// into their framework's calls.

const { typeError, TABLE } = require('../../base/error')
const { createEngine } = require('./engine')
const { resultTemplates } = require('../../base/schema')
const { readOptionBag, optionNames } = require('../options/reader')
const { compileSkip, isPreflight } = require('./request-match')
const { authorizationOf, headerValue, readCookieOption } = require('./token-source')
const { AuthShieldError, UnauthorizedError, TooManyRequestsError, ServiceUnavailableError, errorForNext, isOtherScheme } = require('./unauthorized-error')
const { splitSource } = require('./express-jwt-options')
const { rateLimitHeaderWriter } = require('./rate-limit-headers')
const { checkStore, attachStore, storeOf, STORE_WAITS } = require('../../base/store-seam')
const { CallbackFence } = require('./callback-fence')
const { VerifiedClaims } = require('./verified-claims')
const { readTracing } = require('../metrics/tracing')
const { clientCertReader } = require('./client-cert')
const { senderReader, sharedReplayCheck, dpopChallenge, challengeAlgs, addNonceHeader, isDpopScheme, dpopRequiredResult, dpopModeOf, refusedResult } = require('./dpop')
const { Challenge } = require('./challenge')
const { resourceMetadataUrl } = require('./resource-metadata')
const { fixedClockOf } = require('../../base/engine-clock')
const { Pipeline, AuthRequest } = require('./pipeline')
const { ledgerOf } = require('../metrics/ledger')

// The middleware options (`middlewareOptions` of contract/options.json, read by lib/options/reader.js).
const OPTION_NAMES = new Set(optionNames('middlewareOptions'))

/**
 * Validated middleware options; `ignored` names keys owned by the host framework, `adapter` the
 * adapter reading them where the schema lists other values for it (`valuesFor` of `errors`:
 * Koa throws, the Fetch entry only answers).
 */
function readOptions(options, ignored = new Set(), adapter = undefined, subjectOf = undefined) {
  // Unknown names, kinds, enums and bounds: the schema's. The checks below are the ones the
  // schema cannot state (two options together, the realm's characters, the rule forms).
  const read = readOptionBag(options, 'middlewareOptions', { ignored, variant: adapter })
  if (options === undefined || options === null) options = {}
  // Every callback of the application is called through the fence (lib/http/callback-fence.js).
  const fence = new CallbackFence(read.callbackTimeoutMs)
  const { credentialsRequired, getToken, onError, realm, isRevoked, errors, skipPreflight, rateLimitHeaders, challengeScope } = read
  if (errors !== 'respond' && onError !== undefined) throw typeError(`options.onError and errors: '${errors}' both decide where failures go: give one`)
  // A realm is a quoted-string (RFC 7235 §2.2): no quotes, backslashes or control characters.
  if (realm !== undefined && (typeof realm !== 'string' || !/^[\x20-\x7e]*$/.test(realm) || /["\\]/.test(realm))) {
    throw typeError('options.realm must be a string of printable ASCII without quotes or backslashes')
  }
  // `unless` is express-unless's name for the same rules.
  if (options.skip !== undefined && options.unless !== undefined) throw typeError('options.skip and options.unless are the same option: give one')
  const skip = options.unless !== undefined ? compileSkip(options.unless, 'unless', fence) : compileSkip(options.skip, 'skip', fence)
  const cookie = readCookieOption(options.cookie)
  return {
    credentialsRequired,
    getToken: takingSubject(subjectOf, fenced(fence, 'getToken', getToken)),
    onError: fenced(fence, 'onError', onError),
    realm,
    skip: skip === null ? null : takingSubject(subjectOf, skip),
    cookie,
    errors,
    skipPreflight,
    // A yes or a no: anything else refuses (CallbackFence#predicate).
    isRevoked: takingSubject(subjectOf, isRevoked === undefined ? undefined : fence.predicate('options.isRevoked', isRevoked)),
    rateLimitHeaders,
    challengeScope,
    fence,
  }
}

function fenced(fence, name, fn) {
  return fn === undefined ? undefined : fence.wrap(`options.${name}`, fn)
}

/**
 * `fn`, called with `subjectOf(view)` in place of the decision's view of a request (its first
 * argument; the others as given): `fn` itself without a `subjectOf`.
 */
function takingSubject(subjectOf, fn) {
  if (subjectOf === undefined || fn === undefined) return fn
  return (view, more) => fn(subjectOf(view), more)
}

/** The path of a request URL, without the query string. */
function pathOf(url) {
  const q = url.indexOf('?')
  return q < 0 ? url : url.slice(0, q)
}

/** The engine for a middleware: `source` is a config or an Authenticator. */
function engineFor(source, options, fence) {
  if (options === undefined || options === null) options = {}
  return createEngine(source, {
    fence,
    engine: options.engine,
    shadow: options.shadow,
    onMismatch: options.onMismatch,
    retryAfterToleranceMs: options.retryAfterToleranceMs,
  })
}

const NO_HEADERS = Object.freeze({})
// An adapter whose requests the callbacks see as they are (all but Fetch), with no route requirements.
const NO_FORM = Object.freeze({ subjectOf: undefined, senderOf: undefined, stages: undefined, routeRefusal: undefined, sharedProofs: undefined })

// A skipped request: the adapter leaves it and the response untouched.
const SKIP = Object.freeze({ action: 'skip' })

/**
 * The decision behind every adapter, made once per middleware from its source (a config or an
 * Authenticator) and options. `decide(req, path)` returns one of:
 * - `{ action: 'skip' }`: a skipped path; nothing is authenticated, set or sent.
 * - a `Pass` (`action: 'pass'`, `requestId`, `headers`, `identity`, `claims`): call the next
 *   handler with `identity` (`{ user, tenantId, tenantSource }`) on the request; `claims` is
 *   the verified token's whole payload, parsed when first read. An anonymous request (no
 *   credentials, or another scheme, while `credentialsRequired` is false) passes with all three
 *   `undefined` and no claims, as an AuthResult leaves absent fields.
 * - `{ action: 'fail', requestId, headers, status, body, result, authorization }`: answer
 *   `status` with the JSON `body`, hand `new AuthShieldError(result)` to onError, or
 *   `unauthorizedError(d)` to the framework (`errors: 'next'`).
 * `headers` are [name, value] pairs to set on the response in every case but skip.
 *
 * `source` may be express-jwt's single options object (`{ secret, algorithms, getToken, … }`):
 * lib/http/express-jwt-options.js splits it into the config and the middleware options.
 */
class AuthDecision {
  /**
   * `form` is for an adapter whose decision reads a Node-style view of each request (`method`,
   * `headers` by lowercase name) while its users know the request in another form (a Fetch
   * `Request`): `subjectOf(view)` is what the application's callbacks that take the request
   * (getToken, isRevoked, skip / unless and their rules, dpopUrl) are given; `senderOf(view)` the
   * request's client-certificate sender context, for an adapter without a socket. `stages`:
   * the pipeline's stage list (lib/http/pipeline.js STAGES by default; another in tests).
   * `routeRefusal(d, ...request)`: how the adapter answers a route requirement's refusal `d`
   * (lib/http/route-requirements.js) of a request this decision passed, as it answers its own.
   * `sharedProofs`: a DPoP replay cache this decision releases refused proofs from besides its
   * engine's (expressjwt's one cache for every key of a secret getter).
   */
  constructor(source, options, ignoredOptions, adapter, form = NO_FORM) {
    ;({ config: source, options } = splitSource(source, options, new Set([...OPTION_NAMES, ...(ignoredOptions || [])])))
    const { subjectOf, senderOf, stages, routeRefusal, sharedProofs } = form
    this.routeRefusal = routeRefusal
    this.options = readOptions(options, ignoredOptions, adapter, subjectOf)
    this.adapterOptions = options
    // The config (or Authenticator) after the split: lib/http/express-jwt-compat.js reads its claim rules.
    this.source = source
    const store = options === undefined || options === null ? undefined : options.store
    if (store !== undefined) checkStore(store, 'options.store')
    // The shadow engine would keep local buckets: every limited request would differ. (A
    // config's `store` is among the options by now: splitSource moves it.)
    if (store !== undefined && options.shadow === true) throw typeError('options.store cannot be combined with shadow')
    // The request pipeline's stages (lib/http/pipeline.js): the key source (the `jwks` option,
    // the `algorithms` allow-list) gives the engine its config before it is built.
    this.pipeline = new Pipeline(options === undefined || options === null ? {} : options, stages)
    this.engine = engineFor(this.pipeline.configure(source), options, this.options.fence)
    // Refusals decided after the engine, for its counters (lib/metrics/ledger.js).
    this.ledger = ledgerOf(this.engine.authenticator)
    // The client certificate for certificate-bound tokens, read only when they are checked
    // (lib/http/client-cert.js); null otherwise.
    this.senderOf = clientCertReader(options || {}, this.engine.authenticator.certificateBoundTokens === true)
    if (this.senderOf !== null && senderOf !== undefined) this.senderOf = senderOf
    this.refillPerSec = this.engine.authenticator.rateLimitRefillPerSec
    // The engine's fixed test clock or null, for the route requirements' maxAgeSec (base/engine-clock.js).
    this.fixedClock = fixedClockOf(this.engine.authenticator)
    this.rateLimitHeaders = rateLimitHeaderWriter(this.options.rateLimitHeaders, this.engine.authenticator.rateLimitMax, this.refillPerSec)
    this.recoveries = new Map()
    // The parsed payloads of the last few tokens, for `claims` (lib/http/verified-claims.js).
    this.verifiedClaims = new VerifiedClaims(this.pipeline.opaqueClaimsOf, this.pipeline.claimsOfEveryToken)
    // DPoP (lib/http/dpop.js): the proof, method and URL of each request, with dpopOrigin or
    // dpopUrl only. The route's DPoP mode (dpopMode): 'disabled' reads no proof and refuses the DPoP scheme.
    this.dpopMode = dpopModeOf(options || {})
    const dpopOptions = options || {}
    const { dpopUrl } = dpopOptions
    this.dpopSender = this.dpopMode === 'disabled' ? null : senderReader(dpopOptions.dpopOrigin, typeof dpopUrl === 'function' ? takingSubject(subjectOf, dpopUrl) : dpopUrl)
    if (this.dpopMode !== undefined && this.dpopMode !== 'disabled' && this.dpopSender === null) {
      throw typeError(`options.dpopMode '${this.dpopMode}' needs options.dpopOrigin or options.dpopUrl`)
    }
    this.dpopRequired = this.dpopMode === 'required'
    this.dpopDisabled = this.dpopMode === 'disabled'
    this.sharedProofs = sharedProofs
    this.dpopReplay = this.dpopDisabled ? null : sharedReplayCheck(options === undefined || options === null ? undefined : options.dpopReplayStore, this.dpopSender, this.fixedClock)
    // Every WWW-Authenticate value this middleware can send, written now (lib/http/challenge.js).
    const { requiredScope, requiredAcr, maxAuthAgeSec } = this.engine.authenticator
    const challengeOptions = {
      realm: this.options.realm,
      scope: Array.isArray(requiredScope) ? requiredScope : [],
      acrValues: Array.isArray(requiredAcr) ? requiredAcr : [],
      maxAge: typeof maxAuthAgeSec === 'number' ? maxAuthAgeSec : undefined,
      resourceMetadata: resourceMetadataUrl(options === undefined || options === null ? undefined : options.resourceMetadata),
      dpopAlgs: challengeAlgs(this.engine.authenticator),
      scopeOnUnauthorized: this.options.challengeScope === true,
    }
    this.challenge = new Challenge(challengeOptions)
    // A DPoP request refused for its scopes or its authentication gets the same challenge in
    // the DPoP scheme (RFC 9449 §7.1), with the proof algorithms.
    this.challenge.dpop = new Challenge({ ...challengeOptions, scheme: 'DPoP', algs: challengeOptions.dpopAlgs })
    // A shared store (auth-shield/redis), given here or to the Authenticator (the same one, if
    // both): the limit goes through it, and an identity without a lease yet waits for one round
    // trip (docs/scale-out.md).
    if (store !== undefined) attachStore(this.engine.authenticator, store)
    const shared = storeOf(this.engine.authenticator)
    if (shared !== undefined) this.recover(shared.pendingCode, shared.recover, STORE_WAITS)
    this.pipeline.attach(this)
    // introspection_required is the engine's way to the introspection stage, never an answer: an
    // engine with an introspection cache and no introspecting issuer (nothing will ever ask)
    // answers what the docs promise, 503 introspection_unavailable with Retry-After.
    if (!this.recoveries.has(INTROSPECTION_REQUIRED)) this.recover(INTROSPECTION_REQUIRED, unrepairable, 0, introspectionUnavailable)
    // `tracing` (lib/metrics/tracing.js): null without the option, and then traced() adds nothing.
    this.tracing = readTracing(options === undefined || options === null ? undefined : options.tracing, storeOf(this.engine.authenticator))
  }

  /**
   * An adapter's `decide(req, path)` with the decision's span attributes (the `tracing` option),
   * or `decide` itself without it. Called once, when the adapter is built.
   */
  traced(decide) {
    return this.tracing === null ? decide : this.tracing.wrap(decide)
  }

  /**
   * Registers `recover(result, req, request)` for failures with `code` (`request`: the
   * AuthRequest of lib/http/pipeline.js): instead of failing at once, the decision waits for
   * the Promise it returns and, when it resolves to true, authenticates the request once more,
   * reading its credentials again; one request waits at most `attempts`
   * times (default 1) in all. For failures that background state can repair: a
   * key set refreshed on an unknown `kid`, a rate-limit lease fetched from a shared store, an
   * opaque token introspected. A recovery may also resolve to another failure result (an
   * AuthResult with `authenticated: false`: the introspection endpoint down), answered in place
   * of the first. A throw, a rejection, any other answer, or no answer within
   * `callbackTimeoutMs` keeps the first failure (the recovery is fenced as every callback is),
   * or, with `unrepaired`, answers `unrepaired(first)` in its place; so does a request past its
   * attempts (an internal code such as introspection_required never reaches a client).
   * Only these paths are asynchronous. A request run again is counted once, by its last result
   * (an unknown_key or introspection_required that was only the way to a verdict is no refusal).
   */
  recover(code, recover, attempts = 1, unrepaired = undefined) {
    if (typeof recover !== 'function') throw typeError('recover must be a function')
    if (unrepaired !== undefined && typeof unrepaired !== 'function') throw typeError('unrepaired must be a function')
    this.recoveries.set(code, { recover: this.options.fence.wrap(`the ${code} recovery`, recover), attempts, unrepaired })
  }

  /**
   * The decision for a request: a decision object, or a Promise of one on a recovery path, an
   * asynchronous `getToken`, `isRevoked`, skip predicate or `onMismatch`. A callback that
   * throws, rejects, answers what it may not or does not settle makes this throw (or reject)
   * a real Error (lib/http/callback-fence.js): the adapters hand that error to the framework.
   */
  decide(req, path) {
    let d
    try {
      d = this.decideUnobserved(req, path)
    } catch (err) {
      throw this.callbackRefused(err, undefined)
    }
    // Only the asynchronous paths (recoveries, asynchronous callbacks) pay for the catch.
    return d.action === undefined ? d.then(undefined, (err) => Promise.reject(this.callbackRefused(err, undefined))) : d
  }

  decideUnobserved(req, path) {
    const skip = this.options.skip
    if (skip === null) return this.authenticateUnskipped(req)
    const skipped = skip(req, path)
    if (skipped === true) return SKIP
    if (skipped === false) return this.authenticateUnskipped(req)
    return skipped.then((s) => (s ? SKIP : this.authenticateUnskipped(req)))
  }

  authenticateUnskipped(req) {
    const { getToken, cookie, skipPreflight } = this.options
    if (skipPreflight && isPreflight(req)) return SKIP
    const authorization = authorizationOf(req, getToken, cookie)
    if (typeof authorization === 'object') return authorization.then((a) => this.decideFor(req, a, 0))
    return this.decideFor(req, authorization, 0)
  }

  decideFor(req, authorization, tries) {
    // A hand-built request (serverless adapters, tests) may have no headers at all.
    const headers = req.headers || NO_HEADERS
    // What the request says of its sender: its DPoP proof, method and URL, its client
    // certificate; built only for the checks configured.
    let sender
    if (this.dpopSender !== null) sender = this.dpopSender(req, headers, authorization)
    if (this.senderOf !== null) {
      const certificate = this.senderOf(req)
      if (certificate !== undefined) sender = sender === undefined ? certificate : { ...sender, clientCertThumbprint: certificate.clientCertThumbprint }
    }
    const request = new AuthRequest(req, authorization, headerValue(headers['x-tenant-id']), headerValue(headers.host), sender, tries)
    // A stage that answers some requests in place of the engine (lib/http/pipeline.js).
    if (this.pipeline.engineStages.length !== 0) {
      const answered = this.pipeline.beforeEngine(request)
      if (answered !== undefined) return answered instanceof Promise ? answered.then((r) => this.answeredByStage(request, r)) : this.answeredByStage(request, answered)
    }
    // The engine stage: the whole request, every field of it.
    const result = this.engine.authenticate(request.authorization, request.tenant, request.host, request.sender)
    // Shadow mode waits for an asynchronous onMismatch, which may refuse the request.
    if (result instanceof Promise) return result.then((r) => this.engineVerdict(request, r))
    return this.engineVerdict(request, result)
  }

  /** The engine's `result` for `request`, on through the stages after the engine. */
  engineVerdict(request, result) {
    return this.afterEngine(request, result)
  }

  /**
   * A stage's answer in place of the engine's (undefined: the engine decides after all): counted
   * as the engine counts its own, then on through the stages after the engine.
   */
  answeredByStage(request, result) {
    if (result === undefined) {
      const engineResult = this.engine.authenticate(request.authorization, request.tenant, request.host, request.sender)
      return engineResult instanceof Promise ? engineResult.then((r) => this.engineVerdict(request, r)) : this.engineVerdict(request, engineResult)
    }
    this.ledger.counted(result)
    return this.afterEngine(request, result)
  }

  afterEngine(request, result) {
    request.engineResult = result
    if (this.pipeline.resultStages.length !== 0) {
      result = this.pipeline.checkResult(result, request)
      if (!result.authenticated) this.releaseProof(request.engineResult)
    }
    const authorization = request.authorization
    // A route without DPoP: the scheme is refused whatever the engine said of the token (a
    // rate-limited or unavailable answer aside), before any recovery waits for its keys.
    if (this.dpopDisabled && isDpopScheme(authorization) && (result.authenticated || result.errorStatus === 401)) {
      this.releaseProof(result)
      result = refusedResult(result, 'dpop_not_allowed')
    }
    if (!result.authenticated && this.recoveries.size !== 0) {
      const registered = this.recoveries.get(result.errorCode)
      if (registered !== undefined && request.tries >= registered.attempts) {
        if (registered.unrepaired !== undefined) result = registered.unrepaired(result)
      } else if (registered !== undefined) {
        const { recover, unrepaired } = registered
        const req = request.raw
        const verdict = () => this.answer(request, unrepaired === undefined ? result : unrepaired(result))
        const { getToken, cookie } = this.options
        // The retry's verdict is the request's: the engine's count of this one is taken back,
        // so a request a recovery admitted is one success, not also this failure.
        const again = () => {
          this.ledger.superseded(request.engineResult)
          return Promise.resolve(authorizationOf(req, getToken, cookie)).then((a) => this.decideFor(req, a, request.tries + 1))
        }
        return Promise.resolve()
          .then(() => recover(result, req, request))
          .then((repaired) => (repaired === true ? again() : isFailure(repaired) ? this.settled(request, repaired) : verdict()), verdict)
      }
    }
    // A route for DPoP only: a Bearer success is refused (lib/http/dpop.js).
    if (this.dpopRequired && result.authenticated && !isDpopScheme(authorization)) {
      this.releaseProof(result)
      result = dpopRequiredResult(result)
    }
    return this.settled(request, result)
  }

  settled(request, result) {
    const d = this.withNonce(request, result, this.answer(request, result))
    const checked = result.authenticated && this.options.isRevoked !== undefined ? this.checkRevoked(d, result, request) : d
    // A proof accepted here must be new to every process sharing the replay store; recorded
    // last, once every other check admitted the request (a refused one takes no room).
    if (this.dpopReplay !== null && result.authenticated && isDpopScheme(request.authorization)) {
      return Promise.resolve(checked).then((c) => (c.action === 'pass' ? this.dpopReplay(result).then((r) => (r === result ? c : this.sharedReplayRefused(request, result, r))) : c))
    }
    return checked
  }

  /** The shared replay store's refusal `r` of the engine's success `result`: its proof released here. */
  sharedReplayRefused(request, result, r) {
    this.releaseProof(result)
    return this.withNonce(request, r, this.answer(request, r))
  }

  /**
   * The engine admitted `result`'s DPoP proof into its in-process replay cache (the last step of
   * authenticate) and a later check refused the request: the proof is forgotten again, so only
   * proofs of requests that pass every check take room (a cache filled by refused requests
   * would refuse good ones with dpop_replay_cache_full). Safe: a replay of the same proof to the
   * same route meets the same refusal, with the same token, and the same method and URL bound
   * by its htm/htu. Only on the refusal paths; a success never comes here.
   */
  releaseProof(result) {
    if (result === undefined || typeof result.dpopReplayKey !== 'string') return
    const key = result.dpopReplayKey
    // (In shadow mode the served engine releases it from the shadow engine too: lib/http/engine.js.)
    const { authenticator } = this.engine
    if (typeof authenticator.releaseDpopProof === 'function') authenticator.releaseDpopProof(key)
    // expressjwt's cache shared by its keys' decisions (lib/http/express-jwt-compat.js).
    if (this.sharedProofs !== undefined) this.sharedProofs.release(key)
    // The shared replay store, when this request recorded the proof there.
    if (this.dpopReplay !== null) this.dpopReplay.release(result)
  }

  /** `d` with the DPoP-Nonce header its result calls for (lib/http/dpop.js), when DPoP is read. */
  withNonce(request, result, d) {
    if (this.dpopSender !== null) addNonceHeader(d.headers, this.engine.authenticator, request.authorization, result, (request.raw && request.raw.headers) || NO_HEADERS)
    return d
  }

  /**
   * The response stage for the request's final result, after the observation stage: a refusal
   * decided after the engine (a key source, the DPoP route mode, the replay store, isRevoked) is
   * recorded against the engine's own count, so every refusal is counted with its code.
   */
  answer(request, result) {
    const first = request.engineResult
    if (first !== result && first !== undefined && (first.authenticated !== result.authenticated || first.errorCode !== result.errorCode)) this.ledger.replaced(first, result)
    return this.verdict(result, request.authorization)
  }

  verdict(result, authorization) {
    const { credentialsRequired, realm } = this.options
    const requestId = result.requestId
    if (result.authenticated) {
      const user = { userId: result.userId, email: result.email, role: result.role }
      const identity = { user, tenantId: result.tenantId, tenantSource: result.tenantSource }
      return new Pass(requestId, this.headersFor(result, authorization), identity, authorization, this.verifiedClaims, result, this)
    }
    // Optional auth: anonymous requests (no credentials, or another scheme's, as express-jwt
    // lets `Basic …` through) pass without a challenge; a bad bearer token is still refused.
    const code = result.errorCode
    const noCredentials = code === 'missing_authorization' || (code === 'invalid_authorization_format' && isOtherScheme(authorization))
    if (!credentialsRequired && noCredentials) {
      return new Pass(requestId, [['X-Request-Id', requestId]], ANONYMOUS, undefined, null, result, this)
    }
    return {
      action: 'fail',
      requestId,
      headers: this.headersFor(result, authorization),
      status: result.errorStatus,
      body: errorBody(result),
      result,
      authorization,
    }
  }

  headersFor(result, authorization) {
    return responseHeaders(result, authorization, this.rateLimitHeaders, this.challenge)
  }

  /**
   * `isRevoked(req, claims)` after the engine accepted the token: `true` (or a Promise of it)
   * turns the pass into `token_revoked`, `false` keeps it, and any other answer is an
   * ERR_AUTH_SHIELD_CALLBACK error (fail closed: a forgotten `return` must not pass). Only ever
   * called with a verified payload.
   */
  checkRevoked(pass, result, request) {
    let answer
    try {
      answer = this.options.isRevoked(request.raw, pass.claims)
    } catch (err) {
      throw this.callbackRefused(err, result)
    }
    const settle = (revoked) => {
      if (revoked === false) return pass
      if (revoked === true) {
        this.releaseProof(result)
        return this.answer(request, revokedResult(result))
      }
      throw this.callbackRefused(unexpectedAnswer('options.isRevoked', revoked, 'true or false'), result)
    }
    return answer instanceof Promise ? answer.then(settle, (err) => Promise.reject(this.callbackRefused(err, result))) : settle(answer)
  }

  /**
   * A refusal by a failing callback (lib/http/callback-fence.js), observed as every other one:
   * `err` (returned, to throw), counted with its code against the engine's `result` (undefined
   * when the engine did not run).
   */
  callbackRefused(err, result) {
    this.ledger.callbackFailed(err, result)
    return err
  }

  /** A route requirement's refusal `d` of a request the engine passed (observation stage). */
  routeRefused(d, pass) {
    this.releaseProof(pass.result)
    if (pass.result !== undefined && pass.result.authenticated) this.ledger.replaced(pass.result, d.result)
    if (this.tracing !== null) this.tracing.refusedLater(d)
  }

  /** The error `errors: 'next'` hands to the framework for a fail decision. */
  unauthorizedError(d) {
    return errorForNext(d.result, d.authorization, d.headers)
  }
}

/** A passing decision; `claims` decodes the verified token's payload on first read. */
class Pass {
  constructor(requestId, headers, identity, authorization, verifiedClaims, result, decision) {
    this.action = 'pass'
    this.requestId = requestId
    this.headers = headers
    this.identity = identity
    this.authorization = authorization
    this.parsed = undefined
    this.verifiedClaims = verifiedClaims
    // The engine's AuthResult (for tracing: lib/metrics/tracing.js).
    this.result = result
    // For the route requirements (lib/http/route-requirements.js): the decision's challenges,
    // and the verified payload once read.
    this.decision = decision
    this.kept = undefined
  }

  /** The verified payload as parsed once per token: for reading only, never for the app. */
  get payload() {
    if (this.kept === undefined) this.kept = this.verifiedClaims.payloadOf(this.authorization)
    return this.kept
  }

  /**
   * The whole payload of the token the engine just verified (both engines verified the same
   * bytes, so both give these values), or undefined for an anonymous pass.
   */
  get claims() {
    if (this.parsed === undefined && this.authorization !== undefined) this.parsed = this.verifiedClaims.of(this.authorization)
    return this.parsed
  }
}

/**
 * Makes `owner[name]` read the pass decision's claims: the payload is only parsed if the app
 * reads it. Assigning replaces it with a plain value (express-jwt's `req.auth` and koa-jwt's
 * `ctx.state.user` are plain properties).
 */
function defineClaims(owner, name, pass) {
  Object.defineProperty(owner, name, {
    get: () => pass.claims,
    set: (value) => Object.defineProperty(owner, name, { value, writable: true, configurable: true, enumerable: true }),
    configurable: true,
    enumerable: true,
  })
}

const { failure: FAILURE } = resultTemplates()

/** A failure result for a token `isRevoked` refused, with the request id of its result. */
function revokedResult(result) {
  const { status, message } = TABLE.token_revoked
  const revoked = { ...FAILURE }
  revoked.requestId = result.requestId
  revoked.rateLimitLimit = result.rateLimitLimit
  revoked.retryAfterMs = 0
  revoked.error = message
  revoked.errorCode = 'token_revoked'
  revoked.errorStatus = status
  return revoked
}

const INTROSPECTION_REQUIRED = 'introspection_required'
// The Retry-After of an introspection the middleware cannot make (RFC 9110 §10.2.3): a second.
const INTROSPECTION_RETRY_MS = 1000

function unrepairable() {
  return false
}

/** introspection_required as a client sees it: 503 introspection_unavailable with Retry-After. */
function introspectionUnavailable(result) {
  const unavailable = refusedResult(result, 'introspection_unavailable')
  unavailable.retryAfterMs = INTROSPECTION_RETRY_MS
  return unavailable
}

/** A failure result a recovery answered in place of the first (never a pass). */
function isFailure(value) {
  return typeof value === 'object' && value !== null && value.authenticated === false && typeof value.errorCode === 'string' && typeof value.errorStatus === 'number'
}

/** True for a Promise-like decision (a recovery path). */
function isPending(decision) {
  return typeof decision.then === 'function'
}

const ANONYMOUS = Object.freeze({ user: undefined, tenantId: undefined, tenantSource: undefined })

/** Response headers for a result, as [name, value] pairs (X-Request-Id always). */
function responseHeaders(result, authorization, rateLimitHeaders, challenges) {
  const headers = [['X-Request-Id', result.requestId]]
  if (result.rateLimitLimit !== undefined && (result.authenticated || result.errorCode === 'rate_limited')) {
    rateLimitHeaders(result, headers)
  }
  // A 503 that remains with a store (its wait queue full, Redis failing past the fallback):
  // the lease is seconds away at most (RFC 9110 §10.2.3).
  if (result.errorCode === 'rate_limit_pending') headers.push(['Retry-After', '1'])
  if (result.errorStatus === 401 || result.errorCode === 'insufficient_scope') {
    const code = result.errorCode
    const dpopGrant = (code === 'insufficient_scope' || code === 'insufficient_user_authentication') && isDpopScheme(authorization)
    headers.push(['WWW-Authenticate', dpopGrant ? challenges.dpop.of(code) : (dpopChallenge(result, authorization, challenges.realm, challenges.dpopAlgs) ?? challenge(result, authorization, challenges))])
  }
  // A 503 for a state the server expects to end (keys_unavailable: a remote key set not in force)
  // says when to try again (RFC 9110 §10.2.3).
  else if (result.errorStatus === 503 && result.errorCode !== 'rate_limit_pending' && result.retryAfterMs > 0) headers.push(['Retry-After', String(Math.ceil(result.retryAfterMs / 1000))])
  return headers
}

// Bearer schemes as written by a client that sent one (RFC 7235 §2.1: case-insensitive).
const BEARER_SCHEME = /^bearer(?: |$)/i

/**
 * RFC 6750 §3.1: a request without bearer credentials (none, or another scheme) gets a bare
 * challenge; a malformed Authorization header is `invalid_request`; a token without a required
 * scope `insufficient_scope` (403, with the scopes); any other 401 is `invalid_token`. The
 * status is the AuthResult's in every case. The values were written at construction.
 */
function challenge(result, authorization, challenges) {
  const code = result.errorCode
  // A DPoP request on a route without DPoP: the Bearer scheme this route takes, with the reason.
  if (code === 'dpop_not_allowed') return challenges.of(code)
  const noBearer = code === 'missing_authorization' || !BEARER_SCHEME.test(authorization || '')
  return noBearer ? challenges.bare : challenges.of(code)
}

function errorBody(result) {
  return JSON.stringify({ error: result.error, code: result.errorCode })
}

// The error classes every adapter exports: onError's, and those `errors: 'next'` / 'throw' hand on.
const ERROR_CLASSES = Object.freeze({ AuthShieldError, UnauthorizedError, TooManyRequestsError, ServiceUnavailableError })

module.exports = { AuthDecision, isPending, pathOf, defineClaims, ERROR_CLASSES, AuthShieldError, UnauthorizedError }
