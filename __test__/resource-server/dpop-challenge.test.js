'use strict'

// A DPoP request refused for its scopes or its user authentication (issue 25): the challenge is
// in the DPoP scheme (RFC 9449 §7.1: the scheme the client used, with `algs`), for the
// config-level checks (requiredScope) and the per-route requirements alike; a Bearer request
// keeps the Bearer challenge. Every adapter, both engines, proofs made by the dpop package.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { request } = require('../support/http')
const { ADAPTERS, routeApp } = require('../support/route-apps')
const { issuer, clientKey, proof } = require('../support/dpop')
const { DPOP_ALGS } = require('../../lib/http/dpop')

const ORIGIN = 'https://api.example.com'
const SCOPE_DESC = 'Token lacks a required scope'
const STEP_UP_DESC = 'A stronger or more recent user authentication is required'
const ROUTES = {
  '/orders/write': (m) => [m.requireScopes('write')],
  '/orders/mfa': (m) => [m.requireAuthentication({ acrValues: 'mfa', maxAgeSec: 60 })],
}

for (const [engineName, engine] of [
  ['native', native],
  ['js', js],
]) {
  for (const adapter of Object.keys(ADAPTERS)) {
    describe(`${adapter}, ${engineName}: insufficient_scope and step-up challenges of a DPoP request`, () => {
      let server
      let key
      let iss
      before(async () => {
        iss = await issuer()
        key = await clientKey('ES256')
        const config = { keys: iss.keys, dpop: true, requiredScope: 'read', rateLimitMax: 0 }
        server = await routeApp(adapter, new engine.Authenticator(config), { dpopOrigin: ORIGIN, realm: 'orders' }, ROUTES)
      })
      after(() => server.close())

      const dpopCall = async (path, claims) => {
        const token = await iss.sign({ cnf: { jkt: key.jkt }, ...claims })
        return request(`${server.base}${path}`, { headers: { authorization: `DPoP ${token}`, dpop: await proof(key, { token, url: `${ORIGIN}${path}` }) } })
      }

      it('the config-level requiredScope: DPoP error="insufficient_scope" with scope and algs', async () => {
        const r = await dpopCall('/orders/write', { scope: 'other' })
        assert.equal(r.status, 403)
        assert.equal(r.json.code, 'insufficient_scope')
        assert.equal(r.headers['www-authenticate'], `DPoP realm="orders", error="insufficient_scope", error_description="${SCOPE_DESC}", scope="read", algs="${DPOP_ALGS}"`)
      })

      it('a route requirement: the route scopes in a DPoP challenge; a Bearer request keeps Bearer', async () => {
        const r = await dpopCall('/orders/write', { scope: 'read' })
        assert.equal(r.status, 403)
        assert.equal(r.headers['www-authenticate'], `DPoP realm="orders", error="insufficient_scope", error_description="${SCOPE_DESC}", scope="write", algs="${DPOP_ALGS}"`)
        assert.equal((await dpopCall('/orders/write', { scope: 'read write' })).status, 200)
        const bearer = await request(`${server.base}/orders/write`, { headers: { authorization: `Bearer ${await iss.sign({ scope: 'read' })}` } })
        assert.equal(bearer.status, 403)
        assert.equal(bearer.headers['www-authenticate'], `Bearer realm="orders", error="insufficient_scope", error_description="${SCOPE_DESC}", scope="write"`)
      })

      it('a step-up requirement: DPoP error="insufficient_user_authentication" with acr_values and max_age', async () => {
        const now = Math.floor(Date.now() / 1000)
        const r = await dpopCall('/orders/mfa', { scope: 'read', acr: 'pwd', auth_time: now })
        assert.equal(r.status, 401)
        assert.equal(r.json.code, 'insufficient_user_authentication')
        assert.equal(r.headers['www-authenticate'], `DPoP realm="orders", error="insufficient_user_authentication", error_description="${STEP_UP_DESC}", acr_values="mfa", max_age="60", algs="${DPOP_ALGS}"`)
        assert.equal((await dpopCall('/orders/mfa', { scope: 'read', acr: 'mfa', auth_time: now })).status, 200)
      })
    })
  }
}

describe('the config-level step-up of a DPoP request', () => {
  it('both engines, Express: DPoP error="insufficient_user_authentication"', async () => {
    for (const engine of [native, js]) {
      const iss = await issuer()
      const key = await clientKey('ES256')
      const server = await routeApp('express', new engine.Authenticator({ keys: iss.keys, dpop: true, requiredAcr: 'mfa', rateLimitMax: 0 }), { dpopOrigin: ORIGIN }, { '/orders': () => [] })
      try {
        const token = await iss.sign({ cnf: { jkt: key.jkt }, acr: 'pwd' })
        const r = await request(`${server.base}/orders`, { headers: { authorization: `DPoP ${token}`, dpop: await proof(key, { token, url: `${ORIGIN}/orders` }) } })
        assert.equal(r.status, 401)
        assert.equal(r.headers['www-authenticate'], `DPoP error="insufficient_user_authentication", error_description="${STEP_UP_DESC}", acr_values="mfa", algs="${DPOP_ALGS}"`)
      } finally {
        await server.close()
      }
    }
  })
})
