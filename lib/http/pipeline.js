'use strict'

// The request pipeline behind every adapter (issue 35; the model is Envoy's HTTP filter chain:
// each stage sees the same request, may refuse it, never rewrites another stage). One
// AuthRequest flows through named stages, in this order:
//
//   key source   the configured keys (static, a remote JWKS, trusted issuers; the `algorithms`
//                allow-list filters them): builds the engine's config, feeds it key sets, reads
//                each engine result (a missing key set is `keys_unavailable`)
//   engine       the Authenticator (lib/http/engine.js; shadow mode there), called with the whole
//                request: authorization, tenant header, host, sender context
//   recovery     failures background state can repair (a refreshed key set, a store lease) wait
//                for it, then the request runs again (AuthDecision#recover); then the route's
//                DPoP mode and the shared replay store (lib/http/dpop.js), isRevoked
//   route        per-route requirements after the adapter (lib/http/route-requirements.js)
//   observation  every refusal, wherever decided, counted, traced and evented with its code
//                (AuthDecision#answer, #routeRefused, #callbackRefused; the counts in
//                lib/metrics/ledger.js, the spans in lib/metrics/tracing.js)
//   response     the HTTP answer (AuthDecision#verdict)
//
// The stages of this list are the ones an option adds; each is one file exporting
// `create(options, pipeline)` (null when its option is absent) whose instance may have:
//   configure(config)            -> config, before the engine is built
//   attach(decision)             after it is built: authenticators to feed, recoveries to register
//   beforeEngine(request)        -> undefined (the engine decides), or a result (or a Promise of
//                                one, or of undefined) given in place of the engine's: a token
//                                the engine cannot read (token introspection of opaque tokens;
//                                a pass's `claims` are still read as a JWT's payload today: such
//                                a stage brings its claims along with the request)
//   checkResult(result, request) -> result, on every engine result (the request whole)
//   claimsOf(authorization)      -> the claims JSON of a pass for a token that is not a JWT
//                                (introspection: what the engine holds for it), or null
// Adding a stage (token introspection) is its file and one line in STAGES. A stage never
// re-assigns another's methods, and reads the request object it is given without copying
// fields out of it, so nothing it does not use can be lost on the way.

const { readAlgorithms } = require('./algorithms')

const STAGES = Object.freeze([
  // The key source: the `jwks` option (a remote JWKS, trusted issuers).
  { name: 'key source', create: (options, pipeline) => require('../jwks/middleware').keySourceStage(options, pipeline.allowList) },
  // Opaque tokens of trusted issuers with an `introspection` option (lib/introspection/stage.js).
  { name: 'introspection', create: (options) => require('../introspection/stage').introspectionStage(options) },
])

/**
 * What every stage sees of one request: the framework's request (`raw`), its credentials, tenant
 * header and host, its sender context (DPoP proof, method and URL; client certificate
 * thumbprint), which attempt this is, and the engine's own result once it ran.
 */
class AuthRequest {
  constructor(raw, authorization, tenant, host, sender, tries) {
    this.raw = raw
    this.authorization = authorization
    this.tenant = tenant
    this.host = host
    this.sender = sender
    this.tries = tries
    // The engine's result for this request (what its counters recorded), before any later stage.
    this.engineResult = undefined
  }
}

class Pipeline {
  /** The stages `options` configure, in the order of `stages` (STAGES; another list in tests). */
  constructor(options, stages = STAGES) {
    // The `algorithms` allow-list, applied to every key source (lib/http/algorithms.js).
    this.allowList = readAlgorithms(options.algorithms)
    this.hasKeySource = options.jwks !== undefined
    this.stages = []
    for (const stage of stages) {
      const made = stage.create(options, this)
      if (made !== null) this.stages.push(made)
    }
    // Only the stages that have a say are called per request (none: no loop at all).
    this.engineStages = this.stages.filter((s) => typeof s.beforeEngine === 'function')
    this.resultStages = this.stages.filter((s) => typeof s.checkResult === 'function')
    // A stage whose passes carry claims the token does not (introspection): `claimsOf(authorization)`.
    const claims = this.stages.find((s) => typeof s.claimsOf === 'function')
    this.opaqueClaimsOf = claims === undefined ? undefined : (authorization) => claims.claimsOf(authorization)
    // …for every token, JWTs too (introspectJwts), or only for a token that is not a JWT.
    this.claimsOfEveryToken = claims !== undefined && claims.claimsOfEveryToken === true
  }

  /** The first answer a stage gives in place of the engine, or undefined. */
  beforeEngine(request) {
    const stages = this.engineStages
    for (let i = 0; i < stages.length; i++) {
      const answered = stages[i].beforeEngine(request)
      if (answered !== undefined) return answered
    }
    return undefined
  }

  /** The engine's config: the allow-list on the config's own keys first, then each stage's. */
  configure(config) {
    if (this.allowList !== null) config = this.allowList.configure(config, this.hasKeySource)
    for (const stage of this.stages) if (typeof stage.configure === 'function') config = stage.configure(config)
    return config
  }

  attach(decision) {
    for (const stage of this.stages) if (typeof stage.attach === 'function') stage.attach(decision)
  }

  /** The result after every stage that reads results. */
  checkResult(result, request) {
    const stages = this.resultStages
    for (let i = 0; i < stages.length; i++) result = stages[i].checkResult(result, request)
    return result
  }
}

module.exports = { Pipeline, AuthRequest, STAGES }
