'use strict'

// One RevocationFeed per authenticator: its revokeToken / revokeSubject write through the feed
// attached (base/store-seam.js), and a second feed would silently take them from the first (the
// app's own revocations reaching one Redis data set only). Attaching a second feed is refused by
// name; re-attaching the same feed is a no-op, and after the first feed's close() another may
// attach. Real redis-server (attach needs a feed, not a started one), both engines.

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { createClient } = require('redis')
const native = require('../..')
const js = require('../../js')
const { RevocationFeed } = require('../../lib/store/revocations')
const { redisSkip, startRedis } = require('../support/redis-server')

const SECRET = 'one-writer-feed-secret-0123456789abcdef'

describe('a revocation feed per authenticator', { skip: redisSkip() }, () => {
  let redis
  let client
  before(async () => {
    redis = await startRedis()
    client = createClient({ url: redis.url })
    client.on('error', () => {})
    await client.connect()
  })
  after(async () => {
    await client.close()
    await redis.stop()
  })

  for (const [name, engine] of [
    ['native', native],
    ['js', js],
  ]) {
    test(`${name}: a second feed is refused at attach; the same feed again is a no-op; after close() another attaches`, async () => {
      const auth = new engine.Authenticator({ accessSecret: SECRET })
      const first = new RevocationFeed(client, { prefix: `one-writer:${name}:a:` })
      const second = new RevocationFeed(client, { prefix: `one-writer:${name}:b:` })
      first.attach(auth)
      assert.equal(first.attach(auth), first)
      assert.throws(() => second.attach(auth), (err) => err.code === 'ERR_AUTH_SHIELD_ALREADY_ATTACHED' && /another RevocationFeed/.test(err.message))
      await first.close()
      assert.equal(second.attach(auth), second)
      await second.close()
    })
  }
})
