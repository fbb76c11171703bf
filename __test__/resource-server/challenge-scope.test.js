'use strict'

// The `challengeScope` middleware option (issue 36 §2, the MCP authorization specification: a
// server SHOULD name in its 401 challenge the scopes a client should ask for): with it, every
// 401 Bearer challenge carries `scope="…"` (the requiredScope list), the bare one included;
// without it (the default) the 401 challenges are as they were. Every adapter, both engines.

const { describe, it, test } = require('node:test')
const assert = require('node:assert/strict')
const { Challenge } = require('../../lib/http/challenge')
const { ADAPTER_STARTS } = require('../support/adapter-servers')
const { get } = require('../support/http')
const { token } = require('../support/tokens')

const SECRET = 'challenge-scope-secret-0123456789abcdef'
const RM = 'https://api.example/.well-known/oauth-protected-resource'

test('Challenge: scopeOnUnauthorized puts the scopes on the bare and every 401 challenge, not on the ones without a challenge', () => {
  const c = new Challenge({ realm: 'api', scope: ['read', 'write:x'], acrValues: ['mfa'], resourceMetadata: RM, scopeOnUnauthorized: true })
  const rm = `resource_metadata="${RM}"`
  assert.equal(c.bare, `Bearer realm="api", scope="read write:x", ${rm}`)
  assert.equal(c.of('token_expired'), `Bearer realm="api", error="invalid_token", error_description="Token has expired", scope="read write:x", ${rm}`)
  assert.equal(c.of('invalid_authorization_format'), `Bearer realm="api", error="invalid_request", error_description="Invalid Authorization header format", scope="read write:x", ${rm}`)
  assert.equal(c.of('insufficient_user_authentication'), `Bearer realm="api", error="insufficient_user_authentication", error_description="A stronger or more recent user authentication is required", acr_values="mfa", scope="read write:x", ${rm}`)
  assert.equal(c.of('insufficient_scope'), `Bearer realm="api", error="insufficient_scope", error_description="Token lacks a required scope", scope="read write:x", ${rm}`)
  assert.equal(c.of('rate_limited'), undefined)
  // No required scope: nothing to name.
  assert.equal(new Challenge({ scopeOnUnauthorized: true }).bare, 'Bearer')
  // Off (the default): the 401s name no scope.
  assert.equal(new Challenge({ scope: ['read'] }).bare, 'Bearer')
  assert.equal(new Challenge({ scope: ['read'] }).of('token_expired'), 'Bearer error="invalid_token", error_description="Token has expired"')
})

describe('challengeScope in every adapter', () => {
  const now = Math.floor(Date.now() / 1000)
  const expired = token({ sub: 'u', exp: now - 600 }, SECRET)
  const lacking = token({ sub: 'u', exp: now + 600, scope: 'read' }, SECRET)
  const config = { accessSecret: SECRET, requiredScope: ['read', 'write'] }

  for (const [adapter, start] of ADAPTER_STARTS) {
    for (const engine of ['native', 'js']) {
      it(`${adapter}, ${engine}: the 401s name the required scopes with the option, not without`, async () => {
        for (const challengeScope of [true, false, undefined]) {
          const server = await start(config, { engine, realm: 'api', resourceMetadata: RM, ...(challengeScope === undefined ? {} : { challengeScope }) })
          try {
            const scope = challengeScope === true ? ', scope="read write"' : ''
            const bare = await get(`${server.base}/orders`)
            assert.equal(bare.status, 401)
            assert.equal(bare.headers['www-authenticate'], `Bearer realm="api"${scope}, resource_metadata="${RM}"`, String(challengeScope))
            const old = await get(`${server.base}/orders`, { authorization: `Bearer ${expired}` })
            assert.equal(old.status, 401)
            assert.equal(old.headers['www-authenticate'], `Bearer realm="api", error="invalid_token", error_description="Token has expired"${scope}, resource_metadata="${RM}"`)
            const few = await get(`${server.base}/orders`, { authorization: `Bearer ${lacking}` })
            assert.equal(few.status, 403)
            assert.equal(few.headers['www-authenticate'], `Bearer realm="api", error="insufficient_scope", error_description="Token lacks a required scope", scope="read write", resource_metadata="${RM}"`)
          } finally {
            await server.close()
          }
        }
      })
    }
  }

  it('anything but a boolean is a TypeError', () => {
    const authShield = require('../../adapters/express')
    for (const bad of ['yes', 1, null, {}]) {
      assert.throws(() => authShield(config, { challengeScope: bad }), TypeError, String(bad))
    }
  })
})
