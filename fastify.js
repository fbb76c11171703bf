'use strict'

// `require('auth-shield/fastify')`: a Fastify 5 plugin with the same chain and answers as the
// Express middleware (the decision is js/http.js's, shared by both). It adds an onRequest hook
// (unless `hook: false`) and always a `fastify.authenticate` decorator for per-route use, and
// decorates `request.user`, `request.tenantId`, `request.tenantSource` and `request.requestId`.
//
//   fastify.register(require('auth-shield/fastify'), { config: { accessSecret: process.env.JWT_SECRET } })

const { AuthDecision, isPending, pathOf, AuthShieldError } = require('./js/http')
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
  const decision = new AuthDecision(config !== undefined ? config : authenticator, rest, PLUGIN_OPTIONS)
  const { engine } = decision
  const onError = decision.options.onError

  // undefined until a request passes: the same values the Express middleware leaves.
  for (const name of ['user', 'tenantId', 'tenantSource', 'requestId']) fastify.decorateRequest(name, undefined)
  // `decision` (not enumerable) is internal: where adapter options register their recoveries.
  const info = { engine: engine.name, authenticator: engine.authenticator, stats: engine.stats }
  fastify.decorate('authShield', Object.defineProperty(info, 'decision', { value: decision }))

  async function authenticate(request, reply) {
    let d = decision.decide(request, pathOf(request.url))
    if (isPending(d)) d = await d
    if (d.action === 'skip') return
    request.requestId = d.requestId
    for (const [name, value] of d.headers) reply.header(name, value)
    if (d.action === 'pass') {
      Object.assign(request, d.identity)
      return
    }
    if (onError !== undefined) return onError(new AuthShieldError(d.result), request, reply)
    reply.code(d.status).type('application/json; charset=utf-8')
    return reply.send(d.body)
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
