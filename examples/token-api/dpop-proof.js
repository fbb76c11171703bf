'use strict'

// The DPoP proof a client sends to the token endpoints (RFC 9449 §4.3 and §5): checked here, and
// its key's RFC 7638 thumbprint becomes the issued access token's `cnf.jkt`. A proof at the
// token endpoint carries no `ath` (there is no access token yet), so this is the one proof
// auth-shield's middleware does not check; the resource routes' proofs are the middleware's.
// Checked: typ, an asymmetric alg (ES256, EdDSA / Ed25519) with a public key of its type, the
// signature, htm and htu (query and fragment ignored), iat within IAT_WINDOW_SEC, and the jti
// seen once per process within that window (bounded: MAX_SEEN live proofs, then refused).

const crypto = require('node:crypto')
const { ApiError } = require('./errors')

const IAT_WINDOW_SEC = 60
const MAX_PROOF_BYTES = 8192
const MAX_SEEN = 10000

// alg -> the key type it needs, the curve, and node:crypto's verify arguments.
const ALGS = {
  ES256: { kty: 'EC', crv: 'P-256', hash: 'sha256', dsaEncoding: 'ieee-p1363' },
  EdDSA: { kty: 'OKP', crv: 'Ed25519', hash: null },
  Ed25519: { kty: 'OKP', crv: 'Ed25519', hash: null },
}
// RFC 7638 §3.2: the required members of each key type, in lexicographic order.
const THUMBPRINT_MEMBERS = { EC: ['crv', 'kty', 'x', 'y'], OKP: ['crv', 'kty', 'x'] }
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

function refuse(message) {
  // RFC 9449 §5: a token request with a bad proof is 400 invalid_dpop_proof.
  return new ApiError(400, 'invalid_dpop_proof', message)
}

function segment(text) {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'))
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null
  } catch {
    return null
  }
}

/** The RFC 7638 SHA-256 thumbprint of a public JWK (base64url). */
function thumbprint(jwk) {
  const members = {}
  for (const name of THUMBPRINT_MEMBERS[jwk.kty]) members[name] = jwk[name]
  return crypto.createHash('sha256').update(JSON.stringify(members)).digest('base64url')
}

/** The request URL without query and fragment, as htu is compared (RFC 9449 §4.3). */
function withoutQuery(url) {
  try {
    const u = new URL(url)
    return `${u.origin}${u.pathname}`
  } catch {
    return null
  }
}

/**
 * Checks DPoP proofs for the token endpoints of `origin` (the service's public origin, the one
 * clients address; never the Host header). `check(req)` returns the proof key's thumbprint, or
 * null when the request has no DPoP header (a Bearer token is issued then); a bad proof throws
 * 400 invalid_dpop_proof.
 */
function tokenEndpointProofs(origin) {
  const seen = new Map()

  function remember(key, expiresAt, now) {
    if (seen.has(key)) throw refuse('DPoP proof has been used before')
    if (seen.size >= MAX_SEEN) {
      for (const [k, at] of seen) if (at <= now) seen.delete(k)
      // Full of live proofs: refuse rather than forget one that could then be replayed.
      if (seen.size >= MAX_SEEN) throw new ApiError(503, 'dpop_replay_cache_full', 'Too many DPoP proofs in flight; retry')
    }
    seen.set(key, expiresAt)
  }

  return function check(req) {
    const header = req.headers.dpop
    if (header === undefined) return null
    if (typeof header !== 'string' || header.length > MAX_PROOF_BYTES) throw refuse('One DPoP header of at most 8192 bytes')
    const parts = header.split('.')
    if (parts.length !== 3) throw refuse('DPoP proof is not a compact JWS')
    const head = segment(parts[0])
    const claims = segment(parts[1])
    if (head === null || claims === null || head.typ !== 'dpop+jwt' || head.crit !== undefined) throw refuse('DPoP proof header is not a dpop+jwt one')
    const alg = Object.hasOwn(ALGS, head.alg) ? ALGS[head.alg] : undefined
    const jwk = head.jwk
    if (alg === undefined) throw refuse('DPoP proof alg must be ES256 or EdDSA')
    if (jwk === null || typeof jwk !== 'object' || jwk.kty !== alg.kty || jwk.crv !== alg.crv || PRIVATE_MEMBERS.some((m) => m in jwk)) {
      throw refuse('DPoP proof jwk must be a public key of its alg')
    }
    let valid = false
    try {
      const key = crypto.createPublicKey({ key: jwk, format: 'jwk' })
      const signed = Buffer.from(`${parts[0]}.${parts[1]}`)
      valid = crypto.verify(alg.hash, signed, { key, dsaEncoding: alg.dsaEncoding }, Buffer.from(parts[2], 'base64url'))
    } catch {
      valid = false
    }
    if (!valid) throw refuse('DPoP proof signature is invalid')
    const { jti, htm, htu, iat } = claims
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > 256) throw refuse('DPoP proof jti is missing')
    if (htm !== req.method || typeof htu !== 'string' || withoutQuery(htu) !== withoutQuery(`${origin}${req.originalUrl}`)) {
      throw refuse('DPoP proof is for another method or URL')
    }
    const now = Date.now() / 1000
    if (typeof iat !== 'number' || !(Math.abs(iat - now) <= IAT_WINDOW_SEC)) throw refuse('DPoP proof iat is outside its window')
    const jkt = thumbprint(jwk)
    remember(`${jkt}.${jti}`, iat + IAT_WINDOW_SEC, now)
    return jkt
  }
}

module.exports = { tokenEndpointProofs, thumbprint }
