'use strict'

// Every feature with every other (issue 35 §2): an all-pairs covering set (__test__/support/
// pairwise.js) over key source × sender × route requirement × state × observation × shadow ×
// adapter × engine, each combination served on loopback by real servers: a JWKS endpoint, a real
// oidc-provider found by discovery, a real redis-server and a real Redis Cluster (3 masters +
// 3 replicas), TLS with client certificates made by openssl. Each combination sends a valid
// request (200; 403 where the route's scope is not met), a tampered token (401), for step-up a
// token without it (401 insufficient_user_authentication), for DPoP a replayed proof and a missing
// one (401), for mTLS another client's certificate (401); its observation (Prometheus counters,
// the real OpenTelemetry tracer's spans, onAuthFailure) must hold exactly the refusals it answered,
// by code, and shadow mode what docs/middleware.md promises (the primary's answers, no mismatch).
// The introspection source is a trusted issuer with the `introspection` option against a second
// real oidc-provider issuing OPAQUE tokens (__test__/introspection/provider.js): DPoP-bound
// (dPoP feature: cnf.jkt in the answer), certificate-bound (mTLS feature: cnf["x5t#S256"], the
// certificate handed to its token endpoint as a TLS-terminating proxy forwards it) and with acr
// (extraTokenClaims) as the combination needs; its tampered token is one the provider never issued
// (401 token_inactive).
// The expensive servers start once for the file; each combination has its own subject, key
// prefix and middleware. The combinations the docs declare unsupported are listed in UNSUPPORTED
// with the line that says so, and checked to be refused as documented.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const jose = require('jose')
const { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace')
const { MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics')
const { trace, context } = require('@opentelemetry/api')
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks')
const { allPairs, pairCoverage } = require('../support/pairwise')
const { startApp, send, MODULES } = require('./apps')
const { clientKey, proof } = require('../support/dpop')
const { makeCertificates } = require('../support/certificates')
const { startJwksServer, keyPair } = require('../support/jwks-server')
const { startProvider } = require('../support/oidc-provider')
const { startOpaqueProvider, tokenClient } = require('../introspection/provider')
const { startRedis } = require('../support/redis-server')
const { startCluster, topologySkip } = require('../support/redis-topologies')
const { connectClient } = require('../support/redis-clients')
const { createRemoteJwks, createTrustedIssuers } = require('../../lib/jwks/index')
const { createRedisStore } = require('../../lib/store/index')
const { toPrometheus } = require('../../lib/metrics/prometheus')
const { watchMetrics } = require('../../lib/metrics/events')
const { registerMetrics } = require('../../lib/metrics/otel')

const FACTORS = [
  { name: 'source', values: ['accessSecret', 'keys', 'remoteJwks', 'trustedIssuers', 'engineIssuers', 'introspection'] },
  { name: 'sender', values: ['bearer', 'dpop', 'mtls'] },
  { name: 'route', values: ['none', 'scopeMet', 'scopeUnmet', 'stepUp'] },
  { name: 'state', values: ['memory', 'redis', 'cluster'] },
  { name: 'observation', values: ['none', 'metrics', 'tracing', 'events'] },
  { name: 'shadow', values: ['off', 'on'] },
  { name: 'adapter', values: ['express', 'fastify', 'koa', 'fetch', 'expressjwt', 'hono'] },
  { name: 'engine', values: ['native', 'js'] },
]

// Combinations the docs declare unsupported: never generated, each checked below to be refused
// the way its doc line says, and that line checked to still say so.
const STORE_WITH_SHADOW = { doc: 'docs/options.md', says: 'not with shadow: true', refusal: /options\.store cannot be combined with shadow/ }
/** The 1-based line of `doc` that says `says`, or 0. */
function docLine(doc, says) {
  return fs.readFileSync(path.join(__dirname, '..', '..', doc), 'utf8').split('\n').findIndex((l) => l.includes(says)) + 1
}

const UNSUPPORTED = [
  { pair: { state: 'redis', shadow: 'on' }, ...STORE_WITH_SHADOW },
  { pair: { state: 'cluster', shadow: 'on' }, ...STORE_WITH_SHADOW },
]
// A form the suite does not use where the docs rule it out: expressjwt's secret getter (used for
// accessSecret with in-memory state) with a store or a key source; those combinations give
// express-jwt the secret itself.
const GETTER_WITH_STATE = { doc: 'docs/middleware.md', says: 'not with `store` or `jwks`: a TypeError', refusal: /a secret getter cannot be combined with store or jwks/ }
const allowed = (row) => !UNSUPPORTED.some(({ pair }) => Object.entries(pair).every(([name, value]) => row[name] === value))
const { rows: COMBINATIONS, excluded: EXCLUDED } = allPairs(FACTORS, { allowed })

const ORIGIN = 'https://api.example.com'
const HTU = `${ORIGIN}/orders`
const AUD = 'https://api.example/'
const SECRET = 'pairwise-combination-secret-0123456789abcdef'
const JWKS_ISS = 'https://jwks.idp.test/'
const ENGINE_ISS = 'https://engine.idp.test/'
const ROUTES = {
  none: undefined,
  scopeMet: (m) => m.requireScopes('read:orders'),
  scopeUnmet: (m) => m.requireScopes('write:orders'),
  stepUp: (m) => m.requireAuthentication({ acrValues: 'mfa', maxAgeSec: 300 }),
}

const unhandled = []
const onUnhandled = (reason) => unhandled.push(reason)

// Tracing both ways docs/observability.md describes: attributes on the active span (the HTTP
// server span the app's instrumentation made: `around` below, with the real context manager) and
// spans of auth-shield's own (`spans: true`); the tracing combinations alternate between them.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
const exporter = new InMemorySpanExporter()
const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
trace.setGlobalTracerProvider(tracerProvider)
const tracer = tracerProvider.getTracer('pairwise')
/** Runs each request inside an active `http` span, ended when the response is. */
const inServerSpan = (req, res, handle) =>
  tracer.startActiveSpan('http', (span) => {
    res.on('close', () => span.end())
    handle()
  })

describe('every feature with every other: an all-pairs combination suite', { skip: topologySkip() }, () => {
  const started = Date.now()
  let certs
  let dpopKey
  let jwksServer
  let provider
  let opaque
  let redis
  let cluster
  let redisClient
  let clusterClient
  // Per key source: { config, algorithms, jwks?: () => source, sign(claims) }.
  const SOURCES = {}

  before(async () => {
    process.on('unhandledRejection', onUnhandled)
    certs = makeCertificates()
    ;[dpopKey, jwksServer, provider, opaque, redis, cluster] = await Promise.all([clientKey('ES256'), startJwksServer(), startProvider({ resource: AUD, dpop: true }), startOpaqueProvider({ resource: AUD }), startRedis(), startCluster()])
    ;[redisClient, clusterClient] = await Promise.all([connectClient('node-redis', redis.url), connectClient('ioredis', { cluster: cluster.rootNodes })])
    const remote = keyPair('RS256', 'remote-rs256')
    jwksServer.serve({ keys: [remote.jwk] })
    const staticKey = await jose.generateKeyPair('ES256', { extractable: true })
    const staticJwk = { ...(await jose.exportJWK(staticKey.publicKey)), kid: 'static-es256', alg: 'ES256' }
    const engineKey = await jose.generateKeyPair('ES256', { extractable: true })
    const engineJwk = { ...(await jose.exportJWK(engineKey.publicKey)), kid: 'engine-es256', alg: 'ES256' }
    const opKey = await jose.importJWK(provider.signingJwk, 'RS256')
    const signer = (key, alg, kid, iss) => (claims) => {
      const now = Math.floor(Date.now() / 1000)
      const header = kid === undefined ? { alg, typ: 'at+jwt' } : { alg, kid, typ: 'at+jwt' }
      return new jose.SignJWT({ aud: AUD, iat: now, exp: now + 600, ...(iss === undefined ? {} : { iss }), ...claims }).setProtectedHeader(header).sign(key)
    }
    Object.assign(SOURCES, {
      accessSecret: { config: { accessSecret: SECRET }, algorithms: ['HS256'], sign: signer(Buffer.from(SECRET), 'HS256') },
      keys: { config: { keys: [{ kid: 'static-es256', alg: 'ES256', publicKey: staticJwk }] }, algorithms: ['ES256'], sign: signer(staticKey.privateKey, 'ES256', 'static-es256') },
      remoteJwks: { config: { issuer: JWKS_ISS }, algorithms: ['RS256'], jwks: () => createRemoteJwks(jwksServer.url), sign: signer(remote.privateKey, 'RS256', 'remote-rs256', JWKS_ISS) },
      trustedIssuers: { config: {}, algorithms: ['RS256'], jwks: () => createTrustedIssuers([provider.issuer]), sign: signer(opKey, 'RS256', provider.signingJwk.kid, provider.issuer) },
      engineIssuers: {
        config: { issuers: [{ issuer: ENGINE_ISS, keys: [{ kid: 'engine-es256', alg: 'ES256', publicKey: engineJwk }], audience: AUD }] },
        algorithms: ['ES256'],
        sign: signer(engineKey.privateKey, 'ES256', 'engine-es256', ENGINE_ISS),
      },
      // Opaque tokens only (no sign): expressjwt's `algorithms` is still required, and unused.
      introspection: { config: {}, algorithms: ['RS256'], jwks: () => createTrustedIssuers([{ issuer: opaque.issuer, audience: AUD, introspection: opaque.introspection() }]), opaque: true },
    })
  })

  after(async () => {
    process.off('unhandledRejection', onUnhandled)
    await Promise.all([redisClient?.close(), clusterClient?.close()])
    await Promise.all([jwksServer?.close(), provider?.close(), opaque?.close(), redis?.stop(), cluster?.stop()])
    certs?.remove()
    assert.deepEqual(unhandled, [])
    // What the run cost (the suite's budget is 90 s on the CI machine).
    console.log(`# pairwise: ${COMBINATIONS.length} combinations served in ${((Date.now() - started) / 1000).toFixed(1)} s`)
  })

  it(`covers every pair of feature values: ${COMBINATIONS.length} combinations of ${FACTORS.reduce((n, f) => n * f.values.length, 1)}`, (t) => {
    const coverage = pairCoverage(FACTORS, COMBINATIONS, { allowed })
    assert.deepEqual(coverage.missing, [])
    t.diagnostic(`${COMBINATIONS.length} combinations cover ${coverage.covered}/${coverage.total} pairs; ${EXCLUDED.length} pairs declared unsupported`)
    console.log(`# pairwise: ${COMBINATIONS.length} combinations, ${coverage.covered}/${coverage.total} pairs covered, ${EXCLUDED.length} unsupported: ${EXCLUDED.map((p) => JSON.stringify(p)).join(' ')}`)
    // Every pair the generator left out is one the docs declare unsupported.
    for (const pair of EXCLUDED) assert.ok(UNSUPPORTED.some((u) => Object.entries(u.pair).every(([k, v]) => pair[k] === v)), JSON.stringify(pair))
  })

  for (const { pair, doc, says, refusal } of UNSUPPORTED) {
    // The line is looked up, not pinned: docs/options.md is generated, and its rows move.
    const line = docLine(doc, says)
    it(`${JSON.stringify(pair)} is declared unsupported (${doc}:${line}) and refused as it says, in every adapter`, async () => {
      assert.ok(line > 0, `${doc} no longer says "${says}"`)
      const store = createRedisStore(pair.state === 'redis' ? redisClient.client : clusterClient.client, { prefix: `pw-unsupported-${pair.state}:` })
      try {
        for (const adapter of Object.keys(MODULES)) {
          for (const engine of ['native', 'js']) {
            await assert.rejects(startApp(adapter, { accessSecret: SECRET }, { engine, shadow: true, store, ...(adapter === 'expressjwt' ? { algorithms: ['HS256'] } : {}) }), refusal, `${adapter} ${engine}`)
          }
        }
      } finally {
        await store.close()
      }
    })
  }

  const getterLine = docLine(GETTER_WITH_STATE.doc, GETTER_WITH_STATE.says)
  it(`expressjwt's secret getter with a store or a key source is declared unsupported (${GETTER_WITH_STATE.doc}:${getterLine}) and refused as it says`, async () => {
    const { doc, says, refusal } = GETTER_WITH_STATE
    assert.ok(getterLine > 0, `${doc} no longer says "${says}"`)
    const store = createRedisStore(redisClient.client, { prefix: 'pw-getter:' })
    const jwks = createRemoteJwks(jwksServer.url)
    try {
      for (const engine of ['native', 'js']) {
        for (const options of [{ store }, { jwks }]) {
          await assert.rejects(startApp('expressjwt', { secret: async () => SECRET, algorithms: ['HS256'] }, { engine, ...options }), refusal, `${engine} ${Object.keys(options)}`)
        }
      }
    } finally {
      jwks.close()
      await store.close()
    }
  })

  COMBINATIONS.forEach((row, index) => {
    const name = `#${index} ${Object.values(row).join(' · ')}`
    it(name, () => runCombination(row, index))
  })

  /** One combination: its app, its requests, and what its observation and shadow say about them. */
  async function runCombination(row, index) {
    const source = SOURCES[row.source]
    const sub = `user-${index}`
    const config = { ...source.config, audience: AUD, rateLimitMax: 1000, rateLimitRefillPerSec: 100, rateLimitClientCredentials: true }
    const options = { engine: row.engine }
    const cleanup = []
    const mismatches = []
    try {
      // The key source.
      if (source.jwks !== undefined) {
        const keySource = source.jwks()
        cleanup.push(() => keySource.close())
        await keySource.ready()
        options.jwks = keySource
      }
      // express-jwt's app: `algorithms` always (express-jwt requires it); the HS256 secret as
      // express-jwt's secret getter where the getter may be used (not with a store).
      if (row.adapter === 'expressjwt') {
        options.algorithms = source.algorithms
        if (row.source === 'accessSecret' && row.state === 'memory') {
          delete config.accessSecret
          config.secret = async (req, token) => SECRET
        }
      }
      // The sender.
      if (row.sender === 'dpop') {
        config.dpop = true
        options.dpopOrigin = ORIGIN
      } else if (row.sender === 'mtls') {
        config.certificateBoundTokens = true
      }
      // The state.
      let store
      if (row.state !== 'memory') {
        store = createRedisStore(row.state === 'redis' ? redisClient.client : clusterClient.client, { prefix: `pw-${index}:` })
        cleanup.push(() => store.close())
        options.store = store
        if (row.sender === 'dpop') options.dpopReplayStore = store.dpopReplay()
      }
      if (row.shadow === 'on') {
        options.shadow = true
        options.onMismatch = (m) => void mismatches.push(m)
      }
      const ownSpans = index % 2 === 0
      if (row.observation === 'tracing') {
        exporter.reset()
        options.tracing = ownSpans ? { tracer, spans: true } : { trace }
      }
      const around = row.observation === 'tracing' && !ownSpans ? inServerSpan : undefined
      const app = await startApp(row.adapter, config, options, ROUTES[row.route], row.sender === 'mtls' ? certs : undefined, around)
      cleanup.push(() => app.close())
      const { authenticator } = app.middleware
      let watcher
      const events = []
      let reader
      if (row.observation === 'metrics') {
        reader = new InMemoryReader()
        const registration = registerMetrics(new MeterProvider({ readers: [reader] }).getMeter('pairwise'), { authenticators: { api: authenticator } })
        cleanup.push(() => registration.unregister())
      }
      if (row.observation === 'events') {
        watcher = watchMetrics({ authenticators: { api: authenticator } }, { onAuthFailure: (e) => void events.push(e) }, { intervalMs: 3_600_000 })
        cleanup.push(() => watcher.close())
      }

      // The requests and the answers each must get; `refused` tallies the refusals by code.
      const refused = {}
      let passed = 0
      const url = `${app.base}/orders`
      const expect = async (what, request, status, code) => {
        const r = await send(url, request)
        assert.equal(r.status, status, `${what}: ${r.status} ${r.body}`)
        if (status === 200) {
          passed++
          assert.equal(r.json.sub, request.sub, what)
        } else {
          assert.equal(r.json && r.json.code, code, `${what}: ${r.body}`)
          refused[code] = (refused[code] || 0) + 1
        }
        return r
      }
      const claims = { sub, scope: 'read:orders', ...(row.route === 'stepUp' ? { acr: 'mfa', auth_time: Math.floor(Date.now() / 1000) - 10 } : {}) }
      if (row.sender === 'dpop') claims.cnf = { jkt: dpopKey.jkt }
      if (row.sender === 'mtls') claims.cnf = { 'x5t#S256': certs.clientA.thumbprint }
      // The provider's own token (client_credentials over HTTP) where it can issue what the
      // combination needs: no acr (step-up), no certificate binding (its token endpoint is not
      // on TLS here); DPoP-bound when the token request carries a proof. Its sub is the client id.
      const fromProvider = row.source === 'trustedIssuers' && row.sender !== 'mtls' && row.route !== 'stepUp'
      const tokenRequestProof = async () => ({ dpop: await proof(dpopKey, { url: provider.metadata.token_endpoint, method: 'POST' }) })
      // The opaque provider issues every kind the combination needs: bound to the DPoP key or
      // to client A's certificate, with acr "mfa" for step-up (the weak token: none).
      const opaqueToken = async (mfa) => {
        const binding = { mfa, ...(row.sender === 'mtls' ? { certificate: certs.clientA.cert } : {}) }
        if (row.sender === 'dpop') binding.dpop = await proof(dpopKey, { url: opaque.metadata.token_endpoint, method: 'POST' })
        return { token: await opaque.token('read:orders', binding), sub: tokenClient(binding) }
      }
      let token
      let expectedSub = sub
      if (source.opaque) ({ token, sub: expectedSub } = await opaqueToken(row.route === 'stepUp'))
      else if (fromProvider) {
        token = await provider.token('read:orders', row.sender === 'dpop' ? await tokenRequestProof() : undefined)
        expectedSub = provider.clientId
      } else token = await source.sign(claims)
      if (fromProvider && row.sender === 'dpop') assert.equal(decodePayload(token).cnf.jkt, dpopKey.jkt, 'the provider bound the token to the client key')
      if (source.opaque && (row.sender !== 'bearer' || row.route === 'stepUp')) {
        // What the provider's introspection answer says of the token: its binding, its acr.
        const answer = await opaque.introspect(token)
        if (row.sender === 'dpop') assert.equal(answer.cnf.jkt, dpopKey.jkt, 'the provider bound the opaque token to the client key')
        if (row.sender === 'mtls') assert.equal(answer.cnf['x5t#S256'], certs.clientA.thumbprint, "the provider bound the opaque token to client A's certificate")
        if (row.route === 'stepUp') assert.equal(answer.acr, 'mfa')
      }
      const request = async (t, { withProof = true, client = certs.clientA } = {}) => {
        if (row.sender === 'dpop') return { sub: expectedSub, headers: { authorization: `DPoP ${t}`, ...(withProof ? { dpop: await proof(dpopKey, { token: t, url: HTU }) } : {}) } }
        if (row.sender === 'mtls') return { sub: expectedSub, headers: { authorization: `Bearer ${t}` }, client, ca: certs.ca.cert }
        return { sub: expectedSub, headers: { authorization: `Bearer ${t}` } }
      }

      const valid = await request(token)
      const introspectionsBefore = source.opaque ? opaque.introspections() : 0
      if (source.opaque) assert.ok(!token.includes('.'), 'an opaque token, not a JWT')
      if (row.route === 'scopeUnmet') await expect('valid token, scope not met', valid, 403, 'insufficient_scope')
      else await expect('valid request', valid, 200)
      if (row.route === 'stepUp') {
        const weak = await request(source.opaque ? (await opaqueToken(false)).token : await source.sign({ ...claims, acr: 'pwd' }))
        const r = await expect('token without the step-up', weak, 401, 'insufficient_user_authentication')
        if (row.adapter !== 'expressjwt') assert.match(r.headers['www-authenticate'], /acr_values="mfa"/)
      }
      if (source.opaque) await expect('a token the provider never issued', await request(tamperOpaque(token)), 401, 'token_inactive')
      else await expect('tampered token', await request(tamper(token)), 401, 'invalid_signature')
      if (row.sender === 'dpop') {
        // A proof of a request a route requirement refused was released (docs/sender-constrained.md,
        // "Replay cache"): its replay meets the same refusal.
        if (row.route === 'scopeUnmet') await expect('replayed proof (released by the refusal)', valid, 403, 'insufficient_scope')
        else await expect('replayed proof', valid, 401, 'dpop_proof_replayed')
        await expect('no proof', await request(token, { withProof: false }), 401, 'missing_dpop_proof')
      }
      if (row.sender === 'mtls') await expect("another client's certificate", await request(token, { client: certs.clientB }), 401, 'certificate_mismatch')

      // Each opaque token was introspected once, however many requests and engines (shadow mode)
      // met it: the valid one, the unknown one, the weak one for step-up.
      if (source.opaque) assert.equal(opaque.introspections() - introspectionsBefore, row.route === 'stepUp' ? 3 : 2)
      // The observation holds exactly the refusals answered, by code.
      const failed = Object.values(refused).reduce((a, b) => a + b, 0)
      if (row.observation === 'metrics') {
        assert.deepEqual(prometheusRequests(toPrometheus({ authenticators: { api: authenticator } })), { success: passed, failures: refused })
        assert.deepEqual(await otelRequests(reader), { success: passed, failures: refused })
      } else if (row.observation === 'tracing' && ownSpans) {
        assert.deepEqual(spanVerdicts(exporter.getFinishedSpans()), { success: passed, failures: refused })
      } else if (row.observation === 'tracing') {
        assert.deepEqual(await serverSpanVerdicts(passed + failed), { success: passed, failures: refused })
      } else if (row.observation === 'events') {
        watcher.check()
        assert.deepEqual(events, [{ authenticator: 'api', failed, failures: refused }])
      }
      // Shadow mode: the answers above are the primary's; the engines agreed on every request.
      if (row.shadow === 'on') {
        const stats = app.middleware.stats()
        assert.equal(stats.shadow, true)
        assert.equal(stats.engine, row.engine)
        assert.ok(stats.requests >= 1, JSON.stringify(stats))
        assert.equal(stats.mismatches, 0, JSON.stringify(mismatches))
        assert.deepEqual(mismatches, [])
      }
      // The state: the shared limit went through Redis.
      if (store !== undefined) assert.ok(store.metrics().roundTrips > 0, JSON.stringify(store.metrics()))
      // With Redis, an admitted proof is spent for every process sharing it: a second app
      // (another process's middleware on the same store) refuses its replay too. (After the
      // observation checks: that app's refusal is its own.)
      if (store !== undefined && row.sender === 'dpop' && row.route !== 'scopeUnmet') {
        const sibling = await startApp(row.adapter, config, { ...options, dpopReplayStore: store.dpopReplay() }, ROUTES[row.route])
        cleanup.push(() => sibling.close())
        const r = await send(`${sibling.base}/orders`, valid)
        assert.equal(r.status, 401, `replay to another process: ${r.body}`)
        assert.equal(r.json.code, 'dpop_proof_replayed')
      }
    } finally {
      for (const done of cleanup.reverse()) await done()
    }
  }
})

/** The payload of a compact JWS, decoded (for assertions only). */
function decodePayload(jwt) {
  return JSON.parse(Buffer.from(jwt.split('.')[1], 'base64url').toString('utf8'))
}

/** `token` with one character of its signature changed (the header and payload intact). */
function tamper(token) {
  const [header, payload, signature] = token.split('.')
  const i = Math.floor(signature.length / 2)
  return `${header}.${payload}.${signature.slice(0, i)}${signature[i] === 'A' ? 'B' : 'A'}${signature.slice(i + 1)}`
}

/** An opaque token with one character changed: one its issuer never issued. */
function tamperOpaque(token) {
  const i = Math.floor(token.length / 2)
  return `${token.slice(0, i)}${token[i] === 'A' ? 'B' : 'A'}${token.slice(i + 1)}`
}

/** `{ success, failures: { code: n } }` of the Prometheus requests counter. */
function prometheusRequests(text) {
  const out = { success: 0, failures: {} }
  for (const line of text.split('\n')) {
    const m = /^auth_shield_authentication_requests_total\{([^}]*)\} (\d+)$/.exec(line)
    if (m === null) continue
    const labels = Object.fromEntries([...m[1].matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]))
    const n = Number(m[2])
    if (labels.auth_shield_authentication_result === 'success') out.success += n
    else if (n > 0) out.failures[labels.error_type] = (out.failures[labels.error_type] || 0) + n
  }
  return out
}

/** `{ success, failures }` of the `http` server spans, once `count` of them ended (each request's final verdict). */
async function serverSpanVerdicts(count) {
  let spans = []
  for (let i = 0; i < 400; i++) {
    spans = exporter.getFinishedSpans().filter((span) => span.name === 'http')
    if (spans.length >= count) break
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  assert.equal(spans.length, count, 'every request span ended')
  const out = { success: 0, failures: {} }
  for (const span of spans) {
    const result = span.attributes['auth_shield.authentication.result']
    if (result === 'success') out.success++
    else if (result === 'failure') out.failures[span.attributes['error.type']] = (out.failures[span.attributes['error.type']] || 0) + 1
  }
  return out
}

class InMemoryReader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}

/** `{ success, failures }` of the auth_shield.authentication.requests instrument, collected by the real SDK. */
async function otelRequests(reader) {
  const out = { success: 0, failures: {} }
  const { resourceMetrics } = await reader.collect()
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      if (metric.descriptor.name !== 'auth_shield.authentication.requests') continue
      for (const p of metric.dataPoints) {
        if (p.attributes['auth_shield.authentication.result'] === 'success') out.success += p.value
        else if (p.value > 0) out.failures[p.attributes['error.type']] = (out.failures[p.attributes['error.type']] || 0) + p.value
      }
    }
  }
  return out
}

/**
 * `{ success, failures }` of auth-shield's own spans: each decision's `auth_shield.authenticate`
 * span, and a route requirement's refusal (`auth_shield.route_requirement`) turning its
 * decision's success into that failure.
 */
function spanVerdicts(spans) {
  const out = { success: 0, failures: {} }
  for (const span of spans) {
    const result = span.attributes['auth_shield.authentication.result']
    if (span.name !== 'auth_shield.authenticate' && span.name !== 'auth_shield.route_requirement') continue
    if (result === 'failure') {
      const code = span.attributes['error.type']
      out.failures[code] = (out.failures[code] || 0) + 1
      if (span.name === 'auth_shield.route_requirement') out.success--
    } else if (result === 'success' && span.name === 'auth_shield.authenticate') out.success++
  }
  return out
}
