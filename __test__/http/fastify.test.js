'use strict'

// A real Fastify 5 app on loopback: the plugin's onRequest hook, the fastify.authenticate
// decorator for per-route use, request.user / tenantId / tenantSource, failures, optional auth,
// the engine switch and shadow statistics.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const Fastify = require('fastify')
const authShield = require('../../adapters/fastify')
const { token } = require('../support/tokens')
const { get } = require('../support/http')
const { runAndListJsFiles, assertEngineNotLoaded } = require('../support/js-engine-loaded')

const NOW = 1_700_000_000
const SECRET = 'fastify-test-secret-0123456789abcdef'
const CONFIG = { accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 2, rateLimitRefillPerSec: 0.001 }
const bearer = (claims) => `Bearer ${token({ exp: NOW + 60, ...claims }, SECRET)}`
const echo = async (request) => ({
  user: request.user,
  tenantId: request.tenantId ?? null,
  tenantSource: request.tenantSource ?? null,
  requestId: request.requestId,
  // What the route really sees: JSON cannot tell undefined from a missing key.
  types: [typeof request.user, typeof request.tenantId, typeof request.tenantSource, typeof request.requestId],
})

async function start(register) {
  const app = Fastify()
  await register(app)
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, base: `http://127.0.0.1:${app.server.address().port}` }
}

describe('Fastify 5 plugin', () => {
  let hooked
  let routed
  let optional
  before(async () => {
    hooked = await start(async (app) => {
      await app.register(authShield, { config: CONFIG, skip: ['/health'], shadow: true })
      app.get('/me', echo)
      app.get('/health', async () => ({ ok: true }))
      // Registered in a child context: the hook still applies (the plugin is not encapsulated).
      await app.register(async (child) => child.get('/child/me', echo))
    })
    routed = await start(async (app) => {
      await app.register(authShield, { config: CONFIG, hook: false, engine: 'js', realm: 'api' })
      app.get('/open', async (request) => ({ user: request.user }))
      app.get('/private', { onRequest: [app.authenticate] }, echo)
    })
    optional = await start(async (app) => {
      await app.register(authShield, {
        config: CONFIG,
        credentialsRequired: false,
        onError: async (err, request, reply) => reply.code(err.status).send({ oops: err.code }),
      })
      app.get('/maybe', echo)
    })
  })
  after(() => Promise.all([hooked, routed, optional].map((s) => s.app.close())))

  it('authenticates every route through the onRequest hook', async () => {
    const r = await get(`${hooked.base}/me`, { authorization: bearer({ sub: 'f1', email: 'e@x', tenant_id: 'acme' }) })
    assert.equal(r.status, 200)
    assert.deepEqual(r.json.user, { userId: 'f1', email: 'e@x' })
    assert.equal(r.json.tenantId, 'acme')
    assert.equal(r.json.tenantSource, 'token')
    assert.equal(r.json.requestId, r.headers['x-request-id'])
    assert.equal(r.headers['ratelimit-limit'], '2')
    assert.equal(r.headers['ratelimit-remaining'], '1')
    const child = await get(`${hooked.base}/child/me`, { authorization: bearer({ sub: 'f2' }), host: 'globex.example.com' })
    assert.equal(child.status, 200)
    assert.equal(child.json.tenantId, 'globex')
    assert.equal(child.json.tenantSource, 'host')
    const header = await get(`${hooked.base}/me`, { authorization: bearer({ sub: 'f2' }), 'x-tenant-id': 'initech' })
    assert.deepEqual([header.json.tenantId, header.json.tenantSource], ['initech', 'header'])
    const none = await get(`${hooked.base}/me`, { authorization: bearer({ sub: 'f2b' }), host: 'localhost' })
    assert.deepEqual(none.json.types, ['object', 'undefined', 'undefined', 'string'])
    assert.equal((await get(`${hooked.base}/health`)).status, 200)
  })

  it('answers failures with the status, JSON body and headers of the Express middleware', async () => {
    const missing = await get(`${hooked.base}/me`)
    assert.equal(missing.status, 401)
    assert.deepEqual(missing.json, { error: 'No Authorization header provided', code: 'missing_authorization' })
    assert.equal(missing.headers['www-authenticate'], 'Bearer')
    assert.match(missing.headers['x-request-id'], /^[0-9a-f-]{36}$/)
    const expired = await get(`${hooked.base}/me`, { authorization: bearer({ sub: 'f3', exp: NOW - 1 }) })
    assert.equal(expired.headers['www-authenticate'], 'Bearer error="invalid_token", error_description="Token has expired"')
    const tenant = await get(`${hooked.base}/me`, { authorization: bearer({ sub: 'f3' }), 'x-tenant-id': 'a:b' })
    assert.equal(tenant.status, 400)
    assert.equal(tenant.json.code, 'invalid_tenant')
    const h = { authorization: bearer({ sub: 'f-busy' }) }
    await get(`${hooked.base}/me`, h)
    await get(`${hooked.base}/me`, h)
    const limited = await get(`${hooked.base}/me`, h)
    assert.equal(limited.status, 429)
    assert.equal(limited.json.code, 'rate_limited')
    assert.ok(Number(limited.headers['retry-after']) > 990)
    assert.equal(limited.headers['ratelimit-remaining'], '0')
  })

  it('counts shadow comparisons, reachable as fastify.authShield.stats()', async () => {
    const stats = hooked.app.authShield.stats()
    assert.equal(stats.engine, 'native')
    assert.equal(stats.shadow, true)
    assert.ok(stats.requests >= 8)
    assert.equal(stats.mismatches, 0)
  })

  it('protects only the routes that ask for fastify.authenticate when hook is false', async () => {
    assert.equal(routed.app.authShield.engine, 'js')
    const open = await get(`${routed.base}/open`)
    assert.equal(open.status, 200)
    assert.deepEqual(open.json, {})
    const denied = await get(`${routed.base}/private`)
    assert.equal(denied.status, 401)
    assert.equal(denied.headers['www-authenticate'], 'Bearer realm="api"')
    const allowed = await get(`${routed.base}/private`, { authorization: bearer({ sub: 'f4', role: 'admin' }) })
    assert.equal(allowed.status, 200)
    assert.deepEqual(allowed.json.user, { userId: 'f4', role: 'admin' })
  })

  it('lets anonymous requests through with credentialsRequired: false and hands errors to onError', async () => {
    const anonymous = await get(`${optional.base}/maybe`)
    assert.equal(anonymous.status, 200)
    // The settled anonymous value, the same in the Express middleware: undefined, as in an AuthResult.
    assert.deepEqual(anonymous.json.types, ['undefined', 'undefined', 'undefined', 'string'])
    assert.equal(anonymous.json.requestId, anonymous.headers['x-request-id'])
    assert.equal(anonymous.headers['www-authenticate'], undefined)
    const bad = await get(`${optional.base}/maybe`, { authorization: 'Bearer a.b.c' })
    assert.equal(bad.status, 401)
    assert.deepEqual(bad.json, { oops: 'malformed_token' })
    assert.equal(bad.headers['www-authenticate'], 'Bearer error="invalid_token", error_description="Malformed token"')
  })

  it('the plugin on the native engine never loads the JS engine', () => {
    const { value, loaded } = runAndListJsFiles(`
      const app = require('fastify')()
      app.register(require(${JSON.stringify(require.resolve('../../adapters/fastify'))}), { config: { accessSecret: ${JSON.stringify(SECRET)} } })
      app.ready().then(() => report(app.authShield.engine))`)
    assert.equal(value, 'native')
    assert.ok(loaded.includes('lib/http/decision.js'), loaded.join())
    assertEngineNotLoaded(loaded)
  })

  it('refuses an explicit engine that differs from the passed authenticator', async () => {
    const { Authenticator } = require('../../js')
    const app = Fastify()
    app.register(authShield, { authenticator: new Authenticator(CONFIG), engine: 'native' })
    await assert.rejects(app.ready(), { name: 'TypeError', message: /options\.engine 'native' asks for the native engine, but a js Authenticator/ })
    await app.close()
  })

  it('refuses to register without exactly one of config and authenticator', async () => {
    for (const opts of [{}, { config: CONFIG, authenticator: {} }, { config: CONFIG, hook: 'onSend' }, { config: CONFIG, credentialRequired: false }]) {
      const app = Fastify()
      app.register(authShield, opts)
      await assert.rejects(app.ready(), { name: 'TypeError' })
      await app.close()
    }
  })
})

describe('Express and Fastify give one answer', () => {
  const express = require('express')
  const http = require('node:http')
  const { listen } = require('../support/http')
  const expressAuth = require('../../adapters/express')
  const options = { credentialsRequired: false, skip: ['/health'], realm: 'api' }
  const config = { ...CONFIG, rateLimitMax: 3, baseDomain: 'example.com' }
  // What a route sees, the same function for both frameworks.
  const seen = (req, id) => ({
    user: req.user ?? null,
    tenantId: req.tenantId ?? null,
    tenantSource: req.tenantSource ?? null,
    id: id ?? null,
    types: [typeof req.user, typeof req.tenantId, typeof req.tenantSource],
  })
  let fastifyServer
  let expressServer
  before(async () => {
    fastifyServer = await start(async (app) => {
      await app.register(authShield, { config, ...options })
      app.get('/*', async (request) => seen(request, request.requestId))
    })
    const app = express()
    app.use(expressAuth(config, options), (req, res) => res.json(seen(req, req.requestId)))
    expressServer = await listen(http.createServer(app))
  })
  after(() => Promise.all([fastifyServer.app.close(), expressServer.close()]))

  it('answers every kind of request with the same status, body, headers and request values', async () => {
    const cases = [
      ['/me', {}],
      ['/health', {}],
      ['/me', { authorization: bearer({ sub: 'p1', email: 'e@x', tenant_id: 'acme' }) }],
      ['/me', { authorization: bearer({ sub: 'p2' }), 'x-tenant-id': 'globex' }],
      ['/me', { authorization: bearer({ sub: 'p3' }), host: 'initech.example.com' }],
      ['/me', { authorization: bearer({ sub: 'p4' }), host: 'localhost' }],
      ['/me', { authorization: bearer({ sub: 'p5', exp: NOW - 1 }) }],
      ['/me', { authorization: 'Basic dXNlcjpwYXNz' }],
      ['/me', { authorization: 'Bearer a b' }],
      ['/me', { authorization: bearer({ sub: 'p6' }), 'x-tenant-id': 'a:b' }],
      ...Array.from({ length: 4 }, () => ['/me', { authorization: bearer({ sub: 'p-busy' }) }]),
    ]
    const comparable = (r) => {
      const { date, connection, 'keep-alive': keepAlive, 'x-request-id': id, etag, 'x-powered-by': by, 'content-length': length, ...headers } = r.headers
      // The request id is fresh per request: it must be present and be what the route saw.
      if (r.json && 'id' in r.json) assert.equal(r.json.id, id ?? null)
      const { id: _, ...json } = r.json || {}
      if (headers['retry-after']) headers['retry-after'] = Number(headers['retry-after']) > 990
      if (headers['ratelimit-reset'] && r.status === 429) headers['ratelimit-reset'] = Number(headers['ratelimit-reset']) > 990
      headers['content-type'] = headers['content-type'].replace(/; ?charset=utf-8/i, '')
      return { status: r.status, json, headers, hasId: id !== undefined }
    }
    for (const [path, headers] of cases) {
      const viaFastify = await get(fastifyServer.base + path, headers)
      const viaExpress = await get(expressServer.base + path, headers)
      assert.deepEqual(comparable(viaFastify), comparable(viaExpress), `${path} ${JSON.stringify(headers)}`)
    }
  })
})
