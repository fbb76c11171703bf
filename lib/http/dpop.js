'use strict'

// DPoP in the adapters (RFC 9449): the SenderContext of a request (authenticate's 4th
// argument) and the DPoP challenge (§7.1). The absolute URL a proof's htu is compared with is
// the configured origin plus the request target, or what the application's dpopUrl says (a
// proxy that rewrites the path): never built from Host or X-Forwarded-*, which a client
// chooses (a proof made for one URL would then pass on another).

const { typeError, TABLE } = require('../../base/error')
const { renameDeprecated } = require('../../base/deprecation')
const { resultTemplates } = require('../../base/schema')
const { headerValue } = require('./token-source')
const { defaultOf } = require('../../contract')
const { callbackError, unexpectedAnswer } = require('./callback-fence')

// scheme://host[:port], nothing else: no path, no userinfo, no query.
const ORIGIN = /^https?:\/\/[A-Za-z0-9.\-[\]:]+$/i
// What both engines accept in a proof by default (src/dpop.rs DEFAULT_ALGS), for the challenge's
// algs; an authenticator's own list (dpopAlgorithms) is passed to dpopChallenge.
// Read from the contract, not js/dpop.js: the shared decision never loads the JS engine.
const ALGS = defaultOf('dpopAlgorithms').join(' ')
// Failures of the proof itself: RFC 9449 §7.1's invalid_dpop_proof.
const PROOF_CODES = new Set(['missing_dpop_proof', 'invalid_dpop_proof', 'dpop_proof_mismatch', 'dpop_proof_stale', 'dpop_proof_replayed'])
const DPOP_SCHEME = /^dpop(?: |$)/i
// What dpopUrl must answer: an absolute http(s) URL, printable ASCII, with a host and no
// userinfo. The engines' htu normalisation (src/dpop/htu.rs) does the rest: the default port
// dropped, query and fragment cut; a URL it cannot read never matches a proof.
const ABSOLUTE_URL = /^https?:\/\/(?:(?![/?#@])[\x21-\x7e])+(?:[/?#][\x21-\x7e]*)?$/i

/**
 * `(req, headers, authorization) => SenderContext` for the middleware option `dpopOrigin` or
 * `dpopUrl` (one of them: both is a TypeError), or null without either (then nothing is read
 * per request). `req` is what the adapter decides on: its `method`, and `originalUrl`
 * (Express, Koa, the Fetch view) or `url` (Fastify, Node) for the target.
 */
function senderReader(origin, urlOf) {
  if (urlOf !== undefined && urlOf !== null) {
    if (origin !== undefined && origin !== null) {
      throw typeError('options.dpopOrigin and options.dpopUrl both say which URL clients address: give one of them')
    }
    if (typeof urlOf !== 'function') throw typeError('options.dpopUrl must be a function (req) => the absolute URL the client addressed')
    return urlSender(urlOf)
  }
  if (origin === undefined || origin === null) return null
  if (typeof origin !== 'string' || !ORIGIN.test(origin)) {
    throw typeError("options.dpopOrigin must be an origin such as 'https://api.example.com' (scheme, host and port only)")
  }
  return (req, headers) => {
    const target = typeof req.originalUrl === 'string' ? req.originalUrl : req.url
    return {
      dpop: headerValue(headers.dpop),
      method: typeof req.method === 'string' ? req.method : undefined,
      // Origin-form targets only (RFC 9112 §3.2.1); anything else never matches a proof.
      url: typeof target === 'string' && target.startsWith('/') ? origin + target : undefined,
    }
  }
}

/**
 * The sender reader of `dpopUrl(req)`: the application rebuilds the external URL (a proxy that
 * strips or adds a path prefix). Called for requests with the DPoP scheme only: a Bearer
 * request's proof is never read by the engines, so it pays nothing. A callback is code we do
 * not own (lib/http/callback-fence.js): a throw, or an answer that is not an absolute http(s)
 * URL (a Promise included: the URL is needed now), refuses the request with an
 * ERR_AUTH_SHIELD_CALLBACK Error, as a failing getToken does; never a pass, and never a proof
 * checked against a URL nobody gave.
 */
function urlSender(urlOf) {
  return (req, headers, authorization) => {
    const dpop = headerValue(headers.dpop)
    const method = typeof req.method === 'string' ? req.method : undefined
    if (!isDpopScheme(authorization)) return { dpop, method, url: undefined }
    let url
    try {
      url = urlOf(req)
    } catch (err) {
      throw callbackError('options.dpopUrl', err, 'threw')
    }
    if (typeof url === 'string' && ABSOLUTE_URL.test(url)) return { dpop, method, url }
    ignoreRejection(url)
    throw unexpectedAnswer('options.dpopUrl', url, 'an absolute http(s) URL')
  }
}

/** A Promise (or thenable) answered where none is awaited: its rejection must not go unhandled. */
function ignoreRejection(value) {
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return
  try {
    // Reading `then` (and Promise.resolve reading `constructor`) runs application code.
    if (typeof value.then === 'function') Promise.resolve(value).then(undefined, () => {})
  } catch {
    // A getter that threw: nothing will settle later.
  }
}

/** `algs` of the DPoP challenge for `authenticator` (its dpopAlgorithms), read once per middleware. */
function challengeAlgs(authenticator) {
  const algs = authenticator === null || typeof authenticator !== 'object' ? undefined : authenticator.dpopAlgorithms
  return Array.isArray(algs) && algs.length > 0 ? algs.join(' ') : ALGS
}

/** The DPoP challenge for a 401 of a DPoP request or a DPoP failure, else undefined; `algs`: challengeAlgs. */
function dpopChallenge(result, authorization, realm, algs = ALGS) {
  const code = result.errorCode
  // RFC 9449 §7.1: a request without DPoP where DPoP is required gets the bare challenge.
  if (code === 'dpop_required') return `DPoP ${realm === undefined ? '' : `realm="${realm}", `}algs="${algs}"`
  // A route without DPoP answers with the Bearer challenge of the scheme it takes (decision.js).
  if (code === 'dpop_not_allowed') return undefined
  if (!PROOF_CODES.has(code) && code !== 'dpop_key_mismatch' && code !== 'use_dpop_nonce' && !DPOP_SCHEME.test(authorization || '')) return undefined
  const error =
    code === 'use_dpop_nonce' ? 'use_dpop_nonce' : PROOF_CODES.has(code) ? 'invalid_dpop_proof' : code === 'invalid_authorization_format' ? 'invalid_request' : 'invalid_token'
  const params = realm === undefined ? [] : [`realm="${realm}"`]
  params.push(`error="${error}"`, `error_description="${result.error}"`, `algs="${algs}"`)
  return `DPoP ${params.join(', ')}`
}

const { failure: FAILURE } = resultTemplates()

/**
 * The shared replay check for the middleware option `dpopReplayStore`, or null without it:
 * `(result) => Promise<result>`, the result kept when the proof is new across every process,
 * else refused. The engine hands over what the store records with the success itself
 * (AuthResult.dpopReplayKey and dpopReplayUntilSec): nothing of the proof is read again here.
 * The decision calls it last, once every other check (isRevoked included) admitted the
 * request: a refused request takes no room. `fixedClock`: the engine's fixed test clock
 * (base/engine-clock.js) or null for the system clock, read to the millisecond.
 */
function sharedReplayCheck(store, sender, fixedClock = null) {
  if (store === undefined || store === null) return null
  // Ours only: its every round trip is bounded by commandTimeoutMs, so no request waits forever.
  const { DpopReplayStore } = require('../store/dpop-replay')
  if (!(store instanceof DpopReplayStore)) {
    throw typeError('options.dpopReplayStore must be a DpopReplayStore (createDpopReplayStore or store.dpopReplay() of auth-shield/redis)')
  }
  if (sender === null) throw typeError('options.dpopReplayStore needs options.dpopOrigin or options.dpopUrl')
  const check = (result) => {
    const key = result.dpopReplayKey
    const until = result.dpopReplayUntilSec
    // A success without them was not admitted with a proof by this engine: never a pass.
    if (typeof key !== 'string' || typeof until !== 'number' || !Number.isFinite(until)) {
      return Promise.resolve(refusedResult(result, 'dpop_replay_unavailable'))
    }
    // Until the engine's dpopReplayUntilSec, which holds the skew allowance already
    // (docs/sender-constrained.md#clock-skew), from now to the millisecond (the store rounds up).
    const nowMs = fixedClock === null ? Date.now() : fixedClock * 1000
    const ttlMs = until * 1000 - nowMs
    return Promise.resolve()
      .then(() => store.admit(key, ttlMs))
      .then(
        (admission) => {
          if (admission !== 'fresh') return refusedResult(result, admission === 'replayed' ? 'dpop_proof_replayed' : 'dpop_replay_unavailable')
          recorded.add(result)
          return result
        },
        () => refusedResult(result, 'dpop_replay_unavailable'),
      )
  }
  // The successes whose proof this request recorded in the store ('fresh'): a later refusal
  // (a route requirement, expressjwt's isRevoked) releases it there too. Never one the store
  // called a replay: that entry is another request's.
  const recorded = new WeakSet()
  check.release = (result) => {
    if (!recorded.delete(result)) return
    store.release(result.dpopReplayKey)
  }
  return check
}

/**
 * Adds `DPoP-Nonce` (RFC 9449 §8) to the headers of a decision, when the authenticator hands
 * out nonces (`dpopNonceSecret`): on a `use_dpop_nonce` failure (§8.1), and on a DPoP success
 * whose proof carried another nonce than the current one, i.e. the previous slot's: the nonce
 * rotated and the client should switch (§8.2). A client already on the current nonce gets no
 * header, so most responses carry none. `requestHeaders` holds the proof (`dpop`).
 */
function addNonceHeader(headers, authenticator, authorization, result, requestHeaders) {
  const code = result.errorCode
  if (code !== 'use_dpop_nonce' && !(result.authenticated && isDpopScheme(authorization))) return
  const nonce = typeof authenticator.dpopNonce === 'function' ? authenticator.dpopNonce() : undefined
  if (typeof nonce !== 'string') return
  if (code === 'use_dpop_nonce' || proofNonce(headerValue(requestHeaders.dpop)) !== nonce) headers.push(['DPoP-Nonce', nonce])
}

/**
 * The `nonce` of a proof the engine accepted, or undefined. Read only on a DPoP success with
 * server nonces; anything unreadable gives undefined, which sends the current nonce.
 */
function proofNonce(proof) {
  if (typeof proof !== 'string') return undefined
  const first = proof.indexOf('.')
  const second = proof.indexOf('.', first + 1)
  if (first < 0 || second < 0) return undefined
  try {
    const claims = JSON.parse(Buffer.from(proof.slice(first + 1, second), 'base64url').toString('utf8'))
    return claims !== null && typeof claims === 'object' && typeof claims.nonce === 'string' ? claims.nonce : undefined
  } catch {
    return undefined
  }
}

/**
 * The route's DPoP mode from the middleware options: `dpopMode` ('disabled', 'allowed',
 * 'required'; checked by the schema), or the deprecated `dpopRequired` read through the renamed
 * table (base/deprecation.js: true is 'required', false as if not given); undefined when
 * neither is given (then DPoP requests are checked as 'allowed' does when the engine has `dpop`
 * and `dpopOrigin` or `dpopUrl` is given). The options were read by the schema's reader first,
 * so this rename has nothing left to refuse and its warning is given already.
 */
function dpopModeOf(options) {
  const mode = renameDeprecated(options, 'middlewareOptions', 'options').dpopMode
  return mode === null ? undefined : mode
}

/** Whether `authorization` uses the DPoP scheme. */
function isDpopScheme(authorization) {
  return typeof authorization === 'string' && DPOP_SCHEME.test(authorization)
}

/** `dpop_required` in place of a success `result` (its request id and limit kept). */
function dpopRequiredResult(result) {
  return refusedResult(result, 'dpop_required')
}

/** A failure `code` in place of a success `result` (its request id and limit kept). */
function refusedResult(result, code) {
  const { status, message } = TABLE[code]
  const refused = { ...FAILURE }
  refused.requestId = result.requestId
  refused.rateLimitLimit = result.rateLimitLimit
  refused.retryAfterMs = 0
  refused.error = message
  refused.errorCode = code
  refused.errorStatus = status
  return refused
}

module.exports = { senderReader, sharedReplayCheck, dpopChallenge, challengeAlgs, addNonceHeader, isDpopScheme, dpopRequiredResult, refusedResult, dpopModeOf, DPOP_ALGS: ALGS }
