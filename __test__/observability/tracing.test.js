'use strict'

// The `tracing` middleware option (lib/metrics/tracing.js, docs/observability.md#tracing) against
// the real OpenTelemetry tracing SDK (@opentelemetry/sdk-trace with an in-memory exporter) and
// context manager (AsyncLocalStorage), on real Express, Fastify, Koa and Fetch servers on
// loopback, in both engines. Each request is handled inside an active `http` span, as the HTTP
// instrumentation of an application makes one; the test reads that span's attributes back.

const test = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const Koa = require('koa')
const Fastify = require('fastify')
const { trace, context } = require('@opentelemetry/api')
const { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace')
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks')
const expressAdapter = require('../../adapters/express')
const koaAdapter = require('../../adapters/koa')
const fastifyAdapter = require('../../adapters/fastify')
const { createVerifier } = require('../../adapters/fetch')
const { createRedisStore } = require('../../lib/store')
const { listen, get } = require('../support/http')
const { adapterFixtures } = require('../support/adapter-servers')
const { redisSkip, startRedis } = require('../support/redis-server')
const { connectClient } = require('../support/redis-clients')

const SECRET = 'tracing-test-access-secret-0123456789abcdef'
const { CONFIG, NOW, bearer } = adapterFixtures(SECRET)

const contextManager = new AsyncLocalStorageContextManager().enable()
context.setGlobalContextManager(contextManager)
const exporter = new InMemorySpanExporter()
const provider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
trace.setGlobalTracerProvider(provider)
const tracer = trace.getTracer('tracing-test')

const AUTH_ATTRIBUTES = ['auth_shield.authentication.result', 'error.type', 'auth_shield.rate_limiting.result', 'auth_shield.store.fallback']

let nextId = 0

/** Runs `handle` inside an active `http` span tagged with the request's x-test-id, ended after the answer. */
function inSpan(req, res, handle) {
  tracer.startActiveSpan('http', { attributes: { 'test.id': String(req.headers['x-test-id']) } }, (span) => {
    res.on('close', () => span.end())
    handle()
  })
}

const ADAPTERS = {
  async express(config, options) {
    const app = express()
    app.use(expressAdapter(config, options), (req, res) => res.json({ ok: true }))
    app.use((err, req, res, next) => res.status(err.status || 500).json({ thrown: err.code ?? null }))
    return listen(http.createServer((req, res) => inSpan(req, res, () => app(req, res))))
  },
  async koa(config, options) {
    const app = new Koa()
    app.silent = true
    app.use(koaAdapter(config, options))
    app.use((ctx) => {
      ctx.body = { ok: true }
    })
    const handler = app.callback()
    return listen(http.createServer((req, res) => inSpan(req, res, () => handler(req, res))))
  },
  async fastify(config, options) {
    let server
    const app = Fastify({ serverFactory: (handler) => (server = http.createServer((req, res) => inSpan(req, res, () => handler(req, res)))) })
    await app.register(fastifyAdapter, { config, ...options })
    app.get('/x', async () => ({ ok: true }))
    await app.listen({ port: 0, host: '127.0.0.1' })
    return {
      base: `http://127.0.0.1:${server.address().port}`,
      close: () => {
        server.closeAllConnections()
        return app.close()
      },
    }
  },
  async fetch(config, options) {
    const verifyRequest = createVerifier(config, options)
    const server = http.createServer((req, res) =>
      inSpan(req, res, async () => {
        let response
        try {
          const request = new Request(`http://${req.headers.host}${req.url}`, { headers: { ...req.headers } })
          const auth = await verifyRequest(request)
          response = auth.ok ? Response.json({ ok: true }) : auth.response
        } catch (err) {
          response = Response.json({ thrown: err.code ?? null }, { status: 500 })
        }
        res.statusCode = response.status
        res.end(Buffer.from(await response.arrayBuffer()))
      }),
    )
    return listen(server)
  },
}

/** GET /x with `headers`; the answer and the finished spans of that request (by name). */
async function send(server, headers = {}) {
  const id = String(++nextId)
  const res = await get(`${server.base}/x`, { ...headers, 'x-test-id': id })
  // The server span ends when the response closes, a moment after the client has read it.
  let spans = []
  for (let i = 0; i < 500; i++) {
    const http_ = exporter.getFinishedSpans().find((s) => s.name === 'http' && s.attributes['test.id'] === id)
    if (http_ !== undefined) {
      spans = exporter.getFinishedSpans().filter((s) => s === http_ || (s.parentSpanContext && s.parentSpanContext.spanId === http_.spanContext().spanId))
      break
    }
    await new Promise((r) => setTimeout(r, 5))
  }
  const byName = Object.fromEntries(spans.map((s) => [s.name, s]))
  assert.ok(byName.http, 'the request span ended')
  return { status: res.status, json: res.json, http: byName.http, own: byName['auth_shield.authenticate'] }
}

/** The auth-shield attributes of a span. */
function authAttributes(span) {
  const out = {}
  for (const name of AUTH_ATTRIBUTES) if (span.attributes[name] !== undefined) out[name] = span.attributes[name]
  return out
}

const expired = () => bearer({ sub: 'old', exp: NOW - 120 })

for (const engine of ['native', 'js']) {
  for (const [name, serve] of Object.entries(ADAPTERS)) {
    test(`${name} (${engine}): the active span carries the verdict: 200, 401 by code, 429`, async () => {
      const server = await serve(CONFIG, { engine, tracing: { trace } })
      try {
        const ok = await send(server, bearer({ sub: `ok-${name}-${engine}` }))
        assert.equal(ok.status, 200)
        assert.deepEqual(authAttributes(ok.http), { 'auth_shield.authentication.result': 'success', 'auth_shield.rate_limiting.result': 'acquired' })
        assert.equal(ok.own, undefined, 'no span of our own unless asked')

        const none = await send(server)
        assert.equal(none.status, 401)
        assert.deepEqual(authAttributes(none.http), { 'auth_shield.authentication.result': 'failure', 'error.type': 'missing_authorization' })

        const old = await send(server, expired())
        assert.equal(old.status, 401)
        assert.deepEqual(authAttributes(old.http), { 'auth_shield.authentication.result': 'failure', 'error.type': 'token_expired' })

        const burst = bearer({ sub: `burst-${name}-${engine}` })
        for (let i = 0; i < 3; i++) assert.equal((await send(server, burst)).status, 200)
        const limited = await send(server, burst)
        assert.equal(limited.status, 429)
        assert.deepEqual(authAttributes(limited.http), {
          'auth_shield.authentication.result': 'failure',
          'error.type': 'rate_limited',
          'auth_shield.rate_limiting.result': 'rejected',
        })
      } finally {
        await server.close()
      }
    })

    test(`${name} (${engine}): without the option no attribute is set`, async () => {
      const server = await serve(CONFIG, { engine })
      try {
        for (const headers of [bearer({ sub: `plain-${name}-${engine}` }), {}, expired()]) {
          const r = await send(server, headers)
          assert.deepEqual(authAttributes(r.http), {})
          assert.equal(r.own, undefined)
        }
      } finally {
        await server.close()
      }
    })

    test(`${name} (${engine}): spans: true puts the attributes on a child span of our own`, async () => {
      const server = await serve(CONFIG, { engine, tracing: { trace, spans: true } })
      try {
        const ok = await send(server, bearer({ sub: `own-${name}-${engine}` }))
        assert.equal(ok.status, 200)
        assert.ok(ok.own, 'an auth_shield.authenticate span, child of the request span')
        assert.deepEqual(authAttributes(ok.own), { 'auth_shield.authentication.result': 'success', 'auth_shield.rate_limiting.result': 'acquired' })
        assert.deepEqual(authAttributes(ok.http), {})
        assert.equal(ok.own.status.code, 0, 'a verdict is not a span error')
        const refused = await send(server, expired())
        assert.equal(refused.status, 401)
        assert.deepEqual(authAttributes(refused.own), { 'auth_shield.authentication.result': 'failure', 'error.type': 'token_expired' })
      } finally {
        await server.close()
      }
    })
  }

  test(`anonymous pass (credentialsRequired: false, ${engine}): result none`, async () => {
    const server = await ADAPTERS.express(CONFIG, { engine, credentialsRequired: false, tracing: { trace } })
    try {
      const anon = await send(server, { authorization: 'Basic dTpw' })
      assert.equal(anon.status, 200)
      assert.deepEqual(authAttributes(anon.http), { 'auth_shield.authentication.result': 'none' })
    } finally {
      await server.close()
    }
  })

  test(`a callback that throws (${engine}): refused, its code as error.type, the own span in error`, async () => {
    const getToken = () => {
      throw null
    }
    for (const spans of [false, true]) {
      const server = await ADAPTERS.express(CONFIG, { engine, getToken, tracing: { trace, spans } })
      try {
        const r = await send(server, bearer({ sub: 'cb' }))
        assert.equal(r.status, 500)
        const span = spans ? r.own : r.http
        assert.match(String(span.attributes['error.type']), /^ERR_AUTH_SHIELD_CALLBACK/)
        if (spans) assert.equal(r.own.status.code, 2)
      } finally {
        await server.close()
      }
    }
  })
}

test('the express-jwt compatible middleware (expressjwt) traces the same attributes', async () => {
  const app = express()
  app.use(expressAdapter.expressjwt({ secret: SECRET, algorithms: ['HS256'], tracing: { trace } }), (req, res) => res.json({ ok: true }))
  app.use((err, req, res, next) => res.status(err.status || 500).json({ thrown: err.code ?? null }))
  const server = await listen(http.createServer((req, res) => inSpan(req, res, () => app(req, res))))
  try {
    const ok = await send(server, bearer({ sub: 'compat' }))
    assert.equal(ok.status, 200)
    assert.equal(ok.http.attributes['auth_shield.authentication.result'], 'success')
    const none = await send(server)
    assert.equal(none.status, 401)
    assert.deepEqual(authAttributes(none.http), { 'auth_shield.authentication.result': 'failure', 'error.type': 'missing_authorization' })
  } finally {
    await server.close()
  }
})

// A tracing API or tracer whose every member misbehaves in its own way: each must leave the
// verdicts as they are without tracing, the limiter charged once per request.
const throwing = () => {
  throw new Error('tracer down')
}
const ODD_TRACING = [
  ['getActiveSpan throws', { trace: { getActiveSpan: throwing, getTracer: throwing } }],
  ['getActiveSpan answers a string', { trace: { getActiveSpan: () => 'span', getTracer: throwing } }],
  ['the span throws on setAttribute', { trace: { getActiveSpan: () => ({ setAttribute: throwing }), getTracer: throwing } }],
  ['a span that is not recording', { trace: { getActiveSpan: () => ({ isRecording: () => false, setAttribute: throwing }), getTracer: throwing } }],
  ['startActiveSpan throws', { spans: true, tracer: { startActiveSpan: throwing } }],
  ['startActiveSpan never calls back', { spans: true, tracer: { startActiveSpan: () => undefined } }],
  ['startActiveSpan calls back twice', { spans: true, tracer: { startActiveSpan: (n, fn) => (fn(trace.getTracer('x').startSpan(n)), fn(null)) } }],
  ['startActiveSpan calls back with null and throws after', { spans: true, tracer: { startActiveSpan: (n, fn) => (fn(null), throwing()) } }],
  ['startActiveSpan calls back later', { spans: true, tracer: { startActiveSpan: (n, fn) => void setTimeout(() => fn({}), 1) } }],
]

for (const engine of ['native', 'js']) {
  for (const [label, tracing] of ODD_TRACING) {
    test(`an odd tracer (${label}, ${engine}): verdicts unchanged, never a crash`, async () => {
      for (const name of ['express', 'fetch']) {
        const server = await ADAPTERS[name](CONFIG, { engine, tracing })
        try {
          assert.equal((await send(server)).status, 401)
          assert.equal((await send(server, expired())).status, 401)
          // Three pass and the fourth is limited: the decision ran once per request.
          const burst = bearer({ sub: `odd-${label}-${name}-${engine}` })
          for (let i = 0; i < 3; i++) assert.equal((await send(server, burst)).status, 200, `request ${i + 1}`)
          assert.equal((await send(server, burst)).status, 429)
        } finally {
          await server.close()
        }
      }
    })
  }
}

test('the option is checked when the middleware is built', () => {
  const bad = [
    [true, /must be an object/],
    [trace, /is not an option/],
    [{}, /trace is required/],
    [{ trace: {} }, /trace must be the trace API/],
    [{ trace, spans: 'yes' }, /spans must be a boolean/],
    [{ trace, tracer: {} }, /tracer must be an OpenTelemetry Tracer/],
    [{ spans: false, tracer }, /trace is required/],
    [{ trace, extra: 1 }, /extra is not an option/],
  ]
  for (const [tracing, message] of bad) {
    for (const build of [(o) => expressAdapter(CONFIG, o), (o) => koaAdapter(CONFIG, o), (o) => createVerifier(CONFIG, o)]) {
      assert.throws(() => build({ tracing }), { name: 'TypeError', message })
    }
  }
  // null is absent, as for every option.
  assert.equal(typeof expressAdapter(CONFIG, { tracing: null }), 'function')
  assert.equal(typeof createVerifier(CONFIG, { tracing: { spans: true, tracer } }), 'function')
})

test('store fallback: false while Redis answers, true once it is gone', { skip: redisSkip() }, async () => {
  const redis = await startRedis()
  const conn = await connectClient('node-redis', redis.url)
  const store = createRedisStore(conn.client, { prefix: 'tracing:', commandTimeoutMs: 200, retryIntervalMs: 100 })
  let server
  try {
    server = await ADAPTERS.express({ ...CONFIG, rateLimitMax: 1000, rateLimitRefill: 1000 }, { engine: 'native', store, tracing: { trace } })
    const alice = bearer({ sub: 'alice' })
    const before = await send(server, alice)
    assert.equal(before.status, 200)
    assert.equal(before.http.attributes['auth_shield.store.fallback'], false)
    await redis.kill()
    let after
    for (let i = 0; i < 300; i++) {
      after = await send(server, alice)
      if (after.http.attributes['auth_shield.store.fallback'] === true) break
      await new Promise((r) => setTimeout(r, 10))
    }
    assert.equal(after.http.attributes['auth_shield.store.fallback'], true)
    assert.equal(after.status, 200, 'served from the local fallback')
    assert.equal(after.http.attributes['auth_shield.authentication.result'], 'success')
  } finally {
    if (server) await server.close()
    await store.close?.()
    conn.close()
    await redis.stop()
  }
})

test.after(async () => {
  await provider.shutdown()
  contextManager.disable()
})
