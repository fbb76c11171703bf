'use strict'

// `require('auth-shield/koa')`: the whole auth chain as one Koa middleware (Koa 2 and 3), with
// the decision and the answers of the Express middleware (lib/http/decision.js, shared by every adapter).
// Koa's conventions: what the request carries goes on `ctx.state`, failures the app wants to
// handle itself are thrown (`errors: 'throw'`), callbacks receive `ctx`.
//
//   const authShield = require('auth-shield/koa')
//   app.use(authShield({ accessSecret: process.env.JWT_SECRET }))

const { AuthDecision, isPending, pathOf, defineClaims, AuthShieldError, ERROR_CLASSES } = require('../lib/http/decision')
const { typeError } = require('../base/error')
const { compileSkip } = require('../lib/http/request-match')
const { ROUTE_PASS, routeRequirements, notAuthenticated } = require('../lib/http/route-requirements')

// Koa-only options: `key` is koa-jwt's name for where the verified payload goes on ctx.state.
const KOA_OPTIONS = new Set(['key'])
const RESERVED_KEYS = new Set(['tenantId', 'tenantSource', 'requestId', '__proto__', 'constructor', 'prototype'])

/**
 * Middleware for `configOrAuthenticator` (an authenticator config, or an Authenticator of
 * either engine). On success sets `ctx.state.user` ({ userId, email, role }),
 * `ctx.state.tenantId`, `ctx.state.tenantSource`, `ctx.state.requestId` and `ctx.state.auth`
 * (the verified payload, parsed when first read; the name is `key`); an anonymous request
 * (credentialsRequired: false) gets them `undefined` (and the request id). On failure it answers
 * `{ error, code }` with the result's status and headers, awaits `onError(err, ctx)`, or
 * (`errors: 'throw'`) throws an UnauthorizedError / TooManyRequestsError / ServiceUnavailableError
 * carrying `status`, `expose` and `headers` for the app's error handler (Koa's own applies them).
 * Skipped paths are left untouched.
 */
function authShield(configOrAuthenticator, options) {
  // A route requirement's refusal is answered as this middleware answers its own (`refuseRoute`,
  // hoisted: it reads the constants below only when a request comes).
  const decision = new AuthDecision(configOrAuthenticator, options, KOA_OPTIONS, 'koa', { routeRefusal: refuseRoute })
  const { onError, errors } = decision.options
  const key = readKey(decision.adapterOptions.key)
  // With the tracing option, the decision's span attributes (lib/metrics/tracing.js).
  const decide = decision.traced((ctx, path) => decision.decide(ctx, path))

  async function authShieldKoa(ctx, next) {
    // Callbacks (getToken, isRevoked, skip) get ctx; what they throw or reject with is already a
    // real Error (lib/http/callback-fence.js) and reaches Koa's error handling: next() is not called.
    let d = decide(ctx, pathOf(ctx.originalUrl))
    if (isPending(d)) d = await d
    if (d.action === 'skip') return next()
    const { state } = ctx
    state.requestId = d.requestId
    for (const [name, value] of d.headers) ctx.set(name, value)
    if (d.action === 'pass') {
      Object.assign(state, d.identity)
      if (d.authorization !== undefined) defineClaims(state, key, d)
      // For the route's requirements (requireScopes, …) after this middleware.
      state[ROUTE_PASS] = d
      return next()
    }
    return refuse(d, ctx)
  }

  // Also a route requirement's refusal: answered as this middleware answers its own.
  function refuse(d, ctx) {
    if (errors === 'throw') throw thrownError(decision.unauthorizedError(d))
    if (onError !== undefined) return callOnError(d, ctx)
    answer(d, ctx)
  }

  // onError comes fenced. A handler that set nothing (a log-only one) would leave Koa's 404:
  // the middleware answers the refusal itself then.
  async function callOnError(d, ctx) {
    const answered = onError(new AuthShieldError(d.result), ctx)
    if (answered instanceof Promise) await answered
    if (untouched(ctx)) answer(d, ctx)
  }
  function refuseRoute(d, ctx) {
    ctx.state.requestId = d.requestId
    for (const [name, value] of d.headers) ctx.set(name, value)
    return refuse(d, ctx)
  }

  return described(authShieldKoa, decision)
}

/** The middleware's own answer to a refusal: the result's status and `{ error, code }`. */
function answer(d, ctx) {
  ctx.status = d.status
  ctx.type = 'application/json; charset=utf-8'
  ctx.body = d.body
}

/** Nothing answered yet: Koa's default 404 without a body, the response not taken over. */
function untouched(ctx) {
  return ctx.body == null && ctx.status === 404 && ctx.respond !== false && !ctx.headerSent
}

/** `middleware` with the members every Koa middleware of ours has (`engine`, `stats`, `unless`…). */
function described(middleware, decision) {
  middleware.engine = decision.engine.name
  middleware.authenticator = decision.engine.authenticator
  middleware.stats = decision.engine.stats
  // Internal: where adapter options (a JWKS source, a shared store) register their recoveries.
  Object.defineProperty(middleware, 'decision', { value: decision })
  Object.defineProperty(middleware, 'unless', { value: (rules) => unlessOf(middleware, rules) })
  return middleware
}

/**
 * koa-unless's `.unless(rules)` (as koa-jwt users chain it): `middleware`, skipped where
 * `rules` match (the shapes of the `unless` option; a predicate gets ctx and is fenced).
 */
function unlessOf(middleware, rules) {
  const { decision } = middleware
  const skip = compileSkip(rules, 'unless', decision.options.fence)
  if (skip === null) return middleware
  return described(async function authShieldKoaUnless(ctx, next) {
    let skipped = skip(ctx, pathOf(ctx.originalUrl))
    if (skipped !== true && skipped !== false) skipped = await skipped
    return skipped ? next() : middleware(ctx, next)
  }, decision)
}

/** `key`: the ctx.state property for the verified payload (default 'auth'). */
function readKey(key = 'auth') {
  if (typeof key !== 'string' || key === '' || RESERVED_KEYS.has(key)) {
    throw typeError('options.key must be a property name other than tenantId, tenantSource and requestId')
  }
  return key
}

/**
 * What `ctx.throw(status, message)` would throw (http-errors' `expose`: a client error's message
 * may be shown), with the headers Koa's default handler sets again after clearing the response.
 */
function thrownError(err) {
  if (err.expose === undefined) err.expose = err.status < 500
  return err
}

/**
 * The route requirements (lib/http/route-requirements.js) as Koa middleware, after authShield:
 * `router.get('/orders', requireScopes('read:orders'), handler)`.
 */
const requirements = routeRequirements(
  (requirement) =>
    async function authShieldRequirement(ctx, next) {
      const pass = ctx.state === undefined ? undefined : ctx.state[ROUTE_PASS]
      if (pass === undefined) throw notAuthenticated(requirement.name)
      const d = requirement.refusal(pass)
      if (d === null) return next()
      return pass.decision.routeRefusal(d, ctx)
    },
)

module.exports = authShield
module.exports.authShield = authShield
module.exports.default = authShield
Object.assign(module.exports, ERROR_CLASSES, requirements)
// RFC 9728 protected-resource metadata: the document, its URL (the middleware's
// `resourceMetadata` option) and a route `handler` serving it (lib/http/resource-metadata.js).
module.exports.protectedResourceMetadata = require('../lib/http/resource-metadata').metadataFor('koa')
