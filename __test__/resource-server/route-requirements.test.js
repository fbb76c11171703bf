'use strict'

// Per-route requirements (issue 25): requireScopes (all of), requireAnyScope, requireClaims and
// requireAuthentication (RFC 9470) after the adapter's authentication, in Express, Fastify, Koa
// and Fetch, with both engines. The tokens are shaped as Auth0, Okta, Entra ID and Keycloak
// write them (claims copied from their documentation), signed by jose; every adapter must give
// the same status, body and challenge for every token on every route.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { get } = require('../support/http')
const { ADAPTERS, routeApp } = require('../support/route-apps')
const { idpTokens, IDP_ISSUERS, IDP_AUDIENCES, ENTRA_TID } = require('../support/idp-tokens')

const ENGINES = [
  ['native', native],
  ['js', js],
]
const SCOPE_DESC = 'Token lacks a required scope'
const STEP_UP_DESC = 'A stronger or more recent user authentication is required'

// Each route: the requirements, made by the adapter's own factories.
const ROUTES = {
  '/open': () => [],
  '/read': (m) => [m.requireAnyScope('read:orders', 'Orders.Read')],
  '/write': (m) => [m.requireScopes('write:orders')],
  '/both': (m) => [m.requireScopes(['read:orders', 'write:orders'])],
  '/kc-admin': (m) => [m.requireClaims({ realm_access: { roles: 'admin' }, resource_access: { 'orders-api': { roles: ['reader'] } } })],
  '/entra-admin': (m) => [m.requireClaims({ tid: ENTRA_TID, roles: 'Orders.Admin' })],
  '/okta-client': (m) => [m.requireClaims({ cid: '0oa1okta-client' }), m.requireScopes('read:orders')],
  '/auth0-role': (m) => [m.requireClaims({ 'https://orders.example.com/roles': ['admin'] })],
  '/mfa': (m) => [m.requireAuthentication({ acrValues: ['mfa', 'phr'], maxAgeSec: 300 })],
  '/skipped': (m) => [m.requireScopes('read:orders')],
}

const OPTIONS = { realm: 'orders', credentialsRequired: false, skip: ['/skipped'] }

const ok = (sub) => ({ status: 200, json: { sub } })
const scope403 = (scopes) => ({ status: 403, code: 'insufficient_scope', challenge: `Bearer realm="orders", error="insufficient_scope", error_description="${SCOPE_DESC}"${scopes ? `, scope="${scopes}"` : ''}` })
const stepUp = { status: 401, code: 'insufficient_user_authentication', challenge: `Bearer realm="orders", error="insufficient_user_authentication", error_description="${STEP_UP_DESC}", acr_values="mfa phr", max_age="300"` }

/** What each token gets on each route (anything not listed: scope403 without a scope). */
function expected(name, sub, route) {
  const table = {
    auth0: { '/open': 1, '/read': 1, '/write': 1, '/both': 1, '/auth0-role': 1 },
    okta: { '/open': 1, '/read': 1, '/okta-client': 1 },
    entra: { '/open': 1, '/read': 1, '/entra-admin': 1 },
    keycloak: { '/open': 1, '/kc-admin': 1 },
    oktaMfa: { '/open': 1, '/read': 1, '/okta-client': 1, '/mfa': 1 },
    oktaStale: { '/open': 1, '/read': 1, '/okta-client': 1 },
  }
  if (table[name][route]) return ok(sub)
  if (route === '/mfa') return stepUp
  if (route === '/read') return scope403('read:orders Orders.Read')
  if (route === '/write') return scope403('write:orders')
  if (route === '/both' || route === '/okta-client') return scope403(route === '/both' ? 'read:orders write:orders' : null)
  return scope403(null)
}


function config(extra) {
  return { keys: idpTokens.keys, issuer: IDP_ISSUERS, audience: IDP_AUDIENCES, rateLimitMax: 0, ...extra }
}

let tokens
before(async () => {
  tokens = await idpTokens()
})

for (const [engineName, engine] of ENGINES) {
  for (const adapterName of Object.keys(ADAPTERS)) {
    describe(`${adapterName}, ${engineName} engine`, () => {
      let server
      before(async () => {
        server = await routeApp(adapterName, new engine.Authenticator(config()), OPTIONS, ROUTES)
      })
      after(() => server.close())

      it('IdP-shaped tokens on every route: the same answers, codes and challenges', async () => {
        for (const [name, { token, sub }] of Object.entries(tokens.access)) {
          for (const route of Object.keys(ROUTES)) {
            if (route === '/skipped') continue
            const r = await get(`${server.base}${route}`, { authorization: `Bearer ${token}` })
            const want = expected(name, sub, route)
            const label = `${name} ${route}`
            assert.equal(r.status, want.status, `${label}: ${r.body}`)
            if (want.status === 200) {
              assert.deepEqual(r.json, want.json, label)
              continue
            }
            assert.deepEqual(r.json, { error: want.code === 'insufficient_scope' ? SCOPE_DESC : STEP_UP_DESC, code: want.code }, label)
            assert.equal(r.headers['www-authenticate'], want.challenge, label)
            assert.match(r.headers['x-request-id'], /^[0-9a-f-]{36}$/, label)
          }
        }
      })

      it('an anonymous request on a route with requirements: 401 with the bare challenge', async () => {
        assert.equal((await get(`${server.base}/open`)).status, 200)
        const r = await get(`${server.base}/read`)
        assert.equal(r.status, 401)
        assert.equal(r.json.code, 'missing_authorization')
        assert.equal(r.headers['www-authenticate'], 'Bearer realm="orders"')
      })

      it('a scope claim of the wrong type is invalid_claims (401), as requiredScope has it', async () => {
        for (const t of [tokens.odd.scpNumber, tokens.odd.permissionsWithNumber, tokens.odd.scopeArray]) {
          const r = await get(`${server.base}/read`, { authorization: `Bearer ${t}` })
          assert.equal(r.status, 401)
          assert.equal(r.json.code, 'invalid_claims')
          assert.match(r.headers['www-authenticate'], /^Bearer realm="orders", error="invalid_token"/)
          // A route without requirements does not read the scopes.
          assert.equal((await get(`${server.base}/open`, { authorization: `Bearer ${t}` })).status, 200)
        }
      })

      it('a requirement on a request the middleware skipped fails closed (an error, never a pass)', async () => {
        const r = await get(`${server.base}/skipped`, { authorization: `Bearer ${tokens.access.auth0.token}` })
        assert.equal(r.status, 500)
        assert.match(r.body, /ERR_AUTH_SHIELD_NOT_AUTHENTICATED/)
      })
    })
  }
}

describe('an ID token where an access token is expected (requireAccessTokenProfile)', () => {
  for (const [engineName, engine] of ENGINES) {
    for (const adapterName of Object.keys(ADAPTERS)) {
      it(`${adapterName}, ${engineName}: refused wrong_token_type; an at+jwt access token passes`, async () => {
        const server = await routeApp(adapterName, new engine.Authenticator(config({ requireAccessTokenProfile: true })), OPTIONS, ROUTES)
        try {
          const id = await get(`${server.base}/open`, { authorization: `Bearer ${tokens.idToken}` })
          assert.equal(id.status, 401)
          assert.equal(id.json.code, 'wrong_token_type')
          assert.match(id.headers['www-authenticate'], /error="invalid_token"/)
          // The same claims in an RFC 9068 access token pass, and its scopes are read per route.
          const at = await get(`${server.base}/read`, { authorization: `Bearer ${tokens.profileAccess}` })
          assert.equal(at.status, 200, at.body)
          assert.equal((await get(`${server.base}/write`, { authorization: `Bearer ${tokens.profileAccess}` })).status, 403)
        } finally {
          await server.close()
        }
      })
    }
  }
})

describe('requirements are checked when made', () => {
  for (const [adapterName, m] of Object.entries(ADAPTERS)) {
    it(`${adapterName}: bad scopes, claims and step-up options are TypeErrors`, () => {
      for (const bad of [[], [''], ['a b'], ['a"'], [7], [null], [['x', 1]]]) {
        assert.throws(() => m.requireScopes(...bad), TypeError, JSON.stringify(bad))
        assert.throws(() => m.requireAnyScope(...bad), TypeError, JSON.stringify(bad))
      }
      for (const bad of [undefined, null, 'x', [], {}, { a: null }, { a: [] }, { a: NaN }, { a: () => 1 }, { a: {} }, { a: [{}] }, new Map()]) {
        assert.throws(() => m.requireClaims(bad), TypeError, String(bad))
      }
      for (const bad of [undefined, null, {}, { acrValues: [] }, { acrValues: 'a b' }, { maxAgeSec: -1 }, { maxAgeSec: 1.5 }, { maxAgeSec: '60' }, { acr: 'x' }]) {
        assert.throws(() => m.requireAuthentication(bad), TypeError, JSON.stringify(bad))
      }
    })
  }
})

it('a claim named __proto__ or constructor is matched on the token only (never inherited)', async () => {
  const { requireClaims } = ADAPTERS.fetch
  const auth = new native.Authenticator(config())
  const verify = ADAPTERS.fetch.createVerifier(auth)
  const request = (t) => new Request('http://127.0.0.1/x', { headers: { authorization: `Bearer ${t}` } })
  const check = requireClaims({ constructor: 'x' })
  assert.equal((await check(verify(request(tokens.access.okta.token)))).code, 'insufficient_scope')
  assert.equal((await check(verify(request(tokens.odd.constructorClaim)))).ok, true)
})


describe('scope checks read the engine result, never a second parse of the payload', () => {
  const { AuthDecision } = require('../../lib/http/decision')
  const { requireScopes, requireAnyScope, requireClaims } = require('../../lib/http/route-requirements')
  for (const [engineName, engine] of ENGINES) {
    it(`${engineName}: requireScopes and requireAnyScope leave the decision's payload table empty; requireClaims fills it once`, () => {
      const decision = new AuthDecision(new engine.Authenticator(config()))
      const pass = decision.decide({ method: 'GET', headers: { authorization: `Bearer ${tokens.access.auth0.token}` } }, '/orders')
      assert.equal(pass.action, 'pass')
      assert.equal(typeof pass.result.scope, 'string')
      assert.ok(pass.result.scope.split(' ').includes('read:orders'), pass.result.scope)
      const parsed = () => decision.verifiedClaims.slots.filter((s) => s !== null).length
      assert.equal(requireScopes('read:orders').refusal(pass), null)
      assert.equal(requireAnyScope('nope', 'read:orders').refusal(pass), null)
      assert.equal(requireScopes('read:orders', 'nope').refusal(pass).result.errorCode, 'insufficient_scope')
      assert.equal(parsed(), 0, 'a scope check parsed the payload in JavaScript')
      // What the check reads is the result's field: a scope the token does not carry, once in
      // the field, passes (and one taken out of it is refused).
      pass.result = { ...pass.result, scope: 'only:this' }
      assert.equal(requireScopes('only:this').refusal(pass), null)
      assert.equal(requireScopes('read:orders').refusal(pass).result.errorCode, 'insufficient_scope')
      pass.result = { ...pass.result, scope: null }
      assert.equal(requireAnyScope('read:orders').refusal(pass).result.errorCode, 'invalid_claims')
      assert.equal(parsed(), 0)
      assert.notEqual(requireClaims({ sub: 'someone-else' }).refusal(pass), null)
      assert.equal(parsed(), 1)
    })
  }
})
