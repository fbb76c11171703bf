'use strict'

// A remote JWKS as a key source for Authenticators (`auth-shield/jwks`). The URL is the one the
// operator configured, and the only one ever fetched: a token's `jku`/`x5u` headers are never
// followed (anyone can sign a token naming their own key set), nor is a redirect
// (lib/jwks/fetch.js). Every key of a document is checked (lib/jwks/document.js) and the set is
// handed to each attached Authenticator through `setKeys`, an atomic swap.
//
// When it fetches:
// - at creation, then every `cacheMaxAgeMs` after a good document;
// - after a failed fetch, again after `retryMinMs`, doubling at each further failure up to
//   `retryMaxMs` (an identity provider down at start-up is picked up within seconds of its
//   return, and one down for long is not hammered);
// - when asked (a token named a kid no key has): at once unless a fetch started less than
//   `cooldownMs` ago; inside the cooldown, one fetch is set for its end (so a key published just
//   after a fetch is in force within `cooldownMs`), whatever the number of callers. Callers
//   during a fetch share it.
// A refused or unreachable document leaves the key set in force (stale-if-error) until
// `cacheMaxAgeMs + staleIfErrorMs` after the last good document; past that the keys are
// withdrawn (the middleware answers `keys_unavailable`) until a good document arrives.
//
// Memory: one key set (at most `maxDocumentKeys` keys from a document of at most `maxBytes` bytes, read
// in chunks and dropped at the first byte over the cap), one fetch in flight, two timers (the
// next fetch, the key set's expiry), the attached Authenticators (one per attach call) and the
// event listeners the application adds.

const EventEmitter = require('node:events')
const { generateKeyPairSync } = require('node:crypto')
const { typeError, rangeError } = require('../../base/error')
const { readJwksDocument, readAlgorithms, jwksError } = require('./document')
const { fetchDocument, readUrl } = require('./fetch')
const { readOptionBag } = require('../options/reader')

// The options' names, defaults and bounds are the `jwksOptions` of contract/options.json: timers end at
// 2^31-1 ms, the longest Node keeps (a longer delay fires at once); a cap of 0 admits nothing; a
// retry under 100 ms would be a busy loop; the Authenticator takes at most 100 keys (base/keys/normalize.js).
const DEFAULTS = Object.fromEntries(require('../../contract/options.json').jwksOptions.filter((o) => o.kind === 'integer').map((o) => [o.name, o.default]))
// The longest timer Node keeps: a longer delay fires at once.
const MAX_TIMER_MS = 2 ** 31 - 1
// The Retry-After of a request answered while no keys are in force is never under a second.
const MIN_RETRY_AFTER_MS = 1_000
// Marks a source, so that the adapters recognise one from another copy of the package.
const SOURCE = Symbol.for('auth-shield.jwks-source')
// How long until the next fetch (the middleware's Retry-After): not part of the public surface.
const RETRY_IN = Symbol.for('auth-shield.jwks-retry-in')

// The kid of the placeholder key (see placeholderKeys); a document may publish it (its key then
// replaces this one).
const PLACEHOLDER_KID = 'auth-shield:jwks-pending'
let placeholder = null

/**
 * What an Authenticator holds while the source has no keys in force (an Authenticator needs at
 * least one key): a fresh Ed25519 public key whose private half was never kept, so no token
 * verifies under it. Made once per process.
 */
function placeholderKeys() {
  if (placeholder === null) {
    const { publicKey } = generateKeyPairSync('ed25519')
    placeholder = Object.freeze([Object.freeze({ kid: PLACEHOLDER_KID, alg: 'EdDSA', publicKey })])
  }
  return placeholder
}

class RemoteJwks extends EventEmitter {
  #url
  #options
  #algorithms
  #targets = new Set()
  #keys = null
  #fingerprint = null
  #generation = 0
  #updatedAtMs = null
  #lastError = null
  #failures = 0
  // Fetches completed and failed since construction (metrics(), docs/observability.md).
  #fetches = 0
  #fetchFailures = 0
  #inFlight = null
  #lastFetchStartMs = -Infinity
  #timer = null
  #timerAtMs = Infinity
  #expiry = null
  #closed = false
  #closing = new AbortController()

  constructor(url, options) {
    super()
    this.#url = readUrl(url)
    this.#options = readOptionBag(options, 'jwksOptions')
    if (this.#options.retryMinMs > this.#options.retryMaxMs) {
      throw rangeError(`options.retryMinMs (${this.#options.retryMinMs}) must not exceed options.retryMaxMs (${this.#options.retryMaxMs})`)
    }
    this.#algorithms = readAlgorithms(this.#options.algorithms)
    this.#load()
  }

  get [SOURCE]() {
    return true
  }

  /** The URL fetched. */
  get url() {
    return this.#url.href
  }

  /**
   * The key set in force (`{ kid?, alg, publicKey }` entries, frozen), or null: before the
   * first good document, and once the last one is past `cacheMaxAgeMs + staleIfErrorMs`.
   */
  get keys() {
    return this.#keys
  }

  /** How many key sets have been installed; a refresh that changed nothing does not count. */
  get generation() {
    return this.#generation
  }

  /** When the last good document was read (ms since the epoch), or null. */
  get updatedAtMs() {
    return this.#updatedAtMs
  }

  /**
   * Counters of this source, read now (docs/observability.md): `fetches` completed, `failures`
   * among them, `keyAgeSeconds` since the key set in force was read (null without one),
   * `keysAvailable`.
   */
  metrics() {
    return {
      fetches: this.#fetches,
      failures: this.#fetchFailures,
      keyAgeSeconds: this.#updatedAtMs === null || this.#keys === null ? null : Math.max(0, Date.now() - this.#updatedAtMs) / 1000,
      keysAvailable: this.#keys !== null,
    }
  }

  /** Why the last fetch failed (an Error with an ERR_AUTH_SHIELD_JWKS_* code), or null after a success. */
  get lastError() {
    return this.#lastError
  }

  /**
   * Feeds `authenticator` (either engine) the key set now, if there is one, and every later
   * one. Throws what `setKeys` throws. Returns a function that detaches it.
   */
  attach(authenticator) {
    if (typeof authenticator !== 'object' || authenticator === null || typeof authenticator.setKeys !== 'function') {
      throw typeError('attach needs an Authenticator (an object with setKeys)')
    }
    if (this.#keys !== null) authenticator.setKeys(this.#keys)
    this.#targets.add(authenticator)
    return () => {
      this.#targets.delete(authenticator)
    }
  }

  /**
   * Fetches the document again unless a fetch started less than `cooldownMs` ago (then one
   * fetch is set for the end of the cooldown); joins the fetch in flight if there is one.
   * Resolves true when a different key set was installed, false otherwise (unchanged, in the
   * cooldown, closed, or failed: see `lastError`). Never rejects.
   */
  refresh() {
    if (this.#closed) return Promise.resolve(false)
    if (this.#inFlight !== null) return this.#inFlight
    const wait = this.#lastFetchStartMs + this.#options.cooldownMs - Date.now()
    if (wait > 0) {
      this.#fetchWithin(wait)
      return Promise.resolve(false)
    }
    return this.#load()
  }

  /**
   * Resolves once a key set is in force: at once if there is one, else after the fetch in
   * flight; rejects with `lastError` when that fetch failed (the source keeps retrying).
   */
  ready() {
    if (this.#keys !== null) return Promise.resolve()
    const pending = this.#inFlight !== null ? this.#inFlight : Promise.resolve(false)
    return pending.then(() => {
      if (this.#keys !== null) return
      throw this.#lastError !== null ? this.#lastError : jwksError('ERR_AUTH_SHIELD_JWKS_CLOSED', 'the JWKS source is closed')
    })
  }

  /** Stops the schedule and aborts a fetch in flight; the key set in force stays where it is. */
  close() {
    this.#closed = true
    this.#clearTimer()
    clearTimeout(this.#expiry)
    this.#expiry = null
    this.#closing.abort()
  }

  /** Milliseconds until the next fetch is due (at least a second): a client's Retry-After. */
  [RETRY_IN]() {
    if (this.#inFlight !== null || this.#timer === null) return MIN_RETRY_AFTER_MS
    return Math.max(MIN_RETRY_AFTER_MS, Math.min(this.#timerAtMs - Date.now(), this.#options.retryMaxMs))
  }

  /** One fetch, shared by every caller until it settles; the Promise never rejects. */
  #load() {
    this.#lastFetchStartMs = Date.now()
    this.#clearTimer()
    const attempt = this.#fetchAndInstall().then(
      (changed) => {
        this.#lastError = null
        this.#failures = 0
        this.#fetches++
        return changed
      },
      (err) => {
        this.#lastError = err
        this.#failures++
        this.#fetches++
        this.#fetchFailures++
        return false
      },
    )
    this.#inFlight = attempt.then((changed) => {
      this.#inFlight = null
      if (this.#closed) return false
      if (this.#failures === 0) {
        this.#fetchWithin(this.#options.cacheMaxAgeMs)
        if (changed) this.#notify('keys', this.#keys)
      } else {
        // Bounded exponential back-off: retryMinMs, twice that, … up to retryMaxMs.
        const { retryMinMs, retryMaxMs } = this.#options
        this.#fetchWithin(Math.min(retryMaxMs, retryMinMs * 2 ** Math.min(this.#failures - 1, 31)))
        this.#notify('error', this.#lastError)
      }
      return changed
    })
    return this.#inFlight
  }

  /** Makes the next fetch start within `delay` ms (an earlier one stands). */
  #fetchWithin(delay) {
    if (this.#closed) return
    const at = Date.now() + delay
    if (this.#timer !== null && this.#timerAtMs <= at) return
    this.#clearTimer()
    this.#timerAtMs = at
    this.#timer = setTimeout(() => {
      this.#timer = null
      this.#timerAtMs = Infinity
      if (this.#inFlight === null && !this.#closed) this.#load()
    }, Math.min(delay, MAX_TIMER_MS))
    // The schedule alone never keeps a process alive.
    this.#timer.unref()
  }

  #clearTimer() {
    clearTimeout(this.#timer)
    this.#timer = null
    this.#timerAtMs = Infinity
  }

  /** The key set in force is withdrawn `cacheMaxAgeMs + staleIfErrorMs` after the last good document. */
  #expireLater() {
    clearTimeout(this.#expiry)
    const expiresAtMs = this.#updatedAtMs + this.#options.cacheMaxAgeMs + this.#options.staleIfErrorMs
    const check = () => {
      const left = expiresAtMs - Date.now()
      if (left > 0) {
        // A delay past the longest timer is waited in steps.
        this.#expiry = setTimeout(check, Math.min(left, MAX_TIMER_MS))
        this.#expiry.unref()
        return
      }
      this.#expiry = null
      this.#withdraw()
    }
    check()
  }

  /** Past its maximum age, the key set leaves every attached Authenticator. */
  #withdraw() {
    if (this.#closed || this.#keys === null) return
    this.#keys = null
    // The same document, once readable again, is installed again.
    this.#fingerprint = null
    for (const target of this.#targets) {
      try {
        target.setKeys(placeholderKeys())
      } catch {
        // Unreached: every target took a key set through setKeys before (a shared Authenticator,
        // which refuses setKeys, refused the first document, so never held this set).
      }
    }
    const age = Date.now() - this.#updatedAtMs
    const cause = this.#lastError === null ? undefined : this.#lastError
    this.#notify('expired', jwksError('ERR_AUTH_SHIELD_JWKS_EXPIRED', `the key set from ${this.#url.href} is ${age} ms old, past cacheMaxAgeMs + staleIfErrorMs: withdrawn`, cause))
  }

  /**
   * Calls the listeners of `event`. A listener that throws, or returns a Promise that rejects,
   * changes nothing here (and is no unhandled rejection): the source keeps running.
   */
  #notify(event, value) {
    for (const listener of this.listeners(event)) {
      try {
        const returned = listener.call(this, value)
        if (returned !== null && typeof returned === 'object' && typeof returned.then === 'function') {
          Promise.resolve(returned).catch(() => {})
        }
      } catch {
        // See above.
      }
    }
  }

  async #fetchAndInstall() {
    const bytes = await fetchDocument(this.#url, this.#options, this.#closing.signal)
    const { keys, fingerprint } = readJwksDocument(bytes, { maxKeys: this.#options.maxDocumentKeys, algorithms: this.#algorithms })
    if (this.#closed) return false
    if (fingerprint === this.#fingerprint) {
      this.#updatedAtMs = Date.now()
      this.#expireLater()
      return false
    }
    const set = Object.freeze(keys)
    // Every attached Authenticator validates as the constructor does; the first one to refuse
    // the set refuses the document (both engines hold the same rules), before any other sees it.
    let first = true
    for (const target of this.#targets) {
      try {
        target.setKeys(set)
      } catch (err) {
        if (!first) throw err
        throw jwksError('ERR_AUTH_SHIELD_JWKS_INVALID', `JWKS refused by the Authenticator: ${err.message}`, err)
      }
      first = false
    }
    this.#keys = set
    this.#fingerprint = fingerprint
    this.#generation++
    this.#updatedAtMs = Date.now()
    this.#expireLater()
    return true
  }
}

/**
 * `createRemoteJwks(url, options)`: a started source (the first fetch is under way).
 * Options: cooldownMs, cacheMaxAgeMs, staleIfErrorMs, retryMinMs, retryMaxMs, timeoutMs,
 * maxBytes, maxDocumentKeys (formerly maxKeys), algorithms.
 */
function createRemoteJwks(url, options) {
  return new RemoteJwks(url, options)
}

function isJwksSource(value) {
  return typeof value === 'object' && value !== null && value[SOURCE] === true
}

/** Milliseconds until `source` fetches next (at least a second), for a Retry-After. */
function retryInMs(source, entry) {
  return typeof source[RETRY_IN] === 'function' ? source[RETRY_IN](entry) : MIN_RETRY_AFTER_MS
}

module.exports = { createRemoteJwks, RemoteJwks, isJwksSource, retryInMs, placeholderKeys, DEFAULTS, SOURCE, RETRY_IN }
