'use strict'

// The recovery seam of lib/http/decision.js behind both adapters, on real servers over loopback: a
// failure whose code has a registered recovery waits for it and authenticates once more; a
// recovery that declines, rejects or fails again leaves the first failure; other codes never
// wait. Key-set refreshes (unknown `kid`) and shared-store leases build on this.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const Fastify = require('fastify')
const authShield = require('../../adapters/express')
const authShieldPlugin = require('../../adapters/fastify')
const { token } = require('../support/tokens')
const { listen, get } = require('../support/http')

const NOW = Math.floor(Date.now() / 1000)
const SECRET = 'recovery-test-secret-0123456789abcdef'
const valid = `Bearer ${token({ sub: 'u1', exp: NOW + 600 }, SECRET)}`
const expired = `Bearer ${token({ sub: 'u1', exp: NOW - 600 }, SECRET)}`

// Each recovery counts its calls; 'missing_authorization' is repaired by supplying a header,
// the way a refreshed key set repairs an unknown kid.
function register(decision, calls) {
  decision.recover('missing_authorization', async (result, req) => {
    calls.push(result.errorCode)
    if (req.headers['x-repair'] === 'yes') req.headers.authorization = valid
    if (req.headers['x-repair'] === 'throw') throw new Error('store unreachable')
    if (req.headers['x-repair'] === 'twice') return true
    return req.headers['x-repair'] === 'yes'
  })
}

for (const framework of ['express', 'fastify']) {
  describe(`recovery seam (${framework})`, () => {
    let server
    const calls = []
    before(async () => {
      if (framework === 'express') {
        const app = express()
        const mw = authShield({ accessSecret: SECRET })
        // The middleware's decision object is internal; reach it the way the adapters'
        // own options (jwks, store) do, through the AuthDecision it was built with.
        register(mw.decision, calls)
        app.get('/api', mw, (req, res) => res.json({ userId: req.user.userId }))
        server = await listen(http.createServer(app))
      } else {
        const app = Fastify()
        await app.register(authShieldPlugin, { config: { accessSecret: SECRET } })
        register(app.authShield.decision, calls)
        app.get('/api', async (request) => ({ userId: request.user.userId }))
        await app.ready()
        server = await listen(app.server)
      }
    })
    after(() => server.close())

    it('waits for the recovery and authenticates again when it repairs the request', async () => {
      calls.length = 0
      const res = await get(`${server.base}/api`, { 'x-repair': 'yes' })
      assert.equal(res.status, 200)
      assert.deepEqual(res.json, { userId: 'u1' })
      assert.deepEqual(calls, ['missing_authorization'])
    })

    for (const how of ['no', 'throw']) {
      it(`keeps the first failure when the recovery ${how === 'no' ? 'declines' : 'rejects'}`, async () => {
        calls.length = 0
        const res = await get(`${server.base}/api`, { 'x-repair': how })
        assert.equal(res.status, 401)
        assert.equal(res.json.code, 'missing_authorization')
        assert.deepEqual(calls, ['missing_authorization'])
      })
    }

    it('authenticates at most twice: a second failure is final', async () => {
      calls.length = 0
      const res = await get(`${server.base}/api`, { 'x-repair': 'twice' })
      assert.equal(res.status, 401)
      assert.equal(res.json.code, 'missing_authorization')
      assert.deepEqual(calls, ['missing_authorization'])
    })

    it('does not wait on codes without a recovery, nor on success', async () => {
      calls.length = 0
      assert.equal((await get(`${server.base}/api`, { authorization: expired })).json.code, 'token_expired')
      assert.equal((await get(`${server.base}/api`, { authorization: valid })).status, 200)
      assert.deepEqual(calls, [])
    })
  })
}
