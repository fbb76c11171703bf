'use strict'

// Picks the engine behind the middleware and runs shadow mode.
//
// Native unless USE_RUST_AUTH=false (or the option engine: 'js'); when the native binary cannot
// be loaded, one clear warning and the JS engine, never a crashed app. An Authenticator passed
// in is used as is, and an explicit choice (the option, or USE_RUST_AUTH) that names the other
// engine is a TypeError: an instance cannot be turned into the other engine, and serving the
// engine nobody asked for in silence is worse than failing at startup. With shadow: true every
// request runs through both engines, the primary's result is served, and every difference
// (requestId aside) is counted and reported to onMismatch, through the middleware's callback
// fence: an onMismatch that throws, rejects or does not settle refuses the request it reports on.
// The served engine is then built as a subclass whose state-changing methods (revocations, key
// sets, introspection answers) reach the shadow engine too, so an app's revocation through the
// middleware's `authenticator` is held by both and compares equal.
//
// The JS engine (through js/seam.js) is required only when it is used, so an app
// on the native engine never loads it.

const { typeError } = require('../../base/error')
const { CallbackFence } = require('./callback-fence')
const { RESULT_FIELDS: ALL_RESULT_FIELDS } = require('../../base/schema')
const { fixedClockOf } = require('../../base/engine-clock')
const { revocationWriter, revocationSeam, storeSeam, REVOCATION_SEAM } = require('../../base/store-seam')
const { withCutoff } = require('./keyed-authenticator')

// Compared in shadow mode: every AuthResult field but the request id, fresh per call by design.
const RESULT_FIELDS = ALL_RESULT_FIELDS.filter((field) => field !== 'requestId')
// Marks an auth-shield/js Authenticator (set by js/authenticator.js) without loading it here.
const JS_ENGINE = Symbol.for('auth-shield.js-engine')
// USE_RUST_AUTH values, case-insensitive; unset or empty means the default (native).
const NATIVE_WORDS = ['true', '1', 'yes', 'on']
const JS_WORDS = ['false', '0', 'no', 'off']
// Each engine measures time on its own clock, microseconds apart: a wait that differs by less
// than the Retry-After header's one-second granularity is the same answer.
const DEFAULT_RETRY_AFTER_TOLERANCE_MS = 1000
// For the same reason the tokens left in a refilling bucket, read at two instants, can straddle
// a whole token (both engines charge the same requests; only `now` differs): one token apart is
// the same answer. At any refill rate up to thousands a second a bucket gains less than one
// token in the microseconds between the two calls, so a count further apart is a real difference.
const REMAINING_TOLERANCE = 1

let nativeBinding // undefined: not tried yet; null: failed to load
let nativeLoadError = null
let warnedUnavailable = false

/** The native package, or null (with one process warning) when its binary cannot be loaded. */
function loadNative() {
  if (nativeBinding === undefined) {
    try {
      nativeBinding = require('../..')
      if (typeof nativeBinding.Authenticator !== 'function') throw new Error('the binding has no Authenticator')
    } catch (err) {
      nativeBinding = null
      nativeLoadError = err
    }
  }
  if (nativeBinding === null && !warnedUnavailable) {
    warnedUnavailable = true
    const reason = String((nativeLoadError && nativeLoadError.message) || nativeLoadError).split('\n')[0].replace(/\.$/, '')
    // No binary for this platform is expected on some machines; any other failure is a bug in
    // the package (or a file changed under it), and the warning says which it is.
    const noBinary = nativeLoadError !== null && typeof nativeLoadError === 'object' && nativeLoadError.code === 'ERR_AUTH_SHIELD_NO_BINARY'
    const what = noBinary
      ? `the native binary could not be loaded (${reason})`
      : `the native package failed to load with a JavaScript error, not a missing binary (${(nativeLoadError && nativeLoadError.name) || 'Error'}: ${reason}; please report it)`
    process.emitWarning(
      `auth-shield: ${what}; using the pure-JS engine, ` +
        'which gives the same results more slowly. Install the platform package or build the addon to use the native engine.',
      { code: 'AUTH_SHIELD_NATIVE_UNAVAILABLE' },
    )
  }
  return nativeBinding
}

/**
 * `{ name, explicit, by }`: the engine asked for by the option if given, else by USE_RUST_AUTH
 * (read when a middleware is made), else native by default (`explicit: false`); `by` says who
 * asked, for error messages.
 */
function requestedEngine(option) {
  // Read even when the option decides, so that a mistyped variable is never silently ignored.
  const env = process.env.USE_RUST_AUTH
  const word = env === undefined ? '' : env.trim().toLowerCase()
  let fromEnv = { name: 'native', explicit: false }
  if (NATIVE_WORDS.includes(word)) fromEnv = { name: 'native', explicit: true, by: `USE_RUST_AUTH=${env}` }
  else if (JS_WORDS.includes(word)) fromEnv = { name: 'js', explicit: true, by: `USE_RUST_AUTH=${env}` }
  else if (word !== '') {
    throw typeError(
      `USE_RUST_AUTH must be one of ${[...NATIVE_WORDS, ...JS_WORDS].join(', ')} (any case) or unset, got ${JSON.stringify(env)}`,
    )
  }
  if (option === undefined) return fromEnv
  if (option !== 'native' && option !== 'js') throw typeError("options.engine must be 'native' or 'js'")
  return { name: option, explicit: true, by: `options.engine '${option}'` }
}

function jsAuthenticator() {
  return require('../../js/seam').Authenticator
}

function constructorFor(name) {
  if (name === 'js') return jsAuthenticator()
  const binding = loadNative()
  return binding === null ? null : binding.Authenticator
}

function isAuthenticator(value) {
  return typeof value === 'object' && value !== null && typeof value.authenticate === 'function'
}

/** The engine of an Authenticator instance: 'js' for auth-shield/js, else 'native'. */
function engineOf(authenticator) {
  return authenticator[JS_ENGINE] === true ? 'js' : 'native'
}

/**
 * An engine for the middleware: `{ name, authenticator, authenticate(a, t, h, sender), stats() }`.
 * `source` is an authenticator config, or an Authenticator of either engine to use as is.
 * In shadow mode `authenticate` gives a Promise of the result while an asynchronous
 * onMismatch runs, and throws (or rejects) when it fails; `options.fence` calls it.
 */
function createEngine(source, options = {}) {
  const onMismatch = options.onMismatch
  if (onMismatch !== undefined && typeof onMismatch !== 'function') {
    throw typeError('options.onMismatch must be a function')
  }
  const fence = options.fence === undefined ? new CallbackFence() : options.fence
  const report = onMismatch === undefined ? undefined : fence.wrap('options.onMismatch', onMismatch)
  if (options.shadow !== undefined && typeof options.shadow !== 'boolean') {
    throw typeError('options.shadow must be a boolean')
  }
  const tolerance = options.retryAfterToleranceMs ?? DEFAULT_RETRY_AFTER_TOLERANCE_MS
  if (typeof tolerance !== 'number' || !(tolerance >= 0)) {
    throw typeError('options.retryAfterToleranceMs must be a number >= 0')
  }

  let name
  let primary
  let shadow = null
  const requested = requestedEngine(options.engine)
  if (isAuthenticator(source)) {
    if (options.shadow) {
      throw typeError('shadow mode builds both engines from a config: pass the config object, not an Authenticator')
    }
    primary = source
    name = engineOf(source)
    if (requested.explicit && requested.name !== name) {
      throw typeError(
        `${requested.by} asks for the ${requested.name} engine, but a ${name} Authenticator was passed: ` +
          `pass the config object instead, or an Authenticator of the ${requested.name} engine`,
      )
    }
  } else {
    name = requested.name
    let Primary = constructorFor(name)
    if (Primary === null) {
      name = 'js'
      Primary = jsAuthenticator()
    }
    if (options.shadow) {
      const Shadow = constructorFor(name === 'js' ? 'native' : 'js')
      // Without a native binary there is nothing to compare with; the warning above said why.
      if (Shadow !== null) shadow = new Shadow(source)
    }
    primary = shadow === null ? new Primary(source) : new (mirroredClass(Primary))(source, shadow)
  }

  const counts = { requests: 0, mismatches: 0, mismatchesByField: {}, onMismatchErrors: 0 }
  const shadowName = name === 'js' ? 'native' : 'js'

  function authenticateInShadow(authorization, tenantHeader, host, sender) {
    const served = primary.authenticate(authorization, tenantHeader, host, sender)
    const other = shadow.authenticate(authorization, tenantHeader, host, sender)
    counts.requests++
    const fields = differingFields(served, other, tolerance)
    if (fields.length > 0) {
      counts.mismatches++
      for (const field of fields) counts.mismatchesByField[field] = (counts.mismatchesByField[field] || 0) + 1
      if (report !== undefined) {
        // Fail closed: a reporting hook that fails refuses the request it reports on (the
        // adapters hand its error to the framework), and is counted.
        let answer
        try {
          answer = report({ fields, primary: served, shadow: other, primaryEngine: name, shadowEngine: shadowName })
        } catch (err) {
          counts.onMismatchErrors++
          throw err
        }
        if (answer instanceof Promise) {
          return answer.then(
            () => served,
            (err) => {
              counts.onMismatchErrors++
              throw err
            },
          )
        }
      }
    }
    return served
  }

  function authenticateOnly(authorization, tenantHeader, host, sender) {
    counts.requests++
    return primary.authenticate(authorization, tenantHeader, host, sender)
  }

  // Frozen: a stage of the request pipeline reads the engine's answer, it never replaces the
  // engine's methods (lib/http/pipeline.js); an attempt throws in strict code.
  return Object.freeze({
    name,
    authenticator: primary,
    shadowAuthenticator: shadow,
    authenticate: shadow === null ? authenticateOnly : authenticateInShadow,
    stats() {
      return {
        engine: name,
        shadow: shadow !== null,
        shadowEngine: shadow === null ? undefined : shadowName,
        requests: counts.requests,
        mismatches: counts.mismatches,
        mismatchesByField: { ...counts.mismatchesByField },
        onMismatchErrors: counts.onMismatchErrors,
      }
    },
  })
}

// The state-changing methods of an Authenticator: in shadow mode each call made on the served
// engine (by the app through the middleware's `authenticator`, by a key source, by the
// introspection stage) is made on the shadow engine too, so both hold the same revocations, keys
// and introspection answers, and a comparison shows a real difference, never a call one of them
// missed. Everything else (authenticate, the getters, signing, metrics) is the served engine's.
const MIRRORED = new Map()

/**
 * `Base` (an engine's Authenticator class) extended so its state-changing methods also reach a
 * shadow engine given to the constructor. A subclass, not a wrapper: the served engine stays an
 * instance of its engine's class with every method and getter, and nothing is re-assigned.
 * The served engine checks the arguments first: a call it refuses reaches neither.
 */
function mirroredClass(Base) {
  let Mirrored = MIRRORED.get(Base)
  if (Mirrored !== undefined) return Mirrored
  let shadowOf
  // A stale RevocationFeed with onStale 'closed' (base/store-seam.js revocationSeam) refuses in
  // both engines: told to the served one only, every request was a mismatch while stale.
  const revocations = Object.freeze({
    setRevocationUnavailable(authenticator, unavailable) {
      storeSeam(authenticator).setRevocationUnavailable(authenticator, unavailable)
      const shadow = shadowOf(authenticator)
      revocationSeam(shadow).setRevocationUnavailable(shadow, unavailable)
    },
  })
  Mirrored = class ShadowedAuthenticator extends Base {
    #shadow
    constructor(config, shadow) {
      super(config)
      this.#shadow = shadow
    }
    setKeys(keys, options) {
      const answer = options === undefined ? super.setKeys(keys) : super.setKeys(keys, options)
      if (options === undefined) this.#shadow.setKeys(keys)
      else this.#shadow.setKeys(keys, options)
      return answer
    }
    // With a RevocationFeed attached, the feed takes the call first (base/store-seam.js) and
    // applies it here through revokeLocally: both engines once, then Redis.
    revokeToken(jti, expiresAtSec, options) {
      const writer = revocationWriter(this)
      if (writer !== undefined) return writer.revokeToken(jti, expiresAtSec, options)
      const answer = super.revokeToken(jti, expiresAtSec, options)
      this.#shadow.revokeToken(jti, expiresAtSec, options)
      return answer
    }
    revokeSubject(sub, options) {
      const writer = revocationWriter(this)
      if (writer !== undefined) return writer.revokeSubject(sub, options)
      // The default cut-off ("the millisecond after the call", docs/revocation.md) is fixed now,
      // once, so both engines take the same one (as expressjwt's keyed engines do).
      const fixed = fixedClockOf(this)
      const args = withCutoff(options, fixed === null ? Date.now() / 1000 : Math.floor(fixed * 1000) / 1000)
      const answer = super.revokeSubject(sub, args)
      this.#shadow.revokeSubject(sub, args)
      return answer
    }
    admitIntrospection(token, claimsJson, cacheUntilSec) {
      const admitted = super.admitIntrospection(token, claimsJson, cacheUntilSec)
      return this.#shadow.admitIntrospection(token, claimsJson, cacheUntilSec) && admitted
    }
    releaseDpopProof(replayKey) {
      const released = super.releaseDpopProof(replayKey)
      this.#shadow.releaseDpopProof(replayKey)
      return released
    }
    get [REVOCATION_SEAM]() {
      return revocations
    }
    static {
      shadowOf = (authenticator) => authenticator.#shadow
    }
  }
  MIRRORED.set(Base, Mirrored)
  return Mirrored
}

/** The AuthResult fields on which two results differ; requestId is fresh per call by design. */
function differingFields(a, b, retryAfterToleranceMs = 0) {
  const fields = []
  for (const field of RESULT_FIELDS) {
    const x = a[field]
    const y = b[field]
    if (Object.is(x, y)) continue
    if (field === 'retryAfterMs' && x > 0 && y > 0 && Math.abs(x - y) <= retryAfterToleranceMs) continue
    if (field === 'rateLimitRemaining' && typeof x === 'number' && typeof y === 'number' && Math.abs(x - y) <= REMAINING_TOLERANCE) continue
    fields.push(field)
  }
  return fields
}

module.exports = { createEngine, differingFields, requestedEngine, loadNative, engineOf, RESULT_FIELDS, JS_ENGINE }
