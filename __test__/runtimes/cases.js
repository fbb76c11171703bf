'use strict'

// The Fetch cases every runtime acceptance serves (scripts/runtimes/acceptance.js): one config,
// tokens minted here (HS256 from a secret, RS256 from an inline JWK, a DPoP-bound token), and
// the requests in order. Each target gets a fresh server, so the rate-limit and replay state of
// one target never reaches another; every answer is compared with Node's.

const crypto = require('node:crypto')

const SECRET = 'runtime-acceptance-secret-of-32-bytes!!'
const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
const RSA_JWK = { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'rsa-1' }
const dpopKeys = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' })
const DPOP_JWK = dpopKeys.publicKey.export({ format: 'jwk' })
const JKT = crypto
  .createHash('sha256')
  .update(JSON.stringify({ crv: DPOP_JWK.crv, kty: DPOP_JWK.kty, x: DPOP_JWK.x, y: DPOP_JWK.y }))
  .digest('base64url')

/** The Authenticator config every target uses (plain JSON: it is embedded in the worker). */
const CONFIG = {
  keys: [
    { kid: 'hs-1', alg: 'HS256', secret: SECRET },
    { kid: 'rsa-1', alg: 'RS256', publicKey: RSA_JWK },
  ],
  requiredScope: ['read'],
  rateLimitMax: 2,
  rateLimitRefillPerSec: 0.001,
  dpop: true,
}

const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url')
const now = () => Math.floor(Date.now() / 1000)

function hs256(claims, kid = 'hs-1') {
  const unsigned = `${b64({ alg: 'HS256', typ: 'JWT', kid })}.${b64(claims)}`
  return `${unsigned}.${crypto.createHmac('sha256', SECRET).update(unsigned).digest('base64url')}`
}

function rs256(claims) {
  const unsigned = `${b64({ alg: 'RS256', typ: 'JWT', kid: 'rsa-1' })}.${b64(claims)}`
  return `${unsigned}.${crypto.sign('sha256', Buffer.from(unsigned), rsa.privateKey).toString('base64url')}`
}

/** A DPoP proof (RFC 9449 §4.2) for `method` `url`, bound to `token` (ath). */
function dpopProof(method, url, token) {
  const header = { typ: 'dpop+jwt', alg: 'ES256', jwk: DPOP_JWK }
  const claims = {
    jti: crypto.randomUUID(),
    htm: method,
    htu: url,
    iat: now(),
    ath: crypto.createHash('sha256').update(token).digest('base64url'),
  }
  const unsigned = `${b64(header)}.${b64(claims)}`
  const signature = crypto.sign('sha256', Buffer.from(unsigned), { key: dpopKeys.privateKey, dsaEncoding: 'ieee-p1363' })
  return `${unsigned}.${signature.toString('base64url')}`
}

/**
 * The requests, in order, for a server reached at `url`: [{ name, headers }]. Tokens are minted
 * per call (fresh iat/exp); the replay case sends the DPoP case's proof again.
 */
function cases(url) {
  const t = now()
  const claims = (sub, extra) => ({ sub, scope: 'read write', iat: t, exp: t + 300, ...extra })
  const valid = hs256(claims('alice'))
  const tampered = `${valid.slice(0, -4)}${valid.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`
  const bound = hs256(claims('dora', { cnf: { jkt: JKT } }))
  const proof = dpopProof('GET', url, bound)
  const bearer = (token) => ({ authorization: `Bearer ${token}` })
  return [
    { name: 'valid HS256', headers: bearer(valid) },
    { name: 'valid RS256 (inline JWK)', headers: bearer(rs256(claims('rosa'))) },
    { name: 'tampered signature', headers: bearer(tampered) },
    { name: 'missing credentials', headers: {} },
    { name: 'malformed header', headers: { authorization: 'Basic dXNlcjpwYXNz' } },
    { name: 'expired', headers: bearer(hs256(claims('eve', { iat: t - 600, exp: t - 300 }))) },
    { name: 'insufficient scope', headers: bearer(hs256(claims('sam', { scope: 'write' }))) },
    { name: 'rate limit: 1st of 2', headers: bearer(hs256(claims('rita'))) },
    { name: 'rate limit: 2nd of 2', headers: bearer(hs256(claims('rita'))) },
    { name: 'rate limit: 3rd, limited', headers: bearer(hs256(claims('rita'))) },
    { name: 'DPoP-bound token with a proof', headers: { authorization: `DPoP ${bound}`, dpop: proof } },
    { name: 'DPoP proof replayed', headers: { authorization: `DPoP ${bound}`, dpop: proof } },
    { name: 'DPoP-bound token as Bearer', headers: bearer(bound) },
  ]
}

module.exports = { CONFIG, cases }
