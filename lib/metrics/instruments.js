'use strict'

// The instruments auth-shield reports (docs/observability.md) and how each is read from the
// sources' metrics() snapshots: one table for auth-shield/otel and auth-shield/prometheus.
// Cardinality is bounded by construction: attribute values are result names, error codes from
// contract/error-codes.json, `le` bounds, and the names the application gives its sources (1 to 64
// characters, at most 256 per kind); never a user, a tenant or anything from a token.

const { typeError, rangeError } = require('../../base/error')
const { message } = require('../../contract')
const { authenticatorMetrics } = require('./ledger')

const MAX_NAME_LENGTH = 64
const MAX_SOURCES = 256

const A = Object.freeze({
  authenticator: 'auth_shield.authenticator',
  result: 'auth_shield.authentication.result',
  errorType: 'error.type',
  rateLimitResult: 'auth_shield.rate_limiting.result',
  cacheResult: 'auth_shield.verified_token_cache.result',
  store: 'auth_shield.store',
  storeResult: 'auth_shield.store.result',
  jwks: 'auth_shield.jwks',
  jwksResult: 'auth_shield.jwks.result',
  jwksIssuer: 'auth_shield.jwks.issuer',
  feed: 'auth_shield.revocation_feed',
  feedOperation: 'auth_shield.revocation_feed.operation',
  le: 'le',
})

/** `{ name: source }` checked: at most MAX_SOURCES entries, names 1..64 chars, each with metrics(). */
function readSources(label, sources) {
  if (sources === undefined || sources === null) return []
  if (typeof sources !== 'object' || Array.isArray(sources)) throw typeError(`${label} must be an object of { name: source }`)
  const entries = Object.entries(sources)
  if (entries.length > MAX_SOURCES) throw rangeError(`${label} must have at most ${MAX_SOURCES} entries, got ${entries.length}`)
  for (const [name, source] of entries) {
    if (name.length === 0 || name.length > MAX_NAME_LENGTH) throw rangeError(`${label} names must be 1 to ${MAX_NAME_LENGTH} characters`)
    if (source === null || typeof source !== 'object' || typeof source.metrics !== 'function') {
      throw typeError(`${label}.${name} must have a metrics() method`)
    }
  }
  return entries
}

/** One snapshot, or null when a source throws or answers something else (it is skipped, never fatal). */
function readSnapshot(source) {
  try {
    const m = source.metrics()
    return m !== null && typeof m === 'object' ? m : null
  } catch {
    return null
  }
}

/**
 * An Authenticator's snapshot with the refusals decided after its engine (lib/metrics/ledger.js):
 * every refusal counted with the code it was answered with.
 */
function readAuthenticatorSnapshot(authenticator) {
  const m = readSnapshot(authenticator)
  if (m === null || m.authentication === null || typeof m.authentication !== 'object') return m
  return authenticatorMetrics(authenticator, m)
}

/** Instrument key -> { name (OpenTelemetry), kind (counter | gauge), unit (UCUM), description }. */
const INSTRUMENTS = Object.freeze({
  requests: { name: 'auth_shield.authentication.requests', kind: 'counter', unit: '{request}', description: 'Requests authenticated, by result and error code' },
  rateLimit: { name: 'auth_shield.rate_limiting.requests', kind: 'counter', unit: '{request}', description: 'Rate-limit decisions: acquired, rejected (429), pending (503)' },
  cache: { name: 'auth_shield.verified_token_cache.lookups', kind: 'counter', unit: '{lookup}', description: 'Verified-token cache lookups, hit or miss' },
  revocationsHeld: { name: 'auth_shield.revocations.held', kind: 'gauge', unit: '{revocation}', description: 'Live revocations held' },
  revocationsRefused: { name: 'auth_shield.revocations.refused', kind: 'counter', unit: '{revocation}', description: 'Revocations refused at maxRevocations' },
  revocationsUnavailable: { name: 'auth_shield.revocations.unavailable', kind: 'gauge', unit: '1', description: '1 while unrevoked tokens are refused with revocation_unavailable' },
  durationCount: { name: 'auth_shield.authentication.duration.count', kind: 'counter', unit: '{call}', description: 'authenticate calls timed' },
  durationSum: { name: 'auth_shield.authentication.duration.sum', kind: 'counter', unit: 's', description: 'Total time in authenticate' },
  durationBucket: { name: 'auth_shield.authentication.duration.bucket', kind: 'counter', unit: '{call}', description: 'authenticate calls of at most `le` seconds (cumulative)' },
  storeRoundTrips: { name: 'auth_shield.store.round_trips', kind: 'counter', unit: '{round_trip}', description: 'Store round trips, by result' },
  storeOutages: { name: 'auth_shield.store.outages', kind: 'counter', unit: '{outage}', description: 'Store outages begun' },
  storeFallback: { name: 'auth_shield.store.fallback', kind: 'gauge', unit: '1', description: '1 while the store is unreachable and limits are local' },
  storeFallbackTime: { name: 'auth_shield.store.fallback.time', kind: 'counter', unit: 's', description: 'Time spent on the local fallback' },
  jwksFetches: { name: 'auth_shield.jwks.fetches', kind: 'counter', unit: '{fetch}', description: 'JWKS fetches, by result' },
  feedLag: { name: 'auth_shield.revocation_feed.lag', kind: 'gauge', unit: 's', description: 'Time since the last successful read of the revocation stream' },
  feedStale: { name: 'auth_shield.revocation_feed.stale', kind: 'gauge', unit: '1', description: '1 while the feed is past maxRevocationLagMs' },
  feedErrors: { name: 'auth_shield.revocation_feed.errors', kind: 'counter', unit: '{error}', description: 'Revocation stream commands that failed, by operation' },
  jwksKeyAge: { name: 'auth_shield.jwks.key_age', kind: 'gauge', unit: 's', description: 'Age of the key set in force (absent without one)' },
})

/** Checks `{ authenticators, stores, jwks, feeds }` once; returns the lists to read. */
function readAllSources(sources) {
  if (sources === null || typeof sources !== 'object') throw typeError(message('mustBeObject', { name: 'sources' }))
  return {
    authenticators: readSources('authenticators', sources.authenticators),
    stores: readSources('stores', sources.stores),
    jwks: readSources('jwks', sources.jwks),
    feeds: readSources('feeds', sources.feeds),
  }
}

/** Reads every source once and calls `emit(instrumentKey, value, attributes)` per point. */
function observe(lists, emit) {
  const { authenticators, stores, jwks, feeds } = lists
  // The attribute sets of the authenticators, made on the first collection and reused by every
  // later one (a collection allocates no attribute object): bounded by the sources (at most
  // MAX_SOURCES), the error codes and the fixed bounds.
  if (lists.authenticatorAttributes === undefined) lists.authenticatorAttributes = authenticators.map(([name]) => new AuthenticatorAttributes(name))
  for (let i = 0; i < authenticators.length; i++) {
    const m = readAuthenticatorSnapshot(authenticators[i][1])
    if (m === null) continue
    const at = lists.authenticatorAttributes[i]
    const who = at.who
    emit('requests', m.authentication.succeeded, at.success)
    const failures = m.authentication.failures
    for (const code in failures) {
      const n = failures[code]
      if (n > 0) emit('requests', n, at.failure(code))
    }
    emit('rateLimit', m.rateLimit.allowed, at.acquired)
    emit('rateLimit', m.rateLimit.limited, at.rejected)
    emit('rateLimit', m.rateLimit.pending, at.pending)
    emit('cache', m.verifiedTokenCache.hits, at.hit)
    emit('cache', m.verifiedTokenCache.misses, at.miss)
    emit('revocationsHeld', m.revocations.held, who)
    emit('revocationsRefused', m.revocations.refusedAtLimit, who)
    emit('revocationsUnavailable', m.revocations.unavailable ? 1 : 0, who)
    const d = m.duration
    emit('durationCount', d.count, who)
    emit('durationSum', d.sumSeconds, who)
    const { buckets, boundsSeconds } = d
    let cumulative = 0
    for (let k = 0; k < buckets.length; k++) {
      cumulative += buckets[k]
      emit('durationBucket', cumulative, at.bucket(k, boundsSeconds))
    }
  }
  for (const [name, store] of stores) {
    const m = readSnapshot(store)
    if (m === null) continue
    const who = { [A.store]: name }
    emit('storeRoundTrips', m.roundTrips - m.failedRoundTrips, { ...who, [A.storeResult]: 'success' })
    emit('storeRoundTrips', m.failedRoundTrips, { ...who, [A.storeResult]: 'failure' })
    emit('storeOutages', m.outages, who)
    emit('storeFallback', m.fallback ? 1 : 0, who)
    emit('storeFallbackTime', m.fallbackSeconds, who)
  }
  for (const [name, source] of jwks) {
    const m = readSnapshot(source)
    if (m === null) continue
    // Trusted issuers (lib/jwks/issuers.js): one set of points per issuer, its identifier an
    // attribute (configured, at most 50); a remote JWKS: one set.
    if (m.issuers !== null && typeof m.issuers === 'object') {
      for (const issuer in m.issuers) jwksPoints(emit, m.issuers[issuer], { [A.jwks]: name, [A.jwksIssuer]: issuer })
    } else {
      jwksPoints(emit, m, { [A.jwks]: name })
    }
  }
  for (const [name, feed] of feeds) {
    const m = readSnapshot(feed)
    if (m === null) continue
    const who = { [A.feed]: name }
    if (m.lagSeconds !== null) emit('feedLag', m.lagSeconds, who)
    emit('feedStale', m.stale ? 1 : 0, who)
    emit('feedErrors', m.readErrors, { ...who, [A.feedOperation]: 'read' })
    emit('feedErrors', m.writeErrors, { ...who, [A.feedOperation]: 'write' })
  }
}

/** The points of one key source's (or one trusted issuer's) snapshot `m`. */
function jwksPoints(emit, m, who) {
  emit('jwksFetches', m.fetches - m.failures, { ...who, [A.jwksResult]: 'success' })
  emit('jwksFetches', m.failures, { ...who, [A.jwksResult]: 'failure' })
  if (m.keyAgeSeconds !== null) emit('jwksKeyAge', m.keyAgeSeconds, who)
}

/** The attribute sets of one authenticator's points, each made once. */
class AuthenticatorAttributes {
  constructor(name) {
    const who = { [A.authenticator]: name }
    this.who = who
    this.success = { ...who, [A.result]: 'success' }
    this.acquired = { ...who, [A.rateLimitResult]: 'acquired' }
    this.rejected = { ...who, [A.rateLimitResult]: 'rejected' }
    this.pending = { ...who, [A.rateLimitResult]: 'pending' }
    this.hit = { ...who, [A.cacheResult]: 'hit' }
    this.miss = { ...who, [A.cacheResult]: 'miss' }
    this.failures = new Map()
    this.buckets = []
  }

  failure(code) {
    let at = this.failures.get(code)
    if (at === undefined) this.failures.set(code, (at = { ...this.who, [A.result]: 'failure', [A.errorType]: code }))
    return at
  }

  bucket(k, boundsSeconds) {
    let at = this.buckets[k]
    if (at === undefined) at = this.buckets[k] = { ...this.who, [A.le]: k < boundsSeconds.length ? String(boundsSeconds[k]) : '+Inf' }
    return at
  }
}

module.exports = { INSTRUMENTS, ATTRIBUTES: A, readAllSources, readSnapshot, readAuthenticatorSnapshot, observe }
