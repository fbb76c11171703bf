'use strict'

// Per-route DPoP modes (dpopMode) on real loopback servers, every adapter, both engines: one app
// mounts a route that requires DPoP, one that allows it and one that refuses it, over one
// Authenticator. A DPoP-bound token sent as Bearer is refused on all three (no downgrade). And
// DPoP-Nonce on successes only when the nonce rotated (RFC 9449 §8.2), across a real rotation.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { setTimeout: sleep } = require('node:timers/promises')
const express = require('express')
const Koa = require('koa')
const Fastify = require('fastify')
const dpop = require('dpop')
const expressShield = require('../../adapters/express')
const fastifyShield = require('../../adapters/fastify')
const koaShield = require('../../adapters/koa')
const { createVerifier } = require('../../adapters/fetch')
const { request, listen } = require('../support/http')
const { fetchServer } = require('../support/adapter-servers')
const { issuer, clientKey, proof } = require('../support/dpop')

const ORIGIN = 'https://api.example.com'
const MODES = ['required', 'allowed', 'disabled']
const ENGINES = { native: () => require('../..').Authenticator, js: () => require('../../js').Authenticator }

// dpopOrigin is given to every route, as an app sharing one options object would: 'disabled'
// ignores it.
const routeOptions = (mode) => ({ dpopOrigin: ORIGIN, dpopMode: mode })

const APPS = {
  express(auth) {
    const app = express()
    for (const mode of MODES) app.get(`/${mode}`, expressShield(auth, routeOptions(mode)), (req, res) => res.json({ user: req.user }))
    return listen(http.createServer(app))
  },
  async fastify(auth) {
    const app = Fastify()
    for (const mode of MODES) {
      app.register(async (child) => {
        await child.register(fastifyShield, { authenticator: auth, ...routeOptions(mode) })
        child.get(`/${mode}`, async (req) => ({ user: req.user }))
      })
    }
    await app.listen({ port: 0, host: '127.0.0.1' })
    return { base: `http://127.0.0.1:${app.server.address().port}`, close: () => app.close() }
  },
  koa(auth) {
    const app = new Koa()
    app.silent = true
    const routes = new Map(MODES.map((mode) => [`/${mode}`, koaShield(auth, routeOptions(mode))]))
    app.use(async (ctx, next) => {
      const route = routes.get(ctx.path)
      if (route === undefined) return
      await route(ctx, next)
    })
    app.use((ctx) => {
      ctx.body = { user: ctx.state.user }
    })
    return listen(http.createServer(app.callback()))
  },
  fetch(auth) {
    const routes = new Map(MODES.map((mode) => [`/${mode}`, createVerifier(auth, routeOptions(mode))]))
    return fetchServer(async (req) => {
      const verify = routes.get(new URL(req.url).pathname)
      const result = await verify(req)
      if (!result.ok) return result.response
      return Response.json({ user: result.user }, { headers: result.headers })
    })
  },
}

for (const [engine, Authenticator] of Object.entries(ENGINES)) {
  for (const [name, start] of Object.entries(APPS)) {
    describe(`${name} (${engine}): dpopMode per route`, () => {
      let server
      let key
      let bound
      let unbound
      before(async () => {
        const iss = await issuer()
        key = await clientKey('ES256')
        bound = await iss.sign({ cnf: { jkt: key.jkt } })
        unbound = await iss.sign({})
        const Auth = Authenticator()
        server = await start(new Auth({ keys: iss.keys, dpop: true, rateLimitMax: 0 }))
      })
      after(() => server.close())

      const send = (mode, headers) => request(`${server.base}/${mode}`, { headers })
      const withProof = async (mode, token) => ({ authorization: `DPoP ${token}`, dpop: await proof(key, { token, url: `${ORIGIN}/${mode}` }) })

      it("'required': a Bearer success is dpop_required with a bare DPoP challenge; DPoP passes", async () => {
        const bearer = await send('required', { authorization: `Bearer ${unbound}` })
        assert.equal(bearer.status, 401)
        assert.equal(bearer.json.code, 'dpop_required')
        assert.match(bearer.headers['www-authenticate'], /^DPoP algs="ES256 [^"]+"$/)
        const ok = await send('required', await withProof('required', bound))
        assert.equal(ok.status, 200, ok.body)
      })

      it("'allowed': Bearer and DPoP both pass", async () => {
        assert.equal((await send('allowed', { authorization: `Bearer ${unbound}` })).status, 200)
        const ok = await send('allowed', await withProof('allowed', bound))
        assert.equal(ok.status, 200, ok.body)
      })

      it("'disabled': Bearer passes; the DPoP scheme is dpop_not_allowed with a Bearer invalid_request challenge", async () => {
        assert.equal((await send('disabled', { authorization: `Bearer ${unbound}` })).status, 200)
        for (const headers of [await withProof('disabled', bound), { authorization: `DPoP ${unbound}` }, { authorization: `DPoP ${bound}` }, { authorization: 'dpop x.y.z' }]) {
          const refused = await send('disabled', headers)
          assert.equal(refused.status, 401, headers.authorization)
          assert.deepEqual(refused.json, { error: 'This resource does not accept DPoP; send the access token as Bearer', code: 'dpop_not_allowed' })
          assert.equal(
            refused.headers['www-authenticate'],
            'Bearer error="invalid_request", error_description="This resource does not accept DPoP; send the access token as Bearer"',
          )
        }
      })

      it('a DPoP-bound token sent as Bearer is refused on every route, a proof beside it or not', async () => {
        for (const mode of MODES) {
          for (const headers of [{ authorization: `Bearer ${bound}` }, { authorization: `Bearer ${bound}`, dpop: (await withProof(mode, bound)).dpop }]) {
            const refused = await send(mode, headers)
            assert.equal(refused.status, 401, mode)
            assert.equal(refused.json.code, 'dpop_bound_token_as_bearer', mode)
          }
        }
      })

      it("a proof sent to the 'disabled' route is not spent there: the same proof still passes once where it was made for", async () => {
        // Made for /allowed, sent to /disabled first: refused there without reaching the replay cache.
        const headers = await withProof('allowed', bound)
        assert.equal((await send('disabled', headers)).json.code, 'dpop_not_allowed')
        assert.equal((await send('allowed', headers)).status, 200)
        assert.equal((await send('allowed', headers)).json.code, 'dpop_proof_replayed')
      })
    })
  }
}

describe('dpopMode options', () => {
  const config = { accessSecret: 'x'.repeat(32), dpop: true }
  it('takes disabled, allowed or required; the last two need dpopOrigin or dpopUrl', () => {
    for (const bad of ['off', true, 1, null, 'Required', '', false, 0, NaN]) assert.throws(() => expressShield(config, { dpopOrigin: ORIGIN, dpopMode: bad }), { name: 'TypeError' }, String(bad))
    for (const mode of ['allowed', 'required']) {
      assert.throws(() => expressShield(config, { dpopMode: mode }), { name: 'TypeError', message: `options.dpopMode '${mode}' needs options.dpopOrigin or options.dpopUrl` })
    }
    expressShield(config, { dpopMode: 'disabled' })
  })

  it('dpopRequired: true still means required, with one AUTH_SHIELD_DEP_DPOP_REQUIRED warning; both names are a TypeError', async () => {
    const warnings = []
    const onWarning = (w) => warnings.push(w)
    process.on('warning', onWarning)
    try {
      const route = expressShield(config, { dpopOrigin: ORIGIN, dpopRequired: true })
      assert.equal(typeof route, 'function')
      expressShield(config, { dpopOrigin: ORIGIN, dpopRequired: false })
      assert.throws(() => expressShield(config, { dpopOrigin: ORIGIN, dpopRequired: true, dpopMode: 'required' }), { name: 'TypeError' })
      assert.throws(() => expressShield(config, { dpopRequired: true }), { name: 'TypeError' })
      await new Promise((resolve) => setImmediate(resolve))
    } finally {
      process.off('warning', onWarning)
    }
    // Once per process: another test file may have warned already (node --test runs files in
    // their own processes, so here it is this file's first).
    assert.equal(warnings.filter((w) => w.code === 'AUTH_SHIELD_DEP_DPOP_REQUIRED').length, 1)
    assert.equal(warnings.find((w) => w.code === 'AUTH_SHIELD_DEP_DPOP_REQUIRED').name, 'DeprecationWarning')
  })
})

// DPoP-Nonce on a success only when the proof's nonce is the previous slot's (RFC 9449 §8.2):
// the client should switch, in every adapter. Nonces last 2 s here; the loop polls every 50 ms,
// bounded.
const NONCE_SECRET = 'nonce-secret-0123456789abcdef0123'

// The eight servers share nothing but the clock (each its own Authenticator and replay cache), so
// they wait out their rotations at once: 4 s in all, not 4 s each.
describe('DPoP-Nonce across a rotation, every adapter and engine at once', { concurrency: true }, () => {
  for (const [engine, Authenticator] of Object.entries(ENGINES)) {
    for (const [name, start] of Object.entries(APPS)) {
      describe(`${name} (${engine}): DPoP-Nonce across a rotation`, () => {
        it('no header while the proof carries the current nonce; the new one once it rotated; the old one refused two slots on', async () => {
          const iss = await issuer()
          const key = await clientKey('Ed25519')
          const bound = await iss.sign({ cnf: { jkt: key.jkt } })
          const Auth = Authenticator()
          const server = await start(new Auth({ keys: iss.keys, dpop: true, rateLimitMax: 0, dpopNonceSecret: NONCE_SECRET, dpopNonceLifetimeSec: 2 }))
          try {
            const url = `${ORIGIN}/allowed`
            const send = async (nonce) =>
              request(`${server.base}/allowed`, { headers: { authorization: `DPoP ${bound}`, dpop: await dpop.generateProof(key.keyPair, url, 'GET', nonce, bound) } })
            const first = await send(undefined)
            assert.equal(first.json.code, 'use_dpop_nonce')
            const old = first.headers['dpop-nonce']
            assert.match(old, /^[A-Za-z0-9_-]{43}$/)
            let quiet = 0
            let rotated
            let refused
            // At most 10 s: the nonce lives 2 s and is accepted 2 s more.
            const deadline = Date.now() + 10000
            while (refused === undefined && Date.now() < deadline) {
              const r = await send(old)
              if (r.status === 401) {
                refused = r
                break
              }
              assert.equal(r.status, 200, r.body)
              const header = r.headers['dpop-nonce']
              if (header === undefined) {
                // Silence is only right before the rotation.
                assert.equal(rotated, undefined)
                quiet++
              } else {
                assert.notEqual(header, old)
                assert.match(header, /^[A-Za-z0-9_-]{43}$/)
                if (rotated === undefined) rotated = header
                // The new nonce is current: a proof with it gets no header (unless it rotated again meanwhile).
                const switched = await send(rotated)
                assert.equal(switched.status, 200, switched.body)
                assert.ok(switched.headers['dpop-nonce'] === undefined || switched.headers['dpop-nonce'] !== rotated)
              }
              await sleep(50)
            }
            assert.ok(quiet > 0, 'a proof with the current nonce got a DPoP-Nonce header')
            assert.notEqual(rotated, undefined, 'the rotation never sent the new nonce')
            assert.notEqual(refused, undefined, 'the old nonce was never refused')
            // Two slots on, the old nonce is a replay of an expired one: use_dpop_nonce with the current.
            assert.equal(refused.json.code, 'use_dpop_nonce')
            assert.match(refused.headers['dpop-nonce'], /^[A-Za-z0-9_-]{43}$/)
            assert.notEqual(refused.headers['dpop-nonce'], old)
          } finally {
            await server.close()
          }
        })
      })
    }
  }
})
