'use strict'

// Certificate-bound token benchmark (RFC 8705 §3, issue 26): a request carrying an ES256 access
// token whose cnf["x5t#S256"] is the SHA-256 thumbprint of the client certificate, checked by the
// native engine, by the JS engine (certificateBoundTokens: true), and by jose plus the same check
// in JS (jwtVerify, then the thumbprint compared). Equal work on every side: the thumbprint of the
// certificate's DER is computed per request (node:crypto, as the adapters do from the TLS
// socket), every token is verified (the verified-token cache is off; one token per request,
// distinct jti). The DER is 600 random bytes (a typical P-256 client certificate's size): the
// thumbprint is a hash of whatever bytes the handshake carried. Release build only.
//
//   node bench/mtls.js [--n=4000]

const { createHash, randomBytes, randomUUID } = require('node:crypto')
const { performance } = require('node:perf_hooks')
const jose = require('jose')
const native = require('..')
const js = require('../js')

const N = Number((process.argv.find((a) => a.startsWith('--n=')) || '--n=4000').slice(4))
const thumbprintOf = (der) => createHash('sha256').update(der).digest('base64url')

async function fixtures() {
  const issuer = await jose.generateKeyPair('ES256', { extractable: true })
  const issuerJwk = await jose.exportJWK(issuer.publicKey)
  const der = randomBytes(600)
  const cnf = { 'x5t#S256': thumbprintOf(der) }
  const tokens = []
  for (let i = 0; i < N; i++) {
    tokens.push(await new jose.SignJWT({ sub: 'user-1', jti: randomUUID(), cnf }).setProtectedHeader({ alg: 'ES256' }).setIssuedAt().setExpirationTime('1h').sign(issuer.privateKey))
  }
  return { issuerJwk, issuerKey: issuer.publicKey, der, tokens }
}

function runSync(label, tokens, fn) {
  const start = performance.now()
  let ok = 0
  for (const t of tokens) if (fn(t)) ok++
  const ms = performance.now() - start
  return { label, ok, usPerOp: (ms * 1000) / tokens.length, opsPerSec: Math.round((tokens.length * 1000) / ms) }
}

async function runAsync(label, tokens, fn) {
  const start = performance.now()
  let ok = 0
  for (const t of tokens) if (await fn(t)) ok++
  const ms = performance.now() - start
  return { label, ok, usPerOp: (ms * 1000) / tokens.length, opsPerSec: Math.round((tokens.length * 1000) / ms) }
}

async function main() {
  const profile = native.buildProfile ? native.buildProfile() : undefined
  console.log(`certificate-bound tokens, ${N} requests per row, node ${process.version}, addon ${JSON.stringify(profile)}`)
  const f = await fixtures()
  const config = { keys: [{ alg: 'ES256', publicKey: f.issuerJwk }], certificateBoundTokens: true, rateLimitMax: 0, verifiedTokenCacheMaxEntries: 0 }
  const rows = []
  for (const [label, auth] of [
    ['auth-shield native', new native.Authenticator(config)],
    ['auth-shield js', new js.Authenticator(config)],
  ]) {
    rows.push(runSync(label, f.tokens, (t) => auth.authenticate(`Bearer ${t}`, undefined, undefined, { clientCertThumbprint: thumbprintOf(f.der) }).authenticated))
  }
  rows.push(
    await runAsync('jose + check', f.tokens, async (t) => {
      const presented = thumbprintOf(f.der)
      const { payload } = await jose.jwtVerify(t, f.issuerKey, { algorithms: ['ES256'], requiredClaims: ['sub', 'exp'] })
      return payload.cnf !== null && typeof payload.cnf === 'object' && payload.cnf['x5t#S256'] === presented
    }),
  )
  for (const r of rows) console.log(`${r.label.padEnd(20)} ${String(r.opsPerSec).padStart(8)} req/s ${r.usPerOp.toFixed(1).padStart(8)} µs  (${r.ok}/${N} accepted)`)
  const of = (label) => rows.find((r) => r.label === label)
  console.log(`native is ${(of('auth-shield native').opsPerSec / of('jose + check').opsPerSec).toFixed(2)}x jose + check`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
