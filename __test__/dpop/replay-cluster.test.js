'use strict'

// The shared DPoP replay store (auth-shield/redis createDpopReplayStore) on a real Redis
// Cluster (3 masters + 3 replicas on loopback: __test__/support/redis-topologies.js), with
// node-redis' createCluster and ioredis' Cluster: two apps (one per engine, each its own client)
// racing one proof let exactly one request through; the entries (one untagged key each,
// lib/store/key-layout.js dpopReplayKey) spread over the masters; a master killed refuses DPoP
// requests with 503 dpop_replay_unavailable, never lets a replicated proof through twice, and
// its promoted replica serves again. One cluster for the whole file.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { randomUUID } = require('node:crypto')
const expressShield = require('../../adapters/express')
const koaShield = require('../../adapters/koa')
const { createDpopReplayStore } = require('../../lib/store/index')
const { dpopReplayKey } = require('../../lib/store/key-layout')
const { request } = require('../support/http')
const { expressServer, koaServer } = require('../support/adapter-servers')
const { startCluster, topologySkip, cli, until } = require('../support/redis-topologies')
const { CLIENT_KINDS, connectClient } = require('../support/redis-clients')
const { issuer, clientKey, proof, craftedProof } = require('../support/dpop')

const ORIGIN = 'https://api.example.com'
const HTU = `${ORIGIN}/orders`
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

const unhandled = []
const onUnhandled = (err) => unhandled.push(err)

describe('DPoP replays on a Redis Cluster: 3 masters + 3 replicas', { skip: topologySkip() }, () => {
  let cluster
  let iss
  let key
  let bound
  before(async () => {
    process.on('unhandledRejection', onUnhandled)
    cluster = await startCluster()
    iss = await issuer()
    key = await clientKey('ES256')
    bound = await iss.sign({ cnf: { jkt: key.jkt } })
  })
  after(async () => {
    process.off('unhandledRejection', onUnhandled)
    if (cluster) await cluster.stop()
    assert.deepEqual(unhandled, [])
  })

  /** Two apps (Express on the native engine, Koa on the JS one), each with its own `kinds[i]` cluster client. */
  async function twoApps(kinds, prefix, storeOptions = {}) {
    const config = { keys: iss.keys, dpop: true, rateLimitMax: 0 }
    const conns = await Promise.all(kinds.map((kind) => connectClient(kind, { cluster: cluster.rootNodes })))
    const stores = conns.map((c) => createDpopReplayStore(c.client, { prefix, ...storeOptions }))
    const apps = [
      await expressServer(expressShield(config, { engine: 'native', dpopOrigin: ORIGIN, dpopReplayStore: stores[0] })),
      await koaServer(koaShield(config, { engine: 'js', dpopOrigin: ORIGIN, dpopReplayStore: stores[1] })),
    ]
    const send = (i, dpop) => request(`${apps[i].base}/orders`, { headers: { authorization: `DPoP ${bound}`, dpop } })
    const close = async () => {
      for (const app of apps) await app.close()
      for (const c of conns) await c.close()
    }
    return { conns, stores, send, close }
  }

  /** The masters (ports) holding entries under `prefix`. */
  async function mastersHolding(prefix) {
    const ports = []
    for (const node of cluster.nodes.filter((n) => !n.dead)) {
      const role = await cli(node.port, 'ROLE')
      if (!role.startsWith('master')) continue
      if ((await cli(node.port, 'KEYS', `${prefix}dpop:*`)).split('\n').filter(Boolean).length > 0) ports.push(node.port)
    }
    return ports
  }

  for (const kind of CLIENT_KINDS) {
    it(`two apps (${kind} cluster clients, both engines) racing one proof: exactly one passes; entries spread over the masters`, async () => {
      const prefix = `race-${kind}:`
      const apps = await twoApps([kind, kind], prefix)
      try {
        assert.equal(apps.stores[0].options.prefix, prefix)
        for (let round = 0; round < 10; round++) {
          const dpop = await proof(key, { token: bound, url: HTU })
          const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => apps.send(i % 2, dpop)))
          assert.deepEqual(answers.map((r) => r.status).sort(), [200, ...Array(9).fill(401)], `round ${round}`)
          assert.deepEqual([...new Set(answers.filter((r) => r.status === 401).map((r) => r.json.code))], ['dpop_proof_replayed'])
        }
        assert.equal(apps.stores[0].stats.admitted + apps.stores[1].stats.admitted, 10)
        assert.equal(apps.stores[0].stats.failed + apps.stores[1].stats.failed, 0)
        // Untagged single keys: ten entries land on more than one master (all on one: 3^-9).
        assert.ok((await mastersHolding(prefix)).length >= 2, 'the entries spread over the masters')
      } finally {
        await apps.close()
      }
    })
  }

  for (const kind of CLIENT_KINDS) {
    it(`batches on a cluster (${kind}): a tagged prefix is one script per turn, WAIT for the slot's replica; untagged keys one SET each`, async () => {
      const conn = await connectClient(kind, { cluster: cluster.rootNodes })
      try {
        const keys = Array.from({ length: 50 }, () => randomUUID().replace(/-/g, '').padEnd(64, '0'))
        const tagged = createDpopReplayStore(conn.client, { prefix: `{batch-${kind}}:`, dpopWaitReplicas: 1, dpopWaitTimeoutMs: 5000 })
        assert.deepEqual(await Promise.all(keys.map((k) => tagged.admit(k, 60000))), Array(50).fill('fresh'))
        // One EVAL and one WAIT (on the master of the tag's slot).
        assert.equal(tagged.stats.roundTrips, 2)
        assert.deepEqual(await Promise.all(keys.slice(0, 5).map((k) => tagged.admit(k, 60000))), Array(5).fill('replayed'))
        const untagged = createDpopReplayStore(conn.client, { prefix: `batch-${kind}:` })
        assert.deepEqual(await Promise.all(keys.map((k) => untagged.admit(k, 60000))), Array(50).fill('fresh'))
        assert.equal(untagged.stats.roundTrips, 50)
        assert.equal(untagged.stats.batches, 1)
        assert.deepEqual(await untagged.admit(keys[0], 60000), 'replayed')
      } finally {
        await conn.close()
      }
    })
  }

  it('a master killed: 503 dpop_replay_unavailable while its slot is down, never a replicated proof twice, then served by the promoted replica (node-redis + ioredis)', async (t) => {
    // A prefix with a hash tag puts every entry in one slot (docs/scale-out.md): the one killed.
    const prefix = '{dpop-fo}:'
    const slot = await cluster.slotOf(dpopReplayKey(prefix, 'x'))
    const apps = await twoApps(['node-redis', 'ioredis'], prefix, { commandTimeoutMs: 300 })
    try {
      const first = await proof(key, { token: bound, url: HTU })
      assert.equal((await apps.send(0, first)).status, 200)
      assert.equal((await apps.send(1, first)).json.code, 'dpop_proof_replayed')
      // Replicated before the kill (WAIT: the replica acknowledged every earlier write).
      assert.equal(await cli(await cluster.masterOf(slot), 'WAIT', 1, 5000), '1')

      const accepted = new Map() // proof -> accepting app
      const seen = { replayRefused: 0, unavailable: 0, freshAccepted: 0 }
      let done = false
      const killing = cluster.killMasterOf(slot).finally(() => (done = true))
      for (let i = 0; !done && i < 400; i++) {
        const app = i % 2
        const replay = await apps.send(app, first)
        assert.notEqual(replay.status, 200, 'a replicated proof passed twice')
        if (replay.status === 503) {
          assert.equal(replay.json.code, 'dpop_replay_unavailable')
          seen.unavailable++
        } else {
          assert.equal(replay.json.code, 'dpop_proof_replayed')
          seen.replayRefused++
        }
        const fresh = await craftedProof(key, { token: bound, payload: { jti: randomUUID() } })
        const answer = await apps.send(app, fresh)
        if (answer.status === 200) {
          accepted.set(fresh, app)
          seen.freshAccepted++
        } else {
          assert.equal(answer.status, 503, JSON.stringify(answer.json))
          assert.equal(answer.json.code, 'dpop_replay_unavailable')
          seen.unavailable++
        }
        await sleep(20)
      }
      const killed = await killing
      assert.ok(seen.unavailable > 0, `no request was refused while the slot was down: ${JSON.stringify(seen)}`)

      // Recovery: each app's client finds the promoted replica; fresh proofs pass on both.
      for (const app of [0, 1]) {
        await until(async () => (await apps.send(app, await proof(key, { token: bound, url: HTU }))).status === 200, 20_000, `app ${app} to recover`)
      }
      // The entry written before the kill survived on the promoted replica.
      for (const app of [0, 1]) assert.equal((await apps.send(app, first)).json.code, 'dpop_proof_replayed')
      // Proofs accepted around the kill: a replay on the other app is refused, unless the dead
      // master acknowledged the entry and never replicated it (asynchronous replication,
      // docs/sender-constrained.md): counted, not asserted.
      let lost = 0
      for (const [dpop, app] of accepted) {
        const again = await apps.send(1 - app, dpop)
        if (again.status === 200) lost++
        else assert.equal(again.json.code, 'dpop_proof_replayed')
      }
      t.diagnostic(`killed :${killed}; during the failover ${JSON.stringify(seen)}; accepted then lost in the failover: ${lost}`)
    } finally {
      await apps.close()
    }
    await cluster.settled(30_000)
  })
})
