'use strict'

// createTokenVerifier: auth-shield behind the MCP SDK's own `requireBearerAuth({ verifier })`,
// an SDK user's one-line change. Tokens from a real oidc-provider (client_credentials for a
// resource indicator); both engines; the CommonJS entry with the SDK's CommonJS build and the
// ESM entry with its ESM build (the SDK answers by `instanceof` its own error classes, so each
// entry must throw the classes of the build the app loaded).

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const { createTokenVerifier } = require('../../adapters/mcp')
const { startAuthorizationServer } = require('./authorization-server')
const { listen } = require('../support/http')

const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

const OTHER_RESOURCE = 'https://other-mcp.example/mcp'

/** An Express app with the SDK's requireBearerAuth (its CommonJS or ESM build) and `verifier`. */
async function sdkApp(requireBearerAuth, verifier, resource) {
  const app = express()
  const resourceMetadataUrl = `${new URL(resource).origin}/.well-known/oauth-protected-resource/mcp`
  app.post('/mcp', requireBearerAuth({ verifier, requiredScopes: ['mcp:tools'], resourceMetadataUrl, expectedResource: new URL(resource) }), (req, res) =>
    res.json({ clientId: req.auth.clientId, scopes: req.auth.scopes, resource: req.auth.resource.href, expiresAt: typeof req.auth.expiresAt, sub: req.auth.extra.sub }),
  )
  return app
}

describe("createTokenVerifier behind the MCP SDK's requireBearerAuth", () => {
  let as
  const resources = { [OTHER_RESOURCE]: ['mcp:tools'] }

  before(async () => {
    as = await startAuthorizationServer({ resources })
  })

  after(async () => {
    await as.close()
    assert.deepEqual(unhandled, [])
  })

  const entries = {
    async commonjs() {
      return { createTokenVerifier, requireBearerAuth: require('@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js').requireBearerAuth }
    },
    async esm() {
      const mcp = await import('../../adapters/mcp.mjs')
      const sdk = await import('@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js')
      return { createTokenVerifier: mcp.createTokenVerifier, requireBearerAuth: sdk.requireBearerAuth }
    },
  }

  for (const entry of Object.keys(entries)) {
    for (const engine of ['native', 'js']) {
      it(`${entry}, ${engine}: admits the resource's tokens with the SDK's AuthInfo; 401 for another audience or a forgery; 403 from the SDK's requiredScopes`, async () => {
        const { createTokenVerifier: create, requireBearerAuth } = await entries[entry]()
        let handler = null
        const server = http.createServer((req, res) => handler(req, res))
        const { base, close } = await listen(server)
        const resource = `${base}/mcp`
        resources[resource] = ['mcp:tools', 'mcp:admin']
        const verifier = create({ resource, issuers: [as.issuer], options: { engine } })
        handler = await sdkApp(requireBearerAuth, verifier, resource)
        const post = (token) => fetch(resource, { method: 'POST', headers: token === undefined ? {} : { authorization: `Bearer ${token}` } })
        try {
          const ok = await post(await as.clientCredentialsToken(resource, 'mcp:tools mcp:admin'))
          assert.equal(ok.status, 200)
          assert.deepEqual(await ok.json(), { clientId: 'm2m', scopes: ['mcp:tools', 'mcp:admin'], resource, expiresAt: 'number', sub: 'm2m' })

          const foreign = await post(await as.clientCredentialsToken(OTHER_RESOURCE, 'mcp:tools'))
          assert.equal(foreign.status, 401)
          assert.deepEqual(await foreign.json(), { error: 'invalid_token', error_description: 'Invalid token audience' })
          assert.match(foreign.headers.get('www-authenticate'), /^Bearer error="invalid_token", error_description="Invalid token audience", scope="mcp:tools", resource_metadata="/)

          const good = await as.clientCredentialsToken(resource, 'mcp:tools')
          const [h, p] = good.split('.')
          const forged = await post(`${h}.${p}.${'A'.repeat(342)}`)
          assert.equal(forged.status, 401)
          assert.equal((await forged.json()).error, 'invalid_token')

          const garbage = await post('not-a-token')
          assert.equal(garbage.status, 401)

          // The SDK's own requiredScopes: its 403.
          const lacking = await post(await as.clientCredentialsToken(resource, 'mcp:admin'))
          assert.equal(lacking.status, 403)
          assert.equal((await lacking.json()).error, 'insufficient_scope')
          verifier.close()
        } finally {
          await close()
        }
      })
    }
  }

  it('the scopes given to the verifier are checked by auth-shield too: InsufficientScopeError (403)', async () => {
    const { InsufficientScopeError, InvalidTokenError } = require('@modelcontextprotocol/sdk/server/auth/errors.js')
    const resource = 'http://127.0.0.1:1/mcp'
    resources[resource] = ['mcp:tools', 'mcp:admin']
    const verifier = createTokenVerifier({ resource, issuers: [as.issuer], scopes: ['mcp:admin'] })
    try {
      const err = await verifier.verifyAccessToken(await as.clientCredentialsToken(resource, 'mcp:tools')).then(() => null, (e) => e)
      assert.ok(err instanceof InsufficientScopeError, String(err))
      assert.equal(err.code, 'insufficient_scope')
      assert.equal(err.status, 403)
      for (const bad of ['', undefined, 42]) {
        await assert.rejects(verifier.verifyAccessToken(bad), InvalidTokenError)
      }
      const info = await verifier.verifyAccessToken(await as.clientCredentialsToken(resource, 'mcp:admin'))
      assert.deepEqual(info.scopes, ['mcp:admin'])
      assert.equal(info.resource.href, resource)
    } finally {
      verifier.close()
    }
  })

  it('toolScopes are refused here (requireBearerAuth has none)', () => {
    assert.throws(() => createTokenVerifier({ resource: 'http://127.0.0.1:1/mcp', authorizationServers: ['http://127.0.0.1:2'], config: { accessSecret: 'x'.repeat(32) }, toolScopes: { a: ['b'] } }), /toolScopes is not an option of createTokenVerifier/)
  })
})

describe("createTokenVerifier with opaque tokens, introspected, behind the SDK's requireBearerAuth", () => {
  let as
  const resources = { [OTHER_RESOURCE]: ['mcp:tools'] }
  before(async () => {
    as = await startAuthorizationServer({ resources, accessTokenFormat: 'opaque' })
  })
  after(async () => {
    await as.close()
    assert.deepEqual(unhandled, [])
  })

  for (const engine of ['native', 'js']) {
    it(`${engine}: the resource's opaque token admitted with the SDK's AuthInfo (one introspection); another resource's, an unknown one 401; the SDK's requiredScopes 403`, async () => {
      const { requireBearerAuth } = require('@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js')
      let handler = null
      const server = http.createServer((req, res) => handler(req, res))
      const { base, close } = await listen(server)
      const resource = `${base}/mcp`
      resources[resource] = ['mcp:tools', 'mcp:admin']
      const verifier = createTokenVerifier({ resource, issuers: [{ issuer: as.issuer, introspection: as.introspection }], options: { engine } })
      handler = await sdkApp(requireBearerAuth, verifier, resource)
      const post = (token) => fetch(resource, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
      try {
        const token = await as.clientCredentialsToken(resource, 'mcp:tools mcp:admin')
        assert.ok(!token.includes('.'), 'an opaque token')
        const before = as.introspections()
        for (let i = 0; i < 3; i++) {
          const ok = await post(token)
          assert.equal(ok.status, 200)
          assert.deepEqual(await ok.json(), { clientId: 'm2m', scopes: ['mcp:tools', 'mcp:admin'], resource, expiresAt: 'number', sub: 'm2m' })
        }
        assert.equal(as.introspections() - before, 1)

        const foreign = await post(await as.clientCredentialsToken(OTHER_RESOURCE, 'mcp:tools'))
        assert.equal(foreign.status, 401)
        assert.deepEqual(await foreign.json(), { error: 'invalid_token', error_description: 'Invalid token audience' })

        const unknown = await post('an-opaque-token-nobody-issued')
        assert.equal(unknown.status, 401)
        assert.equal((await unknown.json()).error, 'invalid_token')

        const lacking = await post(await as.clientCredentialsToken(resource, 'mcp:admin'))
        assert.equal(lacking.status, 403)
        assert.equal((await lacking.json()).error, 'insufficient_scope')
      } finally {
        verifier.close()
        await close()
      }
    })
  }
})
