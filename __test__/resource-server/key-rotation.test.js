'use strict'

// Key rotation through a real OpenID Provider's own JWKS (issue 25): oidc-provider made anew
// behind its issuer URL with a new signing key in front of the old one, then with the old one
// withdrawn. Every adapter, both engines, each with its own remote key set
// (auth-shield/jwks) on the provider's jwks_uri: a token of the new key (an unknown kid) makes
// the key set fetch once and passes; tokens of the old key keep passing while the provider
// still publishes it, and are refused (unknown_key) once a fetch finds it gone.

const { it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { get } = require('../support/http')
const { ADAPTERS, routeApp } = require('../support/route-apps')
const { startProvider, decodeJwt, rsaJwk } = require('../support/oidc-provider')
const { createRemoteJwks } = require('../../lib/jwks/index')

const RESOURCE = 'https://orders.api.example/'
const ROUTES = { '/orders': (m) => [m.requireScopes('read:orders')] }
const K1 = rsaJwk()
const K2 = rsaJwk()
const K3 = rsaJwk()

let op
const apps = []

before(async () => {
  op = await startProvider({ resource: RESOURCE, keys: [K1] })
  const config = { issuer: op.issuer, audience: RESOURCE, requireAccessTokenProfile: true, rateLimitMax: 0 }
  for (const adapter of Object.keys(ADAPTERS)) {
    for (const engine of ['native', 'js']) {
      // cooldownMs 0: an unknown kid fetches at once (the default waits up to 5 s).
      const jwks = createRemoteJwks(op.jwksUri, { cooldownMs: 0 })
      await jwks.ready()
      apps.push({ label: `${adapter} ${engine}`, jwks, server: await routeApp(adapter, config, { engine, jwks }, ROUTES) })
    }
  }
})

after(async () => {
  for (const { jwks, server } of apps) {
    jwks.close()
    await server.close()
  }
  await op.close()
})

/** A new provider behind the same issuer URL, publishing `keys`; the first signs. */
function rotate(keys) {
  op.rotateKeys(keys)
}

async function statuses(token) {
  const out = {}
  for (const { label, server } of apps) {
    const r = await get(`${server.base}/orders`, { authorization: `Bearer ${token}` })
    out[label] = r.status === 200 ? 200 : `${r.status} ${r.json && r.json.code}`
  }
  return out
}

const all = (value) => Object.fromEntries(apps.map(({ label }) => [label, value]))

it('a new signing key is picked up on its unknown kid; the old key works while published, not after', async () => {
  const t1 = await op.token('read:orders')
  assert.equal(decodeJwt(t1).header.kid, K1.kid)
  assert.deepEqual(await statuses(t1), all(200))

  // Rotation: K2 signs, K1 still published (the overlap every provider keeps).
  rotate([K2, K1])
  const t2 = await op.token('read:orders')
  assert.equal(decodeJwt(t2).header.kid, K2.kid)
  assert.equal(decodeJwt(t2).payload.iss, decodeJwt(t1).payload.iss)
  assert.deepEqual(await statuses(t2), all(200))
  assert.deepEqual(await statuses(t1), all(200))

  // K1 withdrawn, K3 next: the first K3 token makes each key set fetch, which drops K1.
  rotate([K3, K2])
  const t3 = await op.token('read:orders')
  assert.equal(decodeJwt(t3).header.kid, K3.kid)
  assert.deepEqual(await statuses(t3), all(200))
  assert.deepEqual(await statuses(t2), all(200))
  assert.deepEqual(await statuses(t1), all('401 unknown_key'))
  // A scope the route needs is still checked on the rotated key's tokens.
  const writeOnly = await op.token('write:orders')
  assert.deepEqual(await statuses(writeOnly), all('403 insufficient_scope'))
})
