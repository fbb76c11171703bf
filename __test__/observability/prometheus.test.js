'use strict'

// auth-shield/prometheus: scraped over real HTTP after a scripted workload (both engines), and
// its names checked against what the real @opentelemetry/exporter-prometheus makes of the same
// instruments (auth-shield/otel): the same families and labels, plus base units (`_seconds`)
// and a real histogram for the call duration.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { MeterProvider } = require('@opentelemetry/sdk-metrics')
const { PrometheusExporter, PrometheusSerializer } = require('@opentelemetry/exporter-prometheus')
const native = require('../..')
const js = require('../../js')
const { prometheusHandler, toPrometheus, CONTENT_TYPE } = require('../../lib/metrics/prometheus')
const { registerMetrics } = require('../../lib/metrics/otel')
const { token, SECRET, NOW } = require('../support/tokens')

function scrape(server) {
  return new Promise((resolve, reject) => {
    http
      .get(`http://127.0.0.1:${server.address().port}/metrics`, (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c) => (body += c))
        res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'], body }))
      })
      .on('error', reject)
  })
}

/** `{ 'name{labels}': value }` of the sample lines. */
function samples(text) {
  const out = {}
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out[line.slice(0, at)] = Number(line.slice(at + 1))
  }
  return out
}

function workload(engine) {
  const auth = new engine.Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 2, rateLimitRefill: 0.001 })
  auth.setDurationMetrics(true)
  for (let i = 0; i < 3; i++) auth.authenticate(undefined)
  auth.authenticate('Bearer not.a.token')
  const good = `Bearer ${token({ sub: 'alice', exp: NOW + 600 }, SECRET)}`
  for (let i = 0; i < 4; i++) auth.authenticate(good)
  return auth
}

for (const [name, engine] of [['native', native], ['js', js]]) {
  test(`a scrape over HTTP reports what the workload did (${name} engine)`, async () => {
    const auth = workload(engine)
    const server = http.createServer(prometheusHandler({ authenticators: { api: auth } }))
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { status, type, body } = await scrape(server)
      assert.equal(status, 200)
      assert.equal(type, CONTENT_TYPE)
      const s = samples(body)
      const a = 'auth_shield_authenticator="api"'
      assert.equal(s[`auth_shield_authentication_requests_total{${a},auth_shield_authentication_result="success"}`], 2)
      assert.equal(s[`auth_shield_authentication_requests_total{${a},auth_shield_authentication_result="failure",error_type="missing_authorization"}`], 3)
      assert.equal(s[`auth_shield_authentication_requests_total{${a},auth_shield_authentication_result="failure",error_type="malformed_token"}`], 1)
      assert.equal(s[`auth_shield_authentication_requests_total{${a},auth_shield_authentication_result="failure",error_type="rate_limited"}`], 2)
      assert.equal(s[`auth_shield_rate_limiting_requests_total{${a},auth_shield_rate_limiting_result="rejected"}`], 2)
      // The duration is a histogram in seconds: cumulative buckets ending at +Inf = _count.
      assert.match(body, /^# TYPE auth_shield_authentication_duration_seconds histogram$/m)
      assert.equal(s[`auth_shield_authentication_duration_seconds_bucket{${a},le="+Inf"}`], 8)
      assert.equal(s[`auth_shield_authentication_duration_seconds_count{${a}}`], 8)
      assert.ok(s[`auth_shield_authentication_duration_seconds_sum{${a}}`] > 0)
      // Every family has HELP and TYPE, and every counter ends in _total.
      for (const [, fam, type] of body.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
        assert.match(body, new RegExp(`^# HELP ${fam} `, 'm'))
        if (type === 'counter') assert.match(fam, /_total$/)
      }
    } finally {
      server.close()
    }
  })
}

test('the names match the real OpenTelemetry Prometheus exporter, with base units and a histogram', async () => {
  const auth = workload(native)
  const exporter = new PrometheusExporter({ preventServerStart: true })
  const provider = new MeterProvider({ readers: [exporter] })
  registerMetrics(provider.getMeter('auth-shield'), { authenticators: { api: auth } })
  const { resourceMetrics } = await exporter.collect()
  const theirs = new PrometheusSerializer().serialize(resourceMetrics)
  const ours = toPrometheus({ authenticators: { api: auth } })
  const families = (text) => new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]))
  const expected = new Map()
  for (const [fam, type] of families(theirs)) {
    if (fam === 'target_info') continue
    // Three counters in OpenTelemetry are one histogram in Prometheus.
    if (fam.startsWith('auth_shield_authentication_duration_')) continue
    expected.set(fam, type)
  }
  expected.set('auth_shield_authentication_duration_seconds', 'histogram')
  assert.deepEqual(families(ours), expected)
  // The same points (labels and values), once the exporter's scope label is dropped.
  const strip = (text) => Object.fromEntries(Object.entries(samples(text)).map(([k, v]) => [k.replace(/,?otel_scope_name="[^"]*"/, '').replace('{,', '{'), v]))
  const mine = samples(ours)
  for (const [key, value] of Object.entries(strip(theirs))) {
    if (key.startsWith('target_info') || key.startsWith('auth_shield_authentication_duration_')) continue
    assert.equal(mine[key], value, key)
  }
  await provider.shutdown()
})
