'use strict'

// Test support: a process that follows the shared revocations (RevocationFeed) and answers,
// over IPC, what its authenticator says of a token. CLIENT (`node-redis`, default, or
// `ioredis`) and ENGINE (`native`, default, or `js`) pick the client and the engine; both
// reconnect every 50 ms. Used by __test__/store/revocation-feed.test.js (a follower stopped with
// SIGSTOP while the stream is trimmed) and __test__/store/revocation-outage.test.js (processes that
// must learn revocations made during an outage, or lost by a restart without persistence).
//
//   { check: token } -> { code: errorCode or null, stats: feed.stats() }
//   { revoke: { jti, expiresAtSec, sub } } -> revokes both, not awaited (no 'unhandledRejection'
//                        listener here: one would end the process), then answers { revoked: true }
//   { stop: true }   -> closes the feed and the client, exits 0

const { RevocationFeed } = require('../../lib/store/revocations')

async function connect(kind, url) {
  if (kind === 'ioredis') {
    const IORedis = require('ioredis')
    const client = new IORedis(url, { retryStrategy: () => 50, maxRetriesPerRequest: null })
    client.on('error', () => {})
    return { client, close: async () => client.disconnect() }
  }
  const { createClient } = require('redis')
  const client = createClient({ url, socket: { reconnectStrategy: () => 50 } })
  client.on('error', () => {})
  await client.connect()
  return { client, close: () => client.destroy() }
}

async function main() {
  const conn = await connect(process.env.CLIENT, process.env.REDIS_URL)
  const engine = process.env.ENGINE === 'js' ? require('../../js') : require('../..')
  const auth = new engine.Authenticator(JSON.parse(process.env.AUTH_CONFIG))
  const feed = new RevocationFeed(conn.client, JSON.parse(process.env.FEED_OPTIONS)).attach(auth)
  await feed.start()
  process.on('message', async (m) => {
    if (m.revoke) {
      auth.revokeToken(m.revoke.jti, m.revoke.expiresAtSec)
      auth.revokeSubject(m.revoke.sub)
      process.send({ revoked: true })
    }
    if (m.check) process.send({ code: auth.authenticate(`Bearer ${m.check}`).errorCode ?? null, stats: feed.stats() })
    if (m.stop) {
      await feed.close()
      await conn.close()
      process.exit(0)
    }
  })
  process.send({ ready: true })
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
