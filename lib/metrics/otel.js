'use strict'

// auth-shield/otel: observable instruments on a Meter the application passes in
// (@opentelemetry/api stays the application's dependency). Nothing is recorded per request:
// each collection reads one metrics() snapshot per source (docs/observability.md).
//
// Names and attributes follow the shape of OpenTelemetry's ASP.NET Core conventions
// (`aspnetcore.authentication.*`, `aspnetcore.rate_limiting.*`, `…result`, `error.type`); the
// table and the bounds on attribute values are in lib/metrics/instruments.js.

const { INSTRUMENTS, ATTRIBUTES, readAllSources, observe } = require('./instruments')
const { typeError } = require('../../base/error')

/**
 * Registers the instruments on `meter` (an @opentelemetry/api Meter) for
 * `{ authenticators, stores, jwks, feeds }` (each `{ name: source }`). Returns `{ unregister() }`.
 */
function registerMetrics(meter, sources = {}) {
  if (meter === null || typeof meter !== 'object' || typeof meter.createObservableCounter !== 'function') {
    throw typeError('meter must be an OpenTelemetry Meter')
  }
  const lists = readAllSources(sources)
  const instruments = {}
  for (const [key, { name, kind, unit, description }] of Object.entries(INSTRUMENTS)) {
    const options = { description, unit }
    instruments[key] = kind === 'counter' ? meter.createObservableCounter(name, options) : meter.createObservableGauge(name, options)
  }
  const callback = (o) => observe(lists, (key, value, attributes) => o.observe(instruments[key], value, attributes))
  const observables = Object.values(instruments)
  meter.addBatchObservableCallback(callback, observables)
  return {
    unregister() {
      meter.removeBatchObservableCallback(callback, observables)
    },
  }
}

module.exports = { registerMetrics, ATTRIBUTES }
