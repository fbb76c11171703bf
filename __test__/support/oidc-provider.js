'use strict'

// Test support: a real OpenID Provider (`oidc-provider`, a certified implementation) on
// loopback, issuing RFC 9068 JWT access tokens (`typ: at+jwt`) for one resource indicator
// (RFC 8707) through the client_credentials grant. Tokens are obtained over HTTP from its token
// endpoint, found through its discovery document; its keys are published at its jwks_uri.

const http = require('node:http')
const { generateKeyPairSync, randomUUID } = require('node:crypto')
const { listen } = require('./http')

const CLIENT_SECRET = 'resource-server-test-client-secret-0123456789'

/** A fresh RSA signing key as a private JWK with its kid. */
function rsaJwk() {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  return { ...privateKey.export({ format: 'jwk' }), kid: `op-${randomUUID()}`, alg: 'RS256', use: 'sig' }
}

/**
 * Starts a provider for `resource` granting `scopes` (an array of scope-tokens). Resolves to
 * `{ issuer, resource, clientId, metadata, jwksUri, token(scope, headers), rawToken(params, headers), close(),
 * signingJwk, setDown(bool), requests() }`:
 * `token(scope)` obtains an access token for `scope` (a space-delimited string) over HTTP;
 * with `dpop: true` a `{ dpop: proof }` header for the token endpoint makes it DPoP-bound.
 * `keys` (private JWKs, the first signs) replaces the one fresh key; `rotateKeys(keys)` makes
 * a new provider with those keys serve the same issuer URL from then on (a restart with a new
 * key set, the connections kept).
 */
async function startProvider({ resource = 'https://api.example/', scopes = ['read:orders', 'write:orders'], clientId = 'orders-client', accessTokenTTL = 300, keys, dpop = false } = {}) {
  const { default: Provider } = await import('oidc-provider')
  const server = http.createServer()
  let signingJwk = keys === undefined ? rsaJwk() : keys[0]
  const { base, close } = await listen(server)
  const makeProvider = (jwks) => new Provider(base, {
    clients: [
      {
        client_id: clientId,
        client_secret: CLIENT_SECRET,
        grant_types: ['client_credentials'],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: 'client_secret_basic',
        scope: scopes.join(' '),
      },
    ],
    scopes,
    jwks: { keys: jwks },
    ttl: { ClientCredentials: accessTokenTTL },
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      // With `dpop: true`, a token request with a DPoP proof gets a DPoP-bound token (cnf.jkt).
      dPoP: { enabled: dpop },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator) => {
          if (indicator !== resource) throw new Error(`unknown resource ${indicator}`)
          return { scope: scopes.join(' '), audience: resource, accessTokenTTL, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }
        },
      },
    },
  })
  // oidc-provider logs its development warnings (http issuer, Node version) to the console.
  // `setDown(true)` makes every request a 503 (the provider unreachable for its clients);
  // `requests()` counts the requests the provider saw.
  let provider = makeProvider(keys === undefined ? [signingJwk] : keys)
  let callback = provider.callback()
  let down = false
  let requests = 0
  server.on('request', (req, res) => {
    requests++
    if (!down) return callback(req, res)
    res.statusCode = 503
    res.end()
  })
  const metadata = await (await fetch(`${base}/.well-known/openid-configuration`)).json()
  const basic = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(CLIENT_SECRET)}`).toString('base64')}`

  /**
   * The token endpoint's answer to `params` (client_credentials), as { status, json };
   * `headers` adds request headers (a `dpop` proof for the token endpoint, with `dpop: true`).
   */
  async function rawToken(params, headers = {}) {
    const res = await fetch(metadata.token_endpoint, {
      method: 'POST',
      headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource, ...params }).toString(),
    })
    return { status: res.status, json: await res.json() }
  }

  /** An access token for `scope`; `headers` as rawToken's (a DPoP proof: a DPoP-bound token). */
  async function token(scope, headers) {
    const { status, json } = await rawToken(scope === undefined ? {} : { scope }, headers)
    if (status !== 200 || typeof json.access_token !== 'string') throw new Error(`token endpoint answered ${status}: ${JSON.stringify(json)}`)
    return json.access_token
  }

  return {
    issuer: metadata.issuer,
    resource,
    clientId,
    metadata,
    jwksUri: metadata.jwks_uri,
    get provider() {
      return provider
    },
    token,
    rawToken,
    close,
    get signingJwk() {
      return signingJwk
    },
    rotateKeys: (jwks) => {
      provider = makeProvider(jwks)
      callback = provider.callback()
      signingJwk = jwks[0]
    },
    setDown: (value) => {
      down = value
    },
    requests: () => requests,
  }
}

/** The JOSE header and payload of a compact JWS, decoded (for assertions only). */
function decodeJwt(jwt) {
  const [header, payload] = jwt.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')))
  return { header, payload }
}

module.exports = { startProvider, decodeJwt, rsaJwk }
