'use strict'

// A remote JWKS as a key source for Authenticators (`auth-shield/jwks`). The URL is the one the
// operator configured; a token's `jku`/`x5u` headers are never followed (anyone can sign a token
// naming their own key set). The source fetches the document with the built-in fetch under a
// timeout and a byte cap, checks every key (js/jwks-document.js) and hands the set to each
// attached Authenticator through `setKeys`, an atomic swap. It refreshes on a schedule (every
// `cacheMaxAgeMs`) and when asked to (a token named a kid no key has), at most once per
// `cooldownMs` whatever the number of callers, who all share one fetch in flight. A refused or
// unreachable document leaves the key set in force and is kept in `lastError`.
//
// Memory: one key set (at most `maxKeys` keys from a document of at most `maxBytes` bytes, read
// in chunks and dropped at the first byte over the cap), one fetch in flight, one timer, and the
// attached Authenticators (one per attach call).

const { typeError, rangeError } = require('./errors')
const { readJwksDocument, readAlgorithms, jwksError } = require('./jwks-document')

const DEFAULTS = {
  cooldownMs: 30_000,
  cacheMaxAgeMs: 600_000,
  timeoutMs: 5_000,
  maxBytes: 256 * 1024,
  maxKeys: 64,
}
// Each option's bounds: a timer beyond 2^31-1 ms fires at once in Node; a cap of 0 admits nothing.
const BOUNDS = {
  cooldownMs: [0, 2 ** 31 - 1],
  cacheMaxAgeMs: [1, 2 ** 31 - 1],
  timeoutMs: [1, 2 ** 31 - 1],
  maxBytes: [64, 16 * 1024 * 1024],
  // The Authenticator takes at most 100 keys (js/keys.js).
  maxKeys: [1, 100],
}
const OPTION_NAMES = new Set([...Object.keys(DEFAULTS), 'algorithms'])
// After a failed fetch the next scheduled attempt waits this long at least (never a busy loop).
const MIN_RETRY_MS = 1_000
// Marks a source, so that the adapters recognise one from another copy of the package.
const SOURCE = Symbol.for('auth-shield.jwks-source')

class RemoteJwks {
  #url
  #options
  #algorithms
  #targets = new Set()
  #keys = null
  #fingerprint = null
  #generation = 0
  #updatedAtMs = null
  #lastError = null
  #inFlight = null
  #lastFetchStartMs = -Infinity
  #timer = null
  #closed = false
  #closing = new AbortController()

  constructor(url, options) {
    this.#url = readUrl(url)
    if (options === undefined || options === null) options = {}
    if (typeof options !== 'object' || Array.isArray(options)) throw typeError('options must be an object')
    for (const name of Object.keys(options)) {
      if (!OPTION_NAMES.has(name)) throw typeError(`options.${name} is not a known option`)
    }
    this.#options = {}
    for (const [name, fallback] of Object.entries(DEFAULTS)) {
      const value = options[name] === undefined ? fallback : options[name]
      const [min, max] = BOUNDS[name]
      if (typeof value !== 'number' || !Number.isInteger(value)) throw typeError(`options.${name} must be an integer`)
      if (value < min || value > max) throw rangeError(`options.${name} must be between ${min} and ${max}, got ${value}`)
      this.#options[name] = value
    }
    this.#algorithms = readAlgorithms(options.algorithms)
    this.#load()
  }

  get [SOURCE]() {
    return true
  }

  /** The URL fetched. */
  get url() {
    return this.#url.href
  }

  /** The key set in force (`{ kid?, alg, publicKey }` entries, frozen), or null before the first. */
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
   * Fetches the document again unless one was fetched less than `cooldownMs` ago; joins the
   * fetch in flight if there is one. Resolves true when a different key set was installed,
   * false otherwise (unchanged, in the cooldown, closed, or failed: see `lastError`). Never rejects.
   */
  refresh() {
    if (this.#closed) return Promise.resolve(false)
    if (this.#inFlight !== null) return this.#inFlight
    if (Date.now() - this.#lastFetchStartMs < this.#options.cooldownMs) return Promise.resolve(false)
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
    clearTimeout(this.#timer)
    this.#timer = null
    this.#closing.abort()
  }

  /** One fetch, shared by every caller until it settles; the Promise never rejects. */
  #load() {
    this.#lastFetchStartMs = Date.now()
    clearTimeout(this.#timer)
    this.#timer = null
    const attempt = this.#fetchAndInstall().then(
      (changed) => {
        this.#lastError = null
        return changed
      },
      (err) => {
        this.#lastError = err
        return false
      },
    )
    this.#inFlight = attempt.then((changed) => {
      this.#inFlight = null
      this.#schedule()
      return changed
    })
    return this.#inFlight
  }

  #schedule() {
    if (this.#closed) return
    const { cacheMaxAgeMs, cooldownMs } = this.#options
    const delay = this.#lastError === null ? cacheMaxAgeMs : Math.min(cacheMaxAgeMs, Math.max(cooldownMs, MIN_RETRY_MS))
    this.#timer = setTimeout(() => {
      this.#timer = null
      if (this.#inFlight === null) this.#load()
    }, delay)
    // The schedule alone never keeps a process alive.
    this.#timer.unref()
  }

  async #fetchAndInstall() {
    const bytes = await fetchDocument(this.#url, this.#options, this.#closing.signal)
    const { keys, fingerprint } = readJwksDocument(bytes, { maxKeys: this.#options.maxKeys, algorithms: this.#algorithms })
    if (this.#closed) return false
    if (fingerprint === this.#fingerprint) {
      this.#updatedAtMs = Date.now()
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
    return true
  }
}

/** The document's bytes: status 200, at most `maxBytes`, within `timeoutMs` from request to last byte. */
async function fetchDocument(url, { timeoutMs, maxBytes }, closing) {
  const signal = AbortSignal.any([AbortSignal.timeout(timeoutMs), closing])
  const failed = (err) => {
    if (closing.aborted) return jwksError('ERR_AUTH_SHIELD_JWKS_CLOSED', 'the JWKS source was closed during the fetch')
    if (signal.aborted) return jwksError('ERR_AUTH_SHIELD_JWKS_TIMEOUT', `fetching ${url.href} took over ${timeoutMs} ms`)
    return jwksError('ERR_AUTH_SHIELD_JWKS_FETCH', `fetching ${url.href} failed: ${err.message}`, err)
  }
  let res
  try {
    res = await fetch(url, { signal, headers: { accept: 'application/json, application/jwk-set+json' } })
  } catch (err) {
    throw failed(err)
  }
  const tooLarge = () => jwksError('ERR_AUTH_SHIELD_JWKS_TOO_LARGE', `the JWKS at ${url.href} is over maxBytes (${maxBytes})`)
  if (res.status !== 200) {
    discard(res)
    throw jwksError('ERR_AUTH_SHIELD_JWKS_FETCH', `fetching ${url.href} answered HTTP ${res.status}`)
  }
  const declared = Number(res.headers.get('content-length'))
  if (declared > maxBytes) {
    discard(res)
    throw tooLarge()
  }
  if (res.body === null) return Buffer.alloc(0)
  const reader = res.body.getReader()
  const chunks = []
  let total = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      total += value.byteLength
      // Stop reading at the first chunk past the cap: a hostile server cannot make us buffer more.
      if (total > maxBytes) {
        reader.cancel().catch(() => {})
        throw tooLarge()
      }
      chunks.push(value)
    }
  } catch (err) {
    throw err.code === 'ERR_AUTH_SHIELD_JWKS_TOO_LARGE' ? err : failed(err)
  }
  return Buffer.concat(chunks, total)
}

function discard(res) {
  if (res.body !== null) res.body.cancel().catch(() => {})
}

function readUrl(url) {
  let parsed
  if (url instanceof URL) parsed = new URL(url.href)
  else if (typeof url === 'string') {
    try {
      parsed = new URL(url)
    } catch {
      throw typeError(`the JWKS URL is not a valid URL: ${JSON.stringify(url)}`)
    }
  } else throw typeError('the JWKS URL must be a string or a URL')
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw typeError(`the JWKS URL must be http: or https:, got ${parsed.protocol}`)
  }
  return parsed
}

/**
 * `createRemoteJwks(url, options)`: a started source (the first fetch is under way).
 * Options: cooldownMs, cacheMaxAgeMs, timeoutMs, maxBytes, maxKeys, algorithms.
 */
function createRemoteJwks(url, options) {
  return new RemoteJwks(url, options)
}

function isJwksSource(value) {
  return typeof value === 'object' && value !== null && value[SOURCE] === true
}

/**
 * The adapters' `jwks` option, before the engine is built: a config with neither `keys` nor
 * `accessSecret` gets the source's key set (so the source must be ready); anything else as is.
 */
function withSourceKeys(config, source) {
  if (!isJwksSource(source)) throw typeError('options.jwks must be a source from createRemoteJwks (auth-shield/jwks)')
  if (typeof config !== 'object' || config === null || typeof config.authenticate === 'function') return config
  if (config.keys != null || config.accessSecret != null) return config
  if (source.keys === null) {
    const err = new Error('options.jwks has no key set yet: await jwks.ready() before building the middleware, or give config.keys')
    err.code = 'ERR_AUTH_SHIELD_JWKS_NOT_READY'
    throw err
  }
  const copy = {}
  // Every enumerable key, inherited ones too, as the config readers see them.
  for (const name in config) copy[name] = config[name]
  copy.keys = source.keys
  return copy
}

/**
 * The adapters' `jwks` option: the middleware's Authenticator(s) get the source's keys, and a
 * request failing with `unknown_key` waits for the one shared refresh, then authenticates again.
 */
function useJwksSource(decision, source) {
  if (!isJwksSource(source)) throw typeError('options.jwks must be a source from createRemoteJwks (auth-shield/jwks)')
  source.attach(decision.engine.authenticator)
  if (decision.engine.shadowAuthenticator) source.attach(decision.engine.shadowAuthenticator)
  decision.recover('unknown_key', () => source.refresh())
}

module.exports = { createRemoteJwks, RemoteJwks, isJwksSource, withSourceKeys, useJwksSource, DEFAULTS }
