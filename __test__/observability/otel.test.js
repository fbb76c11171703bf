'use strict'

// auth-shield/otel against the real @opentelemetry/sdk-metrics (a MeterProvider and a reader
// collected in memory): after a scripted workload in each engine, every instrument equals what
// the workload did, including a JWKS failure caused by stopping the loopback provider and a
// store outage caused by stopping a real redis-server.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics')
const native = require('../..')
const js = require('../../js')
const { registerMetrics } = require('../../lib/metrics/otel')
const { createRemoteJwks } = require('../../lib/jwks/index')
const { createRedisStore } = require('../../lib/store/index')
const { startJwksServer } = require('../support/jwks-server')
const { redisSkip, startRedis } = require('../support/redis-server')
const { connectClient } = require('../support/redis-clients')
const { token, SECRET, NOW } = require('../support/tokens')

class InMemoryReader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}

/** Collects now; returns `{ [instrument]: [{ attributes, value }] }`. */
async function collect(reader) {
  const { resourceMetrics, errors } = await reader.collect()
  assert.deepEqual(errors, [])
  const out = {}
  for (const scope of resourceMetrics.scopeMetrics) {
    for (const metric of scope.metrics) {
      out[metric.descriptor.name] = metric.dataPoints.map((p) => ({ attributes: p.attributes, value: p.value }))
    }
  }
  return out
}

/** The value of the point of `name` whose attributes include `match`; 0 when there is none. */
function valueOf(points, name, match) {
  const found = (points[name] || []).filter((p) => Object.entries(match).every(([k, v]) => p.attributes[k] === v))
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(match)}: ${found.length} points`)
  return found.length === 0 ? 0 : found[0].value
}

function meterWith() {
  const reader = new InMemoryReader()
  const provider = new MeterProvider({ readers: [reader] })
  return { reader, provider, meter: provider.getMeter('auth-shield-test') }
}

for (const [name, engine] of [['native', native], ['js', js]]) {
  test(`every instrument equals what a scripted workload did (${name} engine)`, async () => {
    const auth = new engine.Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 2, rateLimitRefill: 0.001, verifiedTokenCacheSize: 8, maxRevocations: 1 })
    const other = new engine.Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 0 })
    auth.setDurationMetrics(true)
    const { reader, provider, meter } = meterWith()
    const registration = registerMetrics(meter, { authenticators: { api: auth, admin: other } })
    for (let i = 0; i < 4; i++) auth.authenticate(undefined)
    for (let i = 0; i < 3; i++) auth.authenticate(`Bearer ${token({ sub: 'x', exp: NOW - 1 }, SECRET)}`)
    const good = `Bearer ${token({ sub: 'alice', exp: NOW + 600 }, SECRET)}`
    for (let i = 0; i < 5; i++) auth.authenticate(good) // 2 acquired, 3 rejected; 1 miss, 4 hits
    auth.revokeSubject('bob', { before: NOW + 1 })
    assert.throws(() => auth.revokeSubject('carol'), { code: 'ERR_AUTH_SHIELD_REVOCATION_LIMIT' })
    other.authenticate('Basic x')

    const points = await collect(reader)
    const api = { 'auth_shield.authenticator': 'api' }
    const requests = (result, errorType) => valueOf(points, 'auth_shield.authentication.requests', { ...api, 'auth_shield.authentication.result': result, ...(errorType && { 'error.type': errorType }) })
    assert.equal(requests('success'), 2)
    assert.equal(requests('failure', 'missing_authorization'), 4)
    assert.equal(requests('failure', 'token_expired'), 3)
    assert.equal(requests('failure', 'rate_limited'), 3)
    // Only codes that happened carry a point: the attribute set stays small.
    assert.equal(points['auth_shield.authentication.requests'].filter((p) => p.attributes['auth_shield.authenticator'] === 'api').length, 4)
    assert.equal(valueOf(points, 'auth_shield.authentication.requests', { 'auth_shield.authenticator': 'admin', 'error.type': 'invalid_authorization_format' }), 1)
    const rl = (result) => valueOf(points, 'auth_shield.rate_limiting.requests', { ...api, 'auth_shield.rate_limiting.result': result })
    assert.deepEqual([rl('acquired'), rl('rejected'), rl('pending')], [2, 3, 0])
    const cache = (result) => valueOf(points, 'auth_shield.verified_token_cache.lookups', { ...api, 'auth_shield.verified_token_cache.result': result })
    assert.deepEqual([cache('hit'), cache('miss')], [4, 4])
    assert.equal(valueOf(points, 'auth_shield.revocations.held', api), 1)
    assert.equal(valueOf(points, 'auth_shield.revocations.refused', api), 1)
    assert.equal(valueOf(points, 'auth_shield.revocations.unavailable', api), 0)
    assert.equal(valueOf(points, 'auth_shield.authentication.duration.count', api), 12)
    assert.equal(valueOf(points, 'auth_shield.authentication.duration.bucket', { ...api, le: '+Inf' }), 12)
    // Cumulative buckets never decrease.
    const buckets = points['auth_shield.authentication.duration.bucket'].filter((p) => p.attributes['auth_shield.authenticator'] === 'api').map((p) => p.value)
    assert.deepEqual(buckets, [...buckets].sort((a, b) => a - b))
    // Attributes only ever hold results, codes and the names given here.
    const allowed = new Set(['auth_shield.authenticator', 'auth_shield.authentication.result', 'error.type', 'auth_shield.rate_limiting.result', 'auth_shield.verified_token_cache.result', 'le'])
    for (const list of Object.values(points)) for (const p of list) for (const k of Object.keys(p.attributes)) assert.ok(allowed.has(k), k)

    // Counters keep counting between collections; unregistering stops the observations.
    auth.authenticate(undefined)
    assert.equal(valueOf(await collect(reader), 'auth_shield.authentication.requests', { ...api, 'error.type': 'missing_authorization' }), 5)
    registration.unregister()
    await provider.shutdown()
  })
}

test('a JWKS failure caused by stopping the loopback provider is counted', async () => {
  const server = await startJwksServer()
  const { keyPair } = require('../support/jwks-server')
  const { jwk } = keyPair('ES256', 'k1')
  server.serve({ keys: [jwk] })
  const source = createRemoteJwks(server.url, { cooldownMs: 0 })
  try {
    await source.refresh()
    const { reader, provider, meter } = meterWith()
    registerMetrics(meter, { jwks: { idp: source } })
    let points = await collect(reader)
    const fetches = (p, result) => valueOf(p, 'auth_shield.jwks.fetches', { 'auth_shield.jwks': 'idp', 'auth_shield.jwks.result': result })
    const ok = fetches(points, 'success')
    assert.ok(ok >= 1)
    assert.equal(fetches(points, 'failure'), 0)
    assert.ok(valueOf(points, 'auth_shield.jwks.key_age', { 'auth_shield.jwks': 'idp' }) >= 0)
    await server.close()
    await source.refresh()
    assert.ok(source.lastError !== null)
    points = await collect(reader)
    assert.equal(fetches(points, 'failure'), 1)
    assert.equal(fetches(points, 'success'), ok)
    // The keys in force stay (within staleIfErrorMs): their age is still reported.
    assert.equal(points['auth_shield.jwks.key_age'].length, 1)
    await provider.shutdown()
  } finally {
    source.close()
  }
})

test('a store outage caused by stopping redis-server is counted, and its fallback state and time', { skip: redisSkip() }, async () => {
  const redis = await startRedis()
  const conn = await connectClient('node-redis', redis.url)
  const store = createRedisStore(conn.client, { prefix: 'otel:', timeoutMs: 200, retryIntervalMs: 100 })
  try {
    const auth = new native.Authenticator({ accessSecret: SECRET, rateLimitMax: 100, store })
    const { reader, provider, meter } = meterWith()
    registerMetrics(meter, { authenticators: { api: auth }, stores: { main: store } })
    const bearer = `Bearer ${token({ sub: 'alice', exp: Math.floor(Date.now() / 1000) + 600 }, SECRET)}`
    // The first request waits for a lease: one round trip at least, no failure.
    for (let i = 0; i < 200 && auth.authenticate(bearer).authenticated !== true; i++) await new Promise((r) => setTimeout(r, 10))
    let points = await collect(reader)
    const store_ = (name, extra = {}) => valueOf(points, name, { 'auth_shield.store': 'main', ...extra })
    assert.ok(store_('auth_shield.store.round_trips', { 'auth_shield.store.result': 'success' }) >= 1)
    assert.equal(store_('auth_shield.store.outages'), 0)
    assert.equal(store_('auth_shield.store.fallback'), 0)
    await redis.kill()
    // Spend credit until the store must go back to Redis, and finds it gone.
    for (let i = 0; i < 500 && store.metrics().fallback !== true; i++) {
      auth.authenticate(bearer)
      await new Promise((r) => setTimeout(r, 10))
    }
    points = await collect(reader)
    assert.equal(store_('auth_shield.store.fallback'), 1)
    assert.equal(store_('auth_shield.store.outages'), 1)
    assert.ok(store_('auth_shield.store.round_trips', { 'auth_shield.store.result': 'failure' }) >= 1)
    assert.ok(store_('auth_shield.store.fallback.time') >= 0)
    await provider.shutdown()
  } finally {
    await store.close?.()
    conn.close()
    await redis.stop()
  }
})
