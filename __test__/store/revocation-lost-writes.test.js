'use strict'

// A failover to a replica that had not received the last writes (docs/revocation.md, "Failover"):
// the promoted replica has the same epoch marker but a stream that ends before entries the feeds
// read or wrote, and a set without them. Simulated on a real redis-server by deleting the last
// stream entry and its set member (what such a replica holds): the feeds that knew the
// revocation notice within a check (CHECK_MS, 1 s) and write it again, so a process started
// afterwards refuses the token. And no re-publishing while nothing was lost.

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { RevocationFeed } = require('../../lib/store/revocations')
const { redisSkip, startRedis } = require('../support/redis-server')
const { CLIENT_KINDS, connectClient } = require('../support/redis-clients')
const { token } = require('../support/tokens')

const SECRET = 'revocation-lost-writes-secret-0123456789ab'
const CONFIG = { accessSecret: SECRET }
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

async function untilRefused(auth, tok, ms, what) {
  const started = Date.now()
  while (auth.authenticate(`Bearer ${tok}`).errorCode !== 'token_revoked') {
    if (Date.now() - started > ms) assert.fail(`${what}: not refused after ${ms} ms`)
    await sleep(20)
  }
}

// The two clients' cases share the redis-server but no key (a prefix each): they wait out their
// feeds' checks side by side.
describe('revocations lost by a failover are written again', { skip: redisSkip(), concurrency: true }, () => {
  let redis
  before(async () => (redis = await startRedis()))
  after(() => redis.stop())

  for (const [i, kind] of CLIENT_KINDS.entries()) {
    const engine = i === 0 ? native : js
    test(`${kind}: a stream that ends before an acknowledged entry is rebuilt by the feeds that knew it`, async () => {
      const prefix = `lost-${kind}`
      const conns = await Promise.all([kind, kind, kind, kind].map((k) => connectClient(k, redis.url)))
      const [writerConn, followerConn, lateConn, raw] = conns
      const options = { prefix, commandTimeoutMs: 1000 }
      const writerAuth = new engine.Authenticator(CONFIG)
      const followerAuth = new engine.Authenticator(CONFIG)
      const lateAuth = new engine.Authenticator(CONFIG)
      const writer = new RevocationFeed(writerConn.client, options).attach(writerAuth)
      const follower = new RevocationFeed(followerConn.client, options).attach(followerAuth)
      const late = new RevocationFeed(lateConn.client, options).attach(lateAuth)
      try {
        await writer.start()
        await follower.start()
        const exp = Math.floor(Date.now() / 1000) + 600
        const kept = token({ sub: 'u', jti: 'kept', exp }, SECRET)
        const lost = token({ sub: 'u', jti: 'lost', exp }, SECRET)
        assert.equal(await writerAuth.revokeToken('kept', exp), 'delivered')
        assert.equal(await writerAuth.revokeToken('lost', exp), 'delivered')
        await untilRefused(followerAuth, lost, 5000, 'the follower')
        // Past one check of each feed: nothing lost, nothing written again.
        await sleep(1300)
        assert.equal(writer.stats().rebuilds, 0)
        assert.equal(follower.stats().rebuilds, 0)
        // The promoted replica's view: the last entry and its member never arrived.
        const [[lastId]] = await raw.command(['XREVRANGE', `${prefix}:stream`, '+', '-', 'COUNT', '1'])
        assert.equal(Number(await raw.command(['XDEL', `${prefix}:stream`, String(lastId)])), 1)
        assert.equal(Number(await raw.command(['ZREM', `${prefix}:tokens`, JSON.stringify([null, 'lost'])])), 1)
        // Within a check (1 s) a feed that knew it writes it again.
        const started = Date.now()
        while (writer.stats().rebuilds + follower.stats().rebuilds === 0) {
          if (Date.now() - started > 5000) assert.fail(`no feed wrote the lost revocation again: ${JSON.stringify([writer.stats(), follower.stats()])}`)
          await sleep(20)
        }
        await late.start()
        await untilRefused(lateAuth, lost, 5000, 'a process started after the failover')
        assert.equal(lateAuth.authenticate(`Bearer ${kept}`).errorCode, 'token_revoked')
      } finally {
        await Promise.all([writer.close(), follower.close(), late.close()])
        await Promise.all(conns.map((c) => c.close()))
      }
    })
  }
})
