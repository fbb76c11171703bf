'use strict'

// Test support: a real JWKS endpoint on loopback whose answer a test changes as it goes (a
// document, a status, a body too large, no answer at all), counting the fetches it receives.

const http = require('node:http')
const { generateKeyPairSync } = require('node:crypto')
const { listen } = require('./http')

/**
 * Starts the server; resolves to { url, fetches, serve(doc), answer(fn), hold(), close() }.
 * `serve(doc)` answers every fetch with `doc` as JSON; `answer((req, res) => …)` takes over the
 * response; `hold()` keeps the next responses waiting until the returned `release()` is called.
 */
async function startJwksServer() {
  let handler = (req, res) => sendJson(res, { keys: [] })
  let held = null
  const state = { fetches: 0 }
  const server = http.createServer((req, res) => {
    state.fetches++
    if (held !== null) held.push(() => handler(req, res))
    else handler(req, res)
  })
  // Never close an idle keep-alive socket from this side: a fetch reusing it at that moment would
  // fail with "other side closed" (a race the client cannot see coming; undici closes its own).
  server.keepAliveTimeout = 0
  const { base, close } = await listen(server)
  return {
    url: `${base}/.well-known/jwks.json`,
    get fetches() {
      return state.fetches
    },
    serve(doc) {
      handler = (req, res) => sendJson(res, doc)
    },
    answer(fn) {
      handler = fn
    },
    hold() {
      held = []
      return () => {
        const waiting = held
        held = null
        for (const go of waiting) go()
      }
    },
    close,
  }
}

function sendJson(res, doc) {
  const body = JSON.stringify(doc)
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

/** A fresh key pair for `alg`, with its public JWK (`kid`, `alg`, `use: 'sig'`). */
function keyPair(alg, kid, { modulusLength = 2048, omitAlg = false } = {}) {
  const { privateKey, publicKey } = generate(alg, modulusLength)
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig' }
  if (!omitAlg) jwk.alg = alg
  return { alg, kid, privateKey, publicKey, jwk }
}

function generate(alg, modulusLength) {
  if (alg.startsWith('RS') || alg.startsWith('PS')) return generateKeyPairSync('rsa', { modulusLength })
  if (alg === 'ES256') return generateKeyPairSync('ec', { namedCurve: 'P-256' })
  if (alg === 'ES384') return generateKeyPairSync('ec', { namedCurve: 'P-384' })
  if (alg === 'ES512') return generateKeyPairSync('ec', { namedCurve: 'P-521' })
  if (alg === 'EdDSA' || alg === 'Ed25519') return generateKeyPairSync('ed25519')
  throw new Error(`no key pair for ${alg}`)
}

module.exports = { startJwksServer, sendJson, keyPair }
