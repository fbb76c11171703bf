'use strict'
// Observability (issue 27). Two questions, each answered by interleaved rows of one run:
// - what the counters and the duration histogram cost `authenticate`: the same call on
//   authenticators with `setDurationMetrics(false)` (counters only, always on: there is no way
//   to turn them off, so no row without them) and `setDurationMetrics(true)`, in both engines;
// - what collecting a snapshot costs with 10 authenticators: ten `metrics()` calls, the
//   auth-shield/otel batch callback (into an observer that keeps nothing: our part of a
//   collection), a real @opentelemetry/sdk-metrics collection on top of it (the SDK's part
//   included, a reference), and an auth-shield/prometheus scrape (prometheusHandler's text).

const { measureInterleaved } = require('../lib/measure')
const { summarize, pairedRatio } = require('../lib/stats')
const { registerMetrics } = require('../../lib/metrics/otel')
const { prometheusHandler } = require('../../lib/metrics/prometheus')

const AUTHENTICATORS = 10
const BASELINE = 'native-authenticate'

/** A Meter stand-in that keeps the batch callback, so it can be called as a collection does. */
function capturingMeter() {
  const meter = {
    callback: null,
    createObservableCounter: (name) => ({ name }),
    createObservableGauge: (name) => ({ name }),
    addBatchObservableCallback: (callback) => (meter.callback = callback),
    removeBatchObservableCallback: () => {},
  }
  return meter
}

/** `count` authenticators of one engine, each with some traffic of each kind behind its counters. */
function busyAuthenticators(create, fx, count) {
  const out = {}
  for (let i = 0; i < count; i++) {
    const a = create(fx.config)
    a.setDurationMetrics(true)
    for (let k = 0; k < 20; k++) a.authenticate(fx.authorization, fx.tenantHeader, fx.host)
    for (const t of Object.values(fx.rejects)) a.authenticate(`Bearer ${t}`, fx.tenantHeader, fx.host)
    a.authenticate(undefined)
    out[`api-${i}`] = a
  }
  return out
}

function realSdkReader() {
  let sdk
  try {
    sdk = require('@opentelemetry/sdk-metrics')
  } catch {
    return null
  }
  class Reader extends sdk.MetricReader {
    async onForceFlush() {}
    async onShutdown() {}
  }
  const reader = new Reader()
  const provider = new sdk.MeterProvider({ readers: [reader] })
  return { reader, meter: provider.getMeter('auth-shield-bench'), provider }
}

async function runMetrics({ native, jsEngine }, fx, opts) {
  const passes = (r) => r.authenticated === true && r.userId === fx.expected.userId
  const engines = [['native', (config) => new native.Authenticator(config)]]
  if (jsEngine.available) engines.push(['js', jsEngine.create])

  const contenders = []
  for (const [engine, create] of engines) {
    const counted = create(fx.config)
    const timed = create(fx.config)
    timed.setDurationMetrics(true)
    contenders.push(
      { id: `${engine}-authenticate`, label: `${engine} authenticate, counters (setDurationMetrics(false))`, run: () => counted.authenticate(fx.authorization, fx.tenantHeader, fx.host), accept: passes },
      { id: `${engine}-authenticate-timed`, label: `${engine} authenticate, counters + duration (setDurationMetrics(true))`, run: () => timed.authenticate(fx.authorization, fx.tenantHeader, fx.host), accept: passes },
    )
  }
  const snapshots = []
  for (const [engine, create] of engines) {
    const authenticators = busyAuthenticators(create, fx, AUTHENTICATORS)
    const list = Object.values(authenticators)
    const meter = capturingMeter()
    registerMetrics(meter, { authenticators })
    // A scrape as prometheusHandler answers it, into a response that keeps the text.
    const scrape = prometheusHandler({ authenticators })
    const response = { body: null, writeHead() {}, end(body) { this.body = body } }
    let points = 0
    const observer = { observe: () => points++ }
    snapshots.push(
      {
        id: `${engine}-metrics-10`,
        label: `${engine} metrics() × ${AUTHENTICATORS}`,
        run: () => {
          let last
          for (let i = 0; i < list.length; i++) last = list[i].metrics()
          return last
        },
        accept: (m) => m !== undefined && m.authentication.succeeded > 0,
      },
      {
        id: `${engine}-otel-callback-10`,
        label: `${engine} auth-shield/otel batch callback, ${AUTHENTICATORS} authenticators`,
        run: () => {
          points = 0
          meter.callback(observer)
          return points
        },
        accept: (n) => n > 0,
      },
      {
        id: `${engine}-prometheus-10`,
        label: `${engine} auth-shield/prometheus scrape, ${AUTHENTICATORS} authenticators`,
        run: () => {
          scrape(null, response)
          return response.body
        },
        accept: (text) => typeof text === 'string' && text.includes('auth_shield_authentication_requests_total'),
      },
    )
    const sdk = realSdkReader()
    if (sdk !== null) {
      registerMetrics(sdk.meter, { authenticators })
      snapshots.push({
        id: `${engine}-otel-sdk-collect-10`,
        label: `${engine} @opentelemetry/sdk-metrics collect(), ${AUTHENTICATORS} authenticators (SDK included)`,
        async: true,
        run: () => sdk.reader.collect(),
        accept: (r) => r.errors.length === 0 && r.resourceMetrics.scopeMetrics.length > 0,
      })
    }
  }

  const raw = await measureInterleaved('metrics', contenders, opts)
  const rawSnap = await measureInterleaved('metrics-snapshot', snapshots, opts)
  const rows = (list, data, base) =>
    list.map((c) => ({
      id: c.id,
      label: c.label,
      async: Boolean(c.async),
      nsPerOp: summarize(data[c.id].nsPerOp),
      vsBaseline: base === null ? null : pairedRatio(data[c.id].nsPerOp, data[base].nsPerOp),
      callsPerSample: data[c.id].callsPerSample,
      samples: data[c.id].nsPerOp,
    }))
  const timedVsCounted = {}
  for (const [engine] of engines) timedVsCounted[engine] = pairedRatio(raw[`${engine}-authenticate-timed`].nsPerOp, raw[`${engine}-authenticate`].nsPerOp)
  return {
    authenticate: { title: 'authenticate: counters only vs counters + duration histogram', unit: 'ns/op', baseline: BASELINE, rows: rows(contenders, raw, BASELINE) },
    snapshot: { title: `Snapshot collection, ${AUTHENTICATORS} authenticators`, unit: 'ns/op', baseline: `native-otel-callback-10`, rows: rows(snapshots, rawSnap, 'native-otel-callback-10') },
    timedVsCounted,
  }
}

module.exports = { runMetrics, AUTHENTICATORS }
