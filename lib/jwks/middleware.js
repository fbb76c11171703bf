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
const { isTrustedIssuers } = require('./issuers')

const NOT_A_SOURCE = 'options.jwks must be a source from createRemoteJwks (auth-shield/jwks)'
// The refusals a missing key set explains (checked on an Authenticator holding the placeholder).
const KEY_FAILURES = new Set(['unknown_key', 'unsupported_algorithm', 'invalid_signature'])
const UNAVAILABLE = 'keys_unavailable'
const ISSUERS_OWN_KEYS = 'with trusted issuers (createTrustedIssuers), config is a plain config without keys or accessSecret: the keys come from the issuers'
const ISSUERS_OWN_ISSUER = 'with trusted issuers (createTrustedIssuers), leave config.issuer unset: the trusted list is the issuers'
/**
 * The config the middleware's engine is built from: a config with neither `keys` nor
 * `accessSecret` gets the source's key set, or the placeholder while it has none; anything
 * else (an Authenticator, a config with its own keys) as is.
 */
function withSourceKeys(config, source) {
  if (!isJwksSource(source)) throw typeError(NOT_A_SOURCE)
  const issuers = isTrustedIssuers(source)
  if (typeof config !== 'object' || config === null || typeof config.authenticate === 'function' || config.keys != null || config.accessSecret != null || (issuers && config.issuers != null)) {
    // Keys of its own would verify tokens of any trusted issuer: no key-to-issuer binding left.
    if (issuers) throw typeError(ISSUERS_OWN_KEYS)
    return config
  }
  if (issuers && config.issuer != null) throw typeError(ISSUERS_OWN_ISSUER)
  const copy = {}
  // Every enumerable key, inherited ones too, as the config readers see them.
  for (const name in config) copy[name] = config[name]
  // Trusted issuers: the engine's own registry (config `issuers`), one key set per issuer.
  if (issuers) copy.issuers = source.engineIssuers()
  else copy.keys = source.keys === null ? placeholderKeys() : source.keys
  return copy
}

/**
 * Attaches the decision's Authenticator(s) to `source`, answers key failures with
 * `keys_unavailable` while the source has no keys in force, and makes `unknown_key` and
 * `keys_unavailable` wait for the source's shared refresh.
 */
function useJwksSource(decision, source) {
  if (!isJwksSource(source)) throw typeError(NOT_A_SOURCE)
  if (isTrustedIssuers(source)) return useTrustedIssuers(decision, source)
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

/**
 * The trusted-issuer form of useJwksSource (lib/jwks/issuers.js). The engine selected the
 * issuer by `iss` before any key and verified the token with that issuer's own keys, audiences
 * and algorithms (an `iss` not trusted is `untrusted_issuer`, which asks no fetch): a success
 * passes as it is, nothing decoded here. Only a key failure reads the token's `iss` (the
 * engine's result does not carry it): of a trusted issuer without keys in force, it becomes
 * `keys_unavailable`; an `unknown_key` refreshes only the issuer the token names.
 */
function useTrustedIssuers(decision, registry) {
  const { engine } = decision
  registry.attach(engine.authenticator)
  if (engine.shadowAuthenticator) registry.attach(engine.shadowAuthenticator)
  const authenticate = engine.authenticate
  // The issuer an `unknown_key` result named, for its recovery (results are fresh objects).
  const named = new WeakMap()
  engine.authenticate = function authenticateWithIssuers(authorization, tenantHeader, host) {
    const result = authenticate(authorization, tenantHeader, host)
    if (result.authenticated || !KEY_FAILURES.has(result.errorCode)) return result
    const iss = issuerOf(authorization)
    const entry = iss === null ? undefined : registry.entry(iss)
    // The engine chose a trusted issuer before the key failed; fail closed all the same.
    if (entry === undefined) return result
    if (entry.keys === null) return remember(named, refused(result, UNAVAILABLE, retryInMs(registry, entry)), entry)
    return remember(named, result, entry)
  }
  const refresh = (result) => {
    const entry = named.get(result)
    return entry === undefined ? false : registry.refresh(entry)
  }
  decision.recover('unknown_key', refresh)
  decision.recover(UNAVAILABLE, refresh)
}

function remember(named, result, entry) {
  named.set(result, entry)
  return result
}

/**
 * The `iss` of a compact JWS's payload, or null when `authorization` holds no readable token or
 * the claim is not a string. Called only on a key failure, after the engine read the same
 * token (its size bounded by maxTokenBytes) and found it trusted.
 */
function issuerOf(authorization) {
  if (typeof authorization !== 'string') return null
  const space = authorization.indexOf(' ')
  const token = space === -1 ? authorization : authorization.slice(space + 1).trim()
  const first = token.indexOf('.')
  const second = first === -1 ? -1 : token.indexOf('.', first + 1)
  if (second === -1) return null
  let payload
  try {
    payload = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString('utf8'))
  } catch {
    return null
  }
  return typeof payload === 'object' && payload !== null && typeof payload.iss === 'string' ? payload.iss : null
}

const { failure: FAILURE } = resultTemplates()

/** The `keys_unavailable` result for a key failure, with its request id and limit. */
function keysUnavailable(result, retryAfterMs) {
  return refused(result, UNAVAILABLE, retryAfterMs)
}

/** The failure `code` in place of `result`, with its request id and limit. */
function refused(result, code, retryAfterMs) {
  const { status, message } = TABLE[code]
  const failure = { ...FAILURE }
  failure.requestId = result.requestId
  failure.rateLimitLimit = result.rateLimitLimit
  if (retryAfterMs !== undefined) failure.retryAfterMs = retryAfterMs
  failure.error = message
  failure.errorCode = code
  failure.errorStatus = status
  return failure
}

module.exports = { withSourceKeys, useJwksSource }
