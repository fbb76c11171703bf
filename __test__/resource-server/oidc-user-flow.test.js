'use strict'

// A user flow against a real OpenID Provider (issue 25): oidc-provider on loopback runs the
// authorization code flow (PKCE, a resource indicator, RFC 9068 JWT access tokens); the test
// plays the browser (cookies kept by hand) and the provider's login and consent (its own
// interaction API, no UI). The user's access token passes the middleware, found through
// discovery (createTrustedIssuers), with `sub` the user's account; the ID token of the same
// response, presented as an access token, is refused; per-route scopes and the access-token
// profile apply as for client_credentials tokens. Both engines.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { randomBytes, createHash } = require('node:crypto')
const { listen, get } = require('../support/http')
const { rsaJwk, decodeJwt } = require('../support/oidc-provider')
const { routeApp } = require('../support/route-apps')
const { createTrustedIssuers } = require('../../lib/jwks/index')

const RESOURCE = 'https://orders.api.example/'
const CLIENT_ID = 'web-app'
const CLIENT_SECRET = 'user-flow-test-client-secret-0123456789'
const REDIRECT_URI = 'https://app.example/callback'
const ACCOUNT = 'user-42'
const SCOPES = ['read:orders', 'write:orders']

/** A provider whose interactions (login, consent) the server finishes at once for ACCOUNT. */
async function startUserFlowProvider() {
  const { default: Provider } = await import('oidc-provider')
  const server = http.createServer()
  const { base, close } = await listen(server)
  const provider = new Provider(base, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    // The API's scopes are the resource server's (getResourceServerInfo), not OpenID scopes.
    scopes: ['openid'],
    jwks: { keys: [rsaJwk()] },
    findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
    interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: (ctx, indicator) => {
          if (indicator !== RESOURCE) throw new Error(`unknown resource ${indicator}`)
          return { scope: SCOPES.join(' '), audience: RESOURCE, accessTokenTTL: 300, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } }
        },
      },
    },
  })
  const callback = provider.callback()
  server.on('request', async (req, res) => {
    if (!req.url.startsWith('/interaction/')) return callback(req, res)
    try {
      // The user logs in as ACCOUNT and consents to what the client asked: a grant of the
      // OpenID and resource scopes the prompt names as missing.
      const details = await provider.interactionDetails(req, res)
      const grant = details.grantId === undefined ? new provider.Grant({ accountId: ACCOUNT, clientId: CLIENT_ID }) : await provider.Grant.find(details.grantId)
      const missing = details.prompt.details
      if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) grant.addResourceScope(indicator, scopes.join(' '))
      const grantId = await grant.save()
      await provider.interactionFinished(req, res, { login: { accountId: ACCOUNT }, consent: { grantId } }, { mergeWithLastSubmission: false })
    } catch (err) {
      res.statusCode = 500
      res.end(String(err && err.message))
    }
  })
  const metadata = await (await fetch(`${base}/.well-known/openid-configuration`)).json()
  return { issuer: metadata.issuer, metadata, provider, close }
}

/** Cookies as a browser keeps them for one origin (name=value only; enough for loopback http). */
class CookieJar {
  constructor() {
    this.cookies = new Map()
  }

  take(response) {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';')
      const eq = pair.indexOf('=')
      this.cookies.set(pair.slice(0, eq).trim(), pair.slice(eq + 1).trim())
    }
  }

  header() {
    return [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ')
  }
}

/** Runs the authorization code flow for `scope`; resolves to the token response. */
async function userTokens(op, scope) {
  const verifier = randomBytes(32).toString('base64url')
  const challenge = createHash('sha256').update(verifier).digest('base64url')
  const params = new URLSearchParams({
    client_id: CLIENT_ID,
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    scope,
    resource: RESOURCE,
    state: randomBytes(8).toString('hex'),
    code_challenge: challenge,
    code_challenge_method: 'S256',
  })
  const jar = new CookieJar()
  let url = `${op.metadata.authorization_endpoint}?${params}`
  let code = null
  // authorize -> interaction -> resume -> redirect_uri?code=…: a few redirects, bounded.
  for (let hop = 0; hop < 8 && code === null; hop++) {
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } })
    jar.take(res)
    const location = res.headers.get('location')
    if (location === null) throw new Error(`the provider answered ${res.status} at ${url}: ${await res.text()}`)
    await res.arrayBuffer()
    const next = new URL(location, url)
    if (next.href.startsWith(REDIRECT_URI)) {
      code = next.searchParams.get('code')
      if (code === null) throw new Error(`no code: ${next.href}`)
    }
    url = next.href
  }
  if (code === null) throw new Error('the flow did not reach the redirect URI')
  const basic = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`
  const res = await fetch(op.metadata.token_endpoint, {
    method: 'POST',
    headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier, resource: RESOURCE }).toString(),
  })
  const json = await res.json()
  if (res.status !== 200) throw new Error(`token endpoint answered ${res.status}: ${JSON.stringify(json)}`)
  return json
}

const ROUTES = {
  '/read': (m) => [m.requireScopes('read:orders')],
  '/write': (m) => [m.requireScopes('write:orders')],
}

describe('a user flow (authorization code + PKCE) against a real oidc-provider', () => {
  let op
  let registry
  let reader
  before(async () => {
    op = await startUserFlowProvider()
    registry = createTrustedIssuers([op.issuer])
    await registry.ready()
    reader = await userTokens(op, 'openid read:orders')
  })
  after(async () => {
    registry.close()
    await op.close()
  })

  it('the provider issues what RFC 9068 describes for the user: at+jwt, sub the account, client_id, the granted scope', () => {
    const { header, payload } = decodeJwt(reader.access_token)
    assert.equal(header.typ, 'at+jwt')
    assert.equal(payload.sub, ACCOUNT)
    assert.equal(payload.client_id, CLIENT_ID)
    assert.equal(payload.aud, RESOURCE)
    assert.equal(payload.scope, 'read:orders')
    assert.equal(typeof reader.id_token, 'string')
  })

  for (const engine of ['native', 'js']) {
    it(`express, ${engine}: the user's access token passes where its scope is granted; its ID token is refused as an access token`, async () => {
      const config = { audience: RESOURCE, requireAccessTokenProfile: true }
      const server = await routeApp('express', config, { jwks: registry, engine }, ROUTES)
      try {
        const read = await get(`${server.base}/read`, { authorization: `Bearer ${reader.access_token}` })
        assert.equal(read.status, 200, read.body)
        assert.equal(read.json.sub, ACCOUNT)
        const write = await get(`${server.base}/write`, { authorization: `Bearer ${reader.access_token}` })
        assert.equal(write.status, 403)
        assert.equal(write.json.code, 'insufficient_scope')
        // The ID token of the same response: signed by the same trusted issuer, typ JWT, aud
        // the client. Refused with the profile's code, never a pass.
        const id = await get(`${server.base}/read`, { authorization: `Bearer ${reader.id_token}` })
        assert.equal(id.status, 401, id.body)
        assert.equal(id.json.code, 'wrong_token_type')
      } finally {
        await server.close()
      }
    })
  }
})
