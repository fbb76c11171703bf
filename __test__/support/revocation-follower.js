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
// REDIS_TARGET (JSON: `{ cluster: rootNodes }` or `{ sentinel: { name, sentinels } }`) replaces
// REDIS_URL for the topology suites (__test__/store/redis-cluster.test.js, redis-sentinel.test.js); with
// REPORT_APPLIED=1 the follower also sends `{ applied: entries, at: Date.now() }` for every read
// that applied stream entries (propagation times, measured by the parent on the same clock).

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
  const conn = process.env.REDIS_TARGET
    ? await require('./redis-clients').connectClient(process.env.CLIENT || 'node-redis', JSON.parse(process.env.REDIS_TARGET))
    : await connect(process.env.CLIENT, process.env.REDIS_URL)
  const engine = process.env.ENGINE === 'js' ? require('../../js') : require('../..')
  const auth = new engine.Authenticator(JSON.parse(process.env.AUTH_CONFIG))
  const feedOptions = JSON.parse(process.env.FEED_OPTIONS)
  if (process.env.REPORT_APPLIED === '1') feedOptions.onApplied = (applied) => process.send({ applied, at: Date.now() })
  const feed = new RevocationFeed(conn.client, feedOptions).attach(auth)
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
