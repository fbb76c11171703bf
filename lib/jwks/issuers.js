'use strict'

// Trusted issuers with discovery (`createTrustedIssuers`, docs/resource-server.md): several
// identity providers, each given by its issuer identifier only. For each, its metadata is
// discovered (lib/jwks/discovery.js) and its `jwks_uri` followed by a remote key source of its
// own (lib/jwks/source.js: schedule, cooldown, stale-if-error, back-off). The Authenticator is
// built with the engine's trusted-issuer registry (config `issuers`, src/issuers.rs): each issuer
// gets its own key set (`setKeys(keys, { issuer })`), chosen by the token's `iss` before any
// `kid` lookup, so a key of issuer A never admits a token claiming B, and a `kid` two issuers
// publish is no ambiguity.
//
// Fetches: never a URL built from a token. A token whose `iss` is not configured is refused
// without any fetch; an unknown `kid` of a trusted issuer asks that issuer's source only, at
// most one fetch per `cooldownMs` per issuer. Discovery that fails (provider down at start-up,
// a document naming another issuer) is retried with the source's back-off (`retryMinMs`
// doubling to `retryMaxMs`), and on demand at most once per `cooldownMs`.
//
// Memory: at most MAX_ISSUERS issuers, each one remote key source (its own bounds: at most
// `maxKeys` keys, and never more than the Authenticator's 100 per issuer) and one discovery in
// flight.

const { createHash } = require('node:crypto')
const EventEmitter = require('node:events')
const { typeError, rangeError } = require('../../base/error')
const { readOptionBag } = require('../options/reader')
const { RemoteJwks, placeholderKeys, SOURCE, RETRY_IN } = require('./source')
const { readIssuer, discoverJwksUri, readJwksUri } = require('./discovery')
const { jwksError, readAlgorithms } = require('./document')
const { readIntrospection } = require('../introspection/options')

/** Most issuers one registry trusts. */
const MAX_ISSUERS = 50
const MIN_RETRY_AFTER_MS = 1_000
// Marks a registry for the middleware (lib/jwks/middleware.js).
const ISSUERS = Symbol.for('auth-shield.trusted-issuers')

class TrustedIssuers extends EventEmitter {
  #entries = new Map()
  #list
  #read
  #targets = new Set()
  #closed = false
  #closing = new AbortController()
  #introspection = new Set()

  constructor(issuers, options) {
    super()
    if (!Array.isArray(issuers) || issuers.length === 0) throw typeError('createTrustedIssuers needs a non-empty array of issuer identifiers')
    if (issuers.length > MAX_ISSUERS) throw rangeError(`at most ${MAX_ISSUERS} trusted issuers, got ${issuers.length}`)
    // Checked now (as each key source will check them again): a bad option fails here, not later.
    this.#read = readOptionBag(options, 'jwksOptions')
    if (this.#read.retryMinMs > this.#read.retryMaxMs) {
      throw rangeError(`options.retryMinMs (${this.#read.retryMinMs}) must not exceed options.retryMaxMs (${this.#read.retryMaxMs})`)
    }
    for (const item of issuers) {
      const spec = readSpec(item)
      const { issuer } = spec
      const url = readIssuer(issuer)
      if (this.#entries.has(issuer)) throw typeError(`the issuer ${issuer} is listed twice`)
      const jwksUri = spec.jwksUri === undefined ? null : readJwksUri(spec.jwksUri, url)
      const audiences = readAudiences(spec.audience, issuer)
      const tenant = readTenant(spec.tenant, issuer)
      // This issuer's key-source options, checked now: a bad one fails here, not at discovery.
      const sourceOptions = spec.algorithms === undefined ? options : { ...options, algorithms: spec.algorithms }
      readOptionBag(sourceOptions, 'jwksOptions')
      readAlgorithms(sourceOptions === undefined ? undefined : sourceOptions.algorithms)
      const algorithms = spec.algorithms === undefined ? null : spec.algorithms
      // Opaque tokens of this issuer, introspected (lib/introspection/).
      const introspection = spec.introspection === undefined ? null : readIntrospection(spec.introspection, issuer, url)
      if (introspection !== null && [...this.#entries.values()].some((e) => e.introspection !== null)) {
        throw typeError('at most one trusted issuer has an introspection option: an opaque token names no issuer, so it is asked of that one')
      }
      this.#entries.set(issuer, { issuer, url, jwksUri, audiences, tenant, algorithms, introspection, sourceOptions, source: null, keys: null, keyless: false, discovering: null, failures: 0, discoveries: 0, discoveryFailures: 0, lastStartMs: -Infinity, timer: null, timerAtMs: Infinity, lastError: null })
    }
    this.#list = Object.freeze([...this.#entries.keys()])
    for (const entry of this.#entries.values()) {
      if (entry.jwksUri === null) this.#discover(entry)
      else this.#startSource(entry, entry.jwksUri)
    }
  }

  get [SOURCE]() {
    return true
  }

  get [ISSUERS]() {
    return true
  }

  /** The trusted issuer identifiers, as configured (frozen). */
  get issuers() {
    return this.#list
  }

  /** Every issuer's key set in force, one after the other (frozen), or null while none has keys. */
  get keys() {
    const all = []
    for (const e of this.#entries.values()) if (e.keys !== null) all.push(...e.keys)
    return all.length === 0 ? null : Object.freeze(all)
  }

  /**
   * The engine's `issuers` option (src/issuers.rs) for these issuers: each with its keys in
   * force (none yet: an empty set), its own audiences, algorithms and tenant.
   */
  engineIssuers() {
    return [...this.#entries.values()].map((e) => {
      const item = { issuer: e.issuer }
      if (e.keys !== null) item.keys = e.keys
      if (e.audiences !== null) item.audience = e.audiences
      if (e.algorithms !== null) item.algorithms = e.algorithms
      if (e.tenant !== null) item.tenant = e.tenant
      return item
    })
  }

  /**
   * Per issuer: `{ issuer, jwksUri, keys, lastError }` (jwksUri null before discovery; keys null
   * while none is in force). Each key is described, not handed out: `{ kid, alg, type, bits |
   * curve, thumbprint }` (the RFC 7638 SHA-256 thumbprint), what an operator compares with the
   * provider's JWKS; a KeyObject would print as `{}`.
   */
  status() {
    return [...this.#entries.values()].map((e) => {
      const one = {
        issuer: e.issuer,
        jwksUri: e.source === null ? null : e.source.url,
        keys: e.keys === null ? null : e.keys.map(describeKey),
        lastError: e.source !== null && e.source.lastError !== null ? e.source.lastError : e.lastError,
      }
      if (e.introspection !== null) one.introspection = this.#introspectionStatus(e)
      // Its metadata has no jwks_uri: no key set will ever be fetched (docs/resource-server.md).
      if (e.keyless) one.introspectionOnly = true
      return one
    })
  }

  /** An introspecting issuer's endpoint and counters over the middlewares using it (lib/introspection/stage.js). */
  #introspectionStatus(entry) {
    const sum = { endpoint: entry.introspection.endpoint === null ? null : entry.introspection.endpoint.href, introspections: 0, failures: 0, lastError: null }
    for (const stage of this.#introspection) {
      const s = stage.status()
      if (s.issuer !== entry.issuer) continue
      if (s.endpoint !== null) sum.endpoint = s.endpoint
      sum.introspections += s.introspections
      sum.failures += s.failures
      if (s.lastError !== null) sum.lastError = s.lastError
    }
    return sum
  }

  /**
   * Counters read now, as RemoteJwks#metrics (docs/observability.md), over every issuer, and per
   * issuer under `issuers` (keyed by the configured identifier: a bounded set, at most
   * MAX_ISSUERS): `fetches` and `failures` count discovery documents and key sets alike;
   * `keyAgeSeconds` is the age of the oldest key set in force (null while none is);
   * `keysAvailable` is true when every issuer has keys in force.
   */
  metrics() {
    const issuers = {}
    let fetches = 0
    let failures = 0
    let oldest = null
    let available = true
    for (const e of this.#entries.values()) {
      const m = e.source === null ? null : e.source.metrics()
      const one = {
        fetches: e.discoveries + (m === null ? 0 : m.fetches),
        failures: e.discoveryFailures + (m === null ? 0 : m.failures),
        keyAgeSeconds: e.keys === null || m === null ? null : m.keyAgeSeconds,
        keysAvailable: e.keys !== null,
      }
      issuers[e.issuer] = one
      fetches += one.fetches
      failures += one.failures
      if (!one.keysAvailable) available = false
      else if (one.keyAgeSeconds !== null) oldest = oldest === null ? one.keyAgeSeconds : Math.max(oldest, one.keyAgeSeconds)
    }
    return { fetches, failures, keyAgeSeconds: oldest, keysAvailable: available, issuers }
  }

  /** The entries of issuers with an `introspection` option (lib/introspection/stage.js). */
  introspecting() {
    return [...this.#entries.values()].filter((e) => e.introspection !== null)
  }

  /** A middleware's introspection stage, closed with this registry and reported by status(). */
  attachIntrospection(stage) {
    this.#introspection.add(stage)
    if (this.#closed) stage.close()
  }

  /** The issuer entry a token's `iss` names, or undefined (exact comparison). */
  entry(iss) {
    return this.#entries.get(iss)
  }

  /**
   * As RemoteJwks#attach, for an Authenticator built with engineIssuers(): feeds it each
   * issuer's key set now (`setKeys(keys, { issuer })`) and every later one.
   */
  attach(authenticator) {
    if (typeof authenticator !== 'object' || authenticator === null || typeof authenticator.setKeys !== 'function') {
      throw typeError('attach needs an Authenticator (an object with setKeys)')
    }
    for (const e of this.#entries.values()) if (e.keys !== null) authenticator.setKeys(e.keys, { issuer: e.issuer })
    this.#targets.add(authenticator)
    return () => {
      this.#targets.delete(authenticator)
    }
  }

  /**
   * Refreshes `entry`'s key set (discovery first while it has none), within the cooldown; with
   * no entry, every issuer's. Resolves true when a different key set was installed; never rejects.
   */
  refresh(entry) {
    if (this.#closed) return Promise.resolve(false)
    if (entry === undefined) return Promise.all([...this.#entries.values()].map((e) => this.refresh(e))).then((all) => all.includes(true))
    if (entry.source !== null) return entry.source.refresh()
    if (entry.keyless) return Promise.resolve(false)
    if (entry.discovering !== null) return entry.discovering
    const wait = entry.lastStartMs + this.#read.cooldownMs - Date.now()
    if (wait > 0) {
      this.#retryWithin(entry, wait)
      return Promise.resolve(false)
    }
    return this.#discover(entry)
  }

  /** Resolves once every issuer has a key set in force; rejects with the first failure (retries go on). */
  ready() {
    return Promise.all(
      [...this.#entries.values()].map(async (e) => {
        if (e.source === null) {
          await (e.discovering !== null ? e.discovering : Promise.resolve(false))
          // An issuer for introspection only is ready once its metadata said so.
          if (e.keyless) return undefined
          if (e.source === null) throw e.lastError !== null ? e.lastError : jwksError('ERR_AUTH_SHIELD_JWKS_CLOSED', 'the trusted issuers are closed')
        }
        return e.source.ready()
      }),
    ).then(() => undefined)
  }

  /** Stops every schedule and aborts fetches in flight; the keys in force stay. */
  close() {
    this.#closed = true
    this.#closing.abort()
    for (const stage of this.#introspection) stage.close()
    for (const e of this.#entries.values()) {
      clearTimeout(e.timer)
      e.timer = null
      if (e.source !== null) e.source.close()
    }
  }

  /** Milliseconds until `entry`'s next fetch (at least a second): a client's Retry-After. */
  [RETRY_IN](entry) {
    if (entry === undefined) return MIN_RETRY_AFTER_MS
    if (entry.source !== null) return entry.source[RETRY_IN]()
    if (entry.discovering !== null || entry.timer === null) return MIN_RETRY_AFTER_MS
    return Math.max(MIN_RETRY_AFTER_MS, Math.min(entry.timerAtMs - Date.now(), this.#read.retryMaxMs))
  }

  /** One discovery of `entry`, shared until it settles; never rejects. */
  #discover(entry) {
    entry.lastStartMs = Date.now()
    clearTimeout(entry.timer)
    entry.timer = null
    entry.timerAtMs = Infinity
    // An issuer introspected whose answers are plain JSON needs keys only for its JWTs: without
    // a jwks_uri it is used for introspection only (docs/resource-server.md).
    const keysOptional = entry.introspection !== null && !entry.introspection.jwtResponse
    entry.discovering = discoverJwksUri(entry.issuer, entry.url, this.#read, this.#closing.signal, keysOptional).then(
      (jwksUri) => {
        entry.discovering = null
        entry.discoveries++
        if (this.#closed) return false
        entry.failures = 0
        entry.lastError = null
        if (jwksUri === null) {
          this.#keyless(entry)
          return false
        }
        return this.#startSource(entry, jwksUri).ready().then(
          () => true,
          () => false,
        )
      },
      (err) => {
        entry.discovering = null
        entry.discoveries++
        entry.discoveryFailures++
        if (this.#closed) return false
        entry.failures++
        entry.lastError = err
        const { retryMinMs, retryMaxMs } = this.#read
        this.#retryWithin(entry, Math.min(retryMaxMs, retryMinMs * 2 ** Math.min(entry.failures - 1, 31)))
        this.#notify('error', err)
        return false
      },
    )
    return entry.discovering
  }

  /**
   * `entry` publishes no keys: none is ever fetched (no retries, no 'error' events); its JWTs are
   * refused 401 unknown_key (lib/jwks/middleware.js), unless introspectJwts introspects them too.
   * Said once, at start-up.
   */
  #keyless(entry) {
    entry.keyless = true
    const jwts = entry.introspection.introspectJwts ? 'its JWT access tokens are introspected too' : 'its JWT access tokens are refused (401 unknown_key)'
    process.emitWarning(
      `auth-shield: the metadata of ${entry.issuer} has no jwks_uri: it is trusted for introspection only (its opaque tokens are introspected, ${jwts}, and no key set is fetched). ` +
        'Give the issuer a jwksUri for its JWTs, or introspectJwts: true to introspect them.',
      { code: 'AUTH_SHIELD_INTROSPECTION_ONLY' },
    )
  }

  /** The remote key set of `entry`, started. */
  #startSource(entry, jwksUri) {
    const source = new RemoteJwks(jwksUri, entry.sourceOptions)
    source.on('error', (err) => this.#notify('error', err))
    source.on('expired', (err) => this.#notify('expired', err))
    // The source hands its sets to this registry, which installs them as this issuer's (or
    // refuses them: the source then keeps the set in force, as for any refused document).
    source.attach({ setKeys: (set) => this.#install(entry, set === placeholderKeys() ? null : set) })
    entry.source = source
    return source
  }

  #retryWithin(entry, delay) {
    if (this.#closed) return
    const at = Date.now() + delay
    if (entry.timer !== null && entry.timerAtMs <= at) return
    clearTimeout(entry.timer)
    entry.timerAtMs = at
    entry.timer = setTimeout(() => {
      entry.timer = null
      entry.timerAtMs = Infinity
      if (entry.discovering === null && entry.source === null && !this.#closed) this.#discover(entry)
    }, delay)
    entry.timer.unref()
  }

  /** Installs `keys` as `entry`'s key set (null: withdrawn) in every Authenticator; throws what an Authenticator throws. */
  #install(entry, keys) {
    // A withdrawn set becomes the placeholder: nothing verifies under it.
    const set = keys === null ? placeholderKeys() : keys
    let first = true
    for (const target of this.#targets) {
      try {
        target.setKeys(set, { issuer: entry.issuer })
      } catch (err) {
        // The first refusal refuses the document before any Authenticator changed; a later one
        // cannot happen (both engines hold the same rules).
        if (first) throw err
      }
      first = false
    }
    entry.keys = keys
  }

  #notify(event, value) {
    for (const listener of this.listeners(event)) {
      try {
        const returned = listener.call(this, value)
        if (returned !== null && typeof returned === 'object' && typeof returned.then === 'function') Promise.resolve(returned).catch(() => {})
      } catch {
        // A listener that throws changes nothing here.
      }
    }
  }
}

const SPEC_FIELDS = new Set(['issuer', 'audience', 'algorithms', 'jwksUri', 'tenant', 'introspection'])
// The engine's rule (src/tenant.rs `is_valid_tenant_id`).
const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/

/** An issuer as a string, or `{ issuer, audience?, algorithms?, jwksUri?, tenant? }`. */
function readSpec(item) {
  if (typeof item === 'string') return { issuer: item }
  if (typeof item !== 'object' || item === null || Array.isArray(item)) throw typeError('each trusted issuer is an issuer identifier or { issuer, audience?, algorithms?, jwksUri?, tenant?, introspection? }')
  for (const name of Object.keys(item)) if (!SPEC_FIELDS.has(name)) throw typeError(`unknown trusted-issuer field ${JSON.stringify(name)}`)
  return item
}

/** An issuer's tenant (null: none), as the engine's `issuers[].tenant`. */
function readTenant(tenant, issuer) {
  if (tenant === undefined || tenant === null) return null
  if (typeof tenant !== 'string' || !TENANT_ID.test(tenant)) throw typeError(`the tenant of ${issuer} is 1 to 63 of [A-Za-z0-9_-], starting with a letter or digit`)
  return tenant
}

/** An issuer's own accepted audiences (null: the config's `audience` applies). */
function readAudiences(audience, issuer) {
  if (audience === undefined || audience === null) return null
  const list = typeof audience === 'string' ? [audience] : audience
  if (!Array.isArray(list) || list.length === 0 || list.length > 100 || !list.every((a) => typeof a === 'string' && a.length > 0 && a.length <= 2048)) {
    throw typeError(`the audience of ${issuer} is a non-empty string or an array of 1 to 100 of them`)
  }
  return Object.freeze([...list])
}

/**
 * `createTrustedIssuers(issuers, options)`: a started registry (every issuer's discovery is under
 * way). `issuers`: issuer identifiers (https:, or http: on loopback), at most MAX_ISSUERS, or
 * `{ issuer, audience?, algorithms?, jwksUri?, tenant? }` (its own accepted audiences in place of
 * the config's, key algorithms, a key set URL that skips discovery, and its tenant);
 * options: those of createRemoteJwks, for every issuer (discovery uses timeoutMs, maxBytes,
 * cooldownMs, retryMinMs and retryMaxMs too).
 */
function createTrustedIssuers(issuers, options) {
  return new TrustedIssuers(issuers, options)
}

function isTrustedIssuers(value) {
  return typeof value === 'object' && value !== null && value[ISSUERS] === true
}

// RFC 7638 §3.2: the required members of each key type, in lexicographic order.
const THUMBPRINT_MEMBERS = { RSA: ['e', 'kty', 'n'], EC: ['crv', 'kty', 'x', 'y'], OKP: ['crv', 'kty', 'x'] }

/** A key in force, for status(): `{ kid, alg, type, bits | curve, thumbprint }`. */
function describeKey({ kid, alg, publicKey }) {
  const details = publicKey.asymmetricKeyDetails || {}
  const jwk = publicKey.export({ format: 'jwk' })
  const members = THUMBPRINT_MEMBERS[jwk.kty] || []
  const canonical = `{${members.map((m) => `${JSON.stringify(m)}:${JSON.stringify(jwk[m])}`).join(',')}}`
  const summary = { kid: kid === undefined ? null : kid, alg, type: publicKey.asymmetricKeyType }
  if (details.modulusLength !== undefined) summary.bits = details.modulusLength
  if (details.namedCurve !== undefined) summary.curve = details.namedCurve
  else if (jwk.crv !== undefined) summary.curve = jwk.crv
  summary.thumbprint = createHash('sha256').update(canonical).digest('base64url')
  return summary
}

module.exports = { createTrustedIssuers, TrustedIssuers, isTrustedIssuers, MAX_ISSUERS }
