'use strict'

// Wires the service together: database, authenticator, helpers, routes. `startService` is what
// server.js runs in each process, and what the tests start on port 0.

const express = require('express')
const { OtpStore } = require('auth-shield')
const authShield = require('auth-shield/express')
const { prometheusHandler } = require('auth-shield/prometheus')
const { connectStore } = require('./shared-store')
const { openDatabase } = require('./database')
const { createPasswords } = require('./passwords')
const { jsonBody } = require('./validation')
const { errorHandler, notFound } = require('./errors')
const { currentUser } = require('./current-user')
const { requestId } = require('./request-id')
const { authRoutes } = require('./routes/auth')
const { keyRoutes } = require('./routes/keys')
const { otpRoutes } = require('./routes/otp')
const { logoutRoutes } = require('./routes/logout')
const { createThrottles } = require('./throttle')
const { tokenEndpointProofs } = require('./dpop-proof')

function me(req, res) {
  const user = req.account
  res.json({
    userId: String(user.id),
    userName: user.userName,
    role: user.role,
    tenantId: req.tenantId ?? null,
    requestId: req.requestId,
    stepUpAt: user.stepUpAt,
  })
}

function createApp({ config, db, authenticate, otpStore, passwords, log, throttles = createThrottles(), store = null }) {
  const app = express()
  app.disable('x-powered-by')
  // Tokens are signed and checked by the middleware's own authenticator: one set of secrets.
  const authenticator = authenticate.authenticator
  const signedIn = [authenticate, currentUser(db)]
  // DPoP (docs/sender-constrained.md): a route that takes DPoP-bound tokens only, over the same
  // authenticator (one replay cache, one rate limit). Proofs name config.publicOrigin, the URL
  // clients address, never the Host header.
  const dpopOnly = authShield(authenticator, { dpopOrigin: config.publicOrigin, dpopMode: 'required' })
  const body = jsonBody(config.bodyLimit)

  // Counters for Prometheus (docs/observability.md): refusals by reason, rate limiting, the
  // shared store's outages, the auth call's duration. Serve it where only the scraper reaches
  // (an internal port or a network policy) in production.
  // The call-duration histogram costs a clock read per call: the example pays it for its p99.
  authenticator.setDurationMetrics(true)
  app.get('/metrics', prometheusHandler({ authenticators: { api: authenticator }, stores: store === null ? {} : { shared: store } }))
  app.get('/health', requestId, (req, res) => {
    res.json({ status: 'ok', database: db.ping() ? 'ok' : 'error', engine: authenticate.engine, pid: process.pid })
  })
  for (const [path, handlers] of logoutRoutes({ authenticator, signedIn, jsonBody: body })) app.post(path, ...handlers)
  // The public keys of asymmetric access tokens (TOKEN_SIGNING_ALG), for other services to
  // verify them with (auth-shield/jwks); `{ "keys": [] }` with HS256.
  app.get('/.well-known/jwks.json', requestId, (req, res) => {
    res.set('Cache-Control', 'public, max-age=300').json(authenticator.jwks())
  })
  // A DPoP header at the token endpoints asks for a token bound to its key (RFC 9449 §5).
  const dpopProof = tokenEndpointProofs(config.publicOrigin)
  app.use('/api/auth', requestId, authRoutes({ db, authenticator, passwords, jsonBody: body, throttles, dpopProof }))
  app.get('/api/me', signedIn, me)
  app.get('/api/dpop/me', dpopOnly, currentUser(db), me)
  app.use('/api', keyRoutes({ db, secret: config.apiKeySecret, signedIn, jsonBody: body }))
  app.use('/api/otp', otpRoutes({ db, otpStore, ttlSec: config.otp.ttlSec, signedIn, jsonBody: body, log, throttles }))
  app.use(requestId, notFound)
  app.use(errorHandler(log))
  return app
}

/**
 * Opens the database, builds the authenticator and helpers, and listens on config.host:port.
 * Resolves to `{ server, url, close }` once listening.
 */
async function startService(config, log) {
  // One engine call per request: bearer token, JWT, tenant, rate limit, request id. Native
  // unless USE_RUST_AUTH=false, which switches to auth-shield's pure-JS engine.
  // REDIS_URL: limits shared by every worker through Redis (auth-shield/redis).
  const shared = config.redisUrl === null ? null : await connectStore(config.redisUrl, log)
  // DPoP-bound tokens are taken with a proof on every route ('allowed'); /api/dpop/me takes
  // nothing else.
  const dpop = { dpopOrigin: config.publicOrigin }
  const authenticate = authShield(config.auth, shared === null ? dpop : { ...dpop, store: shared.store })
  const otpStore = new OtpStore({ ttlSec: config.otp.ttlSec, maxAttempts: config.otp.maxAttempts })
  const passwords = await createPasswords(config.argon2)
  const db = openDatabase(config.dataDir)
  const app = createApp({ config, db, authenticate, otpStore, passwords, log, store: shared === null ? null : shared.store })

  const prune = setInterval(() => db.refreshTokens.pruneExpired(), 3600e3).unref()
  db.refreshTokens.pruneExpired()

  const server = app.listen(config.port, config.host)
  await new Promise((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  }).catch(async (err) => {
    clearInterval(prune)
    db.close()
    if (shared !== null) await shared.close()
    throw err
  })
  const { address, port } = server.address()
  const host = address.includes(':') ? `[${address}]` : address
  let closing
  const close = () =>
    (closing ??= new Promise((resolve) => {
      clearInterval(prune)
      server.close(() => {
        db.close()
        if (shared === null) return resolve()
        shared.close().then(resolve, resolve)
      })
      server.closeIdleConnections?.()
    }))
  return { server, url: `http://${host}:${port}`, close, store: shared === null ? null : shared.store }
}

module.exports = { createApp, startService }
