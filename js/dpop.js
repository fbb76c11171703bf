'use strict'

// DPoP proof verification (RFC 9449 §4.3), as src/dpop.rs: the same checks in the same order
// with the same codes. readProof checks the header and claims; the chain (js/authenticator.js)
// then verifies the access token, the proof's ath, the token's cnf.jkt against the thumbprint,
// the proof's signature last (the dearest check), and admits the proof once through the replay
// cache (js/dpop/replay.js) only when every other check admitted the request.

const { createHash } = require('#node/crypto')
const { isUtf8 } = require('#node/buffer')
const { LIMITS, defaultOf } = require('../contract')
const { ALGS } = require('../base/keys/normalize')
const { fail } = require('../base/error')
const { decodeSegment } = require('./jwt')
const { claimValue, rawValue } = require('./jwt/claims')
const { Reader, MALFORMED } = require('./jwt/json-scan')
const { readProofKey } = require('./dpop/proof-key')
const { normalize } = require('./dpop/htu')

const { dpopProofCap: PROOF_CAP, dpopUrlCap: URL_CAP, dpopJtiCap: JTI_CAP, dpopReplaySkewSec: SKEW_SEC } = LIMITS
const SCHEME = /^dpop /i
const PAYLOAD_MEMBERS = new Set(['jti', 'htm', 'htu', 'iat', 'ath', 'nonce'])

// The proof algorithms accepted without dpopAlgorithms, in the challenge's algs order (src/dpop.rs
// DEFAULT_ALGS, held equal to it by a Rust test): the default of contract/options.json. Asymmetric
// only: a MAC needs a shared secret, so it proves nothing of the client.
const DEFAULT_ALGS = Object.freeze(defaultOf('dpopAlgorithms'))

/** Whether `name` is an algorithm a proof may use at all (never none, HS* or an unknown name). */
function isProofAlg(name) {
  return typeof name === 'string' && Object.hasOwn(ALGS, name) && ALGS[name].family !== 'hmac'
}

/** The Set of algorithms proofs may use: the configured names (checked) or DEFAULT_ALGS. */
function proofAlgs(names) {
  return new Set(names.length === 0 ? DEFAULT_ALGS : names.filter(isProofAlg))
}

/** The token of `DPoP <token>` (leading spaces skipped), or undefined for any other scheme. */
function dpopScheme(header) {
  if (typeof header !== 'string' || !SCHEME.test(header)) return undefined
  return header.slice(5).replace(/^ +/, '')
}

/**
 * The second until which a proof of `iat` stays in a replay cache (src/dpop.rs `replay_until`):
 * every process accepts it while its clock, in whole seconds, is at most iat + window; one up to
 * the skew allowance behind the writer still does then (docs/sender-constrained.md#clock-skew).
 */
function replayUntil(iat, window) {
  return Math.floor(iat + window) + 1 + SKEW_SEC
}

/**
 * The UncheckedProof of `sender` (src/dpop.rs `read_proof`): every check but ath, the key match
 * and the signature, none of them a public-key operation; or a Failure. `algs`: the Set of
 * `proofAlgs`; `nonces`: a NonceKey or null.
 */
function readProof(sender, now, window, algs, nonces = null) {
  const invalid = fail('invalid_dpop_proof')
  const proof = sender.dpop
  if (proof === undefined || proof === '') return fail('missing_dpop_proof')
  if (proof.length > PROOF_CAP || Buffer.byteLength(proof) > PROOF_CAP) return invalid
  const parts = proof.split('.')
  if (parts.length !== 3) return invalid
  const [h64, p64, s64] = parts
  const header = decodeSegment(h64)
  if (header === null || !isUtf8(header)) return invalid
  let typ
  let alg
  let jwk
  let crit = false
  const seen = new Set()
  const r = new Reader(header)
  try {
    r.topObject((key) => {
      if (key === 'typ' || key === 'alg' || key === 'jwk') {
        // A member twice would let two parsers disagree on the proof.
        if (seen.has(key)) throw MALFORMED
        seen.add(key)
        if (key === 'jwk') jwk = rawValue(r)
        else if (key === 'typ') typ = claimValue(r)
        else alg = claimValue(r)
        return
      }
      if (key === 'crit') crit = true
      r.ignoreValue()
    })
  } catch (err) {
    if (err === MALFORMED) return invalid
    throw err
  }
  // RFC 9449 §4.3 steps 4-7; RFC 7515 §4.1.11 for crit.
  if (crit || typ !== 'dpop+jwt') return invalid
  if (!isProofAlg(alg) || !algs.has(alg)) return invalid
  const key = jwk === undefined ? null : readProofKey(jwk, alg)
  if (key === null) return invalid
  const payload = decodeSegment(p64)
  const signature = decodeSegment(s64)
  if (payload === null || signature === null) return invalid
  if (!isUtf8(payload)) return invalid
  const c = {}
  const pr = new Reader(payload)
  try {
    pr.topObject((name) => {
      if (!PAYLOAD_MEMBERS.has(name)) return pr.ignoreValue()
      if (Object.hasOwn(c, name)) throw MALFORMED
      c[name] = claimValue(pr)
    })
  } catch (err) {
    if (err === MALFORMED) return invalid
    throw err
  }
  const { jti, htm, htu, iat, ath } = c
  if (typeof jti !== 'string' || typeof htm !== 'string' || typeof htu !== 'string' || typeof ath !== 'string') return invalid
  if (typeof iat !== 'number' || !Number.isFinite(iat)) return invalid
  if (jti === '' || Buffer.byteLength(jti) > JTI_CAP || Buffer.byteLength(htu) > URL_CAP) return invalid
  // Steps 8-9: this method, this URI (no query, no fragment).
  const url = typeof sender.url === 'string' && Buffer.byteLength(sender.url) <= URL_CAP ? normalize(sender.url) : null
  const proofUrl = normalize(htu)
  const method = typeof sender.method === 'string' && Buffer.byteLength(sender.method) <= URL_CAP ? sender.method : undefined
  if (method !== htm || url === null || proofUrl === null || url !== proofUrl) return fail('dpop_proof_mismatch')
  // Step 10 (§8): the nonce this server handed out, when it hands them out.
  if (nonces !== null && !(typeof c.nonce === 'string' && nonces.accepts(c.nonce, now))) return fail('use_dpop_nonce')
  // Step 11 (src/dpop.rs): at most the window old, at most the skew allowance (or the window,
  // if shorter) ahead, so no replay entry outlives what its proof's window needs.
  if (!(iat >= now - window && iat <= now + Math.min(window, SKEW_SEC))) return fail('dpop_proof_stale')
  const replayKey = createHash('sha256').update(`${key.thumbprint}.`).update(jti, 'utf8').digest('hex')
  return new UncheckedProof(key, proof.slice(0, h64.length + 1 + p64.length), signature, ath, replayKey, replayUntil(iat, window))
}

/** A proof whose header and claims passed, its signature not yet checked (src/dpop.rs). */
class UncheckedProof {
  constructor(key, signingInput, signature, ath, replayKey, expiresAt) {
    this.key = key
    this.signingInput = signingInput
    this.signature = signature
    this.ath = ath
    this.thumbprint = key.thumbprint
    this.replayKey = replayKey
    this.expiresAt = expiresAt
  }

  /** Step 12 (§7): the proof is for this access token; a Failure or undefined. */
  checkAth(token) {
    return this.ath === createHash('sha256').update(token, 'latin1').digest('base64url') ? undefined : fail('dpop_proof_mismatch')
  }

  /** Step 6: signed by the key it carries; a Failure or undefined. */
  checkSignature() {
    return this.key.verifies(this.signingInput, this.signature) ? undefined : fail('invalid_dpop_proof')
  }
}

module.exports = { dpopScheme, readProof, replayUntil, proofAlgs, isProofAlg, DEFAULT_ALGS }
