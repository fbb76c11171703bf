'use strict'

// Issue 27's "done when": the four questions of the person on call, answered from `/metrics`
// alone (auth-shield/prometheus scraped over real HTTP) with the queries docs/observability.md
// gives, each checked against a known workload in both engines: refusals in the window by
// reason (the increase between two scrapes), whether a process is on the store's fallback (a
// real redis-server stopped), the age of each issuer's keys (two loopback JWKS providers), and
// the p99 of the auth call (histogram_quantile over the scraped buckets).

const test = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const native = require('../..')
const js = require('../../js')
const { prometheusHandler } = require('../../lib/metrics/prometheus')
const { createRemoteJwks } = require('../../lib/jwks/index')
const { createRedisStore } = require('../../lib/store')
const { startJwksServer, keyPair } = require('../support/jwks-server')
const { redisSkip, startRedis } = require('../support/redis-server')
const { connectClient } = require('../support/redis-clients')
const { listen } = require('../support/http')
const { token, SECRET, NOW } = require('../support/tokens')

async function scrape(server) {
  const res = await fetch(`${server.base}/metrics`)
  assert.equal(res.status, 200)
  return parse(await res.text())
}

/** The samples of a text exposition: [{ name, labels, value }]. */
function parse(text) {
  const out = []
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const m = /^([a-z_]+)(?:\{(.*)\})? (\S+)$/.exec(line)
    assert.ok(m, line)
    const labels = {}
    for (const [, k, v] of (m[2] || '').matchAll(/([a-z_]+)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v
    out.push({ name: m[1], labels, value: Number(m[3]) })
  }
  return out
}

/** `sum by (label) (metric{match})` of one scrape. */
function sumBy(samples, name, match, by) {
  const out = {}
  for (const s of samples) {
    if (s.name !== name || Object.entries(match).some(([k, v]) => s.labels[k] !== v)) continue
    out[s.labels[by]] = (out[s.labels[by]] || 0) + s.value
  }
  return out
}

/** Prometheus' histogram_quantile over cumulative `le` buckets (linear within a bucket). */
function histogramQuantile(q, buckets) {
  const sorted = Object.entries(buckets)
    .map(([le, n]) => [le === '+Inf' ? Infinity : Number(le), n])
    .sort((a, b) => a[0] - b[0])
  const total = sorted[sorted.length - 1][1]
  const rank = q * total
  let prevBound = 0
  let prevCount = 0
  for (const [bound, count] of sorted) {
    if (count >= rank) {
      if (bound === Infinity) return prevBound
      return prevBound + (bound - prevBound) * ((rank - prevCount) / (count - prevCount))
    }
    prevBound = bound
    prevCount = count
  }
  return NaN
}

for (const [name, engine] of [['native', native], ['js', js]]) {
  test(`refusals in the window by reason, and the p99 of the auth call, from /metrics (${name} engine)`, async () => {
    const auth = new engine.Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 2, rateLimitRefillPerSec: 0.001 })
    auth.setDurationMetrics(true)
    const server = await listen(http.createServer(prometheusHandler({ authenticators: { api: auth } })))
    try {
      // Traffic before the window is not counted in it.
      for (let i = 0; i < 5; i++) auth.authenticate(undefined)
      const before = await scrape(server)
      // The window: 3 without credentials, 2 expired, 1 malformed, 2 accepted, 4 over the limit.
      for (let i = 0; i < 3; i++) auth.authenticate(undefined)
      for (let i = 0; i < 2; i++) auth.authenticate(`Bearer ${token({ sub: 'old', exp: NOW - 600 }, SECRET)}`)
      auth.authenticate('Bearer not.a.token')
      const good = `Bearer ${token({ sub: 'alice', exp: NOW + 600 }, SECRET)}`
      for (let i = 0; i < 6; i++) auth.authenticate(good)
      const after = await scrape(server)

      // sum by (error_type) (increase(auth_shield_authentication_requests_total{auth_shield_authentication_result="failure"}[1m]))
      const refused = (s) => sumBy(s, 'auth_shield_authentication_requests_total', { auth_shield_authentication_result: 'failure' }, 'error_type')
      const [b, a] = [refused(before), refused(after)]
      const increase = {}
      for (const code of Object.keys(a)) if (a[code] - (b[code] || 0) > 0) increase[code] = a[code] - (b[code] || 0)
      const malformed = Object.keys(increase).find((c) => !['missing_authorization', 'token_expired', 'rate_limited'].includes(c))
      assert.deepEqual(increase, { missing_authorization: 3, token_expired: 2, rate_limited: 4, [malformed]: 1 })
      assert.equal(auth.authenticate('Bearer not.a.token').errorCode, malformed)

      // histogram_quantile(0.99, sum by (le) (auth_shield_authentication_duration_seconds_bucket))
      const buckets = sumBy(after, 'auth_shield_authentication_duration_seconds_bucket', {}, 'le')
      const count = sumBy(after, 'auth_shield_authentication_duration_seconds_count', {}, 'auth_shield_authenticator').api
      assert.equal(count, 5 + 12, 'every call timed')
      assert.equal(buckets['+Inf'], count)
      // The p99 lies in the bucket where the cumulative count first reaches 99 % of the calls
      // (the time each call took is the machine's; the bounds are the documented ones).
      const p99 = histogramQuantile(0.99, buckets)
      const { boundsSeconds } = auth.metrics().duration
      const les = boundsSeconds.map(String).concat('+Inf')
      assert.deepEqual(Object.keys(buckets).sort(), les.slice().sort())
      const k = les.findIndex((le) => buckets[le] >= 0.99 * count)
      const upper = k < boundsSeconds.length ? boundsSeconds[k] : boundsSeconds[boundsSeconds.length - 1]
      const lower = k === 0 ? 0 : boundsSeconds[k - 1]
      assert.ok(p99 >= lower && p99 <= upper, `p99 ${p99} in [${lower}, ${upper}]`)
    } finally {
      await server.close()
    }
  })
}

test('the age of each issuer key set, from /metrics', async () => {
  const idps = [await startJwksServer(), await startJwksServer()]
  idps[0].serve({ keys: [keyPair('ES256', 'a1').jwk] })
  idps[1].serve({ keys: [keyPair('ES256', 'b1').jwk] })
  // Both providers hold their answers until released: no key set is in force before that.
  const releases = idps.map((idp) => {
    const release = idp.hold()
    let done = false
    return () => {
      if (!done) release()
      done = true
    }
  })
  const sources = idps.map((s) => createRemoteJwks(s.url, { cooldownMs: 0 }))
  const server = await listen(http.createServer(prometheusHandler({ jwks: { 'idp-a': sources[0], 'idp-b': sources[1] } })))
  try {
    // Before the first fetch: no key set, so no age (absent, not 0).
    let s = await scrape(server)
    assert.deepEqual(sumBy(s, 'auth_shield_jwks_key_age_seconds', {}, 'auth_shield_jwks'), {})
    releases[0]()
    await sources[0].refresh()
    s = await scrape(server)
    const ages = sumBy(s, 'auth_shield_jwks_key_age_seconds', {}, 'auth_shield_jwks')
    assert.deepEqual(Object.keys(ages), ['idp-a'])
    assert.ok(ages['idp-a'] >= 0 && ages['idp-a'] <= sources[0].metrics().keyAgeSeconds)
    releases[1]()
    await sources[1].refresh()
    s = await scrape(server)
    assert.deepEqual(Object.keys(sumBy(s, 'auth_shield_jwks_key_age_seconds', {}, 'auth_shield_jwks')).sort(), ['idp-a', 'idp-b'])
  } finally {
    for (const release of releases) release()
    await server.close()
    for (const source of sources) source.close?.()
    for (const idp of idps) await idp.close()
  }
})

test('whether any process is on the store fallback, from /metrics', { skip: redisSkip() }, async () => {
  const redis = await startRedis()
  const conn = await connectClient('node-redis', redis.url)
  const store = createRedisStore(conn.client, { prefix: 'operator:', commandTimeoutMs: 200, retryIntervalMs: 100 })
  const server = await listen(http.createServer(prometheusHandler({ stores: { main: store } })))
  try {
    const auth = new native.Authenticator({ accessSecret: SECRET, rateLimitMax: 100, store })
    const bearer = `Bearer ${token({ sub: 'alice', exp: Math.floor(Date.now() / 1000) + 600 }, SECRET)}`
    for (let i = 0; i < 200 && auth.authenticate(bearer).authenticated !== true; i++) await new Promise((r) => setTimeout(r, 10))
    // max(auth_shield_store_fallback) == 1
    const fallback = async () => Math.max(...(await scrape(server)).filter((x) => x.name === 'auth_shield_store_fallback').map((x) => x.value))
    assert.equal(await fallback(), 0)
    await redis.kill()
    for (let i = 0; i < 500 && store.metrics().fallback !== true; i++) {
      auth.authenticate(bearer)
      await new Promise((r) => setTimeout(r, 10))
    }
    assert.equal(await fallback(), 1)
  } finally {
    await server.close()
    await store.close?.()
    conn.close()
    await redis.stop()
  }
})
