'use strict'

// A flood of 10,000 distinct random opaque tokens (issue 36 §3): the introspection cache stays
// within its bound (introspectionCacheMaxEntries), the endpoint never sees more than
// maxConcurrent exchanges at once (the documented rate: maxConcurrent per round trip), a queue
// past maxQueued is refused at once with 503, and the tokens of real clients admitted before the
// flood keep working without a new introspection.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { randomBytes } = require('node:crypto')
const express = require('express')
const authShield = require('../../adapters/express')
const { createTrustedIssuers } = require('../../lib/jwks/index')
const { listen, get } = require('../support/http')

const RESOURCE = 'https://orders.api.example/'
const LEGIT = ['legit-token-alice-0123456789', 'legit-token-bob-0123456789']
const FLOOD = 10_000
const MAX_CONCURRENT = 4
const CACHE = 500

/** An endpoint that knows the two legitimate tokens, answers in `delayMs` and records its peak load. */
async function startEndpoint(delayMs) {
  const server = http.createServer()
  const { base, close } = await listen(server)
  const state = { base, calls: 0, inFlight: 0, peak: 0, close }
  server.on('request', (req, res) => {
    if (req.url === '/.well-known/openid-configuration') return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: base, jwks_uri: `${base}/jwks`, introspection_endpoint: `${base}/introspect` }))
    if (req.url === '/jwks') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}')
    state.calls++
    state.inFlight++
    state.peak = Math.max(state.peak, state.inFlight)
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () =>
      setTimeout(() => {
        state.inFlight--
        const token = new URLSearchParams(body).get('token')
        const answer = LEGIT.includes(token) ? { active: true, sub: token.split('-')[2], aud: RESOURCE, exp: Math.floor(Date.now() / 1000) + 3600 } : { active: false }
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer))
      }, delayMs),
    )
  })
  return state
}

async function app(registry, engine) {
  const a = express()
  const shield = authShield({ introspectionCacheMaxEntries: CACHE }, { jwks: registry, engine })
  a.use('/api', shield, (req, res) => res.json({ sub: req.user.userId }))
  const server = await listen(http.createServer(a))
  return { ...server, shield }
}

/** Sends `n` requests, `parallel` at a time; returns the count of each status. */
async function flood(base, n, parallel, tokenOf) {
  const statuses = {}
  let next = 0
  const worker = async () => {
    while (next < n) {
      const i = next++
      const r = await get(`${base}/api`, { authorization: `Bearer ${tokenOf(i)}` })
      statuses[r.status] = (statuses[r.status] || 0) + 1
    }
  }
  await Promise.all(Array.from({ length: parallel }, worker))
  return statuses
}

describe('a flood of distinct random opaque tokens', () => {
  let endpoint
  before(async () => {
    endpoint = await startEndpoint(2)
  })
  after(() => endpoint.close())

  for (const engine of ['native', 'js']) {
    it(`${engine}: the cache stays bounded, the endpoint sees at most maxConcurrent at once, real clients keep working`, async () => {
      const registry = createTrustedIssuers([{ issuer: endpoint.base, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: 'rs-secret-0123456789', maxConcurrent: MAX_CONCURRENT, negativeCacheSec: 60 } }])
      const server = await app(registry, engine)
      try {
        for (const t of LEGIT) assert.equal((await get(`${server.base}/api`, { authorization: `Bearer ${t}` })).status, 200)
        const callsBefore = endpoint.calls
        endpoint.peak = 0
        const statuses = await flood(server.base, FLOOD, 32, (i) => (i % 1000 === 999 ? LEGIT[(i / 1000) & 1] : randomBytes(24).toString('base64url')))
        const legitRequests = Math.floor(FLOOD / 1000)
        assert.deepEqual(statuses, { 200: legitRequests, 401: FLOOD - legitRequests })
        // Each random token is asked once; the legitimate ones never again.
        assert.equal(endpoint.calls - callsBefore, FLOOD - legitRequests)
        assert.ok(endpoint.peak <= MAX_CONCURRENT, `peak ${endpoint.peak}`)
        const { authenticator } = server.shield
        assert.ok(authenticator.introspectionCacheEntries <= CACHE, `${authenticator.introspectionCacheEntries} entries`)
        const stage = server.shield.decision.pipeline.stages.find((s) => s.name === 'introspection')
        assert.equal(stage.pending.size, 0)
        assert.equal(stage.queue.length, 0)
        // After the flood the legitimate tokens still pass from the cache.
        const calls = endpoint.calls
        for (const t of LEGIT) assert.equal((await get(`${server.base}/api`, { authorization: `Bearer ${t}` })).status, 200)
        assert.equal(endpoint.calls, calls)
      } finally {
        await server.close()
        registry.close()
      }
    })
  }

  it('past maxQueued waiting exchanges, a new token is 503 at once, never let through', async () => {
    const slow = await startEndpoint(200)
    const registry = createTrustedIssuers([{ issuer: slow.base, audience: RESOURCE, introspection: { clientId: 'rs', clientSecret: 'rs-secret-0123456789', maxConcurrent: 2, maxQueued: 3 } }])
    const server = await app(registry)
    try {
      const statuses = await flood(server.base, 40, 40, () => randomBytes(24).toString('base64url'))
      assert.deepEqual(Object.keys(statuses).sort(), ['401', '503'])
      assert.equal(statuses[401], 5)
      assert.ok(slow.peak <= 2)
    } finally {
      await server.close()
      registry.close()
      await slow.close()
    }
  })
})
