'use strict'

// auth-shield/events: a million refused requests make a bounded number of hook calls (at most
// one per interval), whose counts add up to every refusal; hooks are fenced.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { watchMetrics, MIN_INTERVAL_MS } = require('../../lib/metrics/events')
const { createRemoteJwks } = require('../../lib/jwks/index')
const { startJwksServer, keyPair } = require('../support/jwks-server')
const { token, SECRET, NOW } = require('../support/tokens')

const tick = () => new Promise((resolve) => setImmediate(resolve))

for (const [name, engine, total] of [['native', native, 1_000_000], ['js', js, 200_000]]) {
  test(`${total} refused requests make at most one call per hook per interval (${name} engine)`, async () => {
    const auth = new engine.Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 1, rateLimitRefill: 0.001 })
    const calls = { onAuthFailure: [], onRateLimited: [] }
    const watch = watchMetrics(
      { authenticators: { api: auth } },
      { onAuthFailure: (e) => calls.onAuthFailure.push(e), onRateLimited: (e) => calls.onRateLimited.push(e) },
      { intervalMs: MIN_INTERVAL_MS },
    )
    const good = `Bearer ${token({ sub: 'alice', exp: NOW + 600 }, SECRET)}`
    const started = Date.now()
    try {
      // Half without credentials, half over the limit; the event loop turns between batches.
      for (let done = 0; done < total; done += 10_000) {
        for (let i = 0; i < 5_000; i++) auth.authenticate(undefined)
        for (let i = 0; i < 5_000; i++) auth.authenticate(good)
        await tick()
      }
      watch.check()
    } finally {
      watch.close()
    }
    const rounds = Math.ceil((Date.now() - started) / MIN_INTERVAL_MS) + 1
    for (const [hook, list] of Object.entries(calls)) assert.ok(list.length >= 1 && list.length <= rounds, `${hook}: ${list.length} calls, at most ${rounds}`)
    // Every refusal is told exactly once.
    assert.equal(calls.onAuthFailure.reduce((n, e) => n + e.failures.missing_authorization, 0), total / 2)
    assert.equal(calls.onRateLimited.reduce((n, e) => n + e.limited, 0), total / 2 - 1)
    assert.ok(calls.onAuthFailure.every((e) => e.authenticator === 'api' && Object.keys(e.failures).join() === 'missing_authorization'))
  })
}

test('a hook that throws, rejects or never settles is fenced; its counts are told again later', async () => {
  const auth = new native.Authenticator({ accessSecret: SECRET })
  const errors = []
  const seen = []
  let mode = 'throw'
  const watch = watchMetrics(
    { authenticators: { api: auth } },
    {
      onAuthFailure: (e) => {
        seen.push(e.failed)
        if (mode === 'throw') throw undefined // a falsy throw becomes a real Error
        if (mode === 'reject') return Promise.reject(null)
        if (mode === 'hang') return new Promise(() => {})
      },
      onError: (err) => errors.push(err),
    },
    { intervalMs: 3_600_000, callbackTimeoutMs: 50 },
  )
  try {
    auth.authenticate(undefined)
    watch.check()
    mode = 'reject'
    auth.authenticate(undefined)
    watch.check()
    await tick()
    await tick()
    mode = 'hang'
    auth.authenticate(undefined)
    watch.check()
    // While the hung call is pending the hook is not called again; the counts wait for it.
    auth.authenticate(undefined)
    watch.check()
    assert.deepEqual(seen, [1, 1, 1])
    for (let i = 0; i < 200 && errors.length < 3; i++) await new Promise((r) => setTimeout(r, 10))
    mode = 'ok'
    watch.check()
    assert.deepEqual(seen, [1, 1, 1, 1])
    assert.equal(errors.length, 3)
    assert.ok(errors.every((e) => e instanceof Error))
    assert.equal(errors[2].code, 'ERR_AUTH_SHIELD_CALLBACK_TIMEOUT')
  } finally {
    watch.close()
  }
})

test('onStaleKeys is called once when the key set ages past the bound, not on every round', async () => {
  const server = await startJwksServer()
  server.serve({ keys: [keyPair('ES256', 'k1').jwk] })
  const source = createRemoteJwks(server.url)
  try {
    await source.ready()
    // The key set must be at least a millisecond old for its age to pass the bound.
    const readAt = source.updatedAtMs
    while (Date.now() <= readAt + 1) await new Promise((r) => setTimeout(r, 2))
    const stale = []
    const watch = watchMetrics({ jwks: { idp: source } }, { onStaleKeys: (e) => stale.push(e) }, { intervalMs: 3_600_000, staleKeysAfterSeconds: 1e-9 })
    for (let i = 0; i < 5; i++) watch.check()
    watch.close()
    assert.equal(stale.length, 1)
    assert.equal(stale[0].jwks, 'idp')
    assert.equal(stale[0].keysAvailable, true)
    assert.ok(stale[0].keyAgeSeconds >= 0)
  } finally {
    source.close()
    await server.close()
  }
})

test('bad hooks and options are refused when watching starts', () => {
  const auth = new js.Authenticator({ accessSecret: SECRET })
  assert.throws(() => watchMetrics({ authenticators: { api: auth } }, { onFlood: () => {} }), TypeError)
  assert.throws(() => watchMetrics({ authenticators: { api: auth } }, { onAuthFailure: 1 }), TypeError)
  assert.throws(() => watchMetrics({ authenticators: { api: auth } }, {}, { intervalMs: 10 }), RangeError)
  assert.throws(() => watchMetrics({ authenticators: { api: {} } }, {}), TypeError)
})
