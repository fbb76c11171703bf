'use strict'

// The one store an authenticator shares its rate limit through (docs/scale-out.md). The
// `store` config option of both engines' Authenticator attaches through here; `store.attach`
// records itself here; the middleware reads it to wait in that store's recovery for an identity
// without a lease yet. `store` is a JS object: the engines' classes (native.js, js/authenticator.js)
// take it out of the config before the core reads the rest (contract/options.json `entryOptions`).

const { typeError } = require('./error')

const stores = new WeakMap()

// How many times one request may wait in a store's recovery for `rate_limit_pending`
// (docs/scale-out.md). The first wait almost always suffices: requests of one identity share
// its fetch, sized for them; a retry may still find its credit taken by a newer request of the
// same identity while it also waited for another identity's answer, and then waits again.
const STORE_WAITS = 3

// The store-facing side of both engines' Authenticator (docs/scale-out.md): `enableSharedLimit`,
// `takeLeaseRequests`, `grantLease`, `sharedLimitKeys` and `setRevocationUnavailable`, each a
// function taking the authenticator first. Each engine's class answers this symbol with its
// seam (native.js, js/authenticator.js); only the stores get it, through storeSeam, so the
// plumbing is neither a member of the class nor an export of the package.
const STORE_SEAM = Symbol('auth-shield store seam')

/** The store-facing functions of `authenticator`'s engine, or undefined for anything else. */
function storeSeam(authenticator) {
  if (authenticator === null || typeof authenticator !== 'object') return undefined
  const seam = authenticator[STORE_SEAM]
  return seam !== null && typeof seam === 'object' ? seam : undefined
}

// What a RevocationFeed needs of an authenticator that speaks for several engines
// (lib/http/engine.js: the served and the shadow engine; lib/http/keyed-authenticator.js:
// expressjwt's engine per key): `setRevocationUnavailable`, reaching all of them. Taken before
// the engine's own store seam, which reaches one engine; storeSeam (the stores') ignores it.
const REVOCATION_SEAM = Symbol('auth-shield revocation seam')

/** The revocation-facing functions of `authenticator` (REVOCATION_SEAM's, else its engine's store seam), or undefined. */
function revocationSeam(authenticator) {
  if (authenticator === null || typeof authenticator !== 'object') return undefined
  const own = authenticator[REVOCATION_SEAM]
  return own !== null && typeof own === 'object' ? own : storeSeam(authenticator)
}

/** Throws a TypeError unless `store` is a store (`what` names the option). */
function checkStore(store, what) {
  if (store === null || typeof store !== 'object' || typeof store.attach !== 'function' || typeof store.recover !== 'function') {
    throw typeError(`${what} must be a store from auth-shield/redis`)
  }
}

/**
 * `{ config, store }`: the config without its `store` option (the same object when it has none)
 * and the checked store, or undefined when absent, null or undefined.
 */
function splitStore(config) {
  if (config === null || typeof config !== 'object' || !('store' in config)) return { config, store: undefined }
  const store = config.store
  if (store !== undefined && store !== null) checkStore(store, 'config.store')
  const rest = {}
  // `for...in`, as the config readers: own and inherited enumerable keys.
  for (const name in config) if (name !== 'store') rest[name] = config[name]
  return { config: rest, store: store === null ? undefined : store }
}

// The revocation feed each authenticator writes its revocations through (lib/store/revocations.js,
// docs/revocation.md): once attached, both engines' revokeToken / revokeSubject (and a subclass's,
// lib/http/engine.js) hand the call to it, and it applies the revocation here through
// revokeLocally, then writes it to Redis. Read only by revocation calls, never by authenticate.
const writers = new WeakMap()
// The authenticator a writer is applying a revocation to now: its methods apply it themselves.
let applyingLocally = null

/** Makes `writer` (`revokeToken`, `revokeSubject`) take `authenticator`'s revocations. */
function setRevocationWriter(authenticator, writer) {
  writers.set(authenticator, writer)
}

/** Gives `authenticator` its own revocation methods back, if `writer` is still the one it writes through. */
function clearRevocationWriter(authenticator, writer) {
  if (writers.get(authenticator) === writer) writers.delete(authenticator)
}

/** The writer `authenticator`'s revocations go to, or undefined (none, or it is applying one locally). */
function revocationWriter(authenticator) {
  return authenticator === applyingLocally ? undefined : writers.get(authenticator)
}

/**
 * `apply()` (a call of `authenticator`'s own revokeToken / revokeSubject) with the writer set
 * aside for `authenticator`, so the call applies the revocation in its engine(s) instead of
 * coming back to the writer. Returns what it returns; throws what it throws.
 */
function revokeLocally(authenticator, apply) {
  const outer = applyingLocally
  applyingLocally = authenticator
  try {
    return apply()
  } finally {
    applyingLocally = outer
  }
}

/** The store `authenticator` shares its limit through, or undefined. */
function storeOf(authenticator) {
  return stores.get(authenticator)
}

/** Throws a TypeError when `authenticator` already shares its limit through another store. */
function checkNotElsewhere(authenticator, store) {
  const held = stores.get(authenticator)
  if (held !== undefined && held !== store) {
    throw typeError('this authenticator already shares its rate limit through another store: give the same store to the Authenticator and the middleware, or only one of them')
  }
}

/** Records that `authenticator` shares its limit through `store` (after checkNotElsewhere). */
function recordStore(authenticator, store) {
  stores.set(authenticator, store)
}

/** Attaches `authenticator` to `store` (a checked store) and records it. */
function attachStore(authenticator, store) {
  checkNotElsewhere(authenticator, store)
  store.attach(authenticator)
  recordStore(authenticator, store)
}

module.exports = {
  STORE_WAITS,
  STORE_SEAM,
  storeSeam,
  REVOCATION_SEAM,
  revocationSeam,
  checkStore,
  splitStore,
  storeOf,
  checkNotElsewhere,
  recordStore,
  attachStore,
  setRevocationWriter,
  clearRevocationWriter,
  revocationWriter,
  revokeLocally,
}
