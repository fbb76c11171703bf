'use strict'

// Test support: the same protected route behind each adapter on a real loopback server, so a
// test sends one request to all of them and compares the answers. A route answers 200 with
// what the adapter left on the request: `{ user, tenantId, tenantSource, requestId, claims }`.

const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const Koa = require('koa')
const express = require('express')
const assert = require('node:assert/strict')
const { listen, get } = require('./http')
const { token } = require('./tokens')

/**
 * The config, tokens and bearer headers the adapter tests share: a limit of 3 that refills in
 * 1000 s (the 4th request of an identity is a 429), tenants by subdomain of example.com.
 */
function adapterFixtures(secret) {
  const now = Math.floor(Date.now() / 1000)
  const jwt = (claims, key = secret) => token({ exp: now + 600, ...claims }, key)
  return {
    NOW: now,
    CONFIG: { accessSecret: secret, rateLimitMax: 3, rateLimitRefill: 0.001, baseDomain: 'example.com' },
    jwt,
    bearer: (claims, key) => ({ authorization: `Bearer ${jwt(claims, key)}` }),
  }
}

/**
 * Callbacks that fail in each way the fence refuses (lib/http/callback-fence.js): [label, options].
 * Run with a small callbackTimeoutMs, so the never-settling row ends quickly.
 */
const FAILING_CALLBACKS = [
  ['getToken rejecting with undefined', { getToken: () => Promise.reject(undefined) }],
  [
    'getToken throwing null',
    {
      getToken: () => {
        throw null
      },
    },
  ],
  ['isRevoked rejecting with undefined', { isRevoked: () => Promise.reject(undefined) }],
  ['isRevoked answering undefined', { isRevoked: () => undefined }],
  ['isRevoked never settling', { isRevoked: () => new Promise(() => {}) }],
  ['a skip predicate rejecting with false', { skip: () => Promise.reject(false) }],
]

/** What a protected route sees, in JSON (null for undefined). */
function seen({ user, tenantId, tenantSource, requestId, claims }) {
  const n = (v) => (v === undefined ? null : v)
  return { user: n(user), tenantId: n(tenantId), tenantSource: n(tenantSource), requestId: n(requestId), claims: n(claims) }
}

/** An Express app: `middleware` in front of the echo route. */
function expressServer(middleware) {
  const app = express()
  app.use(middleware, (req, res) => res.json(seen({ ...req, claims: req.auth })))
  // Failures handed on (errors: 'next', a callback that threw): status and code, as JSON.
  app.use((err, req, res, next) => res.status(err.status || 500).json({ thrown: err.code ?? null, name: err.name }))
  return listen(http.createServer(app))
}

/**
 * A Koa app: `middleware` in front of the echo route. An outer middleware stands for the app's
 * error handler (what `errors: 'throw'` and a failing callback reach): it answers the error's
 * status with its code, name and headers, and records the error in `errors`.
 */
function koaServer(middleware, { errors = [], handleErrors = true } = {}) {
  const app = new Koa()
  app.silent = true
  if (handleErrors) {
    app.use(async (ctx, next) => {
      try {
        await next()
      } catch (err) {
        errors.push(err)
        ctx.status = err.status || 500
        if (err.headers) ctx.set(err.headers)
        ctx.body = { thrown: err.code ?? null, name: err.name }
      }
    })
  }
  app.use(middleware)
  app.use((ctx) => {
    ctx.body = seen({ ...ctx.state, claims: ctx.state.auth })
  })
  return listen(http.createServer(app.callback()))
}

/**
 * A node:http server that turns each request into a Fetch `Request`, gives it to `handler`
 * (which returns a `Response`, or a Promise of one) and writes that Response back. A handler
 * that throws or rejects gives 500 `{ thrown, name }`; the error is recorded in `errors`.
 */
function fetchServer(handler, { errors = [] } = {}) {
  const server = http.createServer(async (req, res) => {
    let response
    try {
      const headers = new Headers()
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1])
      const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers })
      response = await handler(request)
    } catch (err) {
      errors.push(err)
      response = Response.json({ thrown: err.code ?? null, name: err.name }, { status: 500 })
    }
    res.statusCode = response.status
    for (const [name, value] of response.headers) res.setHeader(name, value)
    res.end(Buffer.from(await response.arrayBuffer()))
  })
  return listen(server)
}

/** The Fetch route handler for `verifyRequest`: the refusal's Response, or the echo route. */
function fetchRoute(verifyRequest) {
  return async (request) => {
    const auth = await verifyRequest(request)
    if (!auth.ok) return auth.response
    return Response.json(seen(auth), { headers: auth.headers })
  }
}

// The response headers every adapter's answer is compared on (the framework adds its own:
// Date, Connection, X-Powered-By, Content-Length…).
const AUTH_HEADERS = ['content-type', 'www-authenticate', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit', 'ratelimit-policy']

/** Status, body and the auth headers of an answer, with the per-request id replaced by its shape. */
function comparable(res) {
  const headers = {}
  for (const name of AUTH_HEADERS) if (res.headers[name] !== undefined) headers[name] = res.headers[name]
  headers['x-request-id'] = /^[0-9a-f-]{36}$/.test(res.headers['x-request-id'] || '') ? '<uuid>' : res.headers['x-request-id']
  return { status: res.status, body: res.body, headers }
}

/**
 * Sends one request with `headers` to `server` (closed afterwards) and checks that a fenced
 * callback refused it: a 5xx, and one real Error with an ERR_AUTH_SHIELD_CALLBACK… code in
 * `errors` (what the app's error handling received).
 */
async function assertFenceRefused(server, headers, errors) {
  try {
    const r = await get(`${server.base}/x`, headers)
    assert.ok(r.status >= 500, `status ${r.status}`)
    assert.equal(errors.length, 1)
    assert.ok(errors[0] instanceof Error)
    assert.match(errors[0].code, /^ERR_AUTH_SHIELD_CALLBACK/)
  } finally {
    await server.close()
  }
}

/**
 * Spends the 3 requests of an identity's bucket (adapterFixtures' config) at `url` and checks
 * the 4th: 429 `rate_limited`, Retry-After about 1000 s, RateLimit-Remaining 0. Returns it.
 */
async function assertEmptyBucket(url, headers) {
  for (let i = 0; i < 3; i++) assert.equal((await get(url, headers)).status, 200)
  const r = await get(url, headers)
  assert.equal(r.status, 429)
  assert.deepEqual(r.json, { error: 'Too many requests', code: 'rate_limited' })
  const retry = Number(r.headers['retry-after'])
  assert.ok(retry > 990 && retry <= 1000, `Retry-After ${retry}`)
  assert.equal(r.headers['ratelimit-remaining'], '0')
  return r
}

/** The first js block after `### <heading>` in docs/middleware.md: the example the test runs. */
function docsExample(heading) {
  const text = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'middleware.md'), 'utf8')
  const start = text.indexOf(`### ${heading}\n`)
  if (start < 0) throw new Error(`docs/middleware.md has no section ${heading}`)
  const block = /```(?:js|ts)\n([\s\S]*?)^```$/m.exec(text.slice(start))
  return block[1]
}

/** A Fastify app with the plugin (`options`) in front of GET /orders, answering `{ user }`. */
async function fastifyOrdersServer(options) {
  const app = require('fastify')()
  await app.register(require('../../adapters/fastify'), options)
  app.get('/orders', async (req) => ({ user: req.user }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { base: `http://127.0.0.1:${app.server.address().port}`, close: () => app.close() }
}

/** `[name, start(config, options)]` of each adapter in front of the echo route (the DPoP tests). */
const ADAPTER_STARTS = [
  ['express', (config, options) => expressServer(require('../../adapters/express')(config, options))],
  ['fastify', (config, options) => fastifyOrdersServer({ config, ...options })],
  ['koa', (config, options) => koaServer(require('../../adapters/koa')(config, options))],
  ['fetch', (config, options) => fetchServer(fetchRoute(require('../../adapters/fetch').createVerifier(config, options)))],
  ['hono', (config, options) => honoServer(require('../../adapters/hono')(config, options))],
]

/**
 * A Hono app (the real framework, served on loopback by fetchServer): `middleware` on every
 * path in front of the echo route, which reads what the middleware set on the context.
 */
function honoServer(middleware, { errors = [] } = {}) {
  const { Hono } = require('hono')
  const app = new Hono()
  app.onError((err, c) => {
    errors.push(err)
    return c.json({ thrown: err.code ?? null, name: err.name }, err.status || 500)
  })
  app.use('*', middleware)
  app.all('*', (c) => c.json(seen({ user: c.get('user'), tenantId: c.get('tenantId'), tenantSource: c.get('tenantSource'), requestId: c.get('requestId'), claims: c.get('claims') })))
  return fetchServer((request) => app.fetch(request))
}

module.exports = { ADAPTER_STARTS, assertEmptyBucket, assertFenceRefused, docsExample, adapterFixtures, FAILING_CALLBACKS, expressServer, koaServer, fetchServer, fetchRoute, honoServer, comparable, seen }
