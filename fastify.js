'use strict'

// `require('auth-shield/fastify')`: a Fastify 5 plugin with the same chain and answers as the
// Express middleware. It adds an onRequest hook (unless `hook: false`) and always a
// `fastify.authenticate` decorator for per-route use, and decorates `request.user`,
// `request.tenantId` and `request.requestId`.
//
//   fastify.register(require('auth-shield/fastify'), { config: { accessSecret: process.env.JWT_SECRET } })

const {
  readOptions,
  engineFor,
  pathOf,
  authorizationOf,
  headerValue,
  responseHeaders,
  errorBody,
  AuthShieldError,
} = require('./js/http')
const { typeError } = require('./js/errors')

// Options Fastify itself reads from `register(plugin, opts)`.
const FASTIFY_OPTIONS = new Set(['prefix', 'logLevel', 'logSerializers'])
const PLUGIN_OPTIONS = new Set(['config', 'authenticator', 'hook', ...FASTIFY_OPTIONS])

async function authShieldPlugin(fastify, pluginOptions) {
  const { config, authenticator, hook = 'onRequest', ...rest } = pluginOptions || {}
  if ((config === undefined) === (authenticator === undefined)) {
    throw typeError('auth-shield/fastify needs exactly one of options.config or options.authenticator')
  }
  if (hook !== false && hook !== 'onRequest' && hook !== 'preHandler') {
    throw typeError("options.hook must be 'onRequest', 'preHandler' or false")
  }
  const opts = readOptions(rest, PLUGIN_OPTIONS)
  const engine = engineFor(config !== undefined ? config : authenticator, rest)
  const refill = engine.authenticator.rateLimitRefill

  fastify.decorateRequest('user', null)
  fastify.decorateRequest('tenantId', null)
  fastify.decorateRequest('requestId', null)
  fastify.decorate('authShield', { engine: engine.name, authenticator: engine.authenticator, stats: engine.stats })

  async function authenticate(request, reply) {
    if (opts.skip !== null && opts.skip(request, pathOf(request.url))) return
    const authorization = authorizationOf(request, opts.getToken)
    const headers = request.headers
    const result = engine.authenticate(authorization, headerValue(headers['x-tenant-id']), headerValue(headers.host))
    request.requestId = result.requestId
    for (const [name, value] of responseHeaders(result, authorization, refill, opts.realm)) reply.header(name, value)
    if (result.authenticated) {
      request.user = { userId: result.userId, email: result.email, role: result.role }
      request.tenantId = result.tenantId
      return
    }
    if (!opts.credentialsRequired && result.errorCode === 'missing_authorization') {
      reply.removeHeader('WWW-Authenticate')
      return
    }
    if (opts.onError !== undefined) return opts.onError(new AuthShieldError(result), request, reply)
    reply.code(result.errorStatus).type('application/json; charset=utf-8')
    return reply.send(errorBody(result))
  }

  fastify.decorate('authenticate', authenticate)
  if (hook !== false) fastify.addHook(hook, authenticate)
}

// What fastify-plugin would set: the hook and decorators reach the routes of the app that
// registered the plugin, not only its own encapsulated context.
authShieldPlugin[Symbol.for('skip-override')] = true
authShieldPlugin[Symbol.for('fastify.display-name')] = 'auth-shield'
authShieldPlugin[Symbol.for('plugin-meta')] = { name: 'auth-shield', fastify: '5.x' }

module.exports = authShieldPlugin
module.exports.authShield = authShieldPlugin
module.exports.default = authShieldPlugin
module.exports.AuthShieldError = AuthShieldError
