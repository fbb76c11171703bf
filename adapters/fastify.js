'use strict'

// `require('auth-shield/fastify')`: a Fastify 5 plugin with the same chain and answers as the
// Express middleware (the decision is lib/http/decision.js's, shared by both). It adds an onRequest hook
// (unless `hook: false`) and always a `fastify.authenticate` decorator for per-route use, and
// decorates `request.user`, `request.auth` (the verified payload), `request.tenantId`,
// `request.tenantSource` and `request.requestId`.
//
//   fastify.register(require('auth-shield/fastify'), { config: { accessSecret: process.env.JWT_SECRET } })

const { AuthDecision, isPending, pathOf, AuthShieldError, UnauthorizedError } = require('../lib/http/decision')
const { typeError } = require('../base/error')
const { ROUTE_PASS, routeRequirements, notAuthenticated } = require('../lib/http/route-requirements')

// Options Fastify itself reads from `register(plugin, opts)`.
const FASTIFY_OPTIONS = new Set(['prefix', 'logLevel', 'logSerializers'])
const PLUGIN_OPTIONS = new Set(['config', 'authenticator', 'hook', 'formatUser', ...FASTIFY_OPTIONS])

// Where the verified payload of a request is kept until `request.auth` is read.
const PASS = Symbol('auth-shield.pass')

async function authShieldPlugin(fastify, pluginOptions) {
  let { config, authenticator, hook = 'onRequest', formatUser, ...rest } = pluginOptions || {}
  // @fastify/jwt and express-jwt users name the key `secret` among the other options: the
  // decision splits that single object into config and options (lib/http/express-jwt-options.js).
  if (config === undefined && authenticator === undefined && rest.secret !== undefined) {
    config = rest
    rest = {}
  }
  if ((config === undefined) === (authenticator === undefined)) {
    throw typeError('auth-shield/fastify needs exactly one of options.config or options.authenticator')
  }
  if (hook !== false && hook !== 'onRequest' && hook !== 'preHandler') {
    throw typeError("options.hook must be 'onRequest', 'preHandler' or false")
  }
  if (formatUser !== undefined && typeof formatUser !== 'function') throw typeError('options.formatUser must be a function')
  // A route requirement's refusal is answered as the hook answers its own (`refuse`, hoisted:
  // it reads the constants below only when a request comes).
  const decision = new AuthDecision(config !== undefined ? config : authenticator, rest, PLUGIN_OPTIONS, undefined, { routeRefusal: refuse })
  const { engine } = decision
  // onError comes fenced (lib/http/callback-fence.js), formatUser is fenced here: what they throw or
  // reject with reaches Fastify's error handling as a real Error.
  const { onError, errors, fence } = decision.options
  const shapeUser = formatUser === undefined ? undefined : fence.wrap('options.formatUser', formatUser)

  // undefined until a request passes: the same values the Express middleware leaves.
  for (const name of ['user', 'tenantId', 'tenantSource', 'requestId']) fastify.decorateRequest(name, undefined)
  fastify.decorateRequest(PASS, undefined)
  fastify.decorateRequest(ROUTE_PASS, undefined)
  // The payload is parsed on first read, from the pass decision the request keeps.
  fastify.decorateRequest('auth', {
    getter() {
      const pass = this[PASS]
      return pass === undefined ? undefined : pass.claims
    },
  })
  // `decision` (not enumerable) is internal: where adapter options register their recoveries.
  const info = { engine: engine.name, authenticator: engine.authenticator, stats: engine.stats }
  fastify.decorate('authShield', Object.defineProperty(info, 'decision', { value: decision }))

  // With the tracing option, the decision's span attributes (lib/metrics/tracing.js).
  const decide = decision.traced((request, path) => decision.decide(request, path))

  async function authenticate(request, reply) {
    return settle(decide(request, pathOf(request.url)), request, reply)
  }

  // The hook. The common case, a decision taken at once that passes (without formatUser) or
  // skips, goes on with done() there and then: an async hook costs Fastify a Promise and a
  // microtask per request. Anything else is settled as `authenticate` does, and Fastify waits
  // for that Promise (done is never called then).
  function authenticateHook(request, reply, done) {
    const d = decide(request, pathOf(request.url))
    if (shapeUser === undefined && !isPending(d)) {
      if (d.action === 'skip') return done()
      if (d.action === 'pass') {
        setPass(d, request, reply)
        return done()
      }
    }
    return settle(d, request, reply)
  }

  function setPass(d, request, reply) {
    request.requestId = d.requestId
    setHeaders(d, reply)
    const identity = d.identity
    request.user = identity.user
    request.tenantId = identity.tenantId
    request.tenantSource = identity.tenantSource
    if (d.authorization !== undefined) request[PASS] = d
    // For the route's requirements (requireScopes, …) in its preHandler.
    request[ROUTE_PASS] = d
  }

  async function settle(d, request, reply) {
    if (isPending(d)) d = await d
    if (d.action === 'skip') return
    if (d.action === 'pass') {
      setPass(d, request, reply)
      if (d.authorization !== undefined && shapeUser !== undefined) {
        const user = shapeUser(d.claims, request)
        request.user = user instanceof Promise ? await user : user
      }
      return
    }
    return refuse(d, request, reply)
  }

  // Also a route requirement's refusal: answered as the hook answers its own.
  async function refuse(d, request, reply) {
    request.requestId = d.requestId
    setHeaders(d, reply)
    if (errors === 'next' && !isDefaultErrorHandler(routeErrorHandler(request))) throw decision.unauthorizedError(d)
    // onError comes fenced; whatever it returns, a refused request goes no further: a handler
    // that replied nothing (a log-only one) leaves the reply to the plugin, and the hook returns
    // the reply, so Fastify stops there instead of running the route.
    if (onError !== undefined) {
      const answered = onError(new AuthShieldError(d.result), request, reply)
      if (answered instanceof Promise) await answered
      if (reply.sent) return reply
    }
    reply.code(d.status).type('application/json; charset=utf-8')
    return reply.send(d.body)
  }

  fastify.decorate('authenticate', authenticate)
  if (hook !== false) fastify.addHook(hook, authenticateHook)
}

function setHeaders(d, reply) {
  const headers = d.headers
  for (let i = 0; i < headers.length; i++) reply.header(headers[i][0], headers[i][1])
}

// Fastify keeps a route's error handler (fixed when the route's plugin loaded, or the route's
// own `errorHandler`) on its context, under a symbol it does not export: found by its
// description once. Without it, the instance's current handler is the best guess.
let routeContext

function routeErrorHandler(request) {
  if (routeContext === undefined) {
    routeContext = null
    for (let o = request; o !== null && routeContext === null; o = Object.getPrototypeOf(o)) {
      routeContext = Object.getOwnPropertySymbols(o).find((s) => s.description === 'fastify.context') ?? null
    }
  }
  const handler = routeContext === null ? undefined : request[routeContext] && request[routeContext].errorHandler
  return handler !== undefined && typeof handler.func === 'function' ? handler.func : request.server.errorHandler
}

/**
 * Fastify's own default handler (the one no `setErrorHandler` replaced) would answer its
 * `{ statusCode, code, error, message }` body; with it in place the plugin answers our
 * `{ error, code }` itself, so only an app's own handler sees the error.
 */
function isDefaultErrorHandler(handler) {
  return typeof handler === 'function' && handler.name === 'defaultErrorHandler'
}

// What fastify-plugin would set: the hook and decorators reach the routes of the app that
// registered the plugin, not only its own encapsulated context.
authShieldPlugin[Symbol.for('skip-override')] = true
authShieldPlugin[Symbol.for('fastify.display-name')] = 'auth-shield'
authShieldPlugin[Symbol.for('plugin-meta')] = { name: 'auth-shield', fastify: '5.x' }

/**
 * The route requirements (lib/http/route-requirements.js) as Fastify hooks, after the plugin's
 * authentication: `fastify.get('/orders', { preHandler: requireScopes('read:orders') }, handler)`.
 */
const requirements = routeRequirements(
  (requirement) =>
    async function authShieldRequirement(request, reply) {
      const pass = request[ROUTE_PASS]
      if (pass === undefined) throw notAuthenticated(requirement.name)
      const d = requirement.refusal(pass)
      if (d === null) return
      return pass.decision.routeRefusal(d, request, reply)
    },
)

module.exports = authShieldPlugin
module.exports.authShield = authShieldPlugin
module.exports.default = authShieldPlugin
module.exports.AuthShieldError = AuthShieldError
module.exports.UnauthorizedError = UnauthorizedError
module.exports.TooManyRequestsError = require('../lib/http/unauthorized-error').TooManyRequestsError
module.exports.ServiceUnavailableError = require('../lib/http/unauthorized-error').ServiceUnavailableError
// Named one by one: Node's static scan of CommonJS exports (for the .mjs entry) sees only these.
module.exports.requireScopes = requirements.requireScopes
module.exports.requireAnyScope = requirements.requireAnyScope
module.exports.requireClaims = requirements.requireClaims
module.exports.requireAuthentication = requirements.requireAuthentication
// RFC 9728 protected-resource metadata: the document, its URL (the middleware's
// `resourceMetadata` option) and a route `handler` serving it (lib/http/resource-metadata.js).
module.exports.protectedResourceMetadata = require('../lib/http/resource-metadata').metadataFor('fastify')
