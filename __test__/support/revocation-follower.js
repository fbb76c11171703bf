'use strict'

// Test support: a process that follows the shared revocations (RevocationFeed on node-redis,
// native engine) and answers, over IPC, what its authenticator says of a token. Used by
// __test__/revocation-feed.test.js to stop a follower (SIGSTOP) while the stream is trimmed.

const { createClient } = require('redis')
const native = require('../..')
const { RevocationFeed } = require('../../js/store/revocations')

async function main() {
  const client = createClient({ url: process.env.REDIS_URL })
  client.on('error', () => {})
  await client.connect()
  const auth = new native.Authenticator(JSON.parse(process.env.AUTH_CONFIG))
  const feed = new RevocationFeed(client, JSON.parse(process.env.FEED_OPTIONS)).attach(auth)
  await feed.start()
  process.on('message', async (m) => {
    if (m.check) process.send({ code: auth.authenticate(`Bearer ${m.check}`).errorCode ?? null, stats: feed.stats() })
    if (m.stop) {
      await feed.close()
      await client.destroy()
      process.exit(0)
    }
  })
  process.send({ ready: true })
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
