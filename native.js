'use strict'

// The package entry point. `index.js` is the loader `napi build --platform`
// regenerates on every build; it tries this platform's locally built `.node`,
// then its prebuilt package (`auth-shield-<platform>`), and when both fail it
// throws a generic "Cannot find native binding". This wrapper keeps the
// generated file untouched and turns that failure into one error that says
// which platform this is, what was tried and how to get a binary.
//
// The `module.exports = require(...)` form matters: Node's CommonJS export
// detection sees it as a re-export, so `import { Authenticator } from
// 'auth-shield'` gets named exports without a hand-kept list.

try {
  module.exports = require('./index.js')
} catch (error) {
  throw require('./load-error.js').bindingLoadError(error)
}

// authenticateRequest(authorization, tenantHeader, host, config) with a per-config-object
// cache. Validating the config is most of the one-shot's cost, and callers pass the same
// object on every request. So each config object maps (WeakMap: the entry goes with the
// object, no other bound needed) to a snapshot of its enumerable values and an
// `Authenticator.shared(config)`, which shares keys and rate-limit buckets with every equal
// config as the native one-shot does. A call whose config still matches its snapshot goes
// straight to that authenticator; any changed value (a Buffer's bytes included) builds a new
// one, validated like any config.
const nativeAuthenticateRequest = module.exports.authenticateRequest
const NativeAuthenticator = module.exports.Authenticator
const authenticators = new WeakMap()

// `keys` (docs/keys.md): the native core takes raw key material only. A config with keys is
// read by the JS engine's reader first (js/config.js: the same checks, order and messages as
// the native one, and PEM / JWK / KeyObject keys normalized with node:crypto by lib/keys/normalize.js);
// the native class then gets a copy whose keys are `{ kid, alg, key: Buffer }`. The class
// itself is wrapped in a Proxy, so `new`, `shared`, `instanceof` and the instances' own fast
// methods stay the native ones; only `setKeys` is wrapped on the prototype.
const allowShortSecretOf = new WeakMap()
// The signingKey's kid, which no key given to setKeys may take (checked here as by the JS
// engine, so both throw the same coded error; src/authenticator.rs checks it again).
const signingKidOf = new WeakMap()
const { splitStore, attachStore } = require('./lib/store/attached.js')

function hasKeys(config) {
  return typeof config === 'object' && config !== null && (config.keys != null || config.signingKey != null)
}

/** `{ copy, signingKid }`: the config for the native class, and the signingKey's kid (or null). */
function nativeConfig(config) {
  const settings = require('./js/config.js').readSettings(config)
  const copy = {}
  for (const name in config) copy[name] = config[name]
  if (settings.keys !== null) copy.keys = require('./lib/keys/normalize.js').rawKeys(settings.keys)
  // signingKey: its PKCS#8 DER for ring, as a one-item list of the raw key shape.
  const signing = settings.signingKey
  if (signing !== null) copy.signingKey = [{ kid: signing.kid, alg: signing.alg, key: signing.pkcs8 }]
  return { copy, signingKid: signing === null ? null : signing.kid }
}

// The Proxy's target is a stand-in function, not the native class: the class's own `shared`
// is read-only and non-configurable, and a Proxy may not answer differently for such a
// property of its target. `prototype` is the native one, so `instanceof` and subclassing
// (`new.target`) behave as with the class itself.
function AuthenticatorClass() {}
AuthenticatorClass.prototype = NativeAuthenticator.prototype
const Authenticator = new Proxy(AuthenticatorClass, {
  construct(target, args, newTarget) {
    // `store` (docs/scale-out.md) is a JS object the core never reads: checked and taken out
    // here, attached once the authenticator exists (lib/store/attached.js).
    const { config, store } = splitStore(args[0])
    const prepared = hasKeys(config) ? nativeConfig(config) : null
    const nativeArgs = prepared !== null ? [prepared.copy] : config === args[0] ? args : [config]
    const instance = Reflect.construct(NativeAuthenticator, nativeArgs, newTarget)
    // Validated by now: an object whose allowShortSecret, if set, is a boolean.
    allowShortSecretOf.set(instance, config.allowShortSecret === true)
    if (prepared !== null && prepared.signingKid !== null) signingKidOf.set(instance, prepared.signingKid)
    if (store !== undefined) attachStore(instance, store)
    return instance
  },
  apply() {
    return NativeAuthenticator()
  },
  get(target, name) {
    if (name === 'shared') return shared
    if (name === 'prototype') return target.prototype
    return Reflect.get(NativeAuthenticator, name)
  },
})

function shared(config) {
  return NativeAuthenticator.shared(hasKeys(config) ? nativeConfig(config).copy : config)
}

const nativeSetKeys = NativeAuthenticator.prototype.setKeys
Object.defineProperty(NativeAuthenticator.prototype, 'setKeys', {
  value: function setKeys(keys) {
    const allowShortSecret = allowShortSecretOf.get(this)
    // Not made through this entry point (a shared authenticator, which refuses, or one built
    // from ./index.js, which takes raw keys): the native method as it is.
    if (allowShortSecret === undefined) return nativeSetKeys.call(this, keys)
    const { normalizeKeys, rawKeys } = require('./lib/keys/normalize.js')
    const entries = normalizeKeys(keys, { label: 'keys', allowShortSecret })
    const signingKid = signingKidOf.get(this)
    if (signingKid !== undefined) require('./js/config.js').checkSigningKid(entries, signingKid, 'keys')
    return nativeSetKeys.call(this, rawKeys(entries))
  },
  writable: true,
  configurable: true,
  enumerable: false,
})
module.exports.Authenticator = Authenticator

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

// `for...in` walks the keys the native reader sees (enumerable, own and inherited, no symbols).
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

function authenticateRequest(authorization, tenantHeader, host, config) {
  if (typeof config !== 'object' || config === null) {
    return nativeAuthenticateRequest(authorization, tenantHeader, host, config)
  }
  let entry = authenticators.get(config)
  if (entry === undefined || !unchanged(entry.snapshot, config)) {
    // Snapshot first: a getter that changes its value while being read must not leave a
    // snapshot that describes a config the authenticator was not built from.
    const copy = snapshot(config)
    entry = { snapshot: copy, authenticator: Authenticator.shared(config) }
    authenticators.set(config, entry)
  }
  return entry.authenticator.authenticate(authorization, tenantHeader, host)
}

module.exports.authenticateRequest = authenticateRequest
