'use strict'

// DPoP through every adapter on real loopback servers (Express, Fastify, Koa, Fetch), both
// engines: the proof of the request's method and configured-origin URL passes once; replays
// (also in parallel), two DPoP headers, huge proofs, bound tokens as Bearer and missing proofs
// are refused with the RFC 9449 §7.1 challenge.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const Fastify = require('fastify')
const expressShield = require('../../adapters/express')
const { request } = require('../support/http')
const { ADAPTER_STARTS } = require('../support/adapter-servers')
const { issuer, clientKey, proof } = require('../support/dpop')

const ORIGIN = 'https://api.example.com'
const HTU = `${ORIGIN}/orders`

const ADAPTERS = ADAPTER_STARTS

for (const engine of ['native', 'js']) {
  for (const [name, start] of ADAPTERS) {
    describe(`${name} (${engine}): DPoP`, () => {
      let server
      let key
      let bound
      let iss
      before(async () => {
        iss = await issuer()
        key = await clientKey('ES256')
        bound = await iss.sign({ cnf: { jkt: key.jkt } })
        server = await start({ keys: iss.keys, dpop: true, rateLimitMax: 0 }, { engine, dpopOrigin: ORIGIN })
      })
      after(() => server.close())

      const send = (headers, method = 'GET') => request(`${server.base}/orders?page=2`, { method, headers })

      it('passes a fresh proof once, then refuses its replay with a DPoP challenge', async () => {
        const headers = { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: HTU }) }
        const ok = await send(headers)
        assert.equal(ok.status, 200, ok.body)
        const replay = await send(headers)
        assert.equal(replay.status, 401)
        assert.equal(replay.json.code, 'dpop_proof_replayed')
        assert.match(replay.headers['www-authenticate'], /^DPoP error="invalid_dpop_proof", error_description="[^"]+", algs="ES256 [^"]*EdDSA/)
      })

      it('lets exactly one of ten parallel requests with one proof through', async () => {
        const headers = { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: HTU }) }
        const answers = await Promise.all(Array.from({ length: 10 }, () => send(headers)))
        assert.deepEqual(answers.map((a) => a.status).sort(), [200, ...Array(9).fill(401)])
      })

      it('refuses a proof for another method or a URL built from Host', async () => {
        const post = await send({ authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: HTU, method: 'POST' }) })
        assert.equal(post.json.code, 'dpop_proof_mismatch')
        const hostUrl = `${server.base}/orders`
        const local = await send({ authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: hostUrl }) })
        assert.equal(local.json.code, 'dpop_proof_mismatch')
        const forwarded = await send({
          authorization: `DPoP ${bound}`,
          'x-forwarded-host': 'evil.example.com',
          dpop: await proof(key, { token: bound, url: 'https://evil.example.com/orders' }),
        })
        assert.equal(forwarded.json.code, 'dpop_proof_mismatch')
      })

      it('refuses two DPoP headers, a huge one, a missing one and a bound token as Bearer', async () => {
        const two = await send({ authorization: `DPoP ${bound}`, dpop: [await proof(key, { token: bound, url: HTU }), await proof(key, { token: bound, url: HTU })] })
        assert.equal(two.status, 401)
        assert.equal(two.json.code, 'invalid_dpop_proof')
        const huge = await send({ authorization: `DPoP ${bound}`, dpop: `${'a'.repeat(9000)}.b.c` })
        assert.equal(huge.json.code, 'invalid_dpop_proof')
        const missing = await send({ authorization: `DPoP ${bound}` })
        assert.equal(missing.json.code, 'missing_dpop_proof')
        assert.match(missing.headers['www-authenticate'], /^DPoP error="invalid_dpop_proof"/)
        const bearer = await send({ authorization: `Bearer ${bound}`, dpop: await proof(key, { token: bound, url: HTU }) })
        assert.equal(bearer.status, 401)
        assert.equal(bearer.json.code, 'dpop_bound_token_as_bearer')
        assert.match(bearer.headers['www-authenticate'], /^Bearer error="invalid_token"/)
        const other = await clientKey('ES256')
        const wrongKey = await send({ authorization: `DPoP ${bound}`, dpop: await proof(other, { token: bound, url: HTU }) })
        assert.equal(wrongKey.json.code, 'dpop_key_mismatch')
        assert.match(wrongKey.headers['www-authenticate'], /^DPoP error="invalid_token"/)
      })
    })
  }
}

for (const engine of ['native', 'js']) {
  describe(`dpopMode: 'required' (${engine})`, () => {
    it('refuses a valid Bearer token with dpop_required and a bare DPoP challenge; a DPoP request passes', async () => {
      const iss = await issuer()
      const key = await clientKey('Ed25519')
      const bound = await iss.sign({ cnf: { jkt: key.jkt } })
      const unbound = await iss.sign({})
      for (const [name, start] of ADAPTERS) {
        const server = await start({ keys: iss.keys, dpop: true, rateLimitMax: 0 }, { engine, dpopOrigin: ORIGIN, dpopMode: 'required', realm: 'orders' })
        try {
          const send = (headers) => request(`${server.base}/orders`, { headers })
          const bearer = await send({ authorization: `Bearer ${unbound}` })
          assert.equal(bearer.status, 401, name)
          assert.equal(bearer.json.code, 'dpop_required', name)
          assert.match(bearer.headers['www-authenticate'], /^DPoP realm="orders", algs="[^"]+"$/, name)
          const dpop = await send({ authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: HTU }) })
          assert.equal(dpop.status, 200, `${name}: ${dpop.body}`)
        } finally {
          await server.close()
        }
      }
    })
  })
}

for (const engine of ['native', 'js']) {
  describe(`DPoP nonces (${engine})`, () => {
    it('answers a proof without the nonce 401 use_dpop_nonce with a DPoP-Nonce header; the retry with it passes', async () => {
      const iss = await issuer()
      const key = await clientKey('ES256')
      const bound = await iss.sign({ cnf: { jkt: key.jkt } })
      const { generateProof } = require('dpop')
      for (const [name, start] of ADAPTERS) {
        const config = { keys: iss.keys, dpop: true, rateLimitMax: 0, dpopNonceSecret: 'nonce-secret-0123456789abcdef0123' }
        const server = await start(config, { engine, dpopOrigin: ORIGIN })
        try {
          const send = (headers) => request(`${server.base}/orders`, { headers })
          const first = await send({ authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: HTU }) })
          assert.equal(first.status, 401, name)
          assert.equal(first.json.code, 'use_dpop_nonce', name)
          assert.match(first.headers['www-authenticate'], /^DPoP error="use_dpop_nonce"/, name)
          const nonce = first.headers['dpop-nonce']
          assert.match(nonce, /^[A-Za-z0-9_-]{43}$/, name)
          const retry = await send({ authorization: `DPoP ${bound}`, dpop: await generateProof(key.keyPair, HTU, 'GET', nonce, bound) })
          assert.equal(retry.status, 200, `${name}: ${retry.body}`)
          // The proof carried the current nonce: nothing to switch to (RFC 9449 §8.2).
          assert.equal(retry.headers['dpop-nonce'], undefined, name)
        } finally {
          await server.close()
        }
      }
    })
  })
}

describe('dpopOrigin', () => {
  it('must be an origin: scheme, host and port only', () => {
    for (const bad of ['api.example.com', 'https://api.example.com/', 'https://u@api.example.com', 'ftp://x', 5, '']) {
      assert.throws(() => expressShield({ accessSecret: 'x'.repeat(32) }, { dpopOrigin: bad }), { name: 'TypeError' }, String(bad))
    }
    expressShield({ accessSecret: 'x'.repeat(32) }, { dpopOrigin: 'http://127.0.0.1:8080' })
    assert.throws(() => expressShield({ accessSecret: 'x'.repeat(32) }, { dpopRequired: true }), { name: 'TypeError' })
    assert.throws(() => expressShield({ accessSecret: 'x'.repeat(32) }, { dpopOrigin: ORIGIN, dpopRequired: 'yes' }), { name: 'TypeError' })
  })
})
