'use strict'

// auth-shield/hono in a real Hono app served on loopback, with both engines: every answer the
// same as auth-shield/fetch's (status, code, WWW-Authenticate, Retry-After, RateLimit-*), the
// pass's values on the context and its headers on whatever Response the route returns (c.json,
// a Response of its own, one with immutable headers), the route never run on a refusal, route
// requirements as Hono middleware, and a requirement without authShield in front never passing.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { Hono } = require('hono')
const honoShield = require('../../adapters/hono')
const { requireScopes, requireAuthentication } = honoShield
const { createVerifier } = require('../../adapters/fetch')
const { get } = require('../support/http')
const { fetchServer, fetchRoute, honoServer, adapterFixtures } = require('../support/adapter-servers')

const { NOW, CONFIG, jwt, bearer } = adapterFixtures('hono-test-secret-0123456789abcdef')
const COMPARED = ['www-authenticate', 'retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit', 'ratelimit-policy', 'content-type']

/** What two adapters must agree on: status, JSON code, and the compared headers. */
function answer(r) {
  const headers = {}
  for (const name of COMPARED) if (r.headers[name] !== undefined) headers[name] = r.headers[name]
  return { status: r.status, code: r.json && r.json.code, headers, requestId: typeof r.headers['x-request-id'] }
}

for (const engine of ['native', 'js']) {
  describe(`auth-shield/hono (${engine} engine)`, () => {
    const ran = []
    let hono
    let fetchApp
    let routes

    before(async () => {
      hono = await honoServer(honoShield(CONFIG, { engine, skip: ['/health'] }))
      fetchApp = await fetchServer(fetchRoute(createVerifier(CONFIG, { engine, skip: ['/health'] })))
      const app = new Hono()
      app.use('/api/*', honoShield({ ...CONFIG, rateLimitMax: 0 }, { engine }))
      app.get('/api/orders', requireScopes('read:orders'), (c) => {
        ran.push('orders')
        return c.json({ user: c.get('user'), scope: c.get('claims').scope })
      })
      app.get('/api/own', (c) => {
        ran.push('own')
        return new Response('own', { headers: { 'x-own': '1' } })
      })
      // Response.redirect's headers are immutable: the pass headers still arrive.
      app.get('/api/moved', (c) => {
        ran.push('moved')
        return Response.redirect('http://127.0.0.1/elsewhere', 302)
      })
      app.get('/api/pay', requireAuthentication({ acrValues: 'mfa' }), (c) => {
        ran.push('pay')
        return c.text('paid')
      })
      // A requirement with no authShield in front: never a pass.
      app.get('/open/orders', requireScopes('read:orders'), (c) => {
        ran.push('open')
        return c.text('open')
      })
      routes = await fetchServer((request) => app.fetch(request))
    })
    after(async () => {
      await hono.close()
      await fetchApp.close()
      await routes.close()
    })

    it('answers every case exactly as auth-shield/fetch does', async () => {
      const cases = [
        ['valid', '/x', bearer({ sub: 'h1', email: 'h1@example.com' })],
        ['missing', '/x', {}],
        ['other scheme', '/x', { authorization: 'Basic dXNlcjpwYXNz' }],
        ['malformed', '/x', { authorization: 'Bearer not.a.jwt' }],
        ['tampered', '/x', { authorization: `Bearer ${jwt({ sub: 'h2' }).slice(0, -2)}xx` }],
        ['wrong key', '/x', bearer({ sub: 'h3' }, 'another-secret-0123456789abcdef-xyz')],
        ['expired', '/x', { authorization: `Bearer ${jwt({ sub: 'h4', exp: NOW - 10 })}` }],
        ['skipped', '/health', {}],
      ]
      for (const [label, path, headers] of cases) {
        const a = await get(`${hono.base}${path}`, headers)
        const b = await get(`${fetchApp.base}${path}`, headers)
        assert.deepEqual(answer(a), answer(b), label)
        if (a.status === 200) assert.deepEqual({ ...a.json, requestId: null }, { ...b.json, requestId: null }, label)
      }
      // The rate limit: the 4th request of one identity, in each app.
      for (const server of [hono, fetchApp]) {
        for (let i = 0; i < 3; i++) assert.equal((await get(`${server.base}/x`, bearer({ sub: 'busy' }))).status, 200)
      }
      const limitedA = await get(`${hono.base}/x`, bearer({ sub: 'busy' }))
      const limitedB = await get(`${fetchApp.base}/x`, bearer({ sub: 'busy' }))
      assert.equal(limitedA.status, 429)
      assert.deepEqual(answer(limitedA), answer(limitedB))
    })

    it('puts the pass on the context and its headers on the response, whatever Response the route returns', async () => {
      const ok = await get(`${hono.base}/x`, bearer({ sub: 'ctx', role: 'admin' }))
      assert.equal(ok.status, 200)
      assert.deepEqual(ok.json.user, { userId: 'ctx', role: 'admin' })
      assert.equal(ok.json.requestId, ok.headers['x-request-id'])
      assert.equal(ok.headers['ratelimit-limit'], '3')
      ran.length = 0
      const own = await get(`${routes.base}/api/own`, bearer({ sub: 'own' }))
      assert.equal(own.status, 200)
      assert.equal(own.headers['x-own'], '1')
      assert.match(own.headers['x-request-id'], /^[0-9a-f-]{36}$/)
      // With a Host header the helper uses node:http, which does not follow the redirect.
      const moved = await get(`${routes.base}/api/moved`, { ...bearer({ sub: 'moved' }), host: '127.0.0.1' })
      assert.equal(moved.status, 302)
      assert.match(moved.headers['x-request-id'], /^[0-9a-f-]{36}$/)
      assert.deepEqual(ran, ['own', 'moved'])
    })

    it('never runs the route on a refusal, and route requirements answer with their challenge', async () => {
      ran.length = 0
      for (const headers of [{}, { authorization: 'Bearer x.y.z' }, { authorization: `Bearer ${jwt({ sub: 'e', exp: NOW - 1 })}` }]) {
        assert.equal((await get(`${routes.base}/api/orders`, headers)).status, 401)
      }
      const unmet = await get(`${routes.base}/api/orders`, bearer({ sub: 's1', scope: 'write:orders' }))
      assert.equal(unmet.status, 403)
      assert.equal(unmet.json.code, 'insufficient_scope')
      assert.match(unmet.headers['www-authenticate'], /error="insufficient_scope".*scope="read:orders"/)
      const stepUp = await get(`${routes.base}/api/pay`, bearer({ sub: 's2', acr: 'pwd', auth_time: NOW - 5 }))
      assert.equal(stepUp.status, 401)
      assert.equal(stepUp.json.code, 'insufficient_user_authentication')
      assert.deepEqual(ran, [])
      const met = await get(`${routes.base}/api/orders`, bearer({ sub: 's3', scope: 'read:orders other' }))
      assert.equal(met.status, 200)
      assert.deepEqual(met.json, { user: { userId: 's3' }, scope: 'read:orders other' })
      assert.deepEqual(ran, ['orders'])
    })

    it('a requirement without authShield in front never passes (500, ERR_AUTH_SHIELD_NOT_AUTHENTICATED)', async () => {
      ran.length = 0
      const r = await get(`${routes.base}/open/orders`, bearer({ sub: 'o', scope: 'read:orders' }))
      assert.equal(r.status, 500)
      assert.deepEqual(ran, [])
    })
  })
}
