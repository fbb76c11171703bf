'use strict'

// The adapters' `jwks` option: the key-source stage of the request pipeline (lib/http/pipeline.js),
// a remote key set (lib/jwks/source.js) or trusted issuers (lib/jwks/issuers.js) behind every
// adapter and either engine. A stage, not a wrapper: the engine is called by the decision with
// the whole request (its sender context included), and this stage only reads the result.
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

const { typeError, TABLE } = require('../../base/error')
const { resultTemplates } = require('../../base/schema')
const { isJwksSource, retryInMs, placeholderKeys } = require('./source')
const { isTrustedIssuers } = require('./issuers')

const NOT_A_SOURCE = 'options.jwks must be a source from createRemoteJwks (auth-shield/jwks)'
// The refusals a missing key set explains (checked on an Authenticator holding the placeholder).
const KEY_FAILURES = new Set(['unknown_key', 'unsupported_algorithm', 'invalid_signature'])
const UNAVAILABLE = 'keys_unavailable'
const ISSUERS_OWN_KEYS = 'with trusted issuers (createTrustedIssuers), config is a plain config without keys or accessSecret: the keys come from the issuers'
const ISSUERS_OWN_ISSUER = 'with trusted issuers (createTrustedIssuers), leave config.issuer unset: the trusted list is the issuers'
/**
 * The key-source stage of the request pipeline (lib/http/pipeline.js) for the `jwks` option, or
 * null without it. It never touches the engine's methods: the decision hands it each engine
 * result with the whole request (`checkResult`), and it registers its recoveries.
 */
function keySourceStage(options, allowList) {
  const source = options.jwks
  if (source === undefined) return null
  if (!isJwksSource(source)) throw typeError(NOT_A_SOURCE)
  return isTrustedIssuers(source) ? new TrustedIssuersStage(source, allowList) : new RemoteJwksStage(source, allowList)
}

/**
 * True for what a remote key source leaves as it is (an Authenticator, a config with `keys` or
 * `accessSecret` of its own); any other config gets the source's key set (filtered by the
 * allow-list), or the placeholder while it has none.
 */
function ownsKeys(config) {
  return typeof config !== 'object' || config === null || typeof config.authenticate === 'function' || config.keys != null || config.accessSecret != null
}

/** Every enumerable key, inherited ones too, as the config readers see them. */
function copyOf(config) {
  const copy = {}
  for (const name in config) copy[name] = config[name]
  return copy
}

/**
 * An Authenticator fed through the allow-list: each set the source installs is filtered (none
 * left: the placeholder, which verifies nothing).
 */
function filteredTarget(authenticator, allowList) {
  if (allowList === null) return authenticator
  const placeholder = placeholderKeys()
  const filter = (set) => {
    if (set === placeholder) return set
    const kept = allowList.filter(set)
    return kept.length === 0 ? placeholder : kept
  }
  return { setKeys: (set, where) => (where === undefined ? authenticator.setKeys(filter(set)) : authenticator.setKeys(filter(set), where)) }
}

/**
 * A remote key set: while it has no keys in force (none fetched yet, or past its maximum age), a
 * key failure is answered `keys_unavailable`; `unknown_key` and `keys_unavailable` wait for its
 * one shared refresh.
 */
class RemoteJwksStage {
  constructor(source, allowList) {
    this.name = 'key source'
    this.source = source
    this.allowList = allowList
  }

  configure(config) {
    if (ownsKeys(config)) return config
    const copy = copyOf(config)
    const keys = this.source.keys
    const kept = keys === null ? null : this.allowList === null ? keys : this.allowList.filter(keys)
    copy.keys = kept === null || kept.length === 0 ? placeholderKeys() : kept
    return copy
  }

  attach(decision) {
    const { engine } = decision
    this.source.attach(filteredTarget(engine.authenticator, this.allowList))
    const refresh = () => this.source.refresh()
    decision.recover('unknown_key', refresh)
    decision.recover(UNAVAILABLE, refresh)
  }

  /** Only a failure pays for the check; a request that passes never reads the source. */
  checkResult(result) {
    if (result.authenticated || this.source.keys !== null || !KEY_FAILURES.has(result.errorCode)) return result
    return refused(result, UNAVAILABLE, retryInMs(this.source))
  }
}

/**
 * Trusted issuers (lib/jwks/issuers.js). The engine selected the issuer by `iss` before any key
 * and verified the token with that issuer's own keys, audiences and algorithms (an `iss` not
 * trusted is `untrusted_issuer`, which asks no fetch): a success passes as it is, nothing
 * decoded here. Only a key failure reads the token's `iss` (the engine's result does not carry
 * it): of a trusted issuer without keys in force, it becomes `keys_unavailable`; an `unknown_key`
 * refreshes only the issuer the token names.
 */
class TrustedIssuersStage {
  constructor(registry, allowList) {
    this.name = 'key source'
    this.registry = registry
    this.allowList = allowList
    // The issuer a key failure named, for its recovery (results are fresh objects).
    this.named = new WeakMap()
  }

  configure(config) {
    // Keys of its own would verify tokens of any trusted issuer: no key-to-issuer binding left.
    if (ownsKeys(config) || config.issuers != null) throw typeError(ISSUERS_OWN_KEYS)
    if (config.issuer != null) throw typeError(ISSUERS_OWN_ISSUER)
    const copy = copyOf(config)
    // The engine's own registry (config `issuers`), one key set per issuer.
    const issuers = this.registry.engineIssuers()
    copy.issuers = this.allowList === null ? issuers : issuers.map((item) => this.limited(item))
    return copy
  }

  /**
   * An issuer's engine item under the allow-list: its algorithms limited (none left: a
   * TypeError), its remote keys in force filtered (none left: none yet, as before discovery).
   */
  limited(item) {
    const { keys, ...rest } = item
    const [limited] = this.allowList.issuers([rest])
    const kept = keys === undefined ? [] : this.allowList.filter(keys)
    if (kept.length !== 0) limited.keys = kept
    return limited
  }

  attach(decision) {
    const { engine } = decision
    this.registry.attach(filteredTarget(engine.authenticator, this.allowList))
    const refresh = (result) => {
      const entry = this.named.get(result)
      return entry === undefined ? false : this.registry.refresh(entry)
    }
    decision.recover('unknown_key', refresh)
    decision.recover(UNAVAILABLE, refresh)
  }

  checkResult(result, request) {
    if (result.errorCode === 'untrusted_issuer') {
      this.hintTrailingSlash(request.authorization)
      return result
    }
    if (result.authenticated || !KEY_FAILURES.has(result.errorCode)) return result
    const iss = issuerOf(request.authorization)
    const entry = iss === null ? undefined : this.registry.entry(iss)
    // The engine chose a trusted issuer before the key failed; fail closed all the same.
    if (entry === undefined) return result
    // An issuer for introspection only (no jwks_uri): its JWTs never verify, and no key set is
    // coming, so a 401 that says no key is known, never a 503 to retry.
    if (entry.keyless) return result.errorCode === 'unknown_key' ? result : refused(result, 'unknown_key')
    if (entry.keys === null) return remember(this.named, refused(result, UNAVAILABLE, retryInMs(this.registry, entry)), entry)
    return remember(this.named, result, entry)
  }

  /**
   * An `iss` that differs from a trusted issuer only by a trailing slash is almost always a
   * configuration slip (`https://op.example` for `https://op.example/`): identifiers are compared
   * byte for byte (RFC 8414 §3.3), so the token stays refused, and the operator is told once per
   * issuer, with the fix. At most one refused token is read per second, so a flood of untrusted
   * tokens costs no more than it did.
   */
  hintTrailingSlash(authorization) {
    const now = Date.now()
    if (this.hintReadAt !== undefined && now - this.hintReadAt < 1000) return
    this.hintReadAt = now
    const iss = issuerOf(authorization)
    if (iss === null) return
    const trusted = iss.endsWith('/') ? iss.slice(0, -1) : `${iss}/`
    if (this.registry.entry(trusted) === undefined) return
    this.hinted ??= new Set()
    if (this.hinted.has(trusted)) return
    this.hinted.add(trusted)
    process.emitWarning(
      `auth-shield: a token's iss ${JSON.stringify(iss)} differs from the trusted issuer ${JSON.stringify(trusted)} only by a trailing slash; ` +
        'issuers are compared byte for byte, so it is refused (untrusted_issuer). Configure the issuer exactly as the provider writes it in its tokens and metadata.',
      { code: 'AUTH_SHIELD_ISSUER_TRAILING_SLASH' },
    )
  }
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

module.exports = { keySourceStage }
