'use strict'

// `require('auth-shield/hono')`: Hono middleware on the Fetch entry (adapters/fetch.js). Hono
// hands a middleware its context `c` and `next`: a refusal is answered with the Fetch entry's
// Response (status, `{ error, code }` body, WWW-Authenticate, Retry-After…); a pass puts the
// answer on the context (`c.get('auth')`, `c.get('user')`, `c.get('claims')`…) and, once the
// route has answered, sets the pass headers (X-Request-Id, RateLimit-*) on its response, so a
// Hono user copies nothing by hand.
//
//   import { Hono } from 'hono'
//   import { authShield, requireScopes } from 'auth-shield/hono'
//   const app = new Hono()
//   app.use('/api/*', authShield({ accessSecret: process.env.JWT_SECRET }))
//   app.get('/api/orders', requireScopes('read:orders'), (c) => c.json({ user: c.get('user') }))
//
// Hono is not a dependency: the middleware only calls `c.req.raw`, `c.set`, `c.res` and `next`.

const fetchEntry = require('./fetch')
const { typeError } = require('../base/error')

// What a pass puts on the context, under these names (c.get(name)).
const CONTEXT_KEYS = ['user', 'tenantId', 'tenantSource', 'requestId', 'claims']

/**
 * Middleware for `configOrAuthenticator` (an authenticator config, or an Authenticator of
 * either engine) and the shared middleware options of auth-shield/fetch (its callbacks
 * receive the `Request`), plus `clientCertificate(c)`: the TLS client certificate of the
 * request (DER bytes or an X509Certificate, or undefined) for certificate-bound tokens, which
 * Hono does not expose itself (on @hono/node-server: `c.env.incoming.socket`); give only a
 * certificate whose handshake your server verified.
 */
function authShield(configOrAuthenticator, options) {
  let certificateOf
  if (options !== null && typeof options === 'object' && options.clientCertificate !== undefined) {
    certificateOf = options.clientCertificate
    if (typeof certificateOf !== 'function') throw typeError('options.clientCertificate must be a function (c) => certificate')
    options = { ...options }
    delete options.clientCertificate
  }
  const verifyRequest = fetchEntry.createVerifier(configOrAuthenticator, options)

  async function authShieldMiddleware(c, next) {
    const auth = certificateOf === undefined ? await verifyRequest(c.req.raw) : await verifyRequest(c.req.raw, { clientCertificate: certificateOf(c) })
    // A refusal is answered here: the route never runs.
    if (!auth.ok) return auth.response
    if (auth.action === 'skip') return next()
    c.set('auth', auth)
    for (const key of CONTEXT_KEYS) c.set(key, auth[key])
    await next()
    setHeaders(c, auth.headers)
  }

  authShieldMiddleware.engine = verifyRequest.engine
  authShieldMiddleware.authenticator = verifyRequest.authenticator
  authShieldMiddleware.stats = verifyRequest.stats
  // Internal, as on auth-shield/fetch's verifyRequest: where adapter options register their recoveries.
  Object.defineProperty(authShieldMiddleware, 'decision', { value: verifyRequest.decision })
  return authShieldMiddleware
}

/**
 * Sets `[name, value]` pairs on the route's response. A Response whose headers are immutable
 * (one a `fetch()` returned, passed on as is) is copied first, so the headers are never lost.
 */
function setHeaders(c, pairs) {
  if (pairs.length === 0) return
  let res = c.res
  try {
    for (const [name, value] of pairs) res.headers.set(name, value)
  } catch {
    res = new Response(res.body, res)
    for (const [name, value] of pairs) res.headers.set(name, value)
    c.res = res
  }
}

/**
 * A route requirement of auth-shield/fetch as Hono middleware: it checks the context's `auth`
 * (set by authShield) and answers the refusal (403 insufficient_scope, 401
 * insufficient_user_authentication, with their challenges), or calls the route. Without
 * authShield in front it throws ERR_AUTH_SHIELD_NOT_AUTHENTICATED (Hono answers 500): a route
 * requirement never passes a request nobody authenticated.
 */
function asMiddleware(requirement) {
  return async function authShieldRequirement(c, next) {
    const auth = requirement(c.get('auth'))
    if (!auth.ok) {
      c.set('auth', auth)
      return auth.response
    }
    return next()
  }
}

const requireScopes = (...scopes) => asMiddleware(fetchEntry.requireScopes(...scopes))
const requireAnyScope = (...scopes) => asMiddleware(fetchEntry.requireAnyScope(...scopes))
const requireClaims = (claims) => asMiddleware(fetchEntry.requireClaims(claims))
const requireAuthentication = (options) => asMiddleware(fetchEntry.requireAuthentication(options))

module.exports = authShield
module.exports.authShield = authShield
module.exports.requireScopes = requireScopes
module.exports.requireAnyScope = requireAnyScope
module.exports.requireClaims = requireClaims
module.exports.requireAuthentication = requireAuthentication
module.exports.protectedResourceMetadata = fetchEntry.protectedResourceMetadata
module.exports.AuthShieldError = fetchEntry.AuthShieldError
module.exports.UnauthorizedError = fetchEntry.UnauthorizedError
module.exports.TooManyRequestsError = fetchEntry.TooManyRequestsError
module.exports.ServiceUnavailableError = fetchEntry.ServiceUnavailableError
