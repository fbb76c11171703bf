'use strict'

// REDIS_URL set: one node-redis client per process and an auth-shield/redis store over it, so
// every worker (and every other instance on the same Redis) shares the rate limits. The
// request path never waits on Redis except for a user this process has not seen yet; when
// Redis goes away each process falls back to its own share of the limit and says so once.
// The revocation feed (logout endpoints) joins this store when it lands.

const { createClient } = require('redis')
const { createRedisStore } = require('auth-shield/redis')

async function connectStore(url, log) {
  const client = createClient({ url })
  // Reconnects on its own; an unhandled 'error' event would crash the process.
  let reported = false
  client.on('error', (err) => {
    if (!reported) log.warn(`redis: ${err.message} (reconnecting; limits are local meanwhile)`)
    reported = true
  })
  client.on('ready', () => (reported = false))
  await client.connect()
  const store = createRedisStore(client)
  store.on('outage', () => log.warn('redis unreachable: rate limits fall back to this process'))
  store.on('recovered', () => log.info('redis reachable again: rate limits are shared again'))
  return {
    store,
    close: async () => {
      await store.close()
      await client.close().catch(() => client.destroy())
    },
  }
}

module.exports = { connectStore }
