'use strict'

// Proofs from a second, independent DPoP client: oauth4webapi's DPoP handle and
// protectedResourceRequest against our Express and Fetch servers on loopback, each on both
// engines. The client addresses https://api.example.com (our dpopOrigin) and a customFetch
// carries the request to the loopback server, as a TLS-terminating proxy would. With server
// nonces: the first request is answered 401 use_dpop_nonce with a DPoP-Nonce header, the handle
// keeps the nonce, the retry passes, and later requests carry it from the start. The exact
// proof oauth4webapi sent is refused when replayed; a proof for another method, or from a key
// the token is not bound to, is refused.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const expressShield = require('../../adapters/express')
const { createVerifier } = require('../../adapters/fetch')
const { request } = require('../support/http')
const { expressServer, fetchServer, fetchRoute } = require('../support/adapter-servers')
const { issuer } = require('../support/dpop')

const ORIGIN = 'https://api.example.com'
const URL_ORDERS = new URL(`${ORIGIN}/orders`)
const NONCE_SECRET = 'oauth4webapi-nonce-secret-0123456789'

const SERVERS = []
for (const engine of ['native', 'js']) {
  SERVERS.push(['express', engine, (config, options) => expressServer(expressShield(config, options))])
  SERVERS.push(['fetch', engine, (config, options) => fetchServer(fetchRoute(createVerifier(config, options)))])
}

let oauth
let jose
before(async () => {
  oauth = await import('oauth4webapi')
  jose = await import('jose')
})

/** A DPoP client of oauth4webapi: its handle, the token bound to its key, and `call(method)`. */
async function client(server, iss, { bindTo } = {}) {
  const keyPair = await oauth.generateKeyPair('ES256')
  const handle = oauth.DPoP({}, keyPair)
  const jkt = bindTo ?? (await handle.calculateThumbprint())
  const token = await iss.sign({ cnf: { jkt } })
  const sent = []
  // The proxy: the client's https URL, carried to the loopback server; every DPoP header recorded.
  const customFetch = (url, init) => {
    sent.push(init.headers.dpop)
    const target = new URL(url)
    return fetch(`${server.base}${target.pathname}${target.search}`, init)
  }
  const call = (method = 'GET') => oauth.protectedResourceRequest(token, method, URL_ORDERS, undefined, undefined, { DPoP: handle, [oauth.customFetch]: customFetch })
  return { handle, token, sent, call, jkt }
}

/** protectedResourceRequest's outcome: `{ status }`, or `{ challenge }` of the error it threw. */
async function outcome(promise) {
  try {
    const response = await promise
    return { status: response.status, body: await response.json() }
  } catch (err) {
    if (!(err instanceof oauth.WWWAuthenticateChallengeError)) throw err
    return { status: err.response.status, challenge: err.cause[0], nonceError: oauth.isDPoPNonceError(err), body: await err.response.json() }
  }
}

for (const [name, engine, start] of SERVERS) {
  describe(`oauth4webapi proofs against ${name} (${engine})`, () => {
    let iss
    before(async () => (iss = await issuer()))

    it('accepts its proofs for a bound token, refuses a replay of one, a proof for another method and an unbound key', async () => {
      const server = await start({ keys: iss.keys, dpop: true, rateLimitMax: 0 }, { engine, dpopOrigin: ORIGIN })
      try {
        const c = await client(server, iss)
        for (let i = 0; i < 3; i++) {
          const ok = await outcome(c.call())
          assert.equal(ok.status, 200, JSON.stringify(ok))
          assert.equal(ok.body.claims.cnf.jkt, c.jkt)
        }
        assert.equal(new Set(c.sent).size, 3, 'a fresh proof each time')
        assert.equal(jose.decodeProtectedHeader(c.sent[0]).typ, 'dpop+jwt')
        assert.equal(jose.decodeJwt(c.sent[0]).htu, URL_ORDERS.href)

        // The exact proof oauth4webapi sent, replayed.
        const replay = await request(`${server.base}/orders`, { headers: { authorization: `DPoP ${c.token}`, dpop: c.sent[0] } })
        assert.equal(replay.status, 401)
        assert.equal(replay.json.code, 'dpop_proof_replayed')
        // Its proof for GET, sent with POST.
        const fresh = c.sent.length
        await c.call()
        const wrongMethod = await request(`${server.base}/orders`, { method: 'POST', headers: { authorization: `DPoP ${c.token}`, dpop: c.sent[fresh] } })
        assert.equal(wrongMethod.status, 401)
        assert.equal(wrongMethod.json.code, 'dpop_proof_mismatch')

        // A token bound to another key: oauth4webapi's proof is refused, challenge parsed by it.
        const thief = await client(server, iss, { bindTo: c.jkt })
        const stolen = await outcome(thief.call())
        assert.equal(stolen.status, 401)
        assert.equal(stolen.body.code, 'dpop_key_mismatch')
        assert.equal(stolen.challenge.scheme, 'dpop')
        assert.equal(stolen.challenge.parameters.error, 'invalid_token')
        assert.equal(stolen.nonceError, false)
      } finally {
        await server.close()
      }
    })

    it('with server nonces: use_dpop_nonce, the handle keeps the DPoP-Nonce, the retry and later requests pass', async () => {
      const server = await start({ keys: iss.keys, dpop: true, rateLimitMax: 0, dpopNonceSecret: NONCE_SECRET }, { engine, dpopOrigin: ORIGIN })
      try {
        const c = await client(server, iss)
        const first = await outcome(c.call())
        assert.equal(first.status, 401)
        assert.equal(first.body.code, 'use_dpop_nonce')
        assert.equal(first.nonceError, true, JSON.stringify(first.challenge))
        assert.equal(jose.decodeJwt(c.sent[0]).nonce, undefined)

        const retry = await outcome(c.call())
        assert.equal(retry.status, 200, JSON.stringify(retry))
        const nonce = jose.decodeJwt(c.sent[1]).nonce
        assert.equal(typeof nonce, 'string')
        for (let i = 0; i < 3; i++) assert.equal((await outcome(c.call())).status, 200)
        assert.equal(c.sent.length, 5, 'no further nonce round trip')
        assert.equal(jose.decodeJwt(c.sent[4]).nonce, nonce)

        // A second client that learnt no nonce gets the challenge too, then passes.
        const other = await client(server, iss)
        assert.equal((await outcome(other.call())).nonceError, true)
        assert.equal((await outcome(other.call())).status, 200)
      } finally {
        await server.close()
      }
    })
  })
}
