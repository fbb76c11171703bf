'use strict'

// `expressjwt` with a secret getter decides with one engine per key the getter returns. The
// middleware's `authenticator` is what the app revokes through and what the exporters read
// (docs/revocation.md, docs/observability.md): a revocation made through it must refuse the
// token whichever key signed it, the key's engine made before or after the call, and its
// metrics() must count the requests of every key. Before, it was the engine of the requests
// answered before key selection only: a revoked token kept passing (fail open) and a getter's
// requests never reached rateLimit, cache or duration. Real Express 5 and 4 apps, both engines.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express5 = require('express')
const express4 = require('express4')
const jsonwebtoken = require('jsonwebtoken')
const { expressjwt } = require('../../adapters/express')
const { toPrometheus } = require('../../lib/metrics/prometheus')
const { listen, request } = require('../support/http')

const KEYS = { a: 'tenant-a-getter-secret-0123456789abcdef', b: 'tenant-b-getter-secret-0123456789abcdef', c: 'tenant-c-getter-secret-0123456789abcdef' }
const now = () => Math.floor(Date.now() / 1000)
const sign = (tenant, claims) => jsonwebtoken.sign({ sub: 'alice', iss: tenant, exp: now() + 600, ...claims }, KEYS[tenant])
const secret = (req, token) => KEYS[token.payload.iss]

async function start(express, options) {
  const mw = expressjwt({ secret, algorithms: ['HS256'], ...options })
  const app = express()
  app.get('/orders', mw, (req, res) => res.json({ sub: req.auth.sub }))
  app.use((err, req, res, next) => res.status(err.status || 500).json({ code: err.code, errorCode: err.errorCode }))
  const server = await listen(http.createServer(app))
  const get = (t) => request(`${server.base}/orders`, { headers: { authorization: `Bearer ${t}` } }).then((r) => [r.status, r.json.errorCode ?? r.json.sub])
  return { mw, get, close: server.close }
}

for (const engine of ['native', 'js']) {
  for (const [variant, express] of [
    ['Express 5', express5],
    ['Express 4', express4],
  ]) {
    describe(`expressjwt with a secret getter: the middleware's authenticator (${variant}, ${engine})`, () => {
      it('refuses a token revoked through mw.authenticator.revokeToken, whether its key was met before or after the call (was: 200)', async () => {
        const app = await start(express, { engine })
        try {
          const [ta, tb] = [sign('a', { jti: 'ja' }), sign('b', { jti: 'jb' })]
          assert.deepEqual(await app.get(ta), [200, 'alice'])
          // Key a's engine exists now; key b's does not yet.
          app.mw.authenticator.revokeToken('ja', now() + 600, { iss: 'a' })
          app.mw.authenticator.revokeToken('jb', now() + 600, { iss: 'b' })
          assert.deepEqual(await app.get(ta), [401, 'token_revoked'])
          assert.deepEqual(await app.get(tb), [401, 'token_revoked'])
          // Another token of the same keys still passes.
          assert.deepEqual(await app.get(sign('a', { jti: 'ja2' })), [200, 'alice'])
          assert.deepEqual(await app.get(sign('b', { jti: 'jb2' })), [200, 'alice'])
        } finally {
          await app.close()
        }
      })

      it("refuses every token of a subject revoked through mw.authenticator.revokeSubject, on every key's engine (was: 200)", async () => {
        const app = await start(express, { engine })
        try {
          const iat = now() - 5
          assert.deepEqual(await app.get(sign('a', { iat })), [200, 'alice'])
          for (const tenant of ['a', 'b', 'c']) app.mw.authenticator.revokeSubject('alice', { iss: tenant })
          // Key b's engine is made after the call: the call's cut-off, not its own moment's.
          await new Promise((resolve) => setTimeout(resolve, 20))
          for (const tenant of ['a', 'b']) assert.deepEqual(await app.get(sign(tenant, { iat })), [401, 'token_revoked'], tenant)
          assert.deepEqual(await app.get(sign('c', { iat, sub: 'bob' })), [200, 'bob'])
          assert.equal(app.mw.authenticator.revocationCount, 3)
        } finally {
          await app.close()
        }
      })

      it('refuses a revocation the engines refuse, on every engine and in none', async () => {
        const app = await start(express, { engine, maxRevocations: 1 })
        try {
          assert.deepEqual(await app.get(sign('a', { jti: 'j1' })), [200, 'alice'])
          assert.throws(() => app.mw.authenticator.revokeToken('', now() + 60), /jti must not be empty/)
          app.mw.authenticator.revokeToken('j1', now() + 600, { iss: 'a' })
          assert.throws(() => app.mw.authenticator.revokeToken('j2', now() + 600, { iss: 'b' }), { code: 'ERR_AUTH_SHIELD_REVOCATION_LIMIT' })
          assert.deepEqual(await app.get(sign('b', { jti: 'j2' })), [200, 'alice'])
          assert.deepEqual(await app.get(sign('a', { jti: 'j1' })), [401, 'token_revoked'])
        } finally {
          await app.close()
        }
      })

      it("keeps one rate limit per key: the same sub under another key (another tenant's user) is not throttled by it", async () => {
        // docs/migrating.md: the engines' identity is (tenant_id, sub, client_id), not the issuer,
        // so a getter's keys (one per tenant, as a rule) keep their buckets apart.
        const app = await start(express, { engine, rateLimitMax: 1, rateLimitRefillPerSec: 0.001 })
        try {
          assert.deepEqual(await app.get(sign('a')), [200, 'alice'])
          assert.deepEqual(await app.get(sign('a')), [429, 'rate_limited'])
          assert.deepEqual(await app.get(sign('b')), [200, 'alice'])
          assert.equal(app.mw.authenticator.metrics().rateLimit.limited, 1)
        } finally {
          await app.close()
        }
      })

      it("counts every key's requests in mw.authenticator.metrics() and the exporters (was: the rate limit, cache and duration of no key)", async () => {
        const app = await start(express, { engine })
        try {
          assert.deepEqual(await app.get(sign('a')), [200, 'alice'])
          // Turned on after key a's engine was made, before key b's.
          app.mw.authenticator.setDurationMetrics(true)
          assert.deepEqual(await app.get(sign('b')), [200, 'alice'])
          assert.deepEqual(await app.get(sign('b', { exp: now() - 60 })), [401, 'token_expired'])
          assert.deepEqual(await app.get(sign('a')), [200, 'alice'])
          const m = app.mw.authenticator.metrics()
          assert.equal(m.authentication.succeeded, 3)
          assert.equal(m.authentication.failures.token_expired, 1)
          assert.equal(m.rateLimit.allowed, 3)
          // The three requests after the call, on both keys' engines.
          assert.equal(m.duration.count, 3)
          // Alice's bucket in each key's engine.
          assert.equal(app.mw.authenticator.rateLimitBuckets, 2)
          const text = toPrometheus({ authenticators: { api: app.mw.authenticator } })
          assert.match(text, /auth_shield_rate_limiting_requests_total\{[^}]*acquired[^}]*\} 3/)
          assert.match(text, /auth_shield_authentication_requests_total\{[^}]*"success"[^}]*\} 3/)
        } finally {
          await app.close()
        }
      })
    })
  }
}
