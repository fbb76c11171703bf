'use strict'

// Test support: one "process" of a service behind a load balancer, for the cross-process DPoP
// replay test. Started with `node dpop-replay-app.js` and a JSON config in AUTH_SHIELD_TEST_APP:
// { keys, engine, redisUrl, origin, prefix }; it runs an Express app with auth-shield, its own
// Authenticator, its own ioredis connection and the shared replay store from createRedisStore,
// listens on a free loopback port and prints `port <n>` on stdout. Stops on SIGTERM.

const express = require('express')
const http = require('node:http')
const Redis = require('ioredis')
const expressShield = require('../../adapters/express')
const { createRedisStore } = require('../../lib/store/index')

const { keys, engine, redisUrl, origin, prefix } = JSON.parse(process.env.AUTH_SHIELD_TEST_APP)

async function main() {
  const client = new Redis(redisUrl, { lazyConnect: true })
  client.on('error', () => {})
  await client.connect()
  const dpopReplayStore = createRedisStore(client, { prefix }).dpopReplay()
  const app = express()
  app.use(expressShield({ keys, dpop: true, rateLimitMax: 0 }, { engine, dpopOrigin: origin, dpopReplayStore }), (req, res) => res.json({ ok: true }))
  const server = http.createServer(app)
  server.listen(0, '127.0.0.1', () => process.stdout.write(`port ${server.address().port}\n`))
  process.on('SIGTERM', () => {
    server.close()
    server.closeAllConnections()
    client.disconnect()
  })
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack))
  process.exit(1)
})
