'use strict'

// The request pipeline (lib/http/pipeline.js): stages compose, they never patch each other. The
// engine a decision holds cannot be re-assigned (the wrapper that dropped DPoP proofs and client
// certificates, issue 35, cannot come back); a registered stage sees the whole request; a stage
// list is one array.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const authShield = require('../../adapters/express')
const { Pipeline, AuthRequest, STAGES } = require('../../lib/http/pipeline')
const { createRemoteJwks } = require('../../lib/jwks/index')

const SECRET = 'pipeline-stages-secret-0123456789abcdef'

test('the engine of a decision is frozen: no stage can replace authenticate', () => {
  for (const engine of ['native', 'js']) {
    const mw = authShield({ accessSecret: SECRET }, { engine })
    const { decision } = mw
    assert.ok(Object.isFrozen(decision.engine))
    assert.throws(() => {
      'use strict'
      decision.engine.authenticate = () => ({})
    }, TypeError)
  }
})

test('the jwks option is a registered stage that reads results, and leaves the engine as created', () => {
  const source = createRemoteJwks('http://127.0.0.1:9/jwks.json', { retryMinMs: 100000, retryMaxMs: 100000 })
  try {
    const mw = authShield({ issuer: 'https://idp.test/' }, { jwks: source, engine: 'js' })
    const { pipeline, engine } = mw.decision
    assert.deepEqual(STAGES.map((s) => s.name), ['key source', 'introspection'])
    assert.deepEqual(pipeline.stages.map((s) => s.name), ['key source'])
    assert.equal(pipeline.resultStages.length, 1)
    assert.equal(engine.authenticate.name, 'authenticateOnly')
  } finally {
    source.close()
  }
})

test('without a stage option no stage is made and no result stage runs per request', () => {
  const mw = authShield({ accessSecret: SECRET })
  assert.deepEqual(mw.decision.pipeline.stages, [])
  assert.deepEqual(mw.decision.pipeline.resultStages, [])
})

test('a stage added to the list gets the whole request: credentials, tenant, host, sender context', () => {
  const seen = []
  const recording = { name: 'recording', create: () => ({ name: 'recording', checkResult: (result, request) => (seen.push(request), result) }) }
  const pipeline = new Pipeline({}, [recording])
  const sender = { dpop: 'proof', method: 'POST', url: 'https://api.example/orders', clientCertThumbprint: 'x'.repeat(43) }
  const request = new AuthRequest({ raw: true }, 'DPoP token', 'acme', 'api.example', sender, 0)
  const result = { authenticated: true }
  assert.equal(pipeline.checkResult(result, request), result)
  assert.equal(seen[0], request)
  assert.deepEqual({ ...seen[0] }, { raw: { raw: true }, authorization: 'DPoP token', tenant: 'acme', host: 'api.example', sender, tries: 0, engineResult: undefined })
})

test('a stage may answer in place of the engine (introspection of opaque tokens): counted, then through the later stages', async () => {
  const { AuthDecision } = require('../../lib/http/decision')
  const { toPrometheus } = require('../../lib/metrics/prometheus')
  const { token } = require('../support/tokens')
  for (const engine of ['native', 'js']) {
    const { Authenticator } = engine === 'js' ? require('../../js') : require('../..')
    const probe = new Authenticator({ accessSecret: SECRET, rateLimitMax: 0 })
    const template = probe.authenticate(`Bearer ${token({ sub: 'svc', exp: Math.floor(Date.now() / 1000) + 600 }, SECRET)}`)
    assert.equal(template.authenticated, true)
    const introspection = {
      name: 'introspection',
      create: () => ({
        name: 'introspection',
        beforeEngine: (request) => {
          if (request.authorization === 'Bearer opaque-sync') return { ...template, userId: 'opaque-user' }
          if (request.authorization === 'Bearer opaque-async') return Promise.resolve({ ...template, userId: 'async-user' })
          if (request.authorization === 'Bearer opaque-later') return Promise.resolve(undefined)
          return undefined
        },
      }),
    }
    const decision = new AuthDecision({ accessSecret: SECRET, rateLimitMax: 0 }, { engine }, undefined, undefined, { stages: [introspection] })
    const sync = decision.decide({ headers: { authorization: 'Bearer opaque-sync' } })
    assert.equal(sync.action, 'pass')
    assert.equal(sync.identity.user.userId, 'opaque-user')
    const later = await decision.decide({ headers: { authorization: 'Bearer opaque-async' } })
    assert.equal(later.identity.user.userId, 'async-user')
    // A stage's answer goes on through the stages after the engine: a route for DPoP only refuses it.
    const dpopOnly = new AuthDecision({ accessSecret: SECRET, rateLimitMax: 0 }, { engine, dpopMode: 'required', dpopOrigin: 'https://api.example' }, undefined, undefined, { stages: [introspection] })
    const refused = dpopOnly.decide({ headers: { authorization: 'Bearer opaque-sync' } })
    assert.equal(refused.action, 'fail')
    assert.equal(refused.result.errorCode, 'dpop_required')
    assert.match(toPrometheus({ authenticators: { api: dpopOnly.engine.authenticator } }), /error_type="dpop_required"\} 1\n/)
    // undefined: the engine decides (an opaque token is malformed to it).
    assert.equal((await decision.decide({ headers: { authorization: 'Bearer opaque-later' } })).result.errorCode, 'malformed_token')
    assert.equal(decision.decide({ headers: { authorization: 'Bearer other' } }).result.errorCode, 'malformed_token')
    const text = toPrometheus({ authenticators: { api: decision.engine.authenticator } })
    assert.match(text, /auth_shield_authentication_result="success"\} 2\n/)
    assert.match(text, /error_type="malformed_token"\} 2\n/)
  }
})
