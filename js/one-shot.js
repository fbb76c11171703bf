'use strict'

// authenticateRequest(...): the one-shot form. Cores are cached by their settings, so passing
// an equal config again reuses prepared keys and rate-limit state (src/binding/one_shot.rs).

const { readSettings, fingerprint } = require('./config')
const { Core } = require('./authenticator')

// Distinct configurations kept; past this the cache starts over (a process normally has one).
const MAX_CACHED_CONFIGS = 64
const cache = new Map()

/** Same chain and result as `Authenticator#authenticate`, configured per call. */
function authenticateRequest(authorization, tenantHeader, host, config) {
  const settings = readSettings(config)
  const key = fingerprint(settings)
  let core = cache.get(key)
  if (core === undefined) {
    if (cache.size >= MAX_CACHED_CONFIGS) cache.clear()
    core = new Core(settings)
    cache.set(key, core)
  }
  return core.authenticate(authorization, tenantHeader, host)
}

module.exports = { authenticateRequest }
