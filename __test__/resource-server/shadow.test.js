'use strict'

// Shadow mode (lib/http/engine.js: both engines judge every request, the primary's verdict is
// served, every difference is counted and reported to onMismatch) over the resource-server
// checks of issue 25: the RFC 9068 profile, required scopes, step-up, and the per-route
// requirements behind it, and the trusted issuers of the engine (`issuers`). IdP-shaped tokens through every adapter: the engines agree on every
// verdict (no mismatch), the answers are those of a middleware without shadow, and a verdict
// that differs is reported while the primary's is served, not refused in its place.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { get } = require('../support/http')
const { ADAPTERS, routeApp } = require('../support/route-apps')
const { idpTokens, IDP_ISSUERS, IDP_AUDIENCES } = require('../support/idp-tokens')

const ROUTES = {
  '/open': () => [],
  '/read': (m) => [m.requireAnyScope('read:orders', 'Orders.Read')],
  '/kc-admin': (m) => [m.requireClaims({ realm_access: { roles: 'admin' } })],
  '/mfa': (m) => [m.requireAuthentication({ acrValues: 'mfa', maxAgeSec: 300 })],
}
// Config-level checks for the shadow to compare: the profile in one, scopes and step-up in the other.
const CONFIGS = {
  profile: { keys: idpTokens.keys, issuer: IDP_ISSUERS, audience: IDP_AUDIENCES, requireAccessTokenProfile: true, rateLimitMax: 0 },
  scopes: { keys: idpTokens.keys, issuer: IDP_ISSUERS, audience: IDP_AUDIENCES, requiredScope: 'openid', rateLimitMax: 0 },
  stepUp: { keys: idpTokens.keys, issuer: IDP_ISSUERS, audience: IDP_AUDIENCES, requiredAcr: ['mfa', '1'], maxAuthAgeSec: 3000, rateLimitMax: 0 },
  // Trusted issuers in the engine: Keycloak's not listed (untrusted_issuer), Okta's limited to
  // ES256 (unsupported_algorithm), Entra's mapped to a tenant (tenantSource 'issuer').
  issuers: {
    issuers: [
      { issuer: IDP_ISSUERS[0], keys: idpTokens.keys, audience: IDP_AUDIENCES[0] },
      { issuer: IDP_ISSUERS[1], keys: idpTokens.keys, audience: IDP_AUDIENCES[1], algorithms: ['ES256'] },
      { issuer: IDP_ISSUERS[2], keys: idpTokens.keys, audience: IDP_AUDIENCES[2], tenant: 'contoso' },
    ],
    rateLimitMax: 0,
  },
}

let tokens
let all
before(async () => {
  tokens = await idpTokens()
  all = [...Object.entries(tokens.access).map(([n, t]) => [n, t.token]), ...Object.entries(tokens.odd), ['idToken', tokens.idToken], ['profileAccess', tokens.profileAccess]]
})

/** Status, code and challenge of every token on every route. */
async function answers(server) {
  const out = []
  for (const [name, t] of all) {
    for (const route of Object.keys(ROUTES)) {
      const r = await get(`${server.base}${route}`, { authorization: `Bearer ${t}` })
      out.push([`${name} ${route}`, r.status, r.json && (r.json.code ?? r.json.sub), r.headers['www-authenticate'] ?? null])
    }
  }
  return out
}

for (const adapter of Object.keys(ADAPTERS)) {
  for (const [configName, config] of Object.entries(CONFIGS)) {
    describe(`${adapter}, shadow over ${configName}`, () => {
      const mismatches = []
      let shadowed
      let plain
      before(async () => {
        shadowed = await routeApp(adapter, config, { engine: 'native', shadow: true, onMismatch: (m) => void mismatches.push(m) }, ROUTES)
        plain = await routeApp(adapter, config, { engine: 'native' }, ROUTES)
      })
      after(async () => {
        await shadowed.close()
        await plain.close()
      })

      it('both engines agree on every verdict; the answers are those without shadow', async () => {
        const seen = await answers(shadowed)
        assert.deepEqual(seen, await answers(plain))
        assert.deepEqual(mismatches, [])
        // Refusals of each kind were among them (the table is not all passes).
        const codes = new Set(seen.map((a) => a[2]))
        const expected = { profile: ['wrong_token_type', 'insufficient_scope'], scopes: ['insufficient_scope', 'invalid_claims'], stepUp: ['insufficient_user_authentication'], issuers: ['untrusted_issuer', 'unsupported_algorithm'] }[configName]
        for (const code of expected) assert.ok(codes.has(code), `${code} among ${[...codes]}`)
        assert.ok(seen.some((a) => a[1] === 200), 'some token passed')
      })
    })
  }
}

it('a verdict the engines give differently is reported while the primary one is served', async () => {
  for (const adapter of Object.keys(ADAPTERS)) {
    for (const primary of ['native', 'js']) {
      const reports = []
      const server = await routeApp(adapter, CONFIGS.scopes, { engine: primary, shadow: true, onMismatch: (m) => void reports.push(m) }, ROUTES)
      try {
        // Auth0's token grants `openid` and `read:orders`: it passes the primary and the route's
        // requirement. Revoked in the shadow engine only, the shadow refuses it: the difference
        // is reported, and the primary's verdict is what the client gets (shadow never refuses).
        const auth0 = tokens.access.auth0.token
        const { payload } = decodeJwt(auth0)
        server.decision.engine.shadowAuthenticator.revokeSubject(payload.sub, { iss: payload.iss })
        const r = await get(`${server.base}/read`, { authorization: `Bearer ${auth0}` })
        assert.equal(r.status, 200, `${adapter} ${primary}: ${r.body}`)
        assert.equal(reports.length, 1, `${adapter} ${primary}`)
        assert.equal(reports[0].primary.authenticated, true)
        assert.equal(reports[0].shadow.errorCode, 'token_revoked')
        assert.equal(reports[0].primaryEngine, primary)
        // And the other way round: a scope refusal of the primary stays a refusal.
        const entra = await get(`${server.base}/open`, { authorization: `Bearer ${tokens.access.entra.token}` })
        assert.equal(entra.status, 403)
        assert.equal(entra.json.code, 'insufficient_scope')
        assert.ok(reports[0].fields.includes('errorCode'))
      } finally {
        await server.close()
      }
    }
  }
})

function decodeJwt(t) {
  return { payload: JSON.parse(Buffer.from(t.split('.')[1], 'base64url').toString()) }
}
