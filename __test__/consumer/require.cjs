'use strict'

// Run by pack.test.js inside a fresh project where auth-shield was installed from
// its tarball: the CommonJS entry points, used as a consumer would.
// argv[2]: the platform package the binary must come from.

const assert = require('node:assert/strict')
const path = require('node:path')

const secret = 'consumer-secret-of-at-least-32-bytes!!'
const platformPackage = process.argv[2]
const nodeMajor = Number(process.versions.node.split('.')[0])

async function main() {
  const { Authenticator, authenticateRequest } = require('auth-shield')
  const auth = new Authenticator({ accessSecret: secret })
  const token = auth.signAccessToken({ sub: 'user-1', email: 'a@example.com', tenant_id: 'acme' })
  const result = auth.authenticate(`Bearer ${token}`, null, 'api.example.com')
  assert.equal(result.authenticated, true, result.error)
  assert.equal(result.userId, 'user-1')
  assert.equal(result.tenantId, 'acme')
  assert.equal(authenticateRequest(`Bearer ${token}`, null, null, { accessSecret: secret }).userId, 'user-1')
  assert.equal(auth.authenticate('Bearer not.a.token').errorCode, 'malformed_token')
  // The failure-code table and the tenant resolver for routes without a token are public.
  const codes = require('auth-shield/error-codes.json')
  assert.equal(codes.malformed_token.status, 401)
  assert.deepEqual(require('auth-shield/js/error-codes.json'), codes)
  assert.equal(require('auth-shield').resolveTenant(null, 'acme.example.com').tenantId, 'acme')
  assert.equal(require('auth-shield/js').resolveTenant('bad:id', null).errorCode, 'invalid_tenant')

  const binaries = Object.keys(require.cache).filter((file) => file.endsWith('.node'))
  assert.equal(binaries.length, 1, binaries.join(', '))
  assert.equal(path.basename(path.dirname(binaries[0])), platformPackage, 'the binary comes from the platform package')

  // The pure-JS engine verifies the same token the same way.
  const js = require('auth-shield/js')
  const jsResult = new js.Authenticator({ accessSecret: secret }).authenticate(`Bearer ${token}`, null, 'api.example.com')
  assert.equal(jsResult.authenticated, true, jsResult.error)
  assert.equal(jsResult.userId, 'user-1')

  // Express: a real app on loopback.
  const express = require('express')
  const authShield = require('auth-shield/express')
  const app = express()
  app.use(authShield({ accessSecret: secret }))
  app.get('/me', (req, res) => res.json({ user: req.user, tenantId: req.tenantId }))
  const server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s))
  })
  try {
    const url = `http://127.0.0.1:${server.address().port}/me`
    const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(ok.status, 200)
    assert.deepEqual(await ok.json(), { user: { userId: 'user-1', email: 'a@example.com' }, tenantId: 'acme' })
    const refused = await fetch(url)
    assert.equal(refused.status, 401)
    assert.equal((await refused.json()).code, 'missing_authorization')
  } finally {
    await new Promise((resolve) => {
      server.close(resolve)
      server.closeAllConnections() // fetch keeps the connection alive
    })
  }

  // Fastify 5 (what auth-shield/fastify plugs into) needs Node 20 or later.
  if (nodeMajor >= 20) await checkFastify(token)

  // Only the exported entry points are reachable.
  assert.throws(() => require('auth-shield/index.js'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' })
  assert.throws(() => require('auth-shield/js/jwt.js'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' })
  console.log('consumer.cjs ok')
}

// The plugin, exercised through inject().
async function checkFastify(token) {
  const fastify = require('fastify')()
  await fastify.register(require('auth-shield/fastify'), { config: { accessSecret: secret } })
  fastify.get('/me', async (request) => ({ user: request.user }))
  const reply = await fastify.inject({ url: '/me', headers: { authorization: `Bearer ${token}` } })
  assert.equal(reply.statusCode, 200, reply.body)
  assert.equal(reply.json().user.userId, 'user-1')
  assert.equal((await fastify.inject({ url: '/me' })).statusCode, 401)
  await fastify.close()
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
