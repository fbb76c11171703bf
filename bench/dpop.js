'use strict'

// DPoP benchmark (issue 26): a request carrying an ES256-signed access token bound to a key
// (cnf.jkt) and a fresh proof of that key (ES256 or EdDSA, made by the dpop package), checked by
// the native engine, by the JS engine, and by jose plus the same checks in JS (what a Node
// resource server does today: oauth4webapi-style htm/htu/iat/ath/jkt checks and a Set for
// jti). Equal work: every request verifies both signatures (the verified-token cache is off),
// every proof is new (pre-generated, unique jti). Release build only: `npm run build` first.
//
//   node bench/dpop.js [--n=4000]

const { createHash } = require('node:crypto')
const { performance } = require('node:perf_hooks')
const jose = require('jose')
const dpop = require('dpop')
const native = require('..')
const js = require('../js')

const N = Number((process.argv.find((a) => a.startsWith('--n=')) || '--n=4000').slice(4))
const URL = 'https://api.example.com/orders'
const WINDOW = 300

async function fixtures(alg) {
  const issuer = await jose.generateKeyPair('ES256', { extractable: true })
  const issuerJwk = await jose.exportJWK(issuer.publicKey)
  const key = await dpop.generateKeyPair(alg === 'EdDSA' ? 'Ed25519' : alg)
  const jkt = await dpop.calculateThumbprint(key.publicKey)
  const token = await new jose.SignJWT({ sub: 'user-1', cnf: { jkt } }).setProtectedHeader({ alg: 'ES256' }).setIssuedAt().setExpirationTime('1h').sign(issuer.privateKey)
  const proofs = []
  for (let i = 0; i < N; i++) proofs.push(await dpop.generateProof(key, URL, 'GET', undefined, token))
  return { issuerJwk, issuerKey: issuer.publicKey, token, proofs }
}

function runSync(label, proofs, fn) {
  const start = performance.now()
  let ok = 0
  for (const p of proofs) if (fn(p)) ok++
  const ms = performance.now() - start
  return { label, ok, usPerOp: (ms * 1000) / proofs.length, opsPerSec: Math.round((proofs.length * 1000) / ms) }
}

async function runAsync(label, proofs, fn) {
  const start = performance.now()
  let ok = 0
  for (const p of proofs) if (await fn(p)) ok++
  const ms = performance.now() - start
  return { label, ok, usPerOp: (ms * 1000) / proofs.length, opsPerSec: Math.round((proofs.length * 1000) / ms) }
}

/** jose + the RFC 9449 §4.3 checks in JS, as a Node resource server does them without auth-shield. */
function joseChecker(f) {
  const seen = new Set()
  const ath = createHash('sha256').update(f.token).digest('base64url')
  return async (proof) => {
    const { payload, protectedHeader } = await jose.jwtVerify(proof, jose.EmbeddedJWK, { typ: 'dpop+jwt', algorithms: ['ES256', 'EdDSA', 'Ed25519', 'RS256', 'PS256'] })
    if (payload.htm !== 'GET' || payload.htu !== URL || payload.ath !== ath) return false
    if (Math.abs(Date.now() / 1000 - payload.iat) > WINDOW || typeof payload.jti !== 'string') return false
    const jkt = await jose.calculateJwkThumbprint(protectedHeader.jwk, 'sha256')
    const { payload: claims } = await jose.jwtVerify(f.token, f.issuerKey, { algorithms: ['ES256'] })
    if (claims.cnf?.jkt !== jkt) return false
    const replayKey = `${jkt}.${payload.jti}`
    if (seen.has(replayKey)) return false
    seen.add(replayKey)
    return true
  }
}

async function main() {
  const profile = native.buildProfile ? native.buildProfile() : undefined
  console.log(`DPoP, ${N} requests per row, node ${process.version}, addon ${JSON.stringify(profile)}`)
  const rows = []
  for (const alg of ['ES256', 'EdDSA']) {
    const f = await fixtures(alg)
    const config = { keys: [{ alg: 'ES256', publicKey: f.issuerJwk }], dpop: true, dpopIatWindowSec: WINDOW, rateLimitMax: 0, verifiedTokenCacheMaxEntries: 0 }
    const engines = [
      ['auth-shield native', new native.Authenticator(config)],
      ['auth-shield js', new js.Authenticator(config)],
    ]
    for (const [label, auth] of engines) {
      rows.push({ alg, ...runSync(label, f.proofs, (p) => auth.authenticate(`DPoP ${f.token}`, undefined, undefined, { dpop: p, method: 'GET', url: URL }).authenticated) })
    }
    rows.push({ alg, ...(await runAsync('jose + checks', f.proofs, joseChecker(f))) })
  }
  for (const r of rows) console.log(`${r.alg.padEnd(6)} ${r.label.padEnd(20)} ${String(r.opsPerSec).padStart(8)} req/s ${r.usPerOp.toFixed(1).padStart(8)} µs  (${r.ok}/${N} accepted)`)
  for (const alg of ['ES256', 'EdDSA']) {
    const of = (label) => rows.find((r) => r.alg === alg && r.label === label)
    console.log(`${alg}: native is ${(of('auth-shield native').opsPerSec / of('jose + checks').opsPerSec).toFixed(2)}x jose + checks`)
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
