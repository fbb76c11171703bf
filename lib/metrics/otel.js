'use strict'

// auth-shield/otel: observable instruments on a Meter the application passes in
// (@opentelemetry/api stays the application's dependency). Nothing is recorded per request:
// each collection reads one metrics() snapshot per source (docs/observability.md).
//
// Names and attributes follow the shape of OpenTelemetry's ASP.NET Core conventions
// (`aspnetcore.authentication.*`, `aspnetcore.rate_limiting.*`, `…result`, `error.type`).
// Cardinality is bounded by construction: attribute values are result names, error codes from
// js/error-codes.json, and the names the application gives its sources here; never a user,
// a tenant or anything from a token.

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
  feed: 'auth_shield.revocation_feed',
  feedOperation: 'auth_shield.revocation_feed.operation',
  le: 'le',
})

/** `{ name: source }` checked: at most MAX_SOURCES entries, names 1..64 chars, each with metrics(). */
function readSources(label, sources) {
  if (sources === undefined || sources === null) return []
  if (typeof sources !== 'object' || Array.isArray(sources)) throw new TypeError(`${label} must be an object of { name: source }`)
  const entries = Object.entries(sources)
  if (entries.length > MAX_SOURCES) throw new RangeError(`${label} must have at most ${MAX_SOURCES} entries, got ${entries.length}`)
  for (const [name, source] of entries) {
    if (name.length === 0 || name.length > MAX_NAME_LENGTH) throw new RangeError(`${label} names must be 1 to ${MAX_NAME_LENGTH} characters`)
    if (source === null || typeof source !== 'object' || typeof source.metrics !== 'function') {
      throw new TypeError(`${label}.${name} must have a metrics() method`)
    }
  }
  return entries
}

/** One snapshot, or null when a source throws or answers something else (it is skipped, never fatal). */
function read(source) {
  try {
    const m = source.metrics()
    return m !== null && typeof m === 'object' ? m : null
  } catch {
    return null
  }
}

/**
 * Registers the instruments on `meter` (an @opentelemetry/api Meter) for
 * `{ authenticators, stores, jwks, feeds }` (each `{ name: source }`). Returns `{ unregister() }`.
 */
function registerMetrics(meter, sources = {}) {
  if (meter === null || typeof meter !== 'object' || typeof meter.createObservableCounter !== 'function') {
    throw new TypeError('meter must be an OpenTelemetry Meter')
  }
  if (sources === null || typeof sources !== 'object') throw new TypeError('sources must be an object')
  const authenticators = readSources('authenticators', sources.authenticators)
  const stores = readSources('stores', sources.stores)
  const jwks = readSources('jwks', sources.jwks)
  const feeds = readSources('feeds', sources.feeds)

  const counter = (name, description, unit) => meter.createObservableCounter(name, { description, unit })
  const gauge = (name, description, unit) => meter.createObservableGauge(name, { description, unit })
  const i = {
    requests: counter('auth_shield.authentication.requests', 'Requests authenticated, by result and error code', '{request}'),
    rateLimit: counter('auth_shield.rate_limiting.requests', 'Rate-limit decisions: acquired, rejected (429), pending (503)', '{request}'),
    cache: counter('auth_shield.verified_token_cache.lookups', 'Verified-token cache lookups, hit or miss', '{lookup}'),
    revocationsHeld: gauge('auth_shield.revocations.held', 'Live revocations held', '{revocation}'),
    revocationsRefused: counter('auth_shield.revocations.refused', 'Revocations refused at maxRevocations', '{revocation}'),
    revocationsUnavailable: gauge('auth_shield.revocations.unavailable', '1 while unrevoked tokens are refused with revocation_unavailable', '1'),
    durationCount: counter('auth_shield.authentication.duration.count', 'authenticate calls timed', '{call}'),
    durationSum: counter('auth_shield.authentication.duration.sum', 'Total time in authenticate', 's'),
    durationBucket: counter('auth_shield.authentication.duration.bucket', 'authenticate calls of at most `le` seconds (cumulative)', '{call}'),
    storeRoundTrips: counter('auth_shield.store.round_trips', 'Store round trips, by result', '{round_trip}'),
    storeOutages: counter('auth_shield.store.outages', 'Store outages begun', '{outage}'),
    storeFallback: gauge('auth_shield.store.fallback', '1 while the store is unreachable and limits are local', '1'),
    storeFallbackTime: counter('auth_shield.store.fallback.time', 'Time spent on the local fallback', 's'),
    jwksFetches: counter('auth_shield.jwks.fetches', 'JWKS fetches, by result', '{fetch}'),
    feedLag: gauge('auth_shield.revocation_feed.lag', 'Time since the last successful read of the revocation stream', 's'),
    feedStale: gauge('auth_shield.revocation_feed.stale', '1 while the feed is past maxRevocationLagMs', '1'),
    feedErrors: counter('auth_shield.revocation_feed.errors', 'Revocation stream commands that failed, by operation', '{error}'),
    jwksKeyAge: gauge('auth_shield.jwks.key_age', 'Age of the key set in force (absent without one)', 's'),
  }

  const callback = (o) => {
    for (const [name, auth] of authenticators) {
      const m = read(auth)
      if (m === null) continue
      const who = { [A.authenticator]: name }
      o.observe(i.requests, m.authentication.succeeded, { ...who, [A.result]: 'success' })
      for (const [code, n] of Object.entries(m.authentication.failures)) {
        if (n > 0) o.observe(i.requests, n, { ...who, [A.result]: 'failure', [A.errorType]: code })
      }
      o.observe(i.rateLimit, m.rateLimit.allowed, { ...who, [A.rateLimitResult]: 'acquired' })
      o.observe(i.rateLimit, m.rateLimit.limited, { ...who, [A.rateLimitResult]: 'rejected' })
      o.observe(i.rateLimit, m.rateLimit.pending, { ...who, [A.rateLimitResult]: 'pending' })
      o.observe(i.cache, m.verifiedTokenCache.hits, { ...who, [A.cacheResult]: 'hit' })
      o.observe(i.cache, m.verifiedTokenCache.misses, { ...who, [A.cacheResult]: 'miss' })
      o.observe(i.revocationsHeld, m.revocations.held, who)
      o.observe(i.revocationsRefused, m.revocations.refusedAtLimit, who)
      o.observe(i.revocationsUnavailable, m.revocations.unavailable ? 1 : 0, who)
      const d = m.duration
      o.observe(i.durationCount, d.count, who)
      o.observe(i.durationSum, d.sumSeconds, who)
      let cumulative = 0
      d.buckets.forEach((n, k) => {
        cumulative += n
        o.observe(i.durationBucket, cumulative, { ...who, [A.le]: k < d.boundsSeconds.length ? String(d.boundsSeconds[k]) : '+Inf' })
      })
    }
    for (const [name, store] of stores) {
      const m = read(store)
      if (m === null) continue
      const who = { [A.store]: name }
      o.observe(i.storeRoundTrips, m.roundTrips - m.failedRoundTrips, { ...who, [A.storeResult]: 'success' })
      o.observe(i.storeRoundTrips, m.failedRoundTrips, { ...who, [A.storeResult]: 'failure' })
      o.observe(i.storeOutages, m.outages, who)
      o.observe(i.storeFallback, m.fallback ? 1 : 0, who)
      o.observe(i.storeFallbackTime, m.fallbackSeconds, who)
    }
    for (const [name, source] of jwks) {
      const m = read(source)
      if (m === null) continue
      const who = { [A.jwks]: name }
      o.observe(i.jwksFetches, m.fetches - m.failures, { ...who, [A.jwksResult]: 'success' })
      o.observe(i.jwksFetches, m.failures, { ...who, [A.jwksResult]: 'failure' })
      if (m.keyAgeSeconds !== null) o.observe(i.jwksKeyAge, m.keyAgeSeconds, who)
    }
    for (const [name, feed] of feeds) {
      const m = read(feed)
      if (m === null) continue
      const who = { [A.feed]: name }
      if (m.lagSeconds !== null) o.observe(i.feedLag, m.lagSeconds, who)
      o.observe(i.feedStale, m.stale ? 1 : 0, who)
      o.observe(i.feedErrors, m.readErrors, { ...who, [A.feedOperation]: 'read' })
      o.observe(i.feedErrors, m.writeErrors, { ...who, [A.feedOperation]: 'write' })
    }
  }
  const observables = Object.values(i)
  meter.addBatchObservableCallback(callback, observables)
  return {
    unregister() {
      meter.removeBatchObservableCallback(callback, observables)
    },
  }
}

module.exports = { registerMetrics, ATTRIBUTES: A }
