'use strict'

// The shared bucket at the edges of its bounds (issue 22 §1, "a tiny refill switches the
// limiter off", for the Redis store): a refill so small that 1e6 / refill is 1e306 or Infinity
// never refills and must neither fail the lease script (which put the whole store into its
// outage state, so other keys were refused with ERR_AUTH_SHIELD_STORE_UNAVAILABLE) nor admit
// without limit; a refill near the 1e9/s bound must not over-admit (an absolute TAT near
// 1.7e15 µs, stored rounded to a whole µs, lost up to half a microsecond per grant). Against a
// real redis-server, node-redis and ioredis, both engines through the Express adapter.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const authShield = require('../../adapters/express')
const native = require('../..')
const js = require('../../js')
const { createRedisStore } = require('../../lib/store/index')
const { LEASE_SCRIPT, LEASE_SCRIPT_SHA, intervalArg } = require('../../lib/store/lease-script')
const { redisSkip, startRedis } = require('../support/redis-server')
const { CLIENT_KINDS, connectClient } = require('../support/redis-clients')
const { token } = require('../support/tokens')
const { listen, get } = require('../support/http')

const SECRET = 'redis-extremes-test-secret-0123456789abcdef'
const NOW = Math.floor(Date.now() / 1000)
const bearer = (sub) => `Bearer ${token({ sub, exp: NOW + 600 }, SECRET)}`
const ENGINES = [
  ['native', native.Authenticator],
  ['js', js.Authenticator],
]
// Refills that never refill: 1e6 / refill is 1e306 (finite), 2e308 (Infinity) or Infinity; and
// 1e-14, whose one token is 1e20 µs, a PX of 1e17 ms (sent as "1e+17", not an integer) and a
// retryAfterMs past the 1e15 grantLease accepts.
const TINY_REFILLS = [1e-300, 1e-302, Number.MIN_VALUE, 1e-14]
// A loaded 2-core machine must not turn a slow answer into an outage: these tests are about a
// healthy redis-server.
const STORE_OPTIONS = { commandTimeoutMs: 10_000 }

const unhandled = []
process.on('unhandledRejection', (err) => unhandled.push(err))

/** Redis's clock in microseconds (TIME), as the lease script reads it. */
async function redisMicros(conn) {
  const [sec, usec] = await conn.command(['TIME'])
  return Number(sec) * 1e6 + Number(usec)
}

/** `commands` in one MULTI/EXEC on `conn` (a client of `kind`); resolves to their replies. */
async function transaction(kind, conn, commands) {
  if (kind === 'ioredis') {
    const multi = conn.client.multi()
    for (const [name, ...rest] of commands) multi.call(name, ...rest)
    const results = await multi.exec()
    return results.map(([err, reply]) => {
      if (err) throw err
      return reply
    })
  }
  const multi = conn.client.multi()
  for (const command of commands) multi.addCommand(command)
  return multi.exec()
}

describe('the shared bucket at the edges of its bounds', { skip: redisSkip() }, () => {
  let redis
  before(async () => (redis = await startRedis()))
  after(async () => {
    await redis.stop()
    assert.deepEqual(unhandled, [], 'no unhandled rejection')
  })

  for (const kind of CLIENT_KINDS) {
    describe(`store.consume, ${kind}`, () => {
      let conn, store
      before(async () => {
        conn = await connectClient(kind, redis.url)
        store = createRedisStore(conn.client, { ...STORE_OPTIONS, prefix: `x:${kind}:` })
      })
      after(async () => {
        await store.close()
        await conn.close()
      })

      for (const refillPerSec of TINY_REFILLS) {
        it(`refillPerSec ${refillPerSec}: capacity admitted, then refused; other keys still answered`, async () => {
          const limit = { capacity: 3, refillPerSec }
          const key = `tiny-${refillPerSec}`
          const verdicts = []
          for (let i = 0; i < 8; i++) verdicts.push(await store.consume(key, 1, limit))
          assert.deepEqual(verdicts.slice(0, 3), [
            { allowed: true, remaining: 2, retryAfterMs: 0 },
            { allowed: true, remaining: 1, retryAfterMs: 0 },
            { allowed: true, remaining: 0, retryAfterMs: 0 },
          ])
          for (const v of verdicts.slice(3)) {
            assert.equal(v.allowed, false)
            assert.equal(v.remaining, 0)
            // Never back within any wait a client could act on, and a finite whole number.
            assert.ok(Number.isInteger(v.retryAfterMs) && v.retryAfterMs >= 1e12, JSON.stringify(v))
          }
          // The key lives on (a finite PX, within Redis's range).
          const pttl = Number(await conn.command(['PTTL', `x:${kind}:limit:${key}`]))
          assert.ok(pttl > 1e12 && pttl <= 1e15, `PTTL ${pttl}`)
          // No outage: a normal limit on another key is answered by Redis.
          assert.deepEqual(await store.consume(`normal-${refillPerSec}`, 1, { capacity: 2, refillPerSec: 1 }), { allowed: true, remaining: 1, retryAfterMs: 0 })
          assert.equal(store.available, true)
          assert.equal(store.stats.outages, 0)
        })
      }

      it('a script error on one key (a hash under its name) refuses that call only, not the store', async () => {
        await conn.command(['HSET', `x:${kind}:limit:wrongtype`, 'a', '1'])
        await assert.rejects(store.consume('wrongtype', 1, { capacity: 3, refillPerSec: 1 }), (err) => {
          assert.equal(err.code, 'ERR_AUTH_SHIELD_STORE_UNAVAILABLE')
          assert.match(err.cause.message, /WRONGTYPE/)
          return true
        })
        assert.deepEqual(await store.consume('righttype', 1, { capacity: 3, refillPerSec: 1 }), { allowed: true, remaining: 2, retryAfterMs: 0 })
        assert.equal(store.available, true)
        assert.equal(store.stats.outages, 0)
      })

      it('a bucket stored in the older form (one absolute TAT in µs) is read as such', async () => {
        // Two tokens owed at 0.1 token/s (20 s ahead of Redis's clock): one of 3 is left.
        await conn.command(['SET', `x:${kind}:limit:legacy`, String((await redisMicros(conn)) + 2e7), 'PX', '60000'])
        assert.deepEqual(await store.consume('legacy', 1, { capacity: 3, refillPerSec: 0.1 }), { allowed: true, remaining: 0, retryAfterMs: 0 })
        assert.equal((await store.consume('legacy', 1, { capacity: 3, refillPerSec: 0.1 })).allowed, false)
      })

      it('capacity 1e9 at refill 1e-5: a full-capacity consume is answered, the next refused, no outage', async () => {
        // 1e9 tokens of 1e11 µs each: a PX of 1e17 ms, which the script sent as "1e+17".
        const limit = { capacity: 1e9, refillPerSec: 1e-5 }
        assert.deepEqual(await store.consume('huge', 1e9, limit), { allowed: true, remaining: 0, retryAfterMs: 0 })
        const refused = await store.consume('huge', 1, limit)
        assert.equal(refused.allowed, false)
        // One token comes back in 1e11 µs, 1e8 ms (a debt near 1e20 µs is exact to 16 ms).
        assert.ok(Math.abs(refused.retryAfterMs - 1e8) < 1000, JSON.stringify(refused))
        assert.equal(store.stats.outages, 0)
      })

      it('a refill near the 1e9/s bound: a pipelined burst admits at most capacity + refill × elapsed', async () => {
        // The store's own script and arguments, in one MULTI/EXEC: Redis runs the calls back to
        // back, microseconds apart, so the bucket stays drained (a client awaiting each call,
        // or a pipeline written in chunks, is slower than such a refill). Each grant takes 20370 tokens, 20.37
        // µs of debt at 1e9/s: a TAT stored as a whole microsecond lost 0.37 µs (370 tokens)
        // of it per grant, 1.8% more than the refill, far past the one grant of residue.
        const cost = 20_370
        await conn.command(['SCRIPT', 'LOAD', LEASE_SCRIPT])
        for (const refillPerSec of [1e9, 999_999_999.9999999]) {
          const capacity = 2 * cost
          const key = `fast:${kind}:${refillPerSec}`
          const args = ['EVALSHA', LEASE_SCRIPT_SHA, '1', key, String(capacity), intervalArg(refillPerSec), String(cost), String(cost)]
          const replies = await transaction(kind, conn, [['TIME'], ...Array(5000).fill(args), ['TIME']])
          const micros = ([sec, usec]) => Number(sec) * 1e6 + Number(usec)
          const elapsedMicros = micros(replies[5001]) - micros(replies[0])
          const grants = replies.slice(1, 5001).filter((r) => Number(r[0]) > 0).length
          const admitted = grants * cost
          const bound = capacity + refillPerSec * (elapsedMicros / 1e6)
          assert.ok(admitted <= bound, `admitted ${admitted} > ${bound} (${elapsedMicros} µs, ${grants} grants of 5000)`)
          // The burst did drain the bucket (some calls refused), and it refilled.
          assert.ok(grants < 5000 && admitted > capacity, `${grants} grants`)
        }
      })
    })

    for (const [engine, Authenticator] of ENGINES) for (const rateLimitRefillPerSec of [1e-300, 1e-14]) {
      describe(`${kind}, ${engine} engine, Express, rateLimitRefillPerSec ${rateLimitRefillPerSec}`, () => {
        let conn, store, server
        before(async () => {
          conn = await connectClient(kind, redis.url)
          store = createRedisStore(conn.client, { ...STORE_OPTIONS, prefix: `xa:${kind}:${engine}:${rateLimitRefillPerSec}:` })
          const auth = new Authenticator({ accessSecret: SECRET, rateLimitMax: 3, rateLimitRefillPerSec })
          const app = express()
          app.get('/api', authShield(auth, { store }), (req, res) => res.json({ userId: req.user.userId }))
          server = await listen(http.createServer(app))
        })
        after(async () => {
          await server.close()
          await store.close()
          await conn.close()
        })

        it('admits the capacity, then answers 429 (not 503, not unlimited); other users go on', async () => {
          const statuses = []
          for (let i = 0; i < 10; i++) statuses.push((await get(`${server.base}/api`, { authorization: bearer('tiny') })).status)
          assert.deepEqual(statuses, [200, 200, 200, 429, 429, 429, 429, 429, 429, 429])
          const other = []
          for (let i = 0; i < 4; i++) other.push((await get(`${server.base}/api`, { authorization: bearer('other') })).status)
          assert.deepEqual(other, [200, 200, 200, 429])
          assert.equal(store.available, true)
          assert.equal(store.stats.outages, 0)
          assert.equal(store.stats.fallbackGrants, 0)
        })
      })
    }
  }
})
