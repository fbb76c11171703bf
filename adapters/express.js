'use strict'

// `require('auth-shield/express')`: the whole auth chain as one Express middleware (Express 4
// and 5; it only uses Node's own request/response API). One engine call per request; what to
// do with the request is decided in lib/http/decision.js, shared with the Fastify plugin.
//
//   const authShield = require('auth-shield/express')
//   app.use('/api', authShield({ accessSecret: process.env.JWT_SECRET }))

const { types } = require('node:util')
const { AuthDecision, isPending, pathOf, defineClaims, AuthShieldError, UnauthorizedError } = require('../lib/http/decision')
const { TooManyRequestsError, ServiceUnavailableError } = require('../lib/http/unauthorized-error')
const { compileSkip } = require('../lib/http/request-match')
const { callbackError } = require('../lib/http/callback-fence')
const { typeError } = require('../base/error')
const { expressJwtOn } = require('../lib/http/express-jwt-compat')
const { ROUTE_PASS, routeRequirements, notAuthenticated } = require('../lib/http/route-requirements')

// Express-only options.
const EXPRESS_OPTIONS = new Set(['requestProperty'])

/**
 * Middleware for `configOrAuthenticator` (an authenticator config, or an Authenticator of
 * either engine). On success sets `req.user` ({ userId, email, role }), `req.tenantId`,
 * `req.tenantSource`, `req.requestId` (also as `req.id`, Express's conventional name) and
 * `req.auth` (the verified payload, parsed when first read; the name is `requestProperty`); an
 * anonymous request (credentialsRequired: false) gets them `undefined` (and the request id); on
 * failure answers `{ error, code }` with the result's status, calls `onError`, or
 * (`errors: 'next'`) calls `next` with an UnauthorizedError (a TooManyRequestsError for 429, a
 * ServiceUnavailableError for 503). Skipped paths are left untouched.
 */
function authShield(configOrAuthenticator, options) {
  return middlewareOf((form) => {
    const decision = new AuthDecision(configOrAuthenticator, options, EXPRESS_OPTIONS, undefined, form)
    // Without skip rules the path is never read: not worked out per request.
    const decide = decision.options.skip === null ? (req) => decision.decide(req) : (req) => decision.decide(req, pathOf(urlOf(req)))
    return { decision, decide }
  })
}

/**
 * The middleware of the parts `build(form)` makes: `decision`, the AuthDecision made with `form`
 * (this middleware's answer to a route requirement's refusal); `decide(req)`, the decision for a
 * request (or a Promise of it); optionally `nextError(d)`, the error `errors: 'next'` hands on
 * (default: the decision's), and the middleware's `authenticator` and `stats` (default: the
 * decision's engine's). The compatible export (lib/http/express-jwt-compat.js) builds on it with
 * its own parts.
 */
function middlewareOf(build) {
  // `apply` is hoisted: it reads the constants below only when a request comes, after they are set.
  const parts = build({ routeRefusal: apply })
  const { decision } = parts
  const { onError, errors } = decision.options
  const setClaims = claimsSetter(readRequestProperty(decision.adapterOptions.requestProperty))
  const nextError = parts.nextError || ((d) => decision.unauthorizedError(d))
  // With the tracing option, the decision's span attributes (lib/metrics/tracing.js); else `decide` as is.
  const decide = decision.traced(parts.decide)

  function authShieldMiddleware(req, res, next) {
    // First, so that the decision's reads of the request (headers, method) find the one
    // dictionary map all requests share, not a hidden class V8 has never seen.
    toDictionary(req)
    let d
    try {
      d = decide(req)
    } catch (err) {
      return next(refusal(err))
    }
    if (isPending(d)) return d.then((d) => apply(d, req, res, next)).catch((err) => next(refusal(err)))
    apply(d, req, res, next)
  }

  function apply(d, req, res, next) {
    if (d.action === 'skip') return next()
    req.requestId = req.id = d.requestId
    // A hand-built response (serverless adapters, tests) may have no setHeader: express-jwt
    // never touches the response, so nothing is set on one. (Looked up once: the response, too,
    // has a hidden class of its own, so every lookup is a slow one.)
    const setHeader = res.setHeader
    const settable = typeof setHeader === 'function'
    if (settable) {
      const headers = d.headers
      for (let i = 0; i < headers.length; i++) setHeader.call(res, headers[i][0], headers[i][1])
    }
    if (d.action === 'pass') {
      const identity = d.identity
      req.user = identity.user
      req.tenantId = identity.tenantId
      req.tenantSource = identity.tenantSource
      // The payload is only parsed if the app reads it; assigning replaces it (express-jwt's
      // req.auth is a plain property too).
      if (d.authorization !== undefined) setClaims(req, d)
      // For the route's requirements (requireScopes, …) after this middleware.
      req[ROUTE_PASS] = d
      return next()
    }
    if (errors === 'next' || !settable) return next(nextError(d))
    if (onError !== undefined) return callOnError(d, req, res, next)
    answer(d, res)
  }

  // onError is fenced (lib/http/callback-fence.js): a throw, a rejection or a Promise that does not
  // settle reaches next() as a real Error, never as `next(undefined)`, which would continue. A
  // handler that answered nothing by the time it returned (or its Promise resolved) leaves the
  // answer to this middleware: a log-only onError must neither hang the request nor let it
  // through. The `next` it is given hands an Error on; `next()`, `next('route')` or any other
  // value cannot continue a refused request: it is answered as onError had sent nothing.
  function callOnError(d, req, res, next) {
    let done = false
    const finish = () => {
      if (done) return
      done = true
      if (!res.headersSent) answer(d, res)
    }
    const handOn = (err) => {
      if (done) return
      done = true
      next(refusal(err))
    }
    const onErrorNext = (err) => (types.isNativeError(err) ? handOn(err) : finish())
    let answered
    try {
      answered = onError(new AuthShieldError(d.result), req, res, onErrorNext)
    } catch (err) {
      return handOn(err)
    }
    if (answered instanceof Promise) answered.then(finish, handOn)
    else finish()
  }

  authShieldMiddleware.engine = decision.engine.name
  authShieldMiddleware.authenticator = parts.authenticator || decision.engine.authenticator
  authShieldMiddleware.stats = parts.stats || decision.engine.stats
  // Internal: where adapter options (a JWKS source, a shared store) register their recoveries.
  Object.defineProperty(authShieldMiddleware, 'decision', { value: decision })
  Object.defineProperty(authShieldMiddleware, 'unless', { value: unlessOf(authShieldMiddleware) })
  return authShieldMiddleware
}

/** The middleware's own answer to a refusal: the result's status and `{ error, code }`. */
function answer(d, res) {
  res.statusCode = d.status
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(d.body))
  res.end(d.body)
}

// Express 5 sets the prototype of every request object (app.handle's Object.setPrototypeOf),
// which leaves each one with a hidden class of its own: V8 then makes a new hidden class for
// every property added to it, and a middleware that adds one property (req.auth) pays that once
// where this one adds six (id, requestId, user, tenantId, tenantSource and the claims). Turning
// a data property into an accessor makes V8 turn the object into a dictionary-mode object
// instead, where each addition is a hash-table insert: one scratch key added, made an accessor
// and deleted, whatever the number of properties that follow (docs/development.md, the hot
// path). The request keeps no trace of it.
const SCRATCH = Symbol('auth-shield.scratch')
const SCRATCH_ACCESSOR = { get() {}, configurable: true }

function toDictionary(req) {
  // A frozen or sealed hand-built request is left as it is (a skip rule may still pass it).
  if (!Object.isExtensible(req)) return
  req[SCRATCH] = undefined
  Object.defineProperty(req, SCRATCH, SCRATCH_ACCESSOR)
  delete req[SCRATCH]
}

/** The URL a request asked for; '' for a hand-built request without one. */
function urlOf(req) {
  return req.originalUrl || req.url || ''
}

/** `requestProperty`: a name, or a dotted path as express-jwt allows (`'auth.payload'`). */
function readRequestProperty(name = 'auth') {
  const path = typeof name === 'string' ? name.split('.') : []
  if (path.length === 0 || path.some((p) => p === '' || p === '__proto__' || p === 'constructor' || p === 'prototype')) {
    throw typeError('options.requestProperty must be a property name or a dotted path of them')
  }
  return path
}

/**
 * `(req, d) => void` for a `requestProperty` path: `req[path]` then reads the pass decision's
 * claims, so the payload is only parsed if the app reads it. Assigning replaces it with a plain
 * value (express-jwt's `req.auth` is a plain property).
 *
 * For a single name the accessor is one getter/setter pair made here, and the decision waits
 * under a symbol of this middleware: V8 shares one hidden class among the requests only while
 * an accessor property has the same functions every time. Fresh closures per request would
 * turn every request object into a slow dictionary-mode object (and the GC work with it).
 */
function claimsSetter(path) {
  if (path.length > 1) return (req, d) => setNestedClaims(req, path, d)
  const name = path[0]
  const pass = Symbol(`auth-shield.${name}`)
  const accessor = {
    get() {
      const d = this[pass]
      return d === undefined ? undefined : d.claims
    },
    set(value) {
      Object.defineProperty(this, name, { value, writable: true, configurable: true, enumerable: true })
    },
    configurable: true,
    enumerable: true,
  }
  return (req, d) => {
    req[pass] = d
    Object.defineProperty(req, name, accessor)
  }
}

/** A dotted `requestProperty` (`'auth.payload'`): the claims behind a getter on the last object. */
function setNestedClaims(req, path, d) {
  let target = req
  for (let i = 0; i < path.length - 1; i++) {
    const next = target[path[i]]
    target = next !== null && typeof next === 'object' ? next : (target[path[i]] = {})
  }
  defineClaims(target, path[path.length - 1], d)
}

/**
 * express-unless's `.unless(rules)`: the same middleware, skipped where `rules` match (the
 * shapes of the `unless` option). The returned middleware keeps `engine`, `stats` and `decision`.
 */
function unlessOf(middleware) {
  return function unless(rules) {
    const skip = compileSkip(rules, 'unless', middleware.decision.options.fence)
    const wrapped = function authShieldUnless(req, res, next) {
      if (skip === null) return middleware(req, res, next)
      let skipped
      try {
        skipped = skip(req, pathOf(urlOf(req)))
      } catch (err) {
        return next(refusal(err))
      }
      if (skipped === true) return next()
      if (skipped === false) return middleware(req, res, next)
      skipped.then((s) => (s ? next() : middleware(req, res, next))).catch((err) => next(refusal(err)))
    }
    wrapped.engine = middleware.engine
    wrapped.authenticator = middleware.authenticator
    wrapped.stats = middleware.stats
    Object.defineProperty(wrapped, 'decision', { value: middleware.decision })
    Object.defineProperty(wrapped, 'unless', { value: unlessOf(wrapped) })
    return wrapped
  }
}

/**
 * What reaches `next(err)` when the decision failed: always a real Error (the callbacks are
 * fenced already; this keeps a falsy value from ever meaning "continue").
 */
function refusal(err) {
  return callbackError('auth-shield', err)
}

/**
 * The route requirements (lib/http/route-requirements.js) as Express middleware, mounted after
 * authShield on a route: `app.get('/orders', requireScopes('read:orders'), handler)`.
 */
const requirements = routeRequirements(
  (requirement) =>
    function authShieldRequirement(req, res, next) {
      const pass = req[ROUTE_PASS]
      if (pass === undefined) return next(notAuthenticated(requirement.name))
      let d
      try {
        d = requirement.refusal(pass)
      } catch (err) {
        return next(refusal(err))
      }
      if (d === null) return next()
      pass.decision.routeRefusal(d, req, res, next)
    },
)

module.exports = authShield
module.exports.authShield = authShield
module.exports.default = authShield
module.exports.AuthShieldError = AuthShieldError
module.exports.UnauthorizedError = UnauthorizedError
module.exports.TooManyRequestsError = TooManyRequestsError
module.exports.ServiceUnavailableError = ServiceUnavailableError
// RFC 9728 protected-resource metadata: the document, its URL (the middleware's
// `resourceMetadata` option) and a route `handler` serving it (lib/http/resource-metadata.js).
module.exports.protectedResourceMetadata = require('../lib/http/resource-metadata').metadataFor('node')
// express-jwt's defaults and callback shapes on the same middleware (lib/http/express-jwt-compat.js).
// Named one by one: Node's static scan of CommonJS exports (for the .mjs entry) sees only these.
module.exports.requireScopes = requirements.requireScopes
module.exports.requireAnyScope = requirements.requireAnyScope
module.exports.requireClaims = requirements.requireClaims
module.exports.requireAuthentication = requirements.requireAuthentication
module.exports.expressjwt = expressJwtOn({ middlewareOf, urlOf, EXPRESS_OPTIONS })
