'use strict'

// Opaque tokens of a real oidc-provider through every adapter (Express, Fastify, Koa, Fetch,
// Hono, expressjwt) and both engines, and in shadow mode (issue 36 §3): an active token passes
// with its introspected claims, an unknown one is 401 token_inactive, a second request of the
// same token asks the provider nothing.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { createTrustedIssuers } = require('../../lib/jwks/index')
const { ADAPTER_STARTS, expressServer } = require('../support/adapter-servers')
const { get } = require('../support/http')
const { startOpaqueProvider } = require('./provider')

const RESOURCE = 'https://orders.api.example/'
const ADAPTERS = [...ADAPTER_STARTS, ['expressjwt', (config, options) => expressServer(require('../../adapters/express').expressjwt({ ...config, ...options }))]]

const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

describe('opaque tokens through every adapter, both engines and shadow mode', () => {
  let op
  let token
  before(async () => {
    op = await startOpaqueProvider({ resource: RESOURCE })
    token = await op.token('read:orders')
  })
  after(async () => {
    await op.close()
    assert.deepEqual(unhandled, [])
  })

  const modes = [
    ['native', { engine: 'native' }],
    ['js', { engine: 'js' }],
    ['shadow', { engine: 'native', shadow: true }],
  ]
  for (const [adapter, start] of ADAPTERS) {
    for (const [mode, options] of modes) {
      it(`${adapter}, ${mode}: an active token passes once introspected; an unknown one is 401 token_inactive`, async () => {
        const mismatches = []
        const registry = createTrustedIssuers([{ issuer: op.issuer, audience: RESOURCE, introspection: op.introspection() }])
        const extra = options.shadow ? { onMismatch: (m) => void mismatches.push(m) } : {}
        const server = await start({}, { jwks: registry, ...options, ...extra })
        try {
          const before = op.introspections()
          for (let i = 0; i < 3; i++) {
            const r = await get(`${server.base}/orders`, { authorization: `Bearer ${token}` })
            assert.equal(r.status, 200, JSON.stringify(r.json))
            if (r.json.user !== undefined && r.json.user !== null) assert.equal(r.json.user.userId, 'orders-client')
            if (r.json.claims != null) assert.equal(r.json.claims.scope, 'read:orders')
          }
          assert.equal(op.introspections() - before, 1)
          const refused = await get(`${server.base}/orders`, { authorization: 'Bearer never-issued-by-the-provider' })
          assert.equal(refused.status, 401)
          assert.match(refused.headers['www-authenticate'], /invalid_token/)
          if (adapter !== 'expressjwt') assert.equal(refused.json.code, 'token_inactive')
          assert.deepEqual(mismatches, [])
        } finally {
          await server.close()
          registry.close()
        }
      })
    }
  }
})
