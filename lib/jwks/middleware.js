'use strict'

// The adapters' `jwks` option (lib/http/decision.js): a remote key set (lib/jwks/source.js) behind the
// middleware of either framework and either engine.
//
// - The middleware can be built before the source has any key: the Authenticator is then built
//   with the source's placeholder key (nothing verifies under it), and the source installs its
//   key set when it arrives.
// - While the source has no key set in force (none fetched yet, or the last good document is
//   past its maximum age), a token refused on its key (`unknown_key`, `unsupported_algorithm`,
//   `invalid_signature`: what a missing key set causes) is answered `keys_unavailable`, 503 with
//   Retry-After, instead of a 401: the client did nothing wrong. Both engines give the same key
//   failures, and this result is built here, the same for both.
// - A request that failed with `unknown_key` or `keys_unavailable` waits for the source's one
//   shared refresh (at most one fetch per cooldown, lib/jwks/source.js) and, when that installed a
//   different key set, is authenticated once more.

const { typeError, TABLE } = require('../../js/error')
const { resultTemplates } = require('../../js/schema')
const { isJwksSource, retryInMs, placeholderKeys } = require('./source')

const NOT_A_SOURCE = 'options.jwks must be a source from createRemoteJwks (auth-shield/jwks)'
// The refusals a missing key set explains (checked on an Authenticator holding the placeholder).
const KEY_FAILURES = new Set(['unknown_key', 'unsupported_algorithm', 'invalid_signature'])
const UNAVAILABLE = 'keys_unavailable'
/**
 * The config the middleware's engine is built from: a config with neither `keys` nor
 * `accessSecret` gets the source's key set, or the placeholder while it has none; anything
 * else (an Authenticator, a config with its own keys) as is.
 */
function withSourceKeys(config, source) {
  if (!isJwksSource(source)) throw typeError(NOT_A_SOURCE)
  if (typeof config !== 'object' || config === null || typeof config.authenticate === 'function') return config
  if (config.keys != null || config.accessSecret != null) return config
  const copy = {}
  // Every enumerable key, inherited ones too, as the config readers see them.
  for (const name in config) copy[name] = config[name]
  copy.keys = source.keys === null ? placeholderKeys() : source.keys
  return copy
}

/**
 * Attaches the decision's Authenticator(s) to `source`, answers key failures with
 * `keys_unavailable` while the source has no keys in force, and makes `unknown_key` and
 * `keys_unavailable` wait for the source's shared refresh.
 */
function useJwksSource(decision, source) {
  if (!isJwksSource(source)) throw typeError(NOT_A_SOURCE)
  const { engine } = decision
  source.attach(engine.authenticator)
  if (engine.shadowAuthenticator) source.attach(engine.shadowAuthenticator)
  const authenticate = engine.authenticate
  // Only a failure pays for the check; a request that passes never reads the source.
  engine.authenticate = function authenticateWithSource(authorization, tenantHeader, host) {
    const result = authenticate(authorization, tenantHeader, host)
    if (result.authenticated || source.keys !== null || !KEY_FAILURES.has(result.errorCode)) return result
    return keysUnavailable(result, retryInMs(source))
  }
  const refresh = () => source.refresh()
  decision.recover('unknown_key', refresh)
  decision.recover(UNAVAILABLE, refresh)
}

const { failure: FAILURE } = resultTemplates()

/** The `keys_unavailable` result for a key failure, with its request id and limit. */
function keysUnavailable(result, retryAfterMs) {
  const { status, message } = TABLE[UNAVAILABLE]
  const unavailable = { ...FAILURE }
  unavailable.requestId = result.requestId
  unavailable.rateLimitLimit = result.rateLimitLimit
  unavailable.retryAfterMs = retryAfterMs
  unavailable.error = message
  unavailable.errorCode = UNAVAILABLE
  unavailable.errorStatus = status
  return unavailable
}

module.exports = { withSourceKeys, useJwksSource }
