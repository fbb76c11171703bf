'use strict'

// The middleware option `tracing: { trace, tracer, spans }` (docs/observability.md#tracing): the
// adapters set the decision of each request as attributes on the span the application's
// instrumentation made active (the HTTP server span), or, with `spans: true`, on a span of their
// own around the decision. auth-shield has no dependency on @opentelemetry/api: the application
// passes its `trace` API (or a Tracer) in, and only the few members read here are relied on.
//
// Without the option nothing of this runs: the adapters call the decision as before (traced()
// returns the function it is given). With it, a request costs one getActiveSpan() and a few
// setAttribute() calls, and nothing at all while no span is active.
//
// Tracing never changes a verdict: whatever the tracer or the span throws or returns is ignored
// (the request is decided exactly once, as without tracing), since an observer that refused
// traffic, or let a refused request through, would be worse than a missing attribute.

const { typeError } = require('../../base/error')

const VERSION = require('../../package.json').version

// The attribute names, in the style of the metric instruments (lib/metrics/instruments.js).
const RESULT = 'auth_shield.authentication.result'
const ERROR_TYPE = 'error.type'
const RATE_LIMIT = 'auth_shield.rate_limiting.result'
const STORE_FALLBACK = 'auth_shield.store.fallback'
// Our own span (spans: true) when asked: low-cardinality, named for the operation.
const SPAN_NAME = 'auth_shield.authenticate'
// The span of a route requirement's refusal (spans: true).
const ROUTE_SPAN_NAME = 'auth_shield.route_requirement'
// SpanStatusCode.ERROR of @opentelemetry/api (a stable enum of the specification).
const STATUS_ERROR = 2

const TRACING_KEYS = new Set(['trace', 'tracer', 'spans'])

/**
 * The `tracing` middleware option, checked once: null when absent, else a DecisionTracing.
 * `store` is the shared store the decision's authenticator limits through, if any.
 */
function readTracing(value, store) {
  if (value === undefined || value === null) return null
  const where = 'options.tracing'
  if (typeof value !== 'object' || Array.isArray(value)) throw typeError(`${where} must be an object: { trace, tracer?, spans? }`)
  for (const key of Object.keys(value)) {
    if (!TRACING_KEYS.has(key)) throw typeError(`${where}.${key} is not an option (trace, tracer, spans)`)
  }
  const { trace, tracer, spans = false } = value
  if (typeof spans !== 'boolean') throw typeError(`${where}.spans must be a boolean`)
  if (tracer !== undefined && (tracer === null || typeof tracer !== 'object' || typeof tracer.startActiveSpan !== 'function')) {
    throw typeError(`${where}.tracer must be an OpenTelemetry Tracer (with startActiveSpan)`)
  }
  const hasTrace = trace !== undefined
  if (hasTrace && (trace === null || typeof trace !== 'object' || typeof trace.getActiveSpan !== 'function' || typeof trace.getTracer !== 'function')) {
    throw typeError(`${where}.trace must be the trace API of @opentelemetry/api (with getActiveSpan and getTracer)`)
  }
  if (!hasTrace && !(spans && tracer !== undefined)) {
    throw typeError(`${where}.trace is required (the trace API of @opentelemetry/api); only spans: true with a tracer can go without it`)
  }
  if (!spans) return new DecisionTracing(trace, null, store)
  return new DecisionTracing(null, tracer !== undefined ? tracer : trace.getTracer('auth-shield', VERSION), store)
}

class DecisionTracing {
  constructor(trace, tracer, store) {
    this.trace = trace
    this.tracer = tracer
    this.store = store
  }

  /** `decide` (the adapter's `(req, path) => decision`), with the decision's attributes traced. */
  wrap(decide) {
    return this.tracer === null ? (req, path) => this.onActiveSpan(decide, req, path) : (req, path) => this.inOwnSpan(decide, req, path)
  }

  onActiveSpan(decide, req, path) {
    let span
    try {
      span = this.trace.getActiveSpan()
      if (span === undefined || span === null || (typeof span.isRecording === 'function' && span.isRecording() !== true)) span = null
    } catch {
      span = null
    }
    if (span === null) return decide(req, path)
    return this.traced(span, false, decide, req, path)
  }

  /**
   * The decision inside a span of ours, active while it is taken (the callbacks and store round
   * trips it waits for are its children). The request is decided exactly once whatever the
   * tracer does: called back twice, later, never, or throwing, or returning something else.
   */
  inOwnSpan(decide, req, path) {
    let called = false
    let threw = false
    let out
    const run = (span) => {
      if (called) return undefined
      called = true
      try {
        out = this.traced(span, true, decide, req, path)
      } catch (err) {
        threw = true
        out = err
      }
      return out
    }
    try {
      this.tracer.startActiveSpan(SPAN_NAME, run)
    } catch {
      // The tracer failed before or after the decision: ours stands.
    }
    if (!called) {
      called = true
      return decide(req, path)
    }
    if (threw) throw out
    return out
  }

  traced(span, own, decide, req, path) {
    let d
    try {
      d = decide(req, path)
    } catch (err) {
      this.failed(span, own, err)
      throw err
    }
    if (typeof d.then !== 'function') {
      this.decided(span, own, d)
      return d
    }
    return d.then(
      (d) => {
        this.decided(span, own, d)
        return d
      },
      (err) => {
        this.failed(span, own, err)
        throw err
      },
    )
  }

  /** The verdict's attributes; nothing for a skipped request. */
  decided(span, own, d) {
    try {
      if (d.action !== 'skip') {
        const result = d.result
        if (d.action === 'pass') {
          span.setAttribute(RESULT, d.authorization === undefined ? 'none' : 'success')
        } else {
          span.setAttribute(RESULT, 'failure')
          span.setAttribute(ERROR_TYPE, result.errorCode)
        }
        const limited = rateLimitResult(result)
        if (limited !== undefined) span.setAttribute(RATE_LIMIT, limited)
        if (this.store !== undefined) span.setAttribute(STORE_FALLBACK, this.store.metrics().fallback === true)
      }
    } catch {
      // A span that cannot take attributes: the verdict stands.
    }
    if (own) end(span)
  }

  /**
   * A refusal decided after the decision was traced (a route requirement): its attributes on the
   * active span (the HTTP server span), or with `spans: true` on a span of its own.
   */
  refusedLater(d) {
    if (this.tracer === null) {
      let span
      try {
        span = this.trace.getActiveSpan()
      } catch {
        return
      }
      if (span !== undefined && span !== null) this.refusedOn(span, d)
      return
    }
    try {
      this.tracer.startActiveSpan(ROUTE_SPAN_NAME, (span) => {
        this.refusedOn(span, d)
        end(span)
      })
    } catch {
      // A tracer that fails: the refusal stands.
    }
  }

  refusedOn(span, d) {
    try {
      span.setAttribute(RESULT, 'failure')
      span.setAttribute(ERROR_TYPE, d.result.errorCode)
    } catch {
      // A span that cannot take attributes: the refusal stands.
    }
  }

  /** A decision that threw (a callback fenced, a recovery failed): the error's code. */
  failed(span, own, err) {
    try {
      const code = err !== null && typeof err === 'object' && typeof err.code === 'string' ? err.code : '_OTHER'
      span.setAttribute(ERROR_TYPE, code)
      if (own) {
        span.recordException(err)
        span.setStatus({ code: STATUS_ERROR, message: code })
      }
    } catch {
      // ignored, as above
    }
    if (own) end(span)
  }
}

function end(span) {
  try {
    span.end()
  } catch {
    // ignored, as above
  }
}

/**
 * The rate limiter's part in a result, as the `auth_shield.rate_limiting.result` of the metrics:
 * `rejected` (429), `pending` (503, waiting for a store lease), `acquired` (a token was taken),
 * undefined when the limiter had no say (off, or the request failed before it).
 */
function rateLimitResult(result) {
  if (result === undefined) return undefined
  const code = result.errorCode
  if (code === 'rate_limited') return 'rejected'
  if (code === 'rate_limit_pending') return 'pending'
  return result.rateLimitRemaining !== undefined ? 'acquired' : undefined
}

module.exports = { readTracing, DecisionTracing, SPAN_NAME, ROUTE_SPAN_NAME, ATTRIBUTES: Object.freeze({ RESULT, ERROR_TYPE, RATE_LIMIT, STORE_FALLBACK }) }
