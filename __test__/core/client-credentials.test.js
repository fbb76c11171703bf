'use strict'

// Machine-to-machine tokens and the per-identity rate limit (issue 35; docs/rate-limiting.md,
// "Machine-to-machine tokens"). A client-credentials token (RFC 9068 §2.2: a `client_id` claim,
// and a `sub` that is absent, empty or that client id) has no user behind it: by default it
// takes no bucket, so a calling service making 150 calls is not throttled as one user (it was:
// 31 × 429 at the default burst 100, 10/s). `rateLimitClientCredentials: true` limits it as a
// user, one bucket per client (its tenant claim and client id). User tokens are limited as
// before, whatever their `client_id`. Both engines give identical results.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { token, withoutRequestId } = require('../support/tokens')

const NOW = 1_700_000_000
const SECRET = 'client-credentials-secret-0123456789abcdef'
const ENGINES = [
  ['native', native],
  ['js', js],
]

const bearer = (claims) => `Bearer ${token({ exp: NOW + 3600, iss: 'https://as.example', ...claims }, SECRET)}`
const authFor = (lib, config = {}) => new lib.Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, ...config })

/** 150 calls of `authorization` on a fresh Authenticator of each engine: the results (without request ids) and the 429 count. */
function calls(config, authorization, n = 150) {
  const runs = ENGINES.map(([, lib]) => {
    const auth = authFor(lib, config)
    const results = Array.from({ length: n }, () => withoutRequestId(auth.authenticate(authorization)))
    return { results, limited: results.filter((r) => r.errorCode === 'rate_limited').length }
  })
  return runs
}

const SERVICE = { sub: 'billing-service', client_id: 'billing-service', scope: 'invoices:read' }

test('a client-credentials token (sub = client_id) making 150 calls is not throttled by default, in both engines alike', () => {
  const [n, j] = calls({}, bearer(SERVICE))
  assert.equal(n.limited, 0, 'native: a calling service is not limited as one user')
  assert.equal(j.limited, 0, 'js')
  assert.deepEqual(n.results, j.results)
  const r = n.results[149]
  assert.deepEqual([r.authenticated, r.userId, r.rateLimitLimit, r.rateLimitRemaining], [true, 'billing-service', undefined, undefined])
})

test('a client-credentials token without sub (requireSubject off) is not throttled by default either', () => {
  const [n, j] = calls({ requireSubject: false }, bearer({ client_id: 'reporting' }))
  assert.deepEqual([n.limited, j.limited], [0, 0])
  assert.deepEqual(n.results, j.results)
})

test('user tokens stay limited per user, whatever their client_id (the default limit: burst 100)', () => {
  for (const claims of [{ sub: 'alice', client_id: 'web-app' }, { sub: 'alice' }, { sub: 'svc', client_id: 7 }, { sub: 'svc', client_id: '' }]) {
    const [n, j] = calls({}, bearer(claims))
    assert.ok(n.limited >= 49 && n.limited <= 50, `native ${JSON.stringify(claims)}: ${n.limited} × 429`)
    assert.equal(j.limited, n.limited, `js ${JSON.stringify(claims)}`)
    assert.equal(n.results[0].rateLimitLimit, 100)
  }
})

test('rateLimitClientCredentials: true limits a client as a user, one bucket per client (and per tenant claim)', () => {
  const config = { rateLimitClientCredentials: true, requireSubject: false }
  const [n, j] = calls(config, bearer(SERVICE))
  assert.ok(n.limited >= 49 && n.limited <= 50, `native: ${n.limited} × 429`)
  assert.equal(j.limited, n.limited)
  for (const [name, lib] of ENGINES) {
    const auth = authFor(lib, { ...config, rateLimitMax: 3, rateLimitRefillPerSec: 0.001 })
    // Without sub, keyed by client_id: two clients do not share one bucket.
    for (const client of ['a', 'b']) {
      for (let i = 0; i < 3; i++) assert.equal(auth.authenticate(bearer({ client_id: client })).authenticated, true, `${name} ${client}`)
      assert.equal(auth.authenticate(bearer({ client_id: client })).errorCode, 'rate_limited', `${name} ${client}`)
    }
    // sub = client_id: the same bucket as the client's sub-less tokens; another tenant claim: another.
    assert.equal(auth.authenticate(bearer({ sub: 'a', client_id: 'a' })).errorCode, 'rate_limited', name)
    assert.equal(auth.authenticate(bearer({ sub: 'a', client_id: 'a', tenant_id: 'acme' })).authenticated, true, name)
    // A user named like a client (no client_id claim) still has the user bucket of that sub: the
    // same key, as before this option (RFC 9068 §5: the server keeps client ids and user subs apart).
    assert.equal(auth.authenticate(bearer({ sub: 'a' })).errorCode, 'rate_limited', name)
  }
})

test('the option is a boolean in both engines', () => {
  for (const [name, lib] of ENGINES) {
    assert.throws(() => authFor(lib, { rateLimitClientCredentials: 'yes' }), { name: 'TypeError' }, name)
  }
})

test('a client-credentials token with no bucket is counted as a success without a rate-limit decision', () => {
  for (const [name, lib] of ENGINES) {
    const auth = authFor(lib)
    auth.authenticate(bearer(SERVICE))
    auth.authenticate(bearer({ sub: 'alice' }))
    const m = auth.metrics()
    assert.deepEqual(m.rateLimit, { allowed: 1, limited: 0, pending: 0 }, name)
    assert.equal(m.authentication.succeeded, 2, name)
  }
})

test('over HTTP (Express, both engines): a calling service gets 150 × 200 without RateLimit headers; a user 100 × 200 then 429', async () => {
  const express = require('express')
  const authShield = require('../../adapters/express')
  const { listen, get } = require('../support/http')
  const exp = Math.floor(Date.now() / 1000) + 600
  const service = `Bearer ${token({ ...SERVICE, exp }, SECRET)}`
  const user = `Bearer ${token({ sub: 'alice', client_id: 'web-app', exp }, SECRET)}`
  for (const engine of ['native', 'js']) {
    const app = express()
    app.get('/x', authShield({ accessSecret: SECRET, rateLimitRefillPerSec: 0.001 }, { engine, rateLimitHeaders: 'both' }), (req, res) => res.json({ ok: true }))
    const server = await listen(require('node:http').createServer(app))
    try {
      const statuses = (authorization) => Promise.all(Array.from({ length: 150 }, () => get(`${server.base}/x`, { authorization })))
      const byService = await statuses(service)
      assert.deepEqual([...new Set(byService.map((r) => r.status))], [200], engine)
      assert.ok(byService.every((r) => r.headers['ratelimit-limit'] === undefined && r.headers.ratelimit === undefined), engine)
      const byUser = await statuses(user)
      assert.deepEqual([byUser.filter((r) => r.status === 200).length, byUser.filter((r) => r.status === 429).length], [100, 50], engine)
      assert.ok(byUser.every((r) => r.headers['ratelimit-limit'] === '100'), engine)
    } finally {
      await server.close()
    }
  }
})
