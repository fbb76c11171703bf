'use strict'

// The native engine's JavaScript side: the little the binding cannot do itself. `binding.js` is
// the loader `napi build --platform` generates (this platform's `.node`, else its prebuilt
// package); this file gives its failure one clear error, turns keys given as PEM, JWK or
// KeyObject into the raw key material the core takes (base/keys/normalize.js), attaches the `store` option,
// and keeps the one-shot cache. Every check of a config is the binding's, made once.

let binding
try {
  binding = require('./binding.js')
} catch (error) {
  throw require('./load-error.js').bindingLoadError(error)
}

const { normalizeKeys, rawKeys } = require('./base/keys/normalize.js')
const { readSigningKey } = require('./base/keys/signing-key.js')
const { splitStore, attachStore, STORE_SEAM, revocationWriter } = require('./base/store-seam.js')
const { renameDeprecated, warnDeprecated, renamedName } = require('./base/deprecation.js')
const { checkKnownOptions } = require('./base/schema.js')
const { ENGINE_CLOCK } = require('./base/engine-clock.js')

const Native = binding.Authenticator
// Each authenticator's fixed clock (`clockTimestamp`), for ENGINE_CLOCK; absent: the system clock.
const fixedClocks = new WeakMap()

// What the stores in lib/store/ call (docs/scale-out.md): functions of the binding that take the
// authenticator, reached through a symbol only base/store-seam.js hands out, so they are
// neither members of the class nor exports of the package.
const NATIVE_SEAM = Object.freeze({
  enableSharedLimit: binding.enableSharedLimit,
  takeLeaseRequests: binding.takeLeaseRequests,
  grantLease: binding.grantLease,
  sharedLimitKeys: binding.sharedLimitKeys,
  setRevocationUnavailable: binding.setRevocationUnavailable,
})

/** Authenticates requests with settings validated and keys prepared once, at construction. */
class Authenticator extends Native {
  // Whether setKeys may take short HMAC secrets (the config's allowShortSecret).
  #allowShortSecret

  constructor(config) {
    // `store` (docs/scale-out.md) is a JS object the core never reads: checked and taken out
    // here, attached once the authenticator exists (base/store-seam.js).
    const { config: settings, store } = splitStore(config)
    const prepared = nativeConfig(settings)
    super(prepared)
    this.#allowShortSecret = prepared.allowShortSecret === true
    if (typeof prepared.clockTimestamp === 'number') fixedClocks.set(this, prepared.clockTimestamp)
    if (store !== undefined) attachStore(this, store)
  }

  /**
   * An authenticator sharing keys, rate-limit buckets and revocations with every other one made
   * by `shared` (or `authenticateRequest`) from equal settings (src/binding/one_shot.rs).
   */
  static shared(config) {
    // The binding makes a plain native instance; it is one of ours, with this class's methods.
    const prepared = nativeConfig(config)
    const shared = Object.setPrototypeOf(Native.shared(prepared), Authenticator.prototype)
    if (typeof prepared.clockTimestamp === 'number') fixedClocks.set(shared, prepared.clockTimestamp)
    return shared
  }

  /**
   * Replaces the access-token keys at once; takes keys in every form the constructor does. With
   * `issuers`, `options.issuer` names the trusted issuer whose key set this replaces.
   */
  setKeys(keys, options) {
    // A shared authenticator (made by the binding, without the field) refuses in the binding.
    if (!(#allowShortSecret in this)) return super.setKeys(keys, options)
    return super.setKeys(rawKeys(normalizeKeys(keys, { label: 'keys', allowShortSecret: this.#allowShortSecret })), options)
  }

  // The renamed options (base/deprecation.js) are read under their new names here, as
  // the JS engine reads them: one helper warns once per process per code for both engines, and
  // `--throw-deprecation` / `--no-deprecation` act alike in both (the binding never warns).

  /** @deprecated The old name of `rateLimitRefillPerSec`. */
  get rateLimitRefill() {
    warnDeprecated(renamedName('Authenticator', 'rateLimitRefill'), 'authenticator')
    return this.rateLimitRefillPerSec
  }

  /**
   * Refuses the token `(options.iss, jti)` until `expiresAtSec` (docs/revocation.md); with a
   * RevocationFeed attached, through the feed (base/store-seam.js revocationWriter).
   */
  revokeToken(jti, expiresAtSec, options) {
    const writer = revocationWriter(this)
    if (writer !== undefined) return writer.revokeToken(jti, expiresAtSec, options)
    return super.revokeToken(jti, expiresAtSec, options)
  }

  /** Revokes every token of `sub` issued before the cut-off (`options.before`: deprecated); as revokeToken. */
  revokeSubject(sub, options) {
    const writer = revocationWriter(this)
    if (writer !== undefined) return writer.revokeSubject(sub, options)
    if (typeof options === 'object' && options !== null) {
      checkKnownOptions(options, 'RevokeSubjectOptions')
      options = renameDeprecated(options, 'RevokeSubjectOptions', 'options')
    }
    return super.revokeSubject(sub, options)
  }

  /** The counters of this authenticator, read now, in the documented shape (docs/observability.md). */
  metrics() {
    let needed = super.metrics(counters)
    // Grown once, when the binding has more counters than the array holds.
    if (needed > counters.length) {
      counters = new Float64Array(needed)
      needed = super.metrics(counters)
    }
    return countersToSnapshot(counters, needed)
  }

  get [STORE_SEAM]() {
    return NATIVE_SEAM
  }

  /** The fixed clock of the config (base/engine-clock.js), or null. */
  get [ENGINE_CLOCK]() {
    const fixed = fixedClocks.get(this)
    return fixed === undefined ? null : fixed
  }
}

// The error codes in the order of contract/error-codes.json, the order of the binding's counters.
const CODES = Object.keys(require('./contract/error-codes.json'))

/**
 * The documented snapshot from the counters the binding's `metrics()` wrote into `c` (their
 * layout is written in src/binding/metrics.rs): the same shape as the JS engine's (js/metrics.js).
 */
// The array the binding writes each snapshot's counters into, reused: each snapshot is built
// from it at once.
let counters = new Float64Array(0)

function countersToSnapshot(c, length) {
  const bounds = c[9]
  const bucketsAt = 10 + bounds
  const failedAt = bucketsAt + bounds + 1
  if (length !== failedAt + CODES.length) throw new Error('auth-shield: the binding and contract/error-codes.json disagree on the error codes (rebuild the addon)')
  const failures = {}
  let failed = 0
  for (let i = 0; i < CODES.length; i++) {
    failures[CODES[i]] = c[failedAt + i]
    failed += c[failedAt + i]
  }
  const boundsSeconds = new Array(bounds)
  for (let i = 0; i < bounds; i++) boundsSeconds[i] = c[10 + i] / 1e9
  const buckets = new Array(bounds + 1)
  let count = 0
  for (let i = 0; i <= bounds; i++) {
    buckets[i] = c[bucketsAt + i]
    count += buckets[i]
  }
  return {
    authentication: { succeeded: c[0], failed, failures },
    rateLimit: { allowed: c[1], limited: failures.rate_limited, pending: failures.rate_limit_pending },
    verifiedTokenCache: { hits: c[2], misses: c[3], entries: c[4] },
    revocations: { held: c[5], refusedAtLimit: c[6], unavailable: c[7] === 1 },
    duration: { count, sumSeconds: c[8] / 1e9, boundsSeconds, buckets },
  }
}

/**
 * The config the binding reads: each option read once (`for...in`, as the binding reads), with
 * `keys` and `signingKey` as raw key material. The binding checks all of it.
 */
function nativeConfig(config) {
  // Not an object (an array or a typed array included): the binding refuses it as it is,
  // before a Buffer's million indices are copied.
  if (typeof config !== 'object' || config === null || Array.isArray(config) || ArrayBuffer.isView(config)) return config
  let copy = {}
  for (const name in config) copy[name] = config[name]
  copy = renameDeprecated(copy, 'options', 'config')
  let option = 'keys'
  try {
    if (copy.keys != null) {
      copy.keys = rawKeys(normalizeKeys(copy.keys, { label: 'config.keys', allowShortSecret: copy.allowShortSecret === true }))
    }
    option = 'issuers'
    if (Array.isArray(copy.issuers)) copy.issuers = copy.issuers.map((issuer, i) => issuerWithRawKeys(issuer, i, copy.allowShortSecret === true))
    option = 'signingKey'
    if (copy.signingKey != null) {
      const { kid, alg, pkcs8 } = readSigningKey(copy.signingKey)
      copy.signingKey = [{ kid, alg, key: pkcs8 }]
    }
  } catch (error) {
    throw earlierError(copy, option, error)
  }
  return copy
}

/**
 * An item of `issuers` with its `keys` as raw key material (each member read once, as the
 * binding reads them); anything that is not an issuer object with a keys array goes as it is,
 * for the binding to refuse.
 */
function issuerWithRawKeys(issuer, i, allowShortSecret) {
  if (typeof issuer !== 'object' || issuer === null || Array.isArray(issuer) || !Array.isArray(issuer.keys)) return issuer
  const copy = {}
  for (const name in issuer) copy[name] = issuer[name]
  copy.keys = rawKeys(normalizeKeys(copy.keys, { label: `config.issuers[${i}].keys`, allowShortSecret }))
  return copy
}

// A key that cannot be normalised is refused here, before the binding reads the config. An
// error in an option the binding reads first (an unknown name, allowShortSecret, accessSecret)
// must still be the one thrown, as the JS engine does: the binding reads the config with the
// bad key replaced by a value it refuses, and any other error it throws came earlier.
function earlierError(copy, option, error) {
  copy[option] = false
  try {
    new Native(copy)
  } catch (earlier) {
    if (!String(earlier.message).startsWith(`config.${option} `)) return earlier
  }
  return error
}

// authenticateRequest(authorization, tenantHeader, host, config, sender): the one place the native
// engine keeps its one-shot cache. Reading the config is most of a one-shot call's cost, and
// callers pass the same object on every request, so each config object maps (WeakMap: the entry
// goes with the object, no other bound needed) to a snapshot of its enumerable values and an
// `Authenticator.shared(config)`, whose core the binding's table shares with every equal config
// (at most 64, src/binding/one_shot.rs). A call whose config still matches its snapshot goes
// straight to that authenticator; any changed value (a Buffer's bytes included) makes a new one.
const authenticators = new WeakMap()

function authenticateRequest(authorization, tenantHeader, host, config, sender) {
  if (typeof config !== 'object' || config === null) {
    return Authenticator.shared(config).authenticate(authorization, tenantHeader, host, sender)
  }
  let entry = authenticators.get(config)
  if (entry === undefined || !unchanged(entry.snapshot, config)) {
    // Snapshot first: a getter that changes its value while being read must not leave a
    // snapshot that describes a config the authenticator was not built from.
    const copy = snapshot(config)
    entry = { snapshot: copy, authenticator: Authenticator.shared(config) }
    authenticators.set(config, entry)
  }
  return entry.authenticator.authenticate(authorization, tenantHeader, host, sender)
}

/** A copy of a value that a later change to the original cannot reach. */
class Bytes {
  constructor(view) {
    this.bytes = Buffer.from(bytesOf(view))
  }
  matches(value) {
    return ArrayBuffer.isView(value) && this.bytes.equals(bytesOf(value))
  }
}

/** The bytes of a view; a detached one has none (the binding then refuses it with a coded error). */
function bytesOf(view) {
  if (view instanceof Uint8Array) return view
  return view.byteLength === 0 ? new Uint8Array(0) : new Uint8Array(view.buffer, view.byteOffset, view.byteLength)
}

class List {
  constructor(array) {
    this.items = array.slice()
  }
  matches(value) {
    if (!Array.isArray(value) || value.length !== this.items.length) return false
    for (let i = 0; i < value.length; i++) if (!Object.is(value[i], this.items[i])) return false
    return true
  }
}

function copyOf(value) {
  if (ArrayBuffer.isView(value)) return new Bytes(value)
  if (Array.isArray(value)) return new List(value)
  return value
}

function same(copy, value) {
  return copy instanceof Bytes || copy instanceof List ? copy.matches(value) : Object.is(copy, value)
}

// `for...in` walks the keys the binding sees (enumerable, own and inherited, no symbols).
function snapshot(config) {
  const keys = []
  const values = []
  for (const key in config) {
    keys.push(key)
    values.push(copyOf(config[key]))
  }
  return { keys, values }
}

function unchanged({ keys, values }, config) {
  let i = 0
  for (const key in config) {
    if (i === keys.length || keys[i] !== key || !same(values[i], config[key])) return false
    i++
  }
  return i === keys.length
}

module.exports = { binding, Authenticator, authenticateRequest }
