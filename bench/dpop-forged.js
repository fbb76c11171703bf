'use strict'

// What an unauthenticated DPoP request costs against a forged Bearer one (issue 34 §2): the
// engines check the proof's claims, the access token, ath and cnf.jkt before the proof's
// signature, and bound proof keys (RSA 2048-4096 bits, exponent at most 65537), so a garbage
// token with a heavy proof must cost at most 3x a forged RS256-2048 Bearer token. Rows, per
// engine: a forged RS256-2048 Bearer token; a garbage token with an RSA-8192 / e = 2^32 - 1
// proof key and a garbage signature; the same token with an RSA-4096 proof (the largest
// allowed) and a garbage signature. Interleaved rounds, median per row. With --main=<dir>, the
// native engine of another checkout (its release build) runs the same rows in the same
// process, for a before/after.
//
//   node bench/dpop-forged.js [--n=3000] [--rounds=7] [--main=/work/main]

const { generateKeyPairSync, randomBytes, createHash, randomUUID } = require('node:crypto')
const { performance } = require('node:perf_hooks')
const path = require('node:path')

const arg = (name, fallback) => {
  const a = process.argv.find((x) => x.startsWith(`--${name}=`))
  return a === undefined ? fallback : a.slice(name.length + 3)
}
const N = Number(arg('n', '3000'))
const ROUNDS = Number(arg('rounds', '7'))
const MAIN = arg('main', undefined)
const URL = 'https://api.example.com/orders'

const b64 = (v) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url')

function rsaJwk(bytes, e) {
  const n = randomBytes(bytes)
  n[0] |= 0x80
  n[n.length - 1] |= 1
  return { kty: 'RSA', n: n.toString('base64url'), e: Buffer.from(e).toString('base64url') }
}

function garbageProof(jwk, token, bytes) {
  const claims = { htm: 'GET', htu: URL, iat: Math.floor(Date.now() / 1000), jti: randomUUID(), ath: createHash('sha256').update(token).digest('base64url') }
  return `${b64({ alg: 'RS256', typ: 'dpop+jwt', jwk })}.${b64(claims)}.${randomBytes(bytes).toString('base64url')}`
}

function cases() {
  const { publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const config = { keys: [{ alg: 'RS256', publicKey: publicKey.export({ format: 'pem', type: 'spki' }) }], dpop: true, rateLimitMax: 0 }
  // A well-formed RS256 token whose signature is garbage: the engine verifies it and fails.
  const forged = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64({ sub: 'u', exp: 4e9 })}.${randomBytes(256).toString('base64url')}`
  const heavy = { dpop: garbageProof(rsaJwk(1024, [0xff, 0xff, 0xff, 0xff]), forged, 1024), method: 'GET', url: URL }
  const largest = { dpop: garbageProof(rsaJwk(512, [1, 0, 1]), forged, 512), method: 'GET', url: URL }
  return {
    config,
    rows: [
      ['forged RS256-2048 Bearer', (a) => a.authenticate(`Bearer ${forged}`, null, null, null)],
      ['garbage token + RSA-8192 e=2^32-1 proof', (a) => a.authenticate(`DPoP ${forged}`, null, null, heavy)],
      ['garbage token + RSA-4096 proof', (a) => a.authenticate(`DPoP ${forged}`, null, null, largest)],
    ],
  }
}

function time(fn) {
  const start = performance.now()
  for (let i = 0; i < N; i++) fn()
  return ((performance.now() - start) * 1000) / N
}

function main() {
  const { config, rows } = cases()
  const engines = [
    ['native', new (require('..').Authenticator)(config)],
    ['js', new (require('../js').Authenticator)(config)],
  ]
  if (MAIN !== undefined) engines.push(['native (main)', new (require(path.resolve(MAIN)).Authenticator)(config)])
  const samples = new Map()
  for (let r = 0; r < ROUNDS; r++) {
    for (const [engine, auth] of engines) {
      for (const [row, fn] of rows) {
        const key = `${engine}\t${row}`
        if (!samples.has(key)) samples.set(key, [])
        samples.get(key).push(time(() => fn(auth)))
      }
    }
  }
  const median = (xs) => xs.slice().sort((a, b) => a - b)[xs.length >> 1]
  console.log(`DPoP refusal cost, ${N} requests x ${ROUNDS} rounds, median µs per request`)
  for (const [engine] of engines) {
    const base = median(samples.get(`${engine}\t${rows[0][0]}`))
    for (const [row] of rows) {
      const us = median(samples.get(`${engine}\t${row}`))
      console.log(`${engine.padEnd(14)} ${row.padEnd(42)} ${us.toFixed(1).padStart(8)} µs  ${(us / base).toFixed(2)}x`)
    }
  }
}

main()
