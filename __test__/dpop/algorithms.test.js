'use strict'

// dpopAlgorithms through every adapter on real loopback servers, both engines: a proof signed
// with an algorithm outside the list is refused (invalid_dpop_proof) and every DPoP challenge
// names the configured list in algs; the default list otherwise; none/HS* refused at
// construction with a TypeError.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { request } = require('../support/http')
const { ADAPTER_STARTS } = require('../support/adapter-servers')
const { issuer, clientKey, proof } = require('../support/dpop')

const ORIGIN = 'https://api.example.com'
const HTU = `${ORIGIN}/orders`
const DEFAULT = 'ES256 ES384 RS256 RS384 RS512 PS256 PS384 PS512 EdDSA Ed25519'

const ADAPTERS = ADAPTER_STARTS

for (const engine of ['native', 'js']) {
  for (const [name, start] of ADAPTERS) {
    describe(`${name} (${engine}): dpopAlgorithms`, () => {
      let iss
      let es256
      let rs256
      let servers = []
      before(async () => {
        iss = await issuer()
        es256 = await clientKey('ES256')
        rs256 = await clientKey('RS256')
      })
      after(async () => {
        for (const s of servers) await s.close()
        servers = []
      })
      const send = (server, headers) => request(`${server.base}/orders`, { headers })

      it('refuses a proof outside the list and names the list in algs', async () => {
        const server = await start({ keys: iss.keys, dpop: true, rateLimitMax: 0, dpopAlgorithms: ['Ed25519', 'ES256'] }, { engine, dpopOrigin: ORIGIN })
        servers.push(server)
        const rsBound = await iss.sign({ cnf: { jkt: rs256.jkt } })
        const refused = await send(server, { authorization: `DPoP ${rsBound}`, dpop: await proof(rs256, { token: rsBound, url: HTU }) })
        assert.equal(refused.status, 401)
        assert.equal(refused.json.code, 'invalid_dpop_proof')
        assert.match(refused.headers['www-authenticate'], /^DPoP error="invalid_dpop_proof", error_description="[^"]*", algs="Ed25519 ES256"$/)
        const esBound = await iss.sign({ cnf: { jkt: es256.jkt } })
        assert.equal((await send(server, { authorization: `DPoP ${esBound}`, dpop: await proof(es256, { token: esBound, url: HTU }) })).status, 200)
        const missing = await send(server, { authorization: `DPoP ${esBound}` })
        assert.match(missing.headers['www-authenticate'], /algs="Ed25519 ES256"$/)
      })

      it('names the default list without the option, and accepts RS256', async () => {
        const server = await start({ keys: iss.keys, dpop: true, rateLimitMax: 0 }, { engine, dpopOrigin: ORIGIN })
        servers.push(server)
        const rsBound = await iss.sign({ cnf: { jkt: rs256.jkt } })
        assert.equal((await send(server, { authorization: `DPoP ${rsBound}`, dpop: await proof(rs256, { token: rsBound, url: HTU }) })).status, 200)
        const missing = await send(server, { authorization: `DPoP ${rsBound}` })
        assert.match(missing.headers['www-authenticate'], new RegExp(`algs="${DEFAULT}"$`))
      })

      it('refuses none and HS* at construction', async () => {
        for (const algs of ['none', 'HS256', ['ES256', 'HS512']]) {
          await assert.rejects(async () => start({ keys: iss.keys, dpop: true, dpopAlgorithms: algs }, { engine, dpopOrigin: ORIGIN }), { name: 'TypeError' })
        }
      })
    })
  }
}
