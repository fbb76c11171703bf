'use strict'

// Test support: access tokens shaped as Auth0, Okta, Entra ID (v2) and Keycloak issue them (the
// claims their documentation shows: Auth0's `permissions` with `scope`, Okta's `scp` array and
// `cid`, Entra's space-delimited `scp`, `tid` and `roles`, Keycloak's `realm_access` /
// `resource_access`), an Entra ID token (typ JWT, `nonce`, no scope), and an RFC 9068 access
// token; all signed by jose (RS256, as these providers sign), one key with a kid.

const { generateKeyPairSync, randomUUID } = require('node:crypto')
const jose = require('jose')

const KID = 'idp-rs256-1'
const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
const ENTRA_TID = '72f988bf-86f1-41af-91ab-2d7cd011db47'
const ENTRA_APP = '6e74172b-be56-4843-9ff4-e66a39bb12e3'
const AUTH0 = 'https://dev-orders.us.auth0.com/'
const OKTA = 'https://dev-123456.okta.com/oauth2/default'
const ENTRA = `https://login.microsoftonline.com/${ENTRA_TID}/v2.0`
const KEYCLOAK = 'https://kc.example.com/realms/acme'
const IDP_ISSUERS = [AUTH0, OKTA, ENTRA, KEYCLOAK]
const IDP_AUDIENCES = ['https://orders.example.com/', 'api://default', ENTRA_APP, 'orders-api']

function sign(claims, header = {}) {
  return new jose.SignJWT(claims).setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: KID, ...header }).sign(privateKey)
}

/** `{ access: { name: { token, sub } }, odd: {…}, idToken, profileAccess }`, valid for 10 minutes. */
async function idpTokens() {
  const now = Math.floor(Date.now() / 1000)
  const times = { iat: now - 5, exp: now + 600 }
  const claims = {
    auth0: {
      iss: AUTH0,
      sub: 'auth0|64f1c2a7e1b2c3d4e5f60718',
      aud: ['https://orders.example.com/', `${AUTH0}userinfo`],
      ...times,
      azp: 'Xq9wE1vYkP3tR7uZ',
      scope: 'openid profile email read:orders',
      permissions: ['read:orders', 'write:orders'],
      'https://orders.example.com/roles': ['admin', 'support'],
    },
    okta: {
      ver: 1,
      jti: 'AT.2nQm0hQ8vB0ZyJ1kFQm5HcQd3vJ0p6lN',
      iss: OKTA,
      aud: 'api://default',
      ...times,
      cid: '0oa1okta-client',
      uid: '00u1abcd2EFGHijkl3m4',
      scp: ['openid', 'read:orders'],
      sub: 'ada@example.com',
      groups: ['Everyone', 'Orders'],
    },
    entra: {
      aud: ENTRA_APP,
      iss: ENTRA,
      ...times,
      nbf: now - 5,
      azp: 'd3590ed6-52b3-4102-aeff-aad2292ab01c',
      azpacr: '0',
      name: 'Ada Lovelace',
      oid: '00000000-0000-0000-66f3-3332eca7ea81',
      preferred_username: 'ada@contoso.com',
      rh: '0.AAAA',
      roles: ['Orders.Admin'],
      scp: 'Orders.Read User.Read',
      sub: 'AAAAAAAAAAAAAAAAAAAAAIkzqFVrSaSaFHy782bbtaQ',
      tid: ENTRA_TID,
      uti: 'AbCdEf123456',
      ver: '2.0',
    },
    keycloak: {
      ...times,
      auth_time: now - 60,
      jti: randomUUID(),
      iss: KEYCLOAK,
      aud: ['orders-api', 'account'],
      sub: 'f:1c2d3e4f:ada',
      typ: 'Bearer',
      azp: 'orders-web',
      session_state: randomUUID(),
      acr: '1',
      'allowed-origins': ['https://orders.example.com'],
      realm_access: { roles: ['offline_access', 'uma_authorization', 'admin'] },
      resource_access: { 'orders-api': { roles: ['reader'] }, account: { roles: ['manage-account', 'view-profile'] } },
      scope: 'openid email profile',
      email_verified: true,
      preferred_username: 'ada',
    },
  }
  // Okta with a step-up: acr and a recent auth_time; and the same, authenticated an hour ago.
  claims.oktaMfa = { ...claims.okta, acr: 'mfa', auth_time: now - 10 }
  claims.oktaStale = { ...claims.okta, acr: 'mfa', auth_time: now - 3600 }
  const access = {}
  for (const [name, c] of Object.entries(claims)) {
    access[name] = { token: await sign(c, name === 'entra' ? { x5t: 'nOo3ZDrODXEK1jKWhXslHR_KXEg' } : {}), sub: c.sub }
  }
  const odd = {
    scpNumber: await sign({ ...claims.okta, scp: 5 }),
    permissionsWithNumber: await sign({ ...claims.auth0, permissions: ['read:orders', 1] }),
    scopeArray: await sign({ ...claims.okta, scp: undefined, scope: ['read:orders'] }),
    constructorClaim: await sign({ ...claims.okta, constructor: 'x' }),
  }
  // An Entra ID token for the app whose id is also the API's audience: typ JWT, a nonce, no scope.
  const idToken = await sign({
    aud: ENTRA_APP,
    iss: ENTRA,
    ...times,
    nbf: now - 5,
    name: 'Ada Lovelace',
    nonce: 'n-0S6_WzA2Mj',
    oid: claims.entra.oid,
    preferred_username: 'ada@contoso.com',
    sub: claims.entra.sub,
    tid: ENTRA_TID,
    ver: '2.0',
  })
  // An RFC 9068 access token (typ at+jwt, client_id, iat, jti).
  const profileAccess = await sign({ iss: AUTH0, sub: claims.auth0.sub, aud: 'https://orders.example.com/', client_id: 'Xq9wE1vYkP3tR7uZ', jti: randomUUID(), ...times, scope: 'read:orders' }, { typ: 'at+jwt' })
  return { access, odd, idToken, profileAccess }
}

idpTokens.keys = [{ kid: KID, alg: 'RS256', publicKey }]

module.exports = { idpTokens, IDP_ISSUERS, IDP_AUDIENCES, ENTRA_TID, ENTRA_APP }
