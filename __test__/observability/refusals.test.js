'use strict'

// Every refusal counted, traced and evented with its code, wherever it is decided (issue 35,
// defect 3): a route requirement's 403 (requireScopes, requireAnyScope, requireClaims,
// requireAuthentication), isRevoked, a route without DPoP, a failing callback are counted as
// failures with their codes by auth-shield/prometheus and auth-shield/otel (the real
// @opentelemetry/sdk-metrics), set as error.type on the active span (the real SDK tracer), and
// given to onAuthFailure; an engine success they refused is no longer a success. Trusted issuers
// report their key sets' health per issuer (prometheusHandler({ jwks: { idp: issuers } })).

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const Koa = require('koa')
const Fastify = require('fastify')
const { trace, context } = require('@opentelemetry/api')
const { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace')
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks')
const { MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics')
const expressAdapter = require('../../adapters/express')
const koaAdapter = require('../../adapters/koa')
const fastifyAdapter = require('../../adapters/fastify')
const fetchAdapter = require('../../adapters/fetch')
const { toPrometheus, prometheusHandler } = require('../../lib/metrics/prometheus')
const { registerMetrics } = require('../../lib/metrics/otel')
const { watchMetrics } = require('../../lib/metrics/events')
const { readAuthenticatorSnapshot } = require('../../lib/metrics/instruments')
const { createTrustedIssuers } = require('../../lib/jwks/index')
const { listen, get } = require('../support/http')
const { token } = require('../support/tokens')
const { startProvider } = require('../support/oidc-provider')

const SECRET = 'refusals-observed-secret-0123456789abcdef'
const NOW = Math.floor(Date.now() / 1000)
const CONFIG = { accessSecret: SECRET, rateLimitMax: 0 }
const bearer = (claims) => ({ authorization: `Bearer ${token({ sub: 'alice', exp: NOW + 600, ...claims }, SECRET)}` })

const contextManager = new AsyncLocalStorageContextManager().enable()
context.setGlobalContextManager(contextManager)
const exporter = new InMemorySpanExporter()
trace.setGlobalTracerProvider(new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }))
const tracer = trace.getTracer('refusals-test')
after(() => contextManager.disable())

/** Runs `handle` inside an active `http` span tagged with the request's x-test-id. */
function inSpan(req, res, handle) {
  tracer.startActiveSpan('http', { attributes: { 'test.id': String(req.headers['x-test-id']) } }, (span) => {
    res.on('close', () => span.end())
    handle()
  })
}

// Each adapter with `/scoped` (requireScopes('write')), `/any` (requireAnyScope), `/claims`
// (requireClaims), `/step-up` (requireAuthentication) and `/open` (authentication only).
const ROUTES = (m) => [
  ['/scoped', m.requireScopes('write')],
  ['/any', m.requireAnyScope('write', 'admin')],
  ['/claims', m.requireClaims({ role: 'admin' })],
  ['/step-up', m.requireAuthentication({ acrValues: 'mfa' })],
]

const ADAPTERS = {
  async express(config, options) {
    const mw = expressAdapter(config, options)
    const app = express()
    for (const [path, requirement] of ROUTES(expressAdapter)) app.get(path, mw, requirement, (req, res) => res.json({ ok: true }))
    app.get('/open', mw, (req, res) => res.json({ ok: true }))
    app.use((err, req, res, next) => res.status(err.status || 500).json({ thrown: err.code ?? null }))
    return { authenticator: mw.authenticator, ...(await listen(http.createServer((req, res) => inSpan(req, res, () => app(req, res))))) }
  },
  async fastify(config, options) {
    let server
    const app = Fastify({ serverFactory: (handler) => (server = http.createServer((req, res) => inSpan(req, res, () => handler(req, res)))) })
    await app.register(fastifyAdapter, { config, ...options })
    for (const [path, requirement] of ROUTES(fastifyAdapter)) app.get(path, { preHandler: requirement }, async () => ({ ok: true }))
    app.get('/open', async () => ({ ok: true }))
    await app.listen({ port: 0, host: '127.0.0.1' })
    return {
      authenticator: app.authShield.authenticator,
      base: `http://127.0.0.1:${server.address().port}`,
      close: () => {
        server.closeAllConnections()
        return app.close()
      },
    }
  },
  async koa(config, options) {
    const mw = koaAdapter(config, options)
    const app = new Koa()
    app.silent = true
    const routes = new Map(ROUTES(koaAdapter))
    app.use(mw)
    app.use(async (ctx, next) => {
      const requirement = routes.get(ctx.path)
      if (requirement === undefined) return next()
      return requirement(ctx, next)
    })
    app.use((ctx) => {
      ctx.body = { ok: true }
    })
    const handler = app.callback()
    return { authenticator: mw.authenticator, ...(await listen(http.createServer((req, res) => inSpan(req, res, () => handler(req, res))))) }
  },
  async fetch(config, options) {
    const verifyRequest = fetchAdapter.createVerifier(config, options)
    const routes = new Map(ROUTES(fetchAdapter))
    const server = http.createServer((req, res) =>
      inSpan(req, res, async () => {
        const request = new Request(`http://${req.headers.host}${req.url}`, { headers: { ...req.headers } })
        let response
        try {
          const auth = await verifyRequest(request)
          const requirement = routes.get(new URL(request.url).pathname)
          const refused = !auth.ok ? auth : requirement === undefined ? null : requirement(auth)
          response = refused === null || refused.ok ? Response.json({ ok: true }) : refused.response
        } catch (err) {
          response = Response.json({ thrown: err.code ?? null }, { status: 500 })
        }
        res.statusCode = response.status
        res.end(Buffer.from(await response.arrayBuffer()))
      }),
    )
    return { authenticator: verifyRequest.authenticator, ...(await listen(server)) }
  },
}

let nextId = 0

/** GET `path` with `headers`; the status and the `http` span's auth-shield attributes. */
async function send(server, path, headers) {
  const id = String(++nextId)
  const res = await get(`${server.base}${path}`, { ...headers, 'x-test-id': id })
  let span
  for (let i = 0; i < 500 && span === undefined; i++) {
    span = exporter.getFinishedSpans().find((s) => s.name === 'http' && s.attributes['test.id'] === id)
    if (span === undefined) await new Promise((r) => setTimeout(r, 5))
  }
  assert.ok(span, 'the request span ended')
  return { status: res.status, result: span.attributes['auth_shield.authentication.result'], errorType: span.attributes['error.type'] }
}

/** The Prometheus sample of the requests counter for `result` (and `code`), 0 when absent. */
function requests(text, result, code) {
  const labels = code === undefined ? `auth_shield_authentication_result="${result}"}` : `auth_shield_authentication_result="${result}",error_type="${code}"}`
  const line = text.split('\n').find((l) => l.startsWith('auth_shield_authentication_requests_total{') && l.includes(labels))
  return line === undefined ? 0 : Number(line.split(' ').pop())
}

class InMemoryReader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}

async function otelRequests(reader) {
  const { resourceMetrics } = await reader.collect()
  const out = {}
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name !== 'auth_shield.authentication.requests') continue
      for (const p of metric.dataPoints) out[p.attributes['error.type'] ?? p.attributes['auth_shield.authentication.result']] = p.value
    }
  }
  return out
}

const REFUSALS = [
  ['/scoped', bearer({ scope: 'read' }), 403, 'insufficient_scope'],
  ['/any', bearer({ scope: 'read' }), 403, 'insufficient_scope'],
  ['/claims', bearer({ role: 'user' }), 403, 'insufficient_scope'],
  ['/step-up', bearer({ acr: 'pwd' }), 401, 'insufficient_user_authentication'],
]

for (const engine of ['native', 'js']) {
  for (const [adapter, start] of Object.entries(ADAPTERS)) {
    describe(`${adapter} (${engine}): refusals after the engine are observed with their codes`, () => {
      let server
      let reader
      let failures
      let watcher
      before(async () => {
        server = await start(CONFIG, { engine, tracing: { trace } })
        reader = new InMemoryReader()
        registerMetrics(new MeterProvider({ readers: [reader] }).getMeter('refusals'), { authenticators: { api: server.authenticator } })
        failures = []
        watcher = watchMetrics({ authenticators: { api: server.authenticator } }, { onAuthFailure: (e) => failures.push(e) }, { intervalMs: 3_600_000 })
      })
      after(async () => {
        watcher.close()
        await server.close()
      })

      it('a route requirement refusal is a failure with its code (was: a success), and a pass stays a success', async () => {
        for (const [path, headers, status, code] of REFUSALS) {
          const r = await send(server, path, headers)
          assert.deepEqual(r, { status, result: 'failure', errorType: code }, path)
        }
        const ok = await send(server, '/open', bearer({}))
        assert.deepEqual(ok, { status: 200, result: 'success', errorType: undefined })
        const text = toPrometheus({ authenticators: { api: server.authenticator } })
        assert.equal(requests(text, 'success'), 1, text)
        assert.equal(requests(text, 'failure', 'insufficient_scope'), 3, text)
        assert.equal(requests(text, 'failure', 'insufficient_user_authentication'), 1, text)
        assert.deepEqual(await otelRequests(reader), { success: 1, insufficient_scope: 3, insufficient_user_authentication: 1 })
        watcher.check()
        assert.deepEqual(failures, [{ authenticator: 'api', failed: 4, failures: { insufficient_scope: 3, insufficient_user_authentication: 1 } }])
        // The exporters' snapshot keeps the engine's shape: every code, `failed` their sum.
        const merged = readAuthenticatorSnapshot(server.authenticator)
        assert.deepEqual(Object.keys(merged.authentication.failures).sort(), Object.keys(server.authenticator.metrics().authentication.failures).sort())
        assert.equal(merged.authentication.failed, 4)
        assert.equal(merged.authentication.succeeded, 1)
      })
    })
  }

  describe(`refusals decided in the decision (${engine})`, () => {
    const servers = []
    after(async () => {
      for (const s of servers) await s.close()
    })
    const count = (server) => toPrometheus({ authenticators: { api: server.authenticator } })

    it('isRevoked refusing is token_revoked, not a success', async () => {
      const server = await ADAPTERS.express(CONFIG, { engine, isRevoked: () => true })
      servers.push(server)
      assert.equal((await send(server, '/open', bearer({}))).status, 401)
      const text = count(server)
      assert.equal(requests(text, 'success'), 0, text)
      assert.equal(requests(text, 'failure', 'token_revoked'), 1, text)
    })

    it('a failing callback is counted with its code and traced', async () => {
      const server = await ADAPTERS.express(CONFIG, { engine, tracing: { trace }, isRevoked: () => undefined, callbackTimeoutMs: 100 })
      servers.push(server)
      const r = await send(server, '/open', bearer({}))
      assert.equal(r.status, 500)
      assert.equal(r.errorType, 'ERR_AUTH_SHIELD_CALLBACK')
      const text = count(server)
      assert.equal(requests(text, 'success'), 0, text)
      assert.equal(requests(text, 'failure', 'ERR_AUTH_SHIELD_CALLBACK'), 1, text)
    })

    it('a DPoP request on a route without DPoP is dpop_not_allowed', async () => {
      const server = await ADAPTERS.express(CONFIG, { engine, dpopMode: 'disabled' })
      servers.push(server)
      const { authorization } = bearer({})
      assert.equal((await send(server, '/open', { authorization: authorization.replace('Bearer', 'DPoP') })).status, 401)
      const text = count(server)
      assert.equal(requests(text, 'failure', 'dpop_not_allowed'), 1, text)
      assert.equal(requests(text, 'success'), 0, text)
    })
  })
}

describe('trusted issuers report their key sets per issuer', () => {
  let provider
  let issuers
  before(async () => {
    provider = await startProvider()
  })
  after(async () => {
    issuers?.close()
    await provider.close()
  })

  it('metrics() per issuer, through prometheusHandler({ jwks: { idp: issuers } }) and onStaleKeys', async () => {
    // One issuer that answers, one that is not there (a closed port on loopback).
    const down = await listen(http.createServer())
    await down.close()
    issuers = createTrustedIssuers([provider.issuer, down.base], { retryMinMs: 100, retryMaxMs: 100 })
    await assert.rejects(issuers.ready())
    await issuers.refresh()
    const m = issuers.metrics()
    assert.equal(m.keysAvailable, false)
    assert.equal(m.issuers[provider.issuer].keysAvailable, true)
    assert.equal(m.issuers[provider.issuer].failures, 0)
    assert.ok(m.issuers[provider.issuer].fetches >= 2, JSON.stringify(m))
    assert.equal(m.issuers[down.base].keysAvailable, false)
    assert.ok(m.issuers[down.base].failures >= 1)
    assert.equal(m.issuers[down.base].keyAgeSeconds, null)

    const handler = prometheusHandler({ jwks: { idp: issuers } })
    const server = await listen(http.createServer(handler))
    try {
      const text = (await get(server.base)).body
      assert.match(text, new RegExp(`auth_shield_jwks_fetches_total\\{auth_shield_jwks="idp",auth_shield_jwks_issuer="${provider.issuer}",auth_shield_jwks_result="failure"\\} 0`))
      assert.match(text, new RegExp(`auth_shield_jwks_key_age_seconds\\{auth_shield_jwks="idp",auth_shield_jwks_issuer="${provider.issuer}"\\} `))
      assert.match(text, new RegExp(`auth_shield_jwks_fetches_total\\{auth_shield_jwks="idp",auth_shield_jwks_issuer="${down.base}",auth_shield_jwks_result="failure"\\} [1-9]`))
    } finally {
      await server.close()
    }
    const stale = []
    const watcher = watchMetrics({ jwks: { idp: issuers } }, { onStaleKeys: (e) => stale.push(e) })
    watcher.check()
    watcher.close()
    assert.deepEqual(
      stale.map((e) => [e.jwks, e.issuer, e.keysAvailable]),
      [['idp', down.base, false]],
    )
  })
})
