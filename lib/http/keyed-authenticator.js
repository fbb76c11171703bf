'use strict'

// The `authenticator` of an `expressjwt` middleware with a secret getter. Such a middleware
// decides with one engine per key the getter returns (lib/http/express-jwt-compat.js,
// KeyedDecisions), made when a key is first met; the app still holds one `authenticator`. A
// revocation made through it must reach every key's engine, those made later included: before,
// it reached only the engine of the requests answered before key selection, and a revoked token
// kept passing (fail open). So a revocation is applied to every engine there is and kept in a log
// that every engine made later replays before it decides its first request; `metrics()` and the
// state getters sum (or read) every engine, so the exporters see the whole middleware.

const { authenticatorMetrics } = require('../metrics/ledger')
const { fixedClockOf } = require('../../base/engine-clock')
const { defaultOf } = require('../../contract')
const { REVOCATION_SEAM, revocationSeam, revocationWriter } = require('../../base/store-seam')

class KeyedAuthenticator {
  /** `base`: the decision answering requests before key selection; `decisions`: the keys' (a Map, grown by its owner). */
  constructor(base, decisions, config) {
    this.base = base.engine.authenticator
    this.decisions = decisions
    // The clock of the engines (a fixed clockTimestamp in tests) and their leeway, for the log.
    this.fixedClock = fixedClockOf(this.base)
    this.toleranceSec = typeof config.clockToleranceSec === 'number' ? config.clockToleranceSec : defaultOf('clockToleranceSec')
    // Every revocation made, by what it revokes: [method, args]. Replayed onto each new key's engine.
    this.log = new Map()
    // How long an engine keeps a subject's cut-off (js/authenticator.js retentionSec).
    this.retentionSec = Math.max(this.base.accessTtlSec, this.base.refreshTtlSec) + this.toleranceSec
    this.lastPruneSize = 0
    // setDurationMetrics' last answer, for the engines made after it (undefined: never called).
    this.durationMetrics = undefined
    // Set by a stale RevocationFeed with onStale 'closed' (KEYED_SEAM), for the engines made after it.
    this.revocationsUnavailable = false
  }

  /** Seconds since the epoch as the engines read them (to the millisecond). */
  nowSec() {
    return this.fixedClock === null ? Date.now() / 1000 : Math.floor(this.fixedClock * 1000) / 1000
  }

  // With a RevocationFeed attached, the feed takes the call first (base/store-seam.js) and
  // applies it here through revokeLocally: every engine and the log, then Redis.
  revokeToken(jti, expiresAtSec, options) {
    const writer = revocationWriter(this)
    if (writer !== undefined) return writer.revokeToken(jti, expiresAtSec, options)
    // The base engine checks the arguments and the maxRevocations bound first: a refused
    // revocation throws before any engine or the log takes it.
    const answer = this.base.revokeToken(jti, expiresAtSec, options)
    // A copy: the caller may reuse its options object for another call.
    const args = [jti, expiresAtSec, copyOf(options)]
    const id = JSON.stringify(['token', issOf(options), jti])
    const held = this.log.get(id)
    if (held === undefined || held[1][1] < expiresAtSec) this.log.set(id, ['revokeToken', args])
    this.forward('revokeToken', args)
    this.prune()
    return answer
  }

  revokeSubject(sub, options) {
    const writer = revocationWriter(this)
    if (writer !== undefined) return writer.revokeSubject(sub, options)
    // The default cut-off ("the millisecond after the call", docs/revocation.md) is fixed now,
    // once, so an engine made later replays this call's cut-off, not its own moment's.
    const args = [sub, copyOf(withCutoff(options, this.nowSec()))]
    const answer = this.base.revokeSubject(...args)
    const id = JSON.stringify(['subject', issOf(options), sub])
    const held = this.log.get(id)
    if (held === undefined || cutoffOf(held[1][1]) <= cutoffOf(args[1])) this.log.set(id, ['revokeSubject', args])
    this.forward('revokeSubject', args)
    this.prune()
    return answer
  }

  /** `method(...args)` on every key's engine; the first refusal is thrown once all have been tried. */
  forward(method, args) {
    let refused
    for (const decision of this.decisions.values()) {
      try {
        decision.engine.authenticator[method](...args)
      } catch (err) {
        if (refused === undefined) refused = err
      }
    }
    if (refused !== undefined) throw refused
  }

  /** Every revocation made so far, onto the engine of a key met now (throws as the engine refuses one). */
  replayOnto(authenticator) {
    for (const [method, args] of this.log.values()) authenticator[method](...args)
    if (this.durationMetrics !== undefined) authenticator.setDurationMetrics(this.durationMetrics)
    if (this.revocationsUnavailable) revocationSeam(authenticator).setRevocationUnavailable(authenticator, true)
  }

  /** The duration histogram (docs/observability.md) on or off in every key's engine, those made later too. */
  setDurationMetrics(enabled) {
    const answer = this.base.setDurationMetrics(enabled)
    this.durationMetrics = enabled
    this.forward('setDurationMetrics', [enabled])
    return answer
  }

  /** Drops logged revocations no engine can still hold (a token's past its expiry plus leeway, a subject's past retention). */
  prune() {
    if (this.log.size < 1024 || this.log.size < 2 * this.lastPruneSize) return
    const now = this.nowSec()
    for (const [id, [method, args]] of this.log) {
      const until = method === 'revokeToken' ? args[1] + this.toleranceSec : cutoffOf(args[1]) + this.retentionSec
      if (until < now) this.log.delete(id)
    }
    this.lastPruneSize = this.log.size
  }

  /** The middleware's metrics: every engine's snapshot with its refusals after the engine, summed. */
  metrics() {
    let total = authenticatorMetrics(this.base, this.base.metrics())
    for (const decision of this.decisions.values()) {
      const authenticator = decision.engine.authenticator
      total = sum(total, authenticatorMetrics(authenticator, authenticator.metrics()))
    }
    return total
  }

  // Every engine holds the same revocations: the base engine's count is the middleware's.
  get revocationCount() {
    return this.base.revocationCount
  }
  get revocationUnavailable() {
    return this.base.revocationUnavailable
  }
  get rateLimitBuckets() {
    let n = this.base.rateLimitBuckets
    for (const decision of this.decisions.values()) n += decision.engine.authenticator.rateLimitBuckets
    return n
  }
  get verifiedTokenCacheEntries() {
    let n = this.base.verifiedTokenCacheEntries
    for (const decision of this.decisions.values()) n += decision.engine.authenticator.verifiedTokenCacheEntries
    return n
  }
  // The config's settings, the same in every engine.
  get rateLimitMax() {
    return this.base.rateLimitMax
  }
  get rateLimitRefillPerSec() {
    return this.base.rateLimitRefillPerSec
  }
  get accessTtlSec() {
    return this.base.accessTtlSec
  }
  get refreshTtlSec() {
    return this.base.refreshTtlSec
  }
  get requiredScope() {
    return this.base.requiredScope
  }
  get requiredAcr() {
    return this.base.requiredAcr
  }
  get maxAuthAgeSec() {
    return this.base.maxAuthAgeSec
  }
  get certificateBoundTokens() {
    return this.base.certificateBoundTokens
  }

  /** What a RevocationFeed attached to this authenticator calls (base/store-seam.js revocationSeam). */
  get [REVOCATION_SEAM]() {
    return KEYED_SEAM
  }
}

const KEYED_SEAM = Object.freeze({
  /** revocationUnavailable in every key's engine, those made later too. */
  setRevocationUnavailable(keyed, unavailable) {
    if (typeof unavailable !== 'boolean') throw new TypeError('unavailable must be a boolean')
    keyed.revocationsUnavailable = unavailable
    for (const authenticator of [keyed.base, ...[...keyed.decisions.values()].map((d) => d.engine.authenticator)]) {
      // A key's engine in shadow mode: both engines (lib/http/engine.js).
      revocationSeam(authenticator).setRevocationUnavailable(authenticator, unavailable)
    }
  },
})

function copyOf(options) {
  return options !== null && typeof options === 'object' ? { ...options } : options
}

/** The `iss` a revocation names (undefined: the config's issuer, the same in every engine). */
function issOf(options) {
  return options !== null && typeof options === 'object' ? options.iss : undefined
}

/** `options` with the default cut-off written in; anything but absent or an object as given (the engine refuses it). */
function withCutoff(options, nowSec) {
  if (options === undefined || options === null) return { issuedBeforeSec: cutoffAfter(nowSec) }
  if (typeof options !== 'object' || options.issuedBeforeSec !== undefined || options.before !== undefined) return options
  return { ...options, issuedBeforeSec: cutoffAfter(nowSec) }
}

/** The cut-off a logged revokeSubject's options give (issuedBeforeSec, or its deprecated name). */
function cutoffOf(options) {
  return options.issuedBeforeSec ?? options.before
}

/** The millisecond after `nowSec`, as an engine that never signed takes for its default cut-off. */
function cutoffAfter(nowSec) {
  return (Math.round(nowSec * 1000) + 1) / 1000
}

/** Two metrics() snapshots as one: counts added, revocations (held by every engine alike) the first's. */
function sum(a, b) {
  const failures = { ...a.authentication.failures }
  for (const code in b.authentication.failures) failures[code] = (failures[code] || 0) + b.authentication.failures[code]
  const rateLimit = {}
  for (const name in a.rateLimit) rateLimit[name] = a.rateLimit[name] + (b.rateLimit[name] || 0)
  const cache = {}
  for (const name in a.verifiedTokenCache) cache[name] = a.verifiedTokenCache[name] + (b.verifiedTokenCache[name] || 0)
  return {
    ...a,
    authentication: { succeeded: a.authentication.succeeded + b.authentication.succeeded, failed: a.authentication.failed + b.authentication.failed, failures },
    rateLimit,
    verifiedTokenCache: cache,
    revocations: { ...a.revocations, refusedAtLimit: Math.max(a.revocations.refusedAtLimit, b.revocations.refusedAtLimit), unavailable: a.revocations.unavailable || b.revocations.unavailable },
    duration: {
      ...a.duration,
      count: a.duration.count + b.duration.count,
      sumSeconds: a.duration.sumSeconds + b.duration.sumSeconds,
      buckets: a.duration.buckets.map((n, i) => n + (b.duration.buckets[i] || 0)),
    },
  }
}

module.exports = { KeyedAuthenticator, withCutoff }
