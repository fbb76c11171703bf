'use strict'

// `require('auth-shield/express')`: the whole auth chain as one Express middleware (Express 4
// and 5; it only uses Node's own request/response API). One engine call per request; what to
// do with the request is decided in js/http.js, shared with the Fastify plugin.
//
//   const authShield = require('auth-shield/express')
//   app.use('/api', authShield({ accessSecret: process.env.JWT_SECRET }))

const { AuthDecision, isPending, pathOf, AuthShieldError } = require('./js/http')

/**
 * Middleware for `configOrAuthenticator` (an authenticator config, or an Authenticator of
 * either engine). On success sets `req.user` ({ userId, email, role }), `req.tenantId`,
 * `req.tenantSource` and `req.requestId` (also as `req.id`, Express's conventional name); an
 * anonymous request (credentialsRequired: false) gets them `undefined` (and the request id); on failure answers `{ error, code }` with the result's status, or
 * calls `onError`. Skipped paths are left untouched.
 */
function authShield(configOrAuthenticator, options) {
  const decision = new AuthDecision(configOrAuthenticator, options)
  const onError = decision.options.onError

  function authShieldMiddleware(req, res, next) {
    let d
    try {
      d = decision.decide(req, pathOf(req.originalUrl || req.url))
    } catch (err) {
      return next(err)
    }
    if (isPending(d)) return d.then((d) => apply(d, req, res, next)).catch(next)
    apply(d, req, res, next)
  }

  function apply(d, req, res, next) {
    if (d.action === 'skip') return next()
    req.requestId = req.id = d.requestId
    for (const [name, value] of d.headers) res.setHeader(name, value)
    if (d.action === 'pass') {
      Object.assign(req, d.identity)
      return next()
    }
    if (onError !== undefined) return onError(new AuthShieldError(d.result), req, res, next)
    res.statusCode = d.status
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    res.setHeader('Content-Length', Buffer.byteLength(d.body))
    res.end(d.body)
  }

  authShieldMiddleware.engine = decision.engine.name
  authShieldMiddleware.authenticator = decision.engine.authenticator
  authShieldMiddleware.stats = decision.engine.stats
  // Internal: where adapter options (a JWKS source, a shared store) register their recoveries.
  Object.defineProperty(authShieldMiddleware, 'decision', { value: decision })
  return authShieldMiddleware
}

module.exports = authShield
module.exports.authShield = authShield
module.exports.default = authShield
module.exports.AuthShieldError = AuthShieldError
