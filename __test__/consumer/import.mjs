// Run by pack.test.js inside a fresh project where auth-shield was installed from
// its tarball: the ESM entry points, named and default imports.

import assert from 'node:assert/strict'
import authShieldDefault, { Authenticator, authenticateRequest } from 'auth-shield'
import expressAuth, { authShield as namedExpressAuth } from 'auth-shield/express'
import fastifyAuth from 'auth-shield/fastify'
import * as js from 'auth-shield/js'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const secret = 'consumer-secret-of-at-least-32-bytes!!'

// The ESM entries are the CommonJS modules, not copies with their own state.
assert.equal(authShieldDefault, require('auth-shield'))
assert.equal(Authenticator, require('auth-shield').Authenticator)
assert.equal(expressAuth, require('auth-shield/express'))
assert.equal(namedExpressAuth, expressAuth)
assert.equal(fastifyAuth, require('auth-shield/fastify'))
assert.equal(js.Authenticator, require('auth-shield/js').Authenticator)

const auth = new Authenticator({ accessSecret: secret })
const token = auth.signAccessToken({ sub: 'user-2' })
const result = auth.authenticate(`Bearer ${token}`)
assert.equal(result.authenticated, true, result.error)
assert.equal(result.userId, 'user-2')
assert.equal(authenticateRequest(`Bearer ${token}`, null, null, { accessSecret: secret }).userId, 'user-2')
const jsResult = new js.Authenticator({ accessSecret: secret }).authenticate(`Bearer ${token}`)
assert.equal(jsResult.userId, 'user-2')

// Fastify 5 (what auth-shield/fastify plugs into) needs Node 20 or later.
if (Number(process.versions.node.split('.')[0]) >= 20) {
  const { default: Fastify } = await import('fastify')
  const app = Fastify()
  await app.register(fastifyAuth, { config: { accessSecret: secret } })
  app.get('/me', async (request) => ({ userId: request.user.userId }))
  const reply = await app.inject({ url: '/me', headers: { authorization: `Bearer ${token}` } })
  assert.equal(reply.statusCode, 200, reply.body)
  assert.equal(reply.json().userId, 'user-2')
  await app.close()
}

await assert.rejects(import('auth-shield/native.js'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' })
await assert.rejects(import('auth-shield/binding.js'), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' })
console.log('consumer.mjs ok')
