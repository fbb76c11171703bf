'use strict'

// Where the store and the feed put their keys (lib/store/key-layout.js, docs/scale-out.md
// "Topologies"). One Redis and Sentinel keep the names of every earlier version (an upgrade
// reads the state the previous version wrote: checked against a real redis-server, both
// clients); a cluster gets hash tags so each script touches one slot; the shard of an identity
// is part of the layout and must never change between versions.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { SHARDS, hasHashTag, shardOf, leaseKeys, revocationKeys, dpopReplayKey } = require('../../lib/store/key-layout')
const { redisSkip, startRedis } = require('../support/redis-server')
const { CLIENT_KINDS, connectClient } = require('../support/redis-clients')
const { token } = require('../support/tokens')
const { createRedisStore } = require('../../lib/store/index')
const { RevocationFeed } = require('../../lib/store/revocations')

const SECRET = 'redis-key-layout-secret-0123456789abcdef'

describe('key layout', () => {
  it('keeps the earlier names on one Redis and behind Sentinel', () => {
    for (const topology of ['single', 'sentinel']) {
      const keys = leaseKeys('auth-shield:', '100/10', topology)
      assert.equal(keys.sharded, false)
      assert.equal(keys.keyOf(':bob'), 'auth-shield:rl:100/10::bob')
      assert.deepEqual(revocationKeys('auth-shield:revocations', topology), {
        tokens: 'auth-shield:revocations:tokens',
        subjects: 'auth-shield:revocations:subjects',
        stream: 'auth-shield:revocations:stream',
        epoch: 'auth-shield:revocations:epoch',
      })
    }
  })

  it('keeps a DPoP replay entry one untagged key on every topology', () => {
    assert.equal(dpopReplayKey('auth-shield:', 'ab'.repeat(32)), `auth-shield:dpop:${'ab'.repeat(32)}`)
    assert.equal(hasHashTag(dpopReplayKey('auth-shield:', 'ab'.repeat(32))), false)
  })

  it('tags cluster keys: buckets by shard, the revocations in one slot', () => {
    const keys = leaseKeys('auth-shield:', '100/10', 'cluster')
    assert.equal(keys.sharded, true)
    assert.equal(keys.keyOf(':bob'), `auth-shield:rl:{100/10:${shardOf(':bob')}}::bob`)
    assert.deepEqual(Object.values(revocationKeys('auth-shield:revocations', 'cluster')), [
      '{auth-shield:revocations}:tokens',
      '{auth-shield:revocations}:subjects',
      '{auth-shield:revocations}:stream',
      '{auth-shield:revocations}:epoch',
    ])
  })

  it('uses a prefix that holds its own hash tag as it is, on every topology', () => {
    assert.equal(hasHashTag('{app}:'), true)
    assert.equal(hasHashTag('{}:'), false) // an empty tag hashes the whole key
    assert.equal(hasHashTag('app}{:'), false)
    const keys = leaseKeys('{app}:', '100/10', 'cluster')
    assert.equal(keys.sharded, false)
    assert.equal(keys.keyOf(':bob'), '{app}:rl:100/10::bob')
    assert.equal(revocationKeys('{app}:rev', 'cluster').stream, '{app}:rev:stream')
  })

  it('pins the shard of an identity (a change would split one bucket in two across versions)', () => {
    assert.equal(SHARDS, 16)
    assert.deepEqual([':bob', ':alice', 'acme:user-1', '', ':é'].map(shardOf), [12, 15, 6, 5, 12])
    for (let i = 0; i < 1000; i++) {
      const s = shardOf(`:user-${i}`)
      assert.ok(Number.isInteger(s) && s >= 0 && s < SHARDS)
    }
  })
})

describe('one Redis reads what the previous version wrote', { skip: redisSkip() }, () => {
  let redis
  before(async () => (redis = await startRedis()))
  after(() => redis.stop())

  for (const kind of CLIENT_KINDS) {
    it(`${kind}: a bucket and a revocation under the earlier names`, async () => {
      const conn = await connectClient(kind, redis.url)
      try {
        const prefix = `old-${kind}:`
        // A revocation under the earlier feed names.
        await conn.command(['ZADD', `${prefix}rev:tokens`, String(Math.floor(Date.now() / 1000) + 600), JSON.stringify([null, 'old-jti'])])
        const { Authenticator } = require('../../js')
        const auth = new Authenticator({ accessSecret: SECRET, rateLimitMax: 100, rateLimitRefill: 0.01 })
        const store = createRedisStore(conn.client, { prefix })
        assert.equal(store.topology, 'single')
        store.attach(auth)
        const feed = new RevocationFeed(conn.client, { prefix: `${prefix}rev` }).attach(auth)
        await feed.start()
        const exp = Math.floor(Date.now() / 1000) + 600
        assert.equal(auth.authenticate(`Bearer ${token({ sub: 'other', jti: 'old-jti', exp }, SECRET)}`).errorCode, 'token_revoked')
        // A bucket spent to the end under the earlier name: a debt of 100 tokens at 0.01/s
        // (1e8 µs each), as of Redis's now.
        const [sec] = await conn.command(['TIME'])
        await conn.command(['SET', `${prefix}rl:100/0.01::bob`, `${100 * 1e8} ${Number(sec) * 1e6}`, 'PX', '60000'])
        const bob = `Bearer ${token({ sub: 'bob', exp }, SECRET)}`
        assert.equal(auth.authenticate(bob).errorCode, 'rate_limit_pending')
        await store.flush()
        assert.equal(auth.authenticate(bob).errorCode, 'rate_limited')
        await feed.close()
        await store.close()
      } finally {
        await conn.close()
      }
    })
  }
})
