'use strict'

// `require('auth-shield/express')`: the whole auth chain as one Express middleware (Express 4
// and 5; it only uses Node's own request/response API). One engine call per request.
//
//   const authShield = require('auth-shield/express')
//   app.use('/api', authShield({ accessSecret: process.env.JWT_SECRET }))

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

/**
 * Middleware for `configOrAuthenticator` (an authenticator config, or an Authenticator of
 * either engine). On success sets `req.user` ({ userId, email, role }), `req.tenantId` and
 * `req.id`; on failure answers `{ error, code }` with the result's status, or calls `onError`.
 */
function authShield(configOrAuthenticator, options) {
  const opts = readOptions(options)
  const engine = engineFor(configOrAuthenticator, options)
  const refill = engine.authenticator.rateLimitRefill

  function authShieldMiddleware(req, res, next) {
    if (opts.skip !== null && opts.skip(req, pathOf(req.originalUrl || req.url))) return next()
    let authorization
    let result
    try {
      authorization = authorizationOf(req, opts.getToken)
      result = engine.authenticate(authorization, headerValue(req.headers['x-tenant-id']), headerValue(req.headers.host))
    } catch (err) {
      return next(err)
    }
    req.id = result.requestId
    for (const [name, value] of responseHeaders(result, authorization, refill, opts.realm)) res.setHeader(name, value)
    if (result.authenticated) {
      req.user = { userId: result.userId, email: result.email, role: result.role }
      req.tenantId = result.tenantId
      return next()
    }
    // Optional auth: anonymous requests pass; a bad token is still refused.
    if (!opts.credentialsRequired && result.errorCode === 'missing_authorization') {
      res.removeHeader('WWW-Authenticate')
      req.user = undefined
      req.tenantId = undefined
      return next()
    }
    if (opts.onError !== undefined) return opts.onError(new AuthShieldError(result), req, res, next)
    const body = errorBody(result)
    res.statusCode = result.errorStatus
    res.setHeader('Content-Type', 'application/json; charset=utf-8')
    res.setHeader('Content-Length', Buffer.byteLength(body))
    res.end(body)
  }

  authShieldMiddleware.engine = engine.name
  authShieldMiddleware.authenticator = engine.authenticator
  authShieldMiddleware.stats = engine.stats
  return authShieldMiddleware
}

module.exports = authShield
module.exports.authShield = authShield
module.exports.default = authShield
module.exports.AuthShieldError = AuthShieldError
