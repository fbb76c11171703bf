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
    assert.deepEqual(STAGES.map((s) => s.name), ['key source'])
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
