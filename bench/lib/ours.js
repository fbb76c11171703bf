'use strict'
// Loads auth-shield's pieces. The native addon is required; the JS engine and the Express
// adapter are optional (they may not exist in every checkout) and are reported as
// "not available" rather than silently dropped.

const path = require('node:path')

const ROOT = path.resolve(__dirname, '..', '..')

function loadNative() {
  const before = new Set(Object.keys(require.cache))
  const native = require(ROOT)
  const addonPath = Object.keys(require.cache).find((file) => !before.has(file) && file.endsWith('.node'))
  return { native, addonPath, build: describeBuild(native) }
}

// A debug build is 10–100× slower and must never be quoted; the addon says how it was built.
function describeBuild(native) {
  if (process.env.AUTH_SHIELD_BUILD) return `${process.env.AUTH_SHIELD_BUILD} (from AUTH_SHIELD_BUILD)`
  if (typeof native.buildProfile !== 'function') return 'unknown'
  return native.buildProfile() === 'release' ? 'release' : 'debug (unoptimized: do not quote)'
}

function loadOptional(relative) {
  const file = path.join(ROOT, relative)
  try {
    require.resolve(file)
  } catch {
    return { available: false, reason: `${relative} not found` }
  }
  try {
    return { available: true, module: require(file) }
  } catch (error) {
    return { available: false, reason: `${relative} failed to load: ${error.message}` }
  }
}

// The JS reference engine (issue 3). Whatever it exports, we need something that builds an
// authenticator from the native config shape and exposes `authenticate(a, t, h)`.
function loadJsEngine() {
  const loaded = loadOptional('js')
  if (!loaded.available) return loaded
  const engine = loaded.module
  const Ctor = engine.Authenticator || engine.JsAuthenticator || (engine.default && engine.default.Authenticator)
  if (typeof Ctor === 'function') return { available: true, create: (config) => new Ctor(config) }
  if (typeof engine.createAuthenticator === 'function') {
    return { available: true, create: (config) => engine.createAuthenticator(config) }
  }
  return { available: false, reason: 'js/ exports no Authenticator class or createAuthenticator()' }
}

function loadExpressAdapter() {
  return loadOptional('adapters/express')
}

module.exports = { loadNative, loadJsEngine, loadExpressAdapter, ROOT }
