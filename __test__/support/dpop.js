'use strict'

// Test support: DPoP-bound access tokens signed by jose, and DPoP proofs made by the `dpop`
// package (and, for the attacks, by jose with any header we like).

const { createHash, createHmac, createPrivateKey, randomUUID, sign } = require('node:crypto')
const jose = require('jose')
const dpop = require('dpop')

const URL = 'https://api.example.com/orders'

/** An ES256 issuer: `config` keys for an authenticator, `sign(claims)` for tokens. */
async function issuer() {
  const { publicKey, privateKey } = await jose.generateKeyPair('ES256', { extractable: true })
  const jwk = await jose.exportJWK(publicKey)
  const sign = (claims) =>
    new jose.SignJWT({ sub: 'user-1', ...claims })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(privateKey)
  return { keys: [{ alg: 'ES256', publicKey: jwk }], sign }
}

/** A client key of `alg` from the dpop package, with its public JWK and RFC 7638 thumbprint. */
async function clientKey(alg = 'ES256') {
  const keyPair = await dpop.generateKeyPair(alg, { extractable: true })
  const jwk = await jose.exportJWK(keyPair.publicKey)
  const privateJwk = await jose.exportJWK(keyPair.privateKey)
  const jkt = await jose.calculateJwkThumbprint(jwk, 'sha256')
  return { alg, keyPair, jwk, privateJwk, jkt }
}

/** A proof by the dpop package (iat now, random jti). */
function proof(key, { url = URL, method = 'GET', token } = {}) {
  return dpop.generateProof(key.keyPair, url, method, undefined, token)
}

const ath = (token) => createHash('sha256').update(token).digest('base64url')
const b64 = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

/** A proof signed by jose with any header and payload (defaults: a valid one for `token`). */
function craftedProof(key, { header = {}, payload = {}, token } = {}) {
  const claims = { htm: 'GET', htu: URL, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ath: ath(token), ...payload }
  return new jose.SignJWT(claims).setProtectedHeader({ alg: key.alg, typ: 'dpop+jwt', jwk: key.jwk, ...header }).sign(key.keyPair.privateKey)
}

// One KeyObject per client key: importing the JWK again for each proof was most of a flood's time.
const privateKeys = new WeakMap()

/** An ES256 proof with exactly `header` and `payload` as given (no library checks: `crit`…). */
function rawProof(key, header, payload) {
  const input = `${b64(header)}.${b64(payload)}`
  let privateKey = privateKeys.get(key)
  if (privateKey === undefined) {
    privateKey = createPrivateKey({ key: key.privateJwk, format: 'jwk' })
    privateKeys.set(key, privateKey)
  }
  return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`
}

/** A valid proof payload for `token`. */
const proofClaims = (token) => ({ htm: 'GET', htu: URL, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ath: ath(token) })

/** An unsigned (`alg: none`) or HS256-signed proof. */
function symmetricProof(key, alg, token) {
  const head = b64({ alg, typ: 'dpop+jwt', jwk: key.jwk })
  const body = b64({ htm: 'GET', htu: URL, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ath: ath(token) })
  const signature = alg === 'none' ? '' : createHmac('sha256', 'k'.repeat(32)).update(`${head}.${body}`).digest('base64url')
  return `${head}.${body}.${signature}`
}

module.exports = { URL, issuer, clientKey, proof, craftedProof, rawProof, proofClaims, symmetricProof, ath }
