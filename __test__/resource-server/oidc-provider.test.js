'use strict'

// A real OpenID Provider (oidc-provider on loopback) issues RFC 9068 JWT access tokens for one
// resource through client_credentials; every adapter, with both engines, verifies them through
// the provider's own jwks_uri (auth-shield/jwks), checks their scopes, and answers refusals
// with RFC 6750 challenges naming the RFC 9728 metadata, which each adapter also serves.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const Fastify = require('fastify')
const Koa = require('koa')
const authShield = require('../../adapters/express')
const authShieldPlugin = require('../../adapters/fastify')
const koaAuthShield = require('../../adapters/koa')
const { createVerifier, protectedResourceMetadata: fetchMetadata } = require('../../adapters/fetch')
const { createRemoteJwks } = require('../../lib/jwks/index')
const { listen, get } = require('../support/http')
const { startProvider, decodeJwt } = require('../support/oidc-provider')

const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

const RESOURCE = 'https://orders.api.example/'
const METADATA_URL = 'https://orders.api.example/.well-known/oauth-protected-resource'
const REALM = 'orders'
const DESCRIPTION = 'Token lacks a required scope'

/** One server per adapter: the middleware on /api, the metadata document at its well-known path. */
const ADAPTERS = {
  async express(config, options) {
    const meta = authShield.protectedResourceMetadata(metadataOptions(options.issuer))
    const app = express()
    app.get(meta.path, meta.handler)
    app.use('/api', authShield(config, { ...options.middleware, resourceMetadata: meta }), (req, res) => res.json({ sub: req.user.userId, scope: req.auth.scope }))
    return { ...(await listen(http.createServer(app))), meta }
  },
  async fastify(config, options) {
    const meta = authShieldPlugin.protectedResourceMetadata(metadataOptions(options.issuer))
    const app = Fastify()
    app.get(meta.path, meta.handler)
    await app.register(async (scope) => {
      await scope.register(authShieldPlugin, { config, ...options.middleware, resourceMetadata: meta })
      scope.get('/api', async (request) => ({ sub: request.user.userId, scope: request.auth.scope }))
    })
    await app.listen({ port: 0, host: '127.0.0.1' })
    return { base: `http://127.0.0.1:${app.server.address().port}`, close: () => app.close(), meta }
  },
  async koa(config, options) {
    const meta = koaAuthShield.protectedResourceMetadata(metadataOptions(options.issuer))
    const app = new Koa()
    app.silent = true
    const protect = koaAuthShield(config, { ...options.middleware, resourceMetadata: meta })
    app.use(async (ctx, next) => (ctx.path === meta.path ? meta.handler(ctx) : next()))
    app.use(protect)
    app.use((ctx) => {
      ctx.body = { sub: ctx.state.user.userId, scope: ctx.state.auth.scope }
    })
    return { ...(await listen(http.createServer(app.callback()))), meta }
  },
  async fetch(config, options) {
    const meta = fetchMetadata(metadataOptions(options.issuer))
    const verify = createVerifier(config, { ...options.middleware, resourceMetadata: meta })
    const server = http.createServer(async (req, res) => {
      const headers = new Headers()
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1])
      const request = new Request(`http://${req.headers.host}${req.url}`, { headers })
      let response
      if (new URL(request.url).pathname === meta.path) response = meta.handler(request)
      else {
        const auth = await verify(request)
        response = auth.ok ? Response.json({ sub: auth.user.userId, scope: auth.claims.scope }, { headers: auth.headers }) : auth.response
      }
      res.statusCode = response.status
      for (const [name, value] of response.headers) res.setHeader(name, value)
      res.end(Buffer.from(await response.arrayBuffer()))
    })
    return { ...(await listen(server)), meta }
  },
}

function metadataOptions(issuer) {
  return { resource: RESOURCE, authorizationServers: [issuer], scopesSupported: ['read:orders', 'write:orders'], resourceName: 'Orders API' }
}

const bearer = (token) => ({ authorization: `Bearer ${token}` })

describe('a real oidc-provider: JWT access tokens, scopes and challenges in every adapter', () => {
  let op
  let jwks
  const tokens = {}

  before(async () => {
    op = await startProvider({ resource: RESOURCE })
    jwks = createRemoteJwks(op.jwksUri)
    tokens.both = await op.token('read:orders write:orders')
    tokens.read = await op.token('read:orders')
    tokens.write = await op.token('write:orders')
    tokens.none = await op.token('unknown:scope')
  })

  after(async () => {
    jwks.close()
    await op.close()
    assert.deepEqual(unhandled, [])
  })

  it('issues what RFC 9068 describes (the provider, not us): typ at+jwt, iss, aud, scope, client_id, jti', () => {
    const { header, payload } = decodeJwt(tokens.read)
    assert.equal(header.typ, 'at+jwt')
    assert.equal(payload.iss, op.issuer)
    assert.equal(payload.aud, RESOURCE)
    assert.equal(payload.scope, 'read:orders')
    assert.equal(payload.client_id, op.clientId)
    assert.equal(typeof payload.jti, 'string')
    assert.equal(decodeJwt(tokens.none).payload.scope, undefined)
  })

  for (const adapter of Object.keys(ADAPTERS)) {
    for (const engine of ['native', 'js']) {
      it(`${adapter}, ${engine}: verifies the provider's tokens through its jwks_uri; 403 insufficient_scope with an RFC 6750 challenge`, async () => {
        const config = { issuer: op.issuer, audience: RESOURCE, requiredScope: 'read:orders' }
        const server = await ADAPTERS[adapter](config, { issuer: op.issuer, middleware: { jwks, engine, realm: REALM } })
        try {
          for (const t of [tokens.both, tokens.read]) {
            const ok = await get(`${server.base}/api`, bearer(t))
            assert.equal(ok.status, 200, ok.body)
            assert.equal(ok.json.sub, op.clientId)
            assert.equal(ok.headers['www-authenticate'], undefined)
          }
          for (const t of [tokens.write, tokens.none]) {
            const lacking = await get(`${server.base}/api`, bearer(t))
            assert.equal(lacking.status, 403)
            assert.deepEqual(lacking.json, { error: DESCRIPTION, code: 'insufficient_scope' })
            assert.equal(lacking.headers['www-authenticate'], `Bearer realm="${REALM}", error="insufficient_scope", error_description="${DESCRIPTION}", scope="read:orders", resource_metadata="${METADATA_URL}"`)
          }
          // RFC 6750 §3.1: no credentials, no error attribute.
          const missing = await get(`${server.base}/api`)
          assert.equal(missing.status, 401)
          assert.equal(missing.headers['www-authenticate'], `Bearer realm="${REALM}", resource_metadata="${METADATA_URL}"`)
          const basic = await get(`${server.base}/api`, { authorization: 'Basic b3JkZXJzOng=' })
          assert.equal(basic.headers['www-authenticate'], `Bearer realm="${REALM}", resource_metadata="${METADATA_URL}"`)
          // A forged signature: invalid_token, the attacker's bytes never echoed.
          const [h, p] = tokens.both.split('.')
          const forged = await get(`${server.base}/api`, bearer(`${h}.${p}.${'A'.repeat(342)}`))
          assert.equal(forged.status, 401)
          assert.equal(forged.headers['www-authenticate'], `Bearer realm="${REALM}", error="invalid_token", error_description="Invalid token signature", resource_metadata="${METADATA_URL}"`)
          const spaced = await get(`${server.base}/api`, { authorization: 'Bearer a"b\\c d' })
          assert.equal(spaced.headers['www-authenticate'], `Bearer realm="${REALM}", error="invalid_request", error_description="Invalid Authorization header format", resource_metadata="${METADATA_URL}"`)
          // The RFC 9728 document, at the well-known path of the resource.
          assert.equal(server.meta.path, '/.well-known/oauth-protected-resource')
          const doc = await get(`${server.base}${server.meta.path}`)
          assert.equal(doc.status, 200)
          assert.match(doc.headers['content-type'], /^application\/json/)
          assert.deepEqual(doc.json, {
            resource: RESOURCE,
            authorization_servers: [op.issuer],
            scopes_supported: ['read:orders', 'write:orders'],
            bearer_methods_supported: ['header'],
            resource_name: 'Orders API',
          })
        } finally {
          await server.close()
        }
      })
    }
  }

  it('a token for another audience (no resource indicator match) is invalid_audience, not insufficient_scope', async () => {
    const mw = authShield({ issuer: op.issuer, audience: 'https://other.api.example/', requiredScope: 'read:orders' }, { jwks })
    const app = express().use('/api', mw, (req, res) => res.json({}))
    const server = await listen(http.createServer(app))
    try {
      const r = await get(`${server.base}/api`, bearer(tokens.both))
      assert.equal(r.status, 401)
      assert.equal(r.json.code, 'invalid_audience')
    } finally {
      await server.close()
    }
  })
})
