'use strict'
// The HTTP servers under load. Every variant answers the same small JSON body on success;
// the authenticated ones run the same six steps as the per-call section (express-jwt and
// passport-jwt verify, then the shared JS chain tail does tenant, rate limit and request id).

const http = require('node:http')
const { createChain, createChainTail, failure } = require('../lib/chain')
const { createSyncVerifiers, codeOf } = require('../lib/verifiers')
const { loadNative, loadExpressAdapter } = require('../lib/ours')
const { ISSUER, AUDIENCE } = require('../lib/fixtures')

function body(result) {
  return JSON.stringify({ ok: true, user: result.userId, tenant: result.tenantId ?? null, id: result.requestId })
}

const ANONYMOUS = { userId: 'anonymous', tenantId: null, requestId: '00000000-0000-4000-8000-000000000000' }

// One function `(authorization, tenantHeader, host) -> AuthResult` per non-Express-specific variant.
function createAuthFunction(auth, fx) {
  const limits = { rateLimitMax: fx.config.rateLimitMax, rateLimitRefill: fx.config.rateLimitRefill }
  if (auth === 'auth-shield') {
    const authenticator = new (loadNative().native.Authenticator)(fx.config)
    return (a, t, h) => authenticator.authenticate(a, t, h)
  }
  if (auth === 'fast-jwt') return createChain({ verify: createSyncVerifiers(fx).fastJwt, codeOf, ...limits })
  return undefined
}

function nodeServer(auth, fx) {
  const authenticate = createAuthFunction(auth, fx)
  return http.createServer((req, res) => {
    const result = authenticate
      ? authenticate(req.headers.authorization, req.headers['x-tenant-id'], req.headers.host)
      : ANONYMOUS
    if (authenticate && !result.authenticated) {
      res.writeHead(result.errorStatus, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: result.errorCode }))
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(body(result))
  })
}

function rejectWith(res, result) {
  res.status(result.errorStatus).json({ error: result.errorCode })
}

// Middleware that turns a verified payload (from express-jwt / passport-jwt) into the result.
function chainTailMiddleware(fx, payloadOf) {
  const completeChain = createChainTail(fx.config)
  return (req, res, next) => {
    const result = completeChain(payloadOf(req), req.headers['x-tenant-id'], req.headers.host)
    if (!result.authenticated) return rejectWith(res, result)
    req.auth = result
    next()
  }
}

function expressAuthMiddlewares(auth, fx) {
  const verifyOptions = { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE }
  switch (auth) {
    case 'none':
      return []
    case 'auth-shield': {
      const adapter = loadExpressAdapter()
      if (adapter.available) return [createAdapterMiddleware(adapter.module, fx)]
      const authenticate = createAuthFunction('auth-shield', fx)
      return [plainMiddleware(authenticate)]
    }
    // Separates the adapter's own cost (response headers, options) from the native call's.
    case 'auth-shield-direct':
      return [plainMiddleware(createAuthFunction('auth-shield', fx))]
    case 'fast-jwt':
      return [plainMiddleware(createAuthFunction('fast-jwt', fx))]
    case 'express-jwt-keyobject':
    case 'express-jwt-string': {
      const { expressjwt } = require('express-jwt')
      const secret = auth === 'express-jwt-string' ? fx.secret : fx.secretKeyObject
      const verify = expressjwt({ secret, ...verifyOptions })
      const onError = (err, req, res, next) => rejectWith(res, failure(codeOf(err), fx.config.rateLimitMax))
      return [verify, onError, chainTailMiddleware(fx, (req) => req.auth)]
    }
    case 'passport-jwt-keyobject': {
      const passport = require('passport')
      const { Strategy, ExtractJwt } = require('passport-jwt')
      passport.use(
        new Strategy(
          {
            jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
            secretOrKey: fx.secretKeyObject,
            ...verifyOptions,
          },
          (payload, done) => done(null, payload),
        ),
      )
      return [
        passport.initialize(),
        passport.authenticate('jwt', { session: false }),
        chainTailMiddleware(fx, (req) => req.user),
      ]
    }
    default:
      throw new Error(`unknown auth variant ${auth}`)
  }
}

function plainMiddleware(authenticate) {
  return (req, res, next) => {
    const result = authenticate(req.headers.authorization, req.headers['x-tenant-id'], req.headers.host)
    if (!result.authenticated) return rejectWith(res, result)
    req.auth = result
    next()
  }
}

// The project's own Express adapter, configured like the bare authenticator. The engine is
// pinned so that USE_RUST_AUTH=false in the environment cannot turn this row into the JS engine.
function createAdapterMiddleware(adapter, fx) {
  const factory = adapter.authShield || adapter.default || adapter
  if (typeof factory !== 'function') throw new Error('adapters/express.js exports no middleware factory')
  const middleware = factory(fx.config, { engine: 'native' })
  if (middleware.engine !== undefined && middleware.engine !== 'native') {
    throw new Error(`auth-shield/express runs the ${middleware.engine} engine, not the native one`)
  }
  return middleware
}

function expressServer(auth, fx) {
  const express = require('express')
  const app = express()
  app.disable('x-powered-by')
  app.get('/', ...expressAuthMiddlewares(auth, fx), (req, res) => {
    res.type('application/json').send(body(authResultOf(req)))
  })
  return http.createServer(app)
}

// Where each variant leaves the caller: the chains set `req.auth` (an AuthResult); the
// auth-shield Express adapter sets `req.user` ({ userId, … }), `req.tenantId` and `req.id`
// (and `req.auth`, the token's payload, parsed only if read: checked first so it stays unread).
function authResultOf(req) {
  if (req.id !== undefined && req.user && req.user.userId) return { userId: req.user.userId, tenantId: req.tenantId, requestId: req.id }
  if (req.auth) return req.auth
  return ANONYMOUS
}

// Fastify 5: no auth; the project's plugin (auth-shield/fastify, engine pinned to native: it also
// sets X-Request-Id and RateLimit-* headers); and a three-line onRequest hook around
// `authenticate`, the same comparison as Express's.
async function fastifyServer(auth, fx) {
  const fastify = require('fastify')
  let server
  const app = fastify({ serverFactory: (handler) => (server = http.createServer(handler)) })
  if (auth === 'auth-shield') {
    await app.register(require('../../adapters/fastify'), { config: fx.config, engine: 'native' })
    if (app.authShield.engine !== 'native') throw new Error(`auth-shield/fastify runs the ${app.authShield.engine} engine, not the native one`)
  } else if (auth === 'auth-shield-direct') {
    const authenticator = createAuthFunction('auth-shield', fx)
    app.decorateRequest('authResult', undefined)
    app.addHook('onRequest', (request, reply, done) => {
      const result = authenticator(request.headers.authorization, request.headers['x-tenant-id'], request.headers.host)
      if (!result.authenticated) return reply.code(result.errorStatus).send({ error: result.errorCode })
      request.authResult = result
      done()
    })
  } else if (auth !== 'none') throw new Error(`unknown Fastify auth variant ${auth}`)
  app.get('/', (request, reply) => {
    const result = request.authResult || (request.user && request.user.userId ? { userId: request.user.userId, tenantId: request.tenantId, requestId: request.requestId } : ANONYMOUS)
    reply.type('application/json').send(body(result))
  })
  await app.ready()
  return server
}

function createServer({ framework, auth }, fx) {
  if (framework === 'fastify') return fastifyServer(auth, fx)
  return framework === 'express' ? expressServer(auth, fx) : nodeServer(auth, fx)
}

module.exports = { createServer }
