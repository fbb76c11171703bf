'use strict'

// The observation stage's counts (issue 35): refusals decided after the engine counted a request
// (a key source's keys_unavailable, the DPoP route mode and replay store, isRevoked, a route
// requirement, a failing callback), kept per Authenticator and merged into its metrics()
// snapshot wherever that is read (lib/metrics/instruments.js: auth-shield/otel,
// auth-shield/prometheus, the events). So a request is counted once, with the code it was
// answered with: an engine success a route requirement refused is a failure
// `insufficient_scope`, not a success. Nothing of this runs for a request the engine's answer
// decides (the hot path).

const ledgers = new WeakMap()
// The errors already counted (an error rethrown by an outer layer is one refusal).
const counted = new WeakSet()

class Ledger {
  constructor() {
    // The change to `authentication.succeeded` and to each failure code's count.
    this.succeeded = 0
    this.failures = Object.create(null)
  }

  /** A verdict a stage gave in place of the engine (lib/http/pipeline.js `beforeEngine`). */
  counted(result) {
    if (result.authenticated) this.succeeded++
    else this.add(result.errorCode, 1)
  }

  /** The engine counted `first`; the request was answered `final` (a failure) instead. */
  replaced(first, final) {
    if (first.authenticated) this.succeeded--
    else this.add(first.errorCode, -1)
    if (!final.authenticated) this.add(final.errorCode, 1)
    else this.succeeded++
  }

  /** The engine counted `first`, and the request ran again (its next result is counted instead). */
  withdrawn(first) {
    if (first.authenticated) this.succeeded--
    else this.add(first.errorCode, -1)
  }

  /**
   * A request refused by a failing callback (`err`), after the engine's `result` (undefined when
   * the engine did not run). Its code: the error's ERR_AUTH_SHIELD_* code (a bounded set), else
   * ERR_AUTH_SHIELD_CALLBACK.
   */
  callbackFailed(err, result) {
    const isObject = err !== null && (typeof err === 'object' || typeof err === 'function')
    if (isObject) {
      if (counted.has(err)) return
      counted.add(err)
    }
    if (result !== undefined) {
      if (result.authenticated) this.succeeded--
      else this.add(result.errorCode, -1)
    }
    this.add(isObject ? errorCodeOf(err) : 'ERR_AUTH_SHIELD_CALLBACK', 1)
  }

  add(code, n) {
    this.failures[code] = (this.failures[code] || 0) + n
  }

  /** `m` (an Authenticator's metrics() snapshot) with these refusals in it; `m` itself when there are none. */
  merge(m) {
    if (this.succeeded === 0 && isEmpty(this.failures)) return m
    const failures = { ...m.authentication.failures }
    for (const code in this.failures) {
      failures[code] = Math.max(0, (failures[code] || 0) + this.failures[code])
    }
    let failed = 0
    for (const code in failures) failed += failures[code]
    return { ...m, authentication: { ...m.authentication, succeeded: Math.max(0, m.authentication.succeeded + this.succeeded), failed, failures } }
  }
}

const CODE = /^ERR_AUTH_SHIELD_[A-Z_]{1,40}$/

function errorCodeOf(err) {
  return typeof err.code === 'string' && CODE.test(err.code) ? err.code : 'ERR_AUTH_SHIELD_CALLBACK'
}

function isEmpty(object) {
  for (const _ in object) return false
  return true
}

/** The ledger of `authenticator` (one per Authenticator, however many middlewares share it). */
function ledgerOf(authenticator) {
  let ledger = ledgers.get(authenticator)
  if (ledger === undefined) ledgers.set(authenticator, (ledger = new Ledger()))
  return ledger
}

/** `authenticator.metrics()` with the refusals decided after its engine. */
function authenticatorMetrics(authenticator, m) {
  const ledger = ledgers.get(authenticator)
  return ledger === undefined ? m : ledger.merge(m)
}

module.exports = { ledgerOf, authenticatorMetrics }
