'use strict'

// The shared DPoP replay store's batching, WAIT option and failure modes on real redis-servers
// (lib/store/dpop-replay.js): the replay writes of one event-loop turn go out as one script,
// counted by Redis itself (INFO commandstats); the same proof sent to two processes at once
// passes exactly once; Redis killed mid-run refuses with 503 and never accepts a proof whose
// entry it did not acknowledge; WAIT against a real replica.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { randomBytes } = require('node:crypto')
const expressShield = require('../../adapters/express')
const { Authenticator } = require('../..')
const { createRedisStore, createDpopReplayStore } = require('../../lib/store/index')
const { request } = require('../support/http')
const { expressServer } = require('../support/adapter-servers')
const { redisSkip, startRedis } = require('../support/redis-server')
const { connectClient } = require('../support/redis-clients')
const { issuer, clientKey, proof } = require('../support/dpop')
const { startReplayApps } = require('../support/dpop-replay-app')

const ORIGIN = 'https://api.example.com'
const HTU = `${ORIGIN}/orders`

/** Calls of `command` Redis counted since the last CONFIG RESETSTAT (INFO commandstats). */
async function calls(conn, command) {
  const info = String(await conn.command(['INFO', 'commandstats']))
  const m = new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(info)
  return m === null ? 0 : Number(m[1])
}

const send = (server, headers) => request(`${server.base}/orders`, { headers })

describe('DPoP shared replay: batched writes, WAIT, outages', { skip: redisSkip() }, () => {
  let redis
  let iss
  let key
  before(async () => {
    redis = await startRedis()
    iss = await issuer()
    key = await clientKey('ES256')
  })
  after(() => redis.stop())

  for (const kind of ['ioredis', 'node-redis']) {
    it(`answers each of 200 keys of one turn with one EVAL, its own verdict each (${kind})`, async () => {
      const conn = await connectClient(kind, redis.url)
      try {
        const store = createRedisStore(conn.client, { prefix: `batch:${kind}:` }).dpopReplay()
        const keys = Array.from({ length: 200 }, () => randomBytes(32).toString('hex'))
        // Ten of them already held: replayed, the others fresh, in one round trip.
        for (const k of keys.slice(0, 10)) await conn.command(['SET', `batch:${kind}:dpop:${k}`, '1', 'PX', '60000'])
        await conn.command(['CONFIG', 'RESETSTAT'])
        const verdicts = await Promise.all(keys.map((k) => store.admit(k, 60000)))
        assert.deepEqual(verdicts, [...Array(10).fill('replayed'), ...Array(190).fill('fresh')])
        assert.equal(await calls(conn, 'eval'), 1)
        assert.equal(await calls(conn, 'set'), 200)
        assert.deepEqual({ ...store.stats }, { admitted: 190, replayed: 10, failed: 0, roundTrips: 1, batches: 1 })
        const ttl = Number(await conn.command(['PTTL', `batch:${kind}:dpop:${keys[199]}`]))
        assert.ok(ttl > 50000 && ttl <= 60000, String(ttl))
        // The same key twice in one turn: the first is fresh, the second a replay.
        const twice = randomBytes(32).toString('hex')
        assert.deepEqual(await Promise.all([store.admit(twice, 1000), store.admit(twice, 1000)]), ['fresh', 'replayed'])
      } finally {
        await conn.close()
      }
    })
  }

  it('a burst of 200 parallel DPoP requests with distinct proofs: the requests arriving during a write share the next round trip; all pass, then every replay is refused', async () => {
    const conn = await connectClient('ioredis', redis.url)
    const admin = await connectClient('node-redis', redis.url)
    const bound = await iss.sign({ cnf: { jkt: key.jkt } })
    const store = createRedisStore(conn.client, { prefix: 'burst:', commandTimeoutMs: 30000 }).dpopReplay()
    const auth = new Authenticator({ keys: iss.keys, dpop: true, rateLimitMax: 0 })
    const app = await expressServer(expressShield(auth, { dpopOrigin: ORIGIN, dpopReplayStore: store }))
    try {
      const proofs = []
      for (let i = 0; i < 200; i++) proofs.push(await proof(key, { token: bound, url: HTU }))
      await conn.command(['CONFIG', 'RESETSTAT'])
      // Redis holds write commands (a slow or busy server, made on purpose) until every request
      // has passed the engine (its in-process cache holds all 200): the first request's write
      // is in flight meanwhile, and every request arriving then waits for it and goes out with
      // the others in one script.
      await admin.command(['CLIENT', 'PAUSE', '25000', 'WRITE'])
      const pending = Promise.all(proofs.map((p) => send(app, { authorization: `DPoP ${bound}`, dpop: p })))
      for (let i = 0; i < 2000 && auth.dpopReplayEntries < 200; i++) await new Promise((resolve) => setTimeout(resolve, 10))
      assert.equal(auth.dpopReplayEntries, 200)
      await admin.command(['CLIENT', 'UNPAUSE'])
      const answers = await pending
      assert.deepEqual(answers.map((r) => r.status), Array(200).fill(200))
      const evals = await calls(conn, 'eval')
      // Redis' own count: one script per round trip, a few for 200 requests, never one each.
      assert.equal(evals, store.stats.roundTrips)
      assert.equal(evals, 2, `${evals} scripts for 200 requests`)
      assert.equal(await calls(conn, 'set'), 200)
      process.stdout.write(`# burst of 200 DPoP requests during a slow write: ${evals} EVAL round trips\n`)
      // A second process (its own store and cache) refuses every one of them.
      const conn2 = await connectClient('node-redis', redis.url)
      const other = await expressServer(
        expressShield({ keys: iss.keys, dpop: true, rateLimitMax: 0 }, { engine: 'js', dpopOrigin: ORIGIN, dpopReplayStore: createDpopReplayStore(conn2.client, { prefix: 'burst:' }) }),
      )
      try {
        const replays = await Promise.all(proofs.slice(0, 50).map((p) => send(other, { authorization: `DPoP ${bound}`, dpop: p })))
        assert.deepEqual([...new Set(replays.map((r) => `${r.status} ${r.json.code}`))], ['401 dpop_proof_replayed'])
      } finally {
        await other.close()
        await conn2.close()
      }
    } finally {
      await admin.command(['CLIENT', 'UNPAUSE']).catch(() => {})
      await app.close()
      await conn.close()
      await admin.close()
    }
  })

  it('a write in flight gathers the keys asked for meanwhile into the next script; past the queue bound a key is refused at once', async () => {
    const conn = await connectClient('node-redis', redis.url)
    const admin = await connectClient('ioredis', redis.url)
    try {
      const store = createDpopReplayStore(conn.client, { prefix: 'gather:', commandTimeoutMs: 20000 })
      await admin.command(['CONFIG', 'RESETSTAT'])
      await admin.command(['CLIENT', 'PAUSE', '20000', 'WRITE'])
      const first = store.admit(randomBytes(32).toString('hex'), 60000)
      const later = []
      // Ten turns of the event loop while the first write waits, ten keys each.
      for (let turn = 0; turn < 10; turn++) {
        await new Promise((resolve) => setImmediate(resolve))
        for (let i = 0; i < 10; i++) later.push(store.admit(randomBytes(32).toString('hex'), 60000))
      }
      await admin.command(['CLIENT', 'UNPAUSE'])
      assert.equal(await first, 'fresh')
      assert.deepEqual(await Promise.all(later), Array(100).fill('fresh'))
      assert.equal(await calls(admin, 'eval'), 2)
      assert.equal(store.stats.batches, 2)
      // A flood while Redis stalls: 100000 keys wait (the bound), the next is refused at once.
      await admin.command(['CLIENT', 'PAUSE', '20000', 'WRITE'])
      const held = store.admit(randomBytes(32).toString('hex'), 60000)
      await new Promise((resolve) => setImmediate(resolve))
      const flood = []
      for (let i = 0; i < 100000; i++) flood.push(store.admit(i.toString(16).padStart(64, '0'), 60000))
      await assert.rejects(store.admit(randomBytes(32).toString('hex'), 60000), { code: 'ERR_AUTH_SHIELD_STORE_UNAVAILABLE' })
      await admin.command(['CLIENT', 'UNPAUSE'])
      assert.equal(await held, 'fresh')
      const verdicts = await Promise.all(flood)
      assert.equal(verdicts.filter((v) => v === 'fresh').length, 100000)
    } finally {
      await admin.command(['CLIENT', 'UNPAUSE']).catch(() => {})
      await conn.close()
      await admin.close()
    }
  })

  it('the same proof sent to two processes at once passes exactly once (both engines)', async () => {
    const apps = []
    try {
      await startReplayApps(apps, ['native', 'js'].map((engine) => ({ keys: iss.keys, engine, redisUrl: redis.url, origin: ORIGIN, prefix: 'procs:' })))
      const bound = await iss.sign({ cnf: { jkt: key.jkt } })
      for (let round = 0; round < 10; round++) {
        const headers = { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: HTU }) }
        // Each process twice, all four at once: one 200 in all, three replays.
        const answers = await Promise.all([...apps, ...apps].map((app) => send(app, headers)))
        assert.deepEqual(answers.map((r) => r.status).sort(), [200, 401, 401, 401], `round ${round}`)
        assert.deepEqual([...new Set(answers.filter((r) => r.status === 401).map((r) => r.json.code))], ['dpop_proof_replayed'])
      }
    } finally {
      for (const app of apps) await app.stop()
    }
  })

  it('Redis killed mid-run: 503 dpop_replay_unavailable, and no proof passes whose entry Redis did not acknowledge', async () => {
    // Every acknowledged write is fsynced first: what a 200 relied on survives the restart.
    const durable = await startRedis({ persist: true })
    const conn = await connectClient('ioredis', durable.url)
    const bound = await iss.sign({ cnf: { jkt: key.jkt } })
    const store = createDpopReplayStore(conn.client, { prefix: 'kill:', commandTimeoutMs: 300 })
    const app = await expressServer(expressShield({ keys: iss.keys, dpop: true, rateLimitMax: 0 }, { dpopOrigin: ORIGIN, dpopReplayStore: store }))
    try {
      const proofs = []
      for (let i = 0; i < 120; i++) proofs.push(await proof(key, { token: bound, url: HTU }))
      const pending = proofs.slice(0, 100).map((p) => send(app, { authorization: `DPoP ${bound}`, dpop: p }).then((r) => ({ r, p })))
      // Killed while the burst is being answered.
      await new Promise((resolve) => setTimeout(resolve, 20))
      await durable.kill()
      const during = await Promise.all(pending)
      const after = await Promise.all(proofs.slice(100).map((p) => send(app, { authorization: `DPoP ${bound}`, dpop: p })))
      assert.deepEqual([...new Set(after.map((r) => `${r.status} ${r.json.code}`))], ['503 dpop_replay_unavailable'])
      for (const { r } of during) assert.ok(r.status === 200 || (r.status === 503 && r.json.code === 'dpop_replay_unavailable'), `${r.status} ${r.body}`)
      await durable.restart()
      // Every proof that passed has its entry in Redis: the next process would refuse it.
      const again = await connectClient('node-redis', durable.url)
      try {
        const passed = during.filter(({ r }) => r.status === 200)
        const entries = Number(await again.command(['DBSIZE']))
        assert.ok(entries >= passed.length, `${entries} entries for ${passed.length} accepted proofs`)
        const conn2 = await connectClient('ioredis', durable.url)
        const other = await expressServer(
          expressShield({ keys: iss.keys, dpop: true, rateLimitMax: 0 }, { dpopOrigin: ORIGIN, dpopReplayStore: createDpopReplayStore(conn2.client, { prefix: 'kill:' }) }),
        )
        try {
          const replays = await Promise.all(passed.map(({ p }) => send(other, { authorization: `DPoP ${bound}`, dpop: p })))
          for (const r of replays) assert.equal(r.json.code, 'dpop_proof_replayed')
        } finally {
          await other.close()
          await conn2.close()
        }
      } finally {
        await again.close()
      }
      assert.ok(store.stats.failed >= 20)
    } finally {
      await app.close()
      await conn.close()
      await durable.stop()
    }
  })

  it('dpopWaitReplicas waits for a real replica; too few replicas refuse with 503', async () => {
    // No diskless-sync delay (5 s by default): the replica's first full sync starts at once.
    const master = await startRedis({ args: ['--repl-diskless-sync-delay', '0'] })
    const replica = await startRedis({ args: ['--replicaof', '127.0.0.1', String(master.port)] })
    const conn = await connectClient('ioredis', master.url)
    const onReplica = await connectClient('node-redis', replica.url)
    const bound = await iss.sign({ cnf: { jkt: key.jkt } })
    const servers = []
    try {
      // The replica in sync before the first write (bounded: 10 s).
      for (let i = 0; i < 200; i++) {
        if (/master_link_status:up/.test(String(await onReplica.command(['INFO', 'replication'])))) break
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      const base = createRedisStore(conn.client, { prefix: 'wait:', dpopWaitReplicas: 1, dpopWaitTimeoutMs: 2000 })
      const app = async (store) => {
        const s = await expressServer(expressShield({ keys: iss.keys, dpop: true, rateLimitMax: 0 }, { dpopOrigin: ORIGIN, dpopReplayStore: store }))
        servers.push(s)
        return s
      }
      const one = await app(base.dpopReplay())
      assert.equal(base.dpopReplay().options.dpopWaitReplicas, 1)
      await conn.command(['CONFIG', 'RESETSTAT'])
      const p = await proof(key, { token: bound, url: HTU })
      const answers = await Promise.all(Array.from({ length: 5 }, async () => send(one, { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: HTU }) })))
      assert.deepEqual(answers.map((r) => r.status), Array(5).fill(200))
      const ok = await send(one, { authorization: `DPoP ${bound}`, dpop: p })
      assert.equal(ok.status, 200)
      assert.ok((await calls(conn, 'wait')) >= 1)
      // Accepted only once the replica held the entry.
      assert.equal(Number(await onReplica.command(['DBSIZE'])), 6)
      // Two replicas asked, one there: refused, never accepted.
      const two = await app(base.dpopReplay({ dpopWaitReplicas: 2, dpopWaitTimeoutMs: 50 }))
      const refused = await send(two, { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: HTU }) })
      assert.equal(refused.status, 503)
      assert.equal(refused.json.code, 'dpop_replay_unavailable')
      // The replica gone: one replica asked, none acknowledges.
      await replica.kill()
      const lost = await app(base.dpopReplay({ dpopWaitTimeoutMs: 50 }))
      const alone = await send(lost, { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: HTU }) })
      assert.equal(alone.status, 503)
      assert.equal(alone.json.code, 'dpop_replay_unavailable')
      // Off by default: no WAIT at all.
      assert.equal(createRedisStore(conn.client).dpopReplay().options.dpopWaitReplicas, 0)
    } finally {
      for (const s of servers) await s.close()
      await conn.close()
      await Promise.resolve().then(() => onReplica.close()).catch(() => {})
      await replica.stop()
      await master.stop()
    }
  })

  it('store.dpopReplay() takes the store options and refuses bad ones', () => {
    const fake = { sendCommand() {}, connect() {} }
    const store = createRedisStore(fake, { prefix: 'p:', commandTimeoutMs: 250 })
    const replay = store.dpopReplay()
    assert.equal(replay.options.prefix, 'p:')
    assert.equal(replay.options.commandTimeoutMs, 250)
    assert.equal(store.dpopReplay({ prefix: 'q:' }).options.prefix, 'q:')
    assert.throws(() => store.dpopReplay({ dpopWaitReplicas: -1 }), { name: 'RangeError' })
    assert.throws(() => store.dpopReplay({ lease: 3 }), { name: 'TypeError' })
    assert.throws(() => createDpopReplayStore(fake, { dpopWaitTimeoutMs: 0 }), { name: 'RangeError' })
  })
})
