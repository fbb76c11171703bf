'use strict'

// Test support for the MCP suite: a real OpenID Provider (`oidc-provider`) as the MCP
// authorization server, on loopback. It does what the MCP authorization specification asks of
// one: RFC 8414 metadata, open dynamic client registration (RFC 7591), the authorization code
// grant with PKCE (S256), and resource indicators (RFC 8707) whose access tokens are RFC 9068
// JWTs with `aud` the resource and the resource's scopes. The user's login and consent are the
// provider's own interaction endpoints, answered by a test-only interaction route (the
// provider's interactionDetails / interactionFinished API): the user `alice` logs in and grants
// what the client asked for. `authorize(url)` plays the user agent: it follows the redirects
// (with the cookies the provider sets) until the client's redirect URI and returns its query.
// With `accessTokenFormat: 'opaque'` its access tokens are opaque, and its introspection endpoint
// (RFC 7662, features.introspection) answers the resource server, which authenticates as
// `mcp-server` (client_secret_basic; `introspection` is the trusted issuer's option for it).

const http = require('node:http')
const { listen } = require('../support/http')
const { rsaJwk } = require('../support/oidc-provider')

const ACCOUNT = 'alice'
const M2M_SECRET = 'mcp-test-m2m-secret-0123456789abcdef'
const RS_SECRET = 'mcp-test-introspection-secret-0123456789'

/**
 * Starts the provider. `resources`: { [resource indicator]: [scope, …] }, the resource servers
 * it issues access tokens for, JWTs or (`accessTokenFormat: 'opaque'`) opaque. Resolves to
 * { issuer, authorize(url), clientCredentialsToken(resource, scope), registrations(),
 * introspection, introspect(token), introspections(), close() }.
 */
async function startAuthorizationServer({ resources, accessTokenTTL = 300, accessTokenFormat = 'jwt' }) {
  const { default: Provider } = await import('oidc-provider')
  const server = http.createServer()
  const { base, close } = await listen(server)
  const provider = new Provider(base, {
    clients: [
      // A machine client of the same provider, for tokens of any resource (another audience).
      { client_id: 'm2m', client_secret: M2M_SECRET, grant_types: ['client_credentials'], redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_basic' },
      // The MCP server, asking the introspection endpoint about the tokens it is shown.
      { client_id: 'mcp-server', client_secret: RS_SECRET, grant_types: [], redirect_uris: [], response_types: [], token_endpoint_auth_method: 'client_secret_basic' },
    ],
    jwks: { keys: [rsaJwk()] },
    findAccount: (ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    pkce: { required: () => true },
    // The registered `scope` is not held against the client: an MCP client registers with the
    // scopes it asks for first and later steps up to more (a tool's scope). oidc-provider checks
    // a registered scope against its OpenID scopes only (the resource's scopes are not among
    // them), so this server takes the registration without it. The hook runs for every
    // registration (a validator of an extra property runs before the standard checks).
    extraClientMetadata: {
      properties: ['mcp_test_registration'],
      validator: (ctx, key, value, metadata) => {
        delete metadata.scope
      },
    },
    ttl: { AccessToken: accessTokenTTL, ClientCredentials: accessTokenTTL },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // A request naming no resource gets none: the MCP client always names one.
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator) => {
          const scopes = resources[indicator]
          if (scopes === undefined) throw new Error(`unknown resource ${indicator}`)
          if (accessTokenFormat === 'opaque') return { scope: scopes.join(' '), audience: indicator, accessTokenTTL, accessTokenFormat }
          return { scope: scopes.join(' '), audience: indicator, accessTokenTTL, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }
        },
      },
    },
  })
  const callback = provider.callback()
  let registrations = 0
  let introspections = 0
  server.on('request', (req, res) => {
    if (req.url.startsWith('/token/introspection')) introspections++
    if (req.url.startsWith('/interaction/')) {
      interact(provider, req, res).catch((err) => {
        res.statusCode = 500
        res.end(String(err && err.stack))
      })
      return
    }
    if (req.method === 'POST' && req.url === '/reg') registrations++
    callback(req, res)
  })
  const issuer = base
  const metadata = await (await fetch(`${base}/.well-known/openid-configuration`)).json()

  /** A client_credentials token of the machine client for `resource` and `scope`. */
  async function clientCredentialsToken(resource, scope) {
    const res = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`m2m:${M2M_SECRET}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource, scope }).toString(),
    })
    const json = await res.json()
    if (res.status !== 200) throw new Error(`token endpoint answered ${res.status}: ${JSON.stringify(json)}`)
    return json.access_token
  }

  const introspection = { clientId: 'mcp-server', clientSecret: RS_SECRET }

  /** The introspection endpoint's answer about `token` (what the MCP server is told), asked as the test. */
  async function introspect(token) {
    introspections--
    const res = await fetch(metadata.introspection_endpoint, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`mcp-server:${RS_SECRET}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    })
    return res.json()
  }

  return { issuer, metadata, authorize, clientCredentialsToken, registrations: () => registrations, introspection, introspect, introspections: () => introspections, close }
}

/** The test's login and consent page: `alice` logs in and grants everything asked for. */
async function interact(provider, req, res) {
  const details = await provider.interactionDetails(req, res)
  const { prompt, params, session, grantId } = details
  if (prompt.name === 'login') {
    return provider.interactionFinished(req, res, { login: { accountId: ACCOUNT } }, { mergeWithLastSubmission: false })
  }
  if (prompt.name !== 'consent') throw new Error(`unexpected prompt ${prompt.name}`)
  const grant = grantId ? await provider.Grant.find(grantId) : new provider.Grant({ accountId: session.accountId, clientId: params.client_id })
  const missing = prompt.details
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims)
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) grant.addResourceScope(indicator, scopes.join(' '))
  const id = await grant.save()
  return provider.interactionFinished(req, res, { consent: { grantId: id } }, { mergeWithLastSubmission: true })
}

/**
 * The user agent: follows `authorizationUrl`'s redirects, keeping the provider's cookies,
 * until a redirect leaves the provider's origin (the client's redirect URI); returns that URL.
 */
async function authorize(authorizationUrl) {
  const jar = new Map()
  const origin = new URL(authorizationUrl).origin
  let url = String(authorizationUrl)
  for (let hop = 0; hop < 12; hop++) {
    if (new URL(url).origin !== origin) return new URL(url)
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
    const res = await fetch(url, { redirect: 'manual', headers: cookie === '' ? {} : { cookie } })
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair.indexOf('=')
      jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim())
    }
    const location = res.headers.get('location')
    if (location === null) throw new Error(`the provider answered ${res.status} at ${url}: ${await res.text()}`)
    await res.body?.cancel()
    url = new URL(location, url).href
  }
  throw new Error('too many redirects')
}

module.exports = { startAuthorizationServer, authorize, ACCOUNT }
