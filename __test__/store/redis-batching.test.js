'use strict'

// The store's background loop against a real redis-server (node-redis and ioredis, both
// engines): renewals of many identities share one round trip (at most 100 keys each), a burst
// of 5,000 new identities at once is answered by Redis without tripping the outage fallback
// (no outage, no fallback grant) and without loosening the limit, and the renewal cadence backs
// off only while renewals find plenty of slack (lib/store/renewal-cadence.js); a flood past
// maxKeys stays within it; and a round trip's time-out counts Redis, not our busy event loop.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const authShield = require('../../adapters/express')
const native = require('../..')
const js = require('../../js')
const { createRedisStore } = require('../../lib/store/index')
const { RenewalCadence, BACK_OFF } = require('../../lib/store/renewal-cadence')
const { BATCH_KEYS } = require('../../lib/store/lease-script')
const { answerWithin } = require('../../lib/store/answer-within')
const { redisSkip, startRedis } = require('../support/redis-server')
const { CLIENT_KINDS, connectClient } = require('../support/redis-clients')
const { token } = require('../support/tokens')
const { listen } = require('../support/http')
const { plumbing } = require('../support/store-seam')

const SECRET = 'redis-batching-test-secret-0123456789abc'
const NOW = Math.floor(Date.now() / 1000)
const bearer = (sub) => `Bearer ${token({ sub, exp: NOW + 600 }, SECRET)}`
const ENGINES = [
  ['native', native.Authenticator],
  ['js', js.Authenticator],
]
const BURST = 5000

const unhandled = []
process.on('unhandledRejection', (err) => unhandled.push(err))

/** Counts the store's 'outage' events. */
function watchOutages(store) {
  const seen = { outages: 0 }
  store.on('outage', () => seen.outages++)
  return seen
}

/** GETs `path` for each of `headers`, `concurrency` at a time over keep-alive sockets. */
async function getAll(base, headers, concurrency) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency })
  const statuses = new Array(headers.length)
  try {
    await Promise.all(
      headers.map(
        (authorization, i) =>
          new Promise((resolve, reject) => {
            const req = http.get(`${base}/api`, { agent, headers: { authorization } }, (res) => {
              statuses[i] = res.statusCode
              res.resume()
              res.on('end', resolve)
            })
            req.on('error', reject)
          }),
      ),
    )
  } finally {
    agent.destroy()
  }
  return statuses
}

describe('the renewal cadence', () => {
  it('backs off by doubling, up to its limit, while renewals find most of their slack left', () => {
    const c = new RenewalCadence(10)
    assert.equal(c.delayMs, 10)
    const delays = Array.from({ length: 6 }, () => c.next(0.1))
    assert.deepEqual(delays, [20, 40, 80, 80, 80, 80])
    assert.equal(c.longestMs, 10 * BACK_OFF)
  })

  it('comes back to the shortest sleep as soon as an identity spent more than half its slack', () => {
    const c = new RenewalCadence(10)
    c.next(0)
    c.next(0)
    assert.equal(c.next(0.6), 10)
    c.next(0)
    assert.equal(c.next(1), 10)
  })

  it('keeps its sleep on a turn that found a middling spend', () => {
    const c = new RenewalCadence(10)
    c.next(0)
    assert.equal(c.next(0.4), 20)
    assert.equal(c.next(0.5), 20)
  })

  it('backs off on idle turns (nothing taken), and still comes back at once when one is short', () => {
    const c = new RenewalCadence(10)
    assert.deepEqual(Array.from({ length: 4 }, () => c.next(-1)), [20, 40, 80, 80])
    assert.equal(c.next(0.9), 10)
  })
})

describe('lease renewals in batches, with a real redis-server', { skip: redisSkip() }, () => {
  let redis
  before(async () => (redis = await startRedis()))
  after(async () => {
    await redis.stop()
    assert.deepEqual(unhandled, [], 'no unhandled rejection')
  })

  for (const kind of CLIENT_KINDS) {
    it(`a round trip's time-out counts Redis, not an event loop kept busy by us (${kind})`, async () => {
      const conn = await connectClient(kind, redis.url)
      const busy = (ms) => {
        const end = Date.now() + ms
        while (Date.now() < end);
      }
      const timedOut = () => Object.assign(new Error('timed out'), { code: 'ERR_AUTH_SHIELD_STORE_TIMEOUT' })
      try {
        // Busy before the command is even written (node-redis writes in a setImmediate).
        const early = answerWithin(() => conn.command(['PING']), 50, timedOut)
        busy(200)
        assert.equal(await early, 'PONG')
        // Busy after it was written: the reply waits in the socket past the time-out.
        const late = answerWithin(() => conn.command(['PING']), 50, timedOut)
        await new Promise(setImmediate)
        busy(200)
        assert.equal(await late, 'PONG')
        // And a server that does not answer still times out.
        await conn.command(['CLIENT', 'PAUSE', '300', 'ALL'])
        await assert.rejects(answerWithin(() => conn.command(['PING']), 50, timedOut), { code: 'ERR_AUTH_SHIELD_STORE_TIMEOUT' })
      } finally {
        await new Promise((r) => setTimeout(r, 350))
        await conn.close()
      }
    })

    for (const [engine, Authenticator] of ENGINES) {
      it(`answers the first requests of ${BURST} identities at once from Redis, ${BATCH_KEYS} per round trip, within the limit (${kind}, ${engine} engine)`, async () => {
        const conn = await connectClient(kind, redis.url)
        const store = createRedisStore(conn.client, { prefix: `burst:${kind}:${engine}:`, lease: 5 })
        const seen = watchOutages(store)
        const auth = new Authenticator({ accessSecret: SECRET, rateLimitMax: 10, rateLimitRefillPerSec: 0.001 })
        store.attach(auth)
        try {
          const headers = Array.from({ length: BURST }, (_, i) => bearer(`burst-${i}`))
          // Every first request at once, each then waiting in the store's recovery as the
          // middleware does, and authenticating again.
          const first = headers.map((h) => auth.authenticate(h))
          assert.ok(first.every((r) => r.errorCode === store.pendingCode))
          await Promise.all(headers.map(() => store.recover()))
          const again = headers.map((h) => auth.authenticate(h))
          assert.equal(again.filter((r) => r.authenticated).length, BURST)
          assert.equal(seen.outages, 0)
          assert.equal(store.stats.outages, 0)
          assert.equal(store.stats.fallbackGrants, 0)
          assert.equal(store.available, true)
          assert.equal(store.stats.leaseRequests, BURST)
          // One EVALSHA per BATCH_KEYS identities (plus, on a fresh server, an EVAL per batch in
          // flight when the script was not loaded yet).
          assert.ok(store.stats.roundTrips >= Math.ceil(BURST / BATCH_KEYS))
          assert.ok(store.stats.roundTrips <= Math.ceil(BURST / BATCH_KEYS) + 4, `${store.stats.roundTrips} round trips`)
          // Each identity's bucket gave exactly its capacity, however its leases were batched.
          for (let i = 0; i < 20; i++) {
            let admitted = 1
            for (let n = 0; n < 15; n++) {
              let r = auth.authenticate(headers[i])
              if (r.errorCode === store.pendingCode) {
                await store.flush()
                r = auth.authenticate(headers[i])
              }
              if (r.authenticated) admitted++
            }
            assert.equal(admitted, 10, `burst-${i} admitted ${admitted}`)
          }
          assert.equal(store.stats.outages, 0)
        } finally {
          await store.close()
          await conn.close()
        }
      })
    }

    it(`a flood past maxKeys queues at most maxKeys identities and answers every waiting request (${kind})`, async () => {
      const conn = await connectClient(kind, redis.url)
      const store = createRedisStore(conn.client, { prefix: `flood:${kind}:`, maxKeys: 100 })
      const seen = watchOutages(store)
      const auth = new native.Authenticator({ accessSecret: SECRET, rateLimitMax: 10, rateLimitRefillPerSec: 1 })
      store.attach(auth)
      try {
        const headers = Array.from({ length: 2000 }, (_, i) => bearer(`flood-${i}`))
        for (const h of headers) auth.authenticate(h)
        // Every waiting request's recovery resolves (none is left hanging by an identity that
        // did not fit), and no more than maxKeys identities were asked for.
        await Promise.all(headers.map(() => store.recover()))
        assert.ok(store.stats.leaseRequests <= 100, `${store.stats.leaseRequests} identities asked for`)
        assert.ok(plumbing(auth).sharedLimitKeys <= 100, `${plumbing(auth).sharedLimitKeys} identities held`)
        assert.equal(seen.outages, 0)
        // The ones left out are asked for on their next request.
        const late = headers[headers.length - 1]
        auth.authenticate(late)
        await store.flush()
        assert.equal(auth.authenticate(late).authenticated, true)
      } finally {
        await store.close()
        await conn.close()
      }
    })

    it(`serves ${BURST} new identities arriving together through the Express middleware without an outage (${kind})`, async () => {
      const conn = await connectClient(kind, redis.url)
      const store = createRedisStore(conn.client, { prefix: `burst-http:${kind}:` })
      const seen = watchOutages(store)
      const app = express()
      app.get('/api', authShield({ accessSecret: SECRET, rateLimitMax: 100, rateLimitRefillPerSec: 0.01 }, { store }), (req, res) => res.json({ ok: true }))
      const server = await listen(http.createServer(app))
      try {
        const headers = Array.from({ length: BURST }, (_, i) => bearer(`http-${i}`))
        const statuses = await getAll(server.base, headers, 500)
        assert.deepEqual(statuses.filter((s) => s !== 200), [])
        assert.equal(seen.outages, 0)
        assert.equal(store.stats.outages, 0)
        assert.equal(store.stats.fallbackGrants, 0)
        assert.ok(store.stats.recoveries >= 1, 'new identities waited for Redis')
        // Requests trickle in over 500 sockets: each recovery sends what is queued, so batches are
        // small but still shared.
        assert.ok(store.stats.roundTrips < BURST / 2, `${store.stats.roundTrips} round trips for ${BURST} identities`)
      } finally {
        await server.close()
        await store.close()
        await conn.close()
      }
    })
  }
})
