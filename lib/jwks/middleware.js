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
  if (typeof config !== 'object' || config === null || typeof config.authenticate === 'function' || config.keys != null || config.accessSecret != null) {
    // Keys of its own would verify tokens of any trusted issuer: no key-to-issuer binding left.
    if (issuers) throw typeError(ISSUERS_OWN_KEYS)
    return config
  }
  if (issuers && config.issuer != null) throw typeError(ISSUERS_OWN_ISSUER)
  const copy = {}
  // Every enumerable key, inherited ones too, as the config readers see them.
  for (const name in config) copy[name] = config[name]
  copy.keys = source.keys === null ? placeholderKeys() : source.keys
  // The engine checks `iss` against the trusted list; the key-to-issuer binding is checked below.
  if (issuers) copy.issuer = [...source.issuers]
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
 * The trusted-issuer form of useJwksSource (lib/jwks/issuers.js). The engine verified the token
 * against the union of the issuers' keys and checked `iss` against the trusted list; here, a
 * verified token passes only when the key its `kid` names was published by the issuer its `iss`
 * names (else `unknown_key`: that issuer has no such key), and its `aud` names one of that
 * issuer's own audiences when it has some (else `invalid_audience`). The token is decoded here only on a
 * success or a key failure. A key failure of a token whose `iss` is not trusted is
 * `invalid_issuer` and asks no fetch; of a trusted issuer without keys in force,
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
    if (!result.authenticated && !KEY_FAILURES.has(result.errorCode)) return result
    const claimed = issuerAndKid(authorization)
    const entry = claimed === null ? undefined : registry.entry(claimed.iss)
    if (entry === undefined) return refused(result, 'invalid_issuer')
    if (result.authenticated) {
      if (claimed.kid === null || !registry.owns(entry, claimed.kid)) return remember(named, refused(result, 'unknown_key'), entry)
      // An issuer's own audiences (RFC 7519 §4.1.3: aud is a string or an array of them).
      if (entry.audiences !== null && !entry.audiences.some((a) => a === claimed.aud || (Array.isArray(claimed.aud) && claimed.aud.includes(a)))) return refused(result, 'invalid_audience')
      return result
    }
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
 * The `iss` of a compact JWS's payload and the `kid` of its header (null when absent or not a
 * string), or null when `authorization` holds no readable token. Only ever called after the
 * engine read the same token (its size bounded by maxTokenBytes); on a success the engine
 * decoded the same bytes strictly, so what is read here is what was verified.
 */
function issuerAndKid(authorization) {
  if (typeof authorization !== 'string') return null
  const space = authorization.indexOf(' ')
  const token = space === -1 ? authorization : authorization.slice(space + 1).trim()
  const first = token.indexOf('.')
  const second = first === -1 ? -1 : token.indexOf('.', first + 1)
  if (second === -1) return null
  let header
  let payload
  try {
    header = JSON.parse(Buffer.from(token.slice(0, first), 'base64url').toString('utf8'))
    payload = JSON.parse(Buffer.from(token.slice(first + 1, second), 'base64url').toString('utf8'))
  } catch {
    return null
  }
  if (typeof header !== 'object' || header === null || typeof payload !== 'object' || payload === null || typeof payload.iss !== 'string') return null
  return { iss: payload.iss, kid: typeof header.kid === 'string' ? header.kid : null, aud: payload.aud }
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
