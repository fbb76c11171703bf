'use strict'

// Test support: a real oidc-provider on loopback issuing OPAQUE access tokens (client_credentials,
// one resource indicator), with its introspection endpoint (RFC 7662, features.introspection), JWT
// introspection answers (RFC 9701, features.jwtIntrospection), revocation (RFC 7009) and DPoP
// (RFC 9449). Every request to the introspection endpoint is counted.
//
// Clients: `orders-client` obtains tokens; the resource server introspects as `rs-basic`
// (client_secret_basic), `rs-post` (client_secret_post), `rs-jwt` (private_key_jwt) or `rs-signed`
// (client_secret_basic, answers signed: introspection_signed_response_alg RS256).
//
// For the combination suite: `orders-mfa` obtains tokens whose introspection answer says
// `acr: "mfa"` with an `auth_time` 10 s before issue (extraTokenClaims; `orders-client`'s carry no
// acr), and `orders-mtls` certificate-bound tokens (RFC 8705, features.mTLS
// certificateBoundAccessTokens: `cnf["x5t#S256"]` in the answer). The provider runs on plain HTTP
// here, so it reads the client certificate the way it does behind a TLS-terminating proxy: from a
// request header the proxy sets (`x-client-certificate`, the URL-encoded PEM).

const http = require('node:http')
const { generateKeyPairSync } = require('node:crypto')
const { listen } = require('../support/http')
const { rsaJwk } = require('../support/oidc-provider')

const SECRET = 'introspection-test-client-secret-0123456789'
const RS_SECRET = 'resource-server-introspection-secret-0123456789'

/** The client that obtains a token with these options (its client_id, the introspected sub). */
function tokenClient({ certificate, mfa = false } = {}) {
  if (certificate !== undefined) return mfa ? 'orders-mtls-mfa' : 'orders-mtls'
  return mfa ? 'orders-mfa' : 'orders-client'
}

async function startOpaqueProvider({ resource = 'https://api.example/', scopes = ['read:orders', 'write:orders'], accessTokenTTL = 300 } = {}) {
  const { default: Provider } = await import('oidc-provider')
  const server = http.createServer()
  const { base, close } = await listen(server)
  const rsKey = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const rsPublicJwk = { ...rsKey.publicKey.export({ format: 'jwk' }), kid: 'rs-key', alg: 'ES256', use: 'sig' }
  const rs = (client_id, extra) => ({ client_id, grant_types: [], redirect_uris: [], response_types: [], ...extra })
  const provider = new Provider(base, {
    clients: [
      { client_id: 'orders-client', client_secret: SECRET, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_basic', scope: scopes.join(' ') },
      ...['orders-mfa', 'orders-mtls', 'orders-mtls-mfa'].map((client_id) => ({
        client_id,
        client_secret: SECRET,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: scopes.join(' '),
        tls_client_certificate_bound_access_tokens: client_id.startsWith('orders-mtls'),
      })),
      rs('rs-basic', { client_secret: RS_SECRET, token_endpoint_auth_method: 'client_secret_basic' }),
      rs('rs-post', { client_secret: RS_SECRET, token_endpoint_auth_method: 'client_secret_post' }),
      rs('rs-jwt', { token_endpoint_auth_method: 'private_key_jwt', token_endpoint_auth_signing_alg: 'ES256', jwks: { keys: [rsPublicJwk] } }),
      rs('rs-signed', { client_secret: RS_SECRET, token_endpoint_auth_method: 'client_secret_basic', introspection_signed_response_alg: 'RS256' }),
    ],
    scopes,
    jwks: { keys: [rsaJwk()] },
    ttl: { ClientCredentials: accessTokenTTL },
    extraTokenClaims: (ctx, token) => (token.clientId.endsWith('-mfa') ? { acr: 'mfa', auth_time: Math.floor(Date.now() / 1000) - 10 } : undefined),
    features: {
      mTLS: {
        enabled: true,
        certificateBoundAccessTokens: true,
        getCertificate: (ctx) => {
          const pem = ctx.get('x-client-certificate')
          return pem === '' ? undefined : decodeURIComponent(pem)
        },
      },
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      jwtIntrospection: { enabled: true },
      revocation: { enabled: true },
      dPoP: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator) => {
          if (indicator !== resource) throw new Error(`unknown resource ${indicator}`)
          return { scope: scopes.join(' '), audience: resource, accessTokenTTL, accessTokenFormat: 'opaque' }
        },
      },
    },
  })
  const callback = provider.callback()
  let introspections = 0
  let delayMs = 0
  server.on('request', (req, res) => {
    if (req.url.startsWith('/token/introspection')) {
      introspections++
      if (delayMs > 0) return setTimeout(() => callback(req, res), delayMs)
    }
    return callback(req, res)
  })
  const metadata = await (await fetch(`${base}/.well-known/openid-configuration`)).json()
  const basicOf = (clientId) => `Basic ${Buffer.from(`${clientId}:${SECRET}`).toString('base64')}`
  const basic = basicOf('orders-client')

  /**
   * A new opaque access token for `scope`; `dpop`: a DPoP proof for the token endpoint (the token
   * is bound to its key); `certificate`: a PEM client certificate (the token is bound to it, as
   * `orders-mtls`); `mfa`: as `orders-mfa` (acr "mfa" in the answer; `orders-mtls-mfa` with both).
   * Its client id (the introspected sub) is `tokenClient({ certificate, mfa })`.
   */
  async function token(scope, { dpop, certificate, mfa = false } = {}) {
    const clientId = tokenClient({ certificate, mfa })
    const headers = { authorization: basicOf(clientId), 'content-type': 'application/x-www-form-urlencoded' }
    if (dpop !== undefined) headers.dpop = dpop
    if (certificate !== undefined) headers['x-client-certificate'] = encodeURIComponent(certificate)
    const res = await fetch(metadata.token_endpoint, { method: 'POST', headers, body: new URLSearchParams({ grant_type: 'client_credentials', resource, ...(scope === undefined ? {} : { scope }) }).toString() })
    const json = await res.json()
    if (res.status !== 200 || typeof json.access_token !== 'string') throw new Error(`token endpoint answered ${res.status}: ${JSON.stringify(json)}`)
    return json.access_token
  }

  /** Revokes `accessToken` at the provider (RFC 7009). */
  async function revoke(accessToken) {
    const res = await fetch(metadata.revocation_endpoint, { method: 'POST', headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: accessToken, token_type_hint: 'access_token' }).toString() })
    if (res.status !== 200) throw new Error(`revocation answered ${res.status}`)
  }

  /** The introspection endpoint's answer about `token`, asked as `rs-basic` (not counted: the test's own look). */
  async function introspect(accessToken) {
    introspections--
    const res = await fetch(metadata.introspection_endpoint, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`rs-basic:${RS_SECRET}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: accessToken }).toString() })
    return res.json()
  }

  return {
    issuer: metadata.issuer,
    resource,
    metadata,
    token,
    introspect,
    revoke,
    close,
    introspections: () => introspections,
    setDelay: (ms) => {
      delayMs = ms
    },
    /** The introspection option for the resource server authenticating as `method`. */
    introspection(method = 'client_secret_basic', extra = {}) {
      if (method === 'client_secret_basic') return { clientId: 'rs-basic', clientSecret: RS_SECRET, ...extra }
      if (method === 'client_secret_post') return { clientId: 'rs-post', clientSecret: RS_SECRET, authMethod: 'client_secret_post', ...extra }
      if (method === 'private_key_jwt') return { clientId: 'rs-jwt', privateKey: rsKey.privateKey, privateKeyKid: 'rs-key', ...extra }
      if (method === 'jwt_response') return { clientId: 'rs-signed', clientSecret: RS_SECRET, jwtResponse: true, ...extra }
      throw new Error(method)
    },
  }
}

module.exports = { startOpaqueProvider, tokenClient }
