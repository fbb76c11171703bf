'use strict'

// The shared DPoP replay store (auth-shield/redis createDpopReplayStore) on a real
// redis-server: a proof accepted by one app is refused by another sharing the Redis (each its
// own authenticator, store and client, as two processes would have), also when requests race;
// Redis down refuses DPoP requests with 503 (never a pass) while Bearer requests go on.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const expressShield = require('../../adapters/express')
const koaShield = require('../../adapters/koa')
const { createDpopReplayStore } = require('../../lib/store/index')
const { request } = require('../support/http')
const { expressServer, koaServer } = require('../support/adapter-servers')
const { redisSkip, startRedis } = require('../support/redis-server')
const { connectClient } = require('../support/redis-clients')
const { issuer, clientKey, proof } = require('../support/dpop')

const ORIGIN = 'https://api.example.com'
const HTU = `${ORIGIN}/orders`

describe('DPoP replays across processes through Redis', { skip: redisSkip() }, () => {
  let redis
  before(async () => (redis = await startRedis()))
  after(() => redis.stop())

  for (const [engine, kind] of [
    ['native', 'ioredis'],
    ['js', 'node-redis'],
  ]) {
    it(`accepts a proof once across two apps and refuses its replay on the other (${engine}, ${kind})`, async () => {
      const iss = await issuer()
      const key = await clientKey('ES256')
      const bound = await iss.sign({ cnf: { jkt: key.jkt } })
      const config = { keys: iss.keys, dpop: true, rateLimitMax: 0 }
      const conns = [await connectClient(kind, redis.url), await connectClient(kind, redis.url)]
      const stores = conns.map((c) => createDpopReplayStore(c.client, { prefix: `dpop-test:${engine}:` }))
      const a = await expressServer(expressShield(config, { engine, dpopOrigin: ORIGIN, dpopReplayStore: stores[0] }))
      const b = await koaServer(koaShield(config, { engine, dpopOrigin: ORIGIN, dpopReplayStore: stores[1] }))
      const alone = await expressServer(expressShield(config, { engine, dpopOrigin: ORIGIN }))
      try {
        const send = (server, headers) => request(`${server.base}/orders`, { headers })
        const headers = { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: HTU }) }
        assert.equal((await send(a, headers)).status, 200)
        const replay = await send(b, headers)
        assert.equal(replay.status, 401)
        assert.equal(replay.json.code, 'dpop_proof_replayed')
        assert.match(replay.headers['www-authenticate'], /^DPoP error="invalid_dpop_proof"/)
        // Without the shared store, another process would have let it through.
        assert.equal((await send(alone, headers)).status, 200)

        // Twenty requests with one fresh proof, racing over both apps: exactly one passes.
        const raced = { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: HTU }) }
        const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => send(i % 2 ? a : b, raced)))
        assert.deepEqual(answers.map((r) => r.status).sort(), [200, ...Array(19).fill(401)])
        assert.deepEqual([...new Set(answers.filter((r) => r.status === 401).map((r) => r.json.code))], ['dpop_proof_replayed'])
        // The key lives until the proof's window has passed, no longer than a few seconds past it.
        const keys = await conns[0].command(['KEYS', `dpop-test:${engine}:dpop:*`])
        assert.equal(keys.length, 2)
        const ttl = Number(await conns[0].command(['PTTL', keys[0]]))
        assert.ok(ttl > 0 && ttl <= (60 + 5 + 2) * 1000, String(ttl))
        assert.equal(stores[0].stats.admitted + stores[1].stats.admitted, 2)
      } finally {
        await a.close()
        await b.close()
        await alone.close()
        for (const c of conns) await c.close()
      }
    })
  }

  it('refuses DPoP requests with 503 dpop_replay_unavailable while Redis is down; Bearer requests pass', async () => {
    const down = await startRedis()
    const iss = await issuer()
    const key = await clientKey('ES256')
    const bound = await iss.sign({ cnf: { jkt: key.jkt } })
    const unbound = await iss.sign({})
    const conn = await connectClient('ioredis', down.url)
    const store = createDpopReplayStore(conn.client, { commandTimeoutMs: 200 })
    const app = await expressServer(expressShield({ keys: iss.keys, dpop: true, rateLimitMax: 0 }, { dpopOrigin: ORIGIN, dpopReplayStore: store }))
    try {
      const send = (headers) => request(`${app.base}/orders`, { headers })
      assert.equal((await send({ authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: HTU }) })).status, 200)
      down.kill()
      const refused = await send({ authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: HTU }) })
      assert.equal(refused.status, 503)
      assert.equal(refused.json.code, 'dpop_replay_unavailable')
      assert.equal((await send({ authorization: `Bearer ${unbound}` })).status, 200)
      assert.ok(store.stats.failed >= 1)
    } finally {
      await app.close()
      await conn.close()
      await down.stop()
    }
  })

  it('takes only a DpopReplayStore, and only with dpopOrigin', () => {
    const secret = { accessSecret: 'x'.repeat(32) }
    assert.throws(() => expressShield(secret, { dpopOrigin: ORIGIN, dpopReplayStore: { admit: async () => 'fresh' } }), { name: 'TypeError' })
    assert.throws(() => expressShield(secret, { dpopReplayStore: createDpopReplayStore({ sendCommand() {} }) }), { name: 'TypeError' })
  })
})
