'use strict'

// The MCP SDK's own client against an MCP server protected by auth-shield/mcp, with a real
// oidc-provider as the authorization server (issue 36 §2). The client does what the MCP
// authorization specification describes, nothing scripted by the test but the user's login:
// a request without a token → 401 naming the RFC 9728 document → protected-resource discovery →
// authorization-server metadata → dynamic client registration → authorization code with PKCE
// and the resource indicator → token; then it lists tools and calls one. A tool needing a scope
// the token lacks answers 403 insufficient_scope with scope="…", and the client steps up (a new
// authorization for those scopes). A token of the same provider for another resource is
// refused 401. Express (the SDK's Node transport), a Fetch-API handler and a Hono app (its
// web-standard transport), both engines; JWT access tokens, and OPAQUE ones (the provider's
// accessTokenFormat 'opaque' for the resource) verified by introspection (the trusted issuer's
// `introspection` option): the answer's `aud` is the MCP server's canonical URL, each token is
// introspected once however many calls carry it.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { Client } = require('@modelcontextprotocol/sdk/client/index.js')
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js')
const { UnauthorizedError } = require('@modelcontextprotocol/sdk/client/auth.js')
const { startAuthorizationServer, authorize, ACCOUNT } = require('./authorization-server')
const { startMcpServer } = require('./servers')
const { decodeJwt } = require('../support/oidc-provider')

const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

const OTHER_RESOURCE = 'https://other-mcp.example/mcp'

/** The MCP client's OAuthClientProvider, in memory: what an MCP host keeps per server. */
class MemoryOAuthProvider {
  constructor() {
    this.redirectUrl = 'http://127.0.0.1:9/callback'
    this.authorizations = []
    this.registered = undefined
    this.saved = undefined
    this.verifier = undefined
  }

  get clientMetadata() {
    return { client_name: 'auth-shield MCP test client', redirect_uris: [this.redirectUrl], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none' }
  }

  clientInformation() {
    return this.registered
  }

  saveClientInformation(info) {
    this.registered = info
  }

  tokens() {
    return this.saved
  }

  saveTokens(tokens) {
    this.saved = tokens
  }

  redirectToAuthorization(url) {
    this.authorizations.push(url)
  }

  saveCodeVerifier(verifier) {
    this.verifier = verifier
  }

  codeVerifier() {
    return this.verifier
  }
}

/** A client and its transport for `url`. */
function clientFor(url, provider) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider })
  const client = new Client({ name: 'auth-shield-test-client', version: '1.0.0' })
  return { client, transport }
}

/** The user completes the authorization the client asked for last; the client gets its token. */
async function completeAuthorization(provider, transport) {
  const url = provider.authorizations.at(-1)
  const back = await authorize(url)
  assert.equal(back.origin + back.pathname, provider.redirectUrl)
  assert.equal(back.searchParams.get('error'), null, back.searchParams.get('error_description'))
  await transport.finishAuth(back.searchParams.get('code'))
}

function textOf(result) {
  return JSON.parse(result.content[0].text)
}

for (const format of ['jwt', 'opaque']) describe(`auth-shield/mcp: the MCP SDK client completes the OAuth flow with oidc-provider (${format} access tokens)`, () => {
  let as
  const resources = {}
  /** What the token says: a JWT's payload; an opaque token's introspection answer. */
  const claimsOf = async (token) => {
    if (format === 'jwt') return decodeJwt(token).payload
    assert.ok(!token.includes('.'), 'an opaque token, not a JWT')
    return as.introspect(token)
  }

  before(async () => {
    // Resources are added as the MCP servers start (their port is their canonical URL's).
    as = await startAuthorizationServer({ resources, accessTokenFormat: format })
    resources[OTHER_RESOURCE] = ['mcp:tools', 'mcp:admin']
  })

  after(async () => {
    await as.close()
    assert.deepEqual(unhandled, [])
  })

  for (const kind of ['express', 'fetch', 'hono']) {
    for (const engine of ['native', 'js']) {
      it(`${kind}, ${engine}: discovery → registration → PKCE → token; tools listed and called; step-up for a tool's scope; another resource's token refused`, async () => {
        const server = await startMcpServer(kind, { issuer: as.issuer, engine, introspection: format === 'opaque' ? as.introspection : undefined })
        const introspectionsBefore = as.introspections()
        resources[server.resource] = ['mcp:tools', 'mcp:admin']
        try {
          const metadataUrl = `${server.base}/.well-known/oauth-protected-resource/mcp`

          // No token: 401 naming the metadata document (which names the authorization server) and
          // the scopes to ask for first; the document lists every scope, the tool's too.
          const bare = await fetch(server.resource, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' })
          assert.equal(bare.status, 401)
          assert.equal(bare.headers.get('www-authenticate'), `Bearer scope="mcp:tools", resource_metadata="${metadataUrl}"`)
          const doc = await (await fetch(metadataUrl)).json()
          assert.deepEqual(doc, { resource: server.resource, authorization_servers: [as.issuer], scopes_supported: ['mcp:tools', 'mcp:admin'], bearer_methods_supported: ['header'], resource_name: 'auth-shield test MCP server' })

          // The SDK client: the first connect ends in the authorization redirect (the user's part).
          const registrationsBefore = as.registrations()
          const provider = new MemoryOAuthProvider()
          const first = clientFor(server.resource, provider)
          await assert.rejects(first.client.connect(first.transport), UnauthorizedError)
          assert.equal(provider.authorizations.length, 1)
          assert.equal(typeof provider.registered.client_id, 'string', 'dynamic client registration')
          const asked = provider.authorizations[0].searchParams
          assert.equal(asked.get('resource'), server.resource)
          // The challenge's scope, not the document's list (least privilege).
          assert.equal(asked.get('scope'), 'mcp:tools')
          assert.equal(asked.get('code_challenge_method'), 'S256')
          assert.equal(asked.get('client_id'), provider.registered.client_id)
          await completeAuthorization(provider, first.transport)
          if (format === 'jwt') assert.equal(decodeJwt(provider.saved.access_token).header.typ, 'at+jwt')
          const payload = await claimsOf(provider.saved.access_token)
          assert.equal(payload.aud, server.resource)
          assert.equal(payload.scope, 'mcp:tools')

          // Connected: tools listed, one called with the AuthInfo auth-shield built.
          const { client, transport } = clientFor(server.resource, provider)
          await client.connect(transport)
          const { tools } = await client.listTools()
          assert.deepEqual(tools.map((t) => t.name).sort(), ['reset_index', 'whoami'])
          const me = textOf(await client.callTool({ name: 'whoami', arguments: {} }))
          assert.deepEqual({ ...me, expiresAt: typeof me.expiresAt }, { sub: ACCOUNT, clientId: provider.registered.client_id, scopes: ['mcp:tools'], resource: server.resource, expiresAt: 'number' })

          // A tool that needs mcp:admin: 403 insufficient_scope, scope naming what the call needs.
          const raw = await fetch(server.resource, {
            method: 'POST',
            headers: { authorization: `Bearer ${provider.saved.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'reset_index', arguments: {} } }),
          })
          assert.equal(raw.status, 403)
          assert.equal(raw.headers.get('www-authenticate'), `Bearer error="insufficient_scope", error_description="Token lacks a required scope", scope="mcp:tools mcp:admin", resource_metadata="${metadataUrl}"`)
          // The client sees the challenge and steps up: a new authorization for those scopes.
          await assert.rejects(client.callTool({ name: 'reset_index', arguments: {} }), UnauthorizedError)
          assert.equal(provider.authorizations.length, 2)
          const stepUp = provider.authorizations[1].searchParams
          assert.equal(stepUp.get('scope'), 'mcp:tools mcp:admin')
          assert.equal(stepUp.get('resource'), server.resource)
          await completeAuthorization(provider, transport)
          assert.equal((await claimsOf(provider.saved.access_token)).scope, 'mcp:tools mcp:admin')
          const admin = textOf(await client.callTool({ name: 'reset_index', arguments: {} }))
          assert.deepEqual(admin.scopes, ['mcp:tools', 'mcp:admin'])
          assert.equal(as.registrations() - registrationsBefore, 1, 'registered once, reused for the step-up')
          await client.close()

          // The same provider's token for another resource (another audience): 401, not served.
          const foreign = await as.clientCredentialsToken(OTHER_RESOURCE, 'mcp:tools mcp:admin')
          assert.equal((await claimsOf(foreign)).aud, OTHER_RESOURCE)
          const refused = await fetch(server.resource, {
            method: 'POST',
            headers: { authorization: `Bearer ${foreign}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
          })
          assert.equal(refused.status, 401)
          assert.deepEqual(await refused.json(), { error: 'Invalid token audience', code: 'invalid_audience' })
          assert.equal(refused.headers.get('www-authenticate'), `Bearer error="invalid_token", error_description="Invalid token audience", scope="mcp:tools", resource_metadata="${metadataUrl}"`)
          // …and the SDK client holding it is sent back to authorization, never served.
          const holder = new MemoryOAuthProvider()
          holder.registered = provider.registered
          holder.saved = { access_token: foreign, token_type: 'Bearer' }
          const third = clientFor(server.resource, holder)
          await assert.rejects(third.client.connect(third.transport), UnauthorizedError)
          assert.equal(holder.authorizations.length, 1)
          // Three tokens (the first, the stepped-up one, the foreign one), each introspected once.
          if (format === 'opaque') assert.equal(as.introspections() - introspectionsBefore, 3)
        } finally {
          await server.close()
        }
      })
    }
  }
})
