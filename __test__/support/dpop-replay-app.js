'use strict'

// Test support: one "process" of a service behind a load balancer, for the cross-process DPoP
// replay tests. Run as `node dpop-replay-app.js` with a JSON config in AUTH_SHIELD_TEST_APP:
// { keys, engine, redisUrl, origin, prefix } and optionally the token's { issuer, audience }
// (an identity provider's tokens) and a dpopNonceSecret (server nonces); it runs an Express app with auth-shield, its own
// Authenticator, its own ioredis connection and the shared replay store from createRedisStore,
// listens on a free loopback port and prints `port <n>` on stdout. Stops on SIGTERM.
// Required, it exports startReplayApp(settings): that process, started and listening.

const { spawn } = require('node:child_process')

/** Spawns this file with `settings`; resolves to { base, stop } once it listens. */
async function startReplayApp(settings) {
  const env = { ...process.env, AUTH_SHIELD_TEST_APP: JSON.stringify(settings) }
  const child = spawn(process.execPath, [__filename], { env, stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const port = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (c) => {
      out += c
      const m = /port (\d+)/.exec(out)
      if (m) resolve(Number(m[1]))
    })
    exited.then((code) => reject(new Error(`app exited with ${code}`)))
  })
  return {
    base: `http://127.0.0.1:${port}`,
    stop: async () => {
      child.kill('SIGTERM')
      await exited
    },
  }
}

async function main() {
  const express = require('express')
  const http = require('node:http')
  const Redis = require('ioredis')
  const expressShield = require('../../adapters/express')
  const { createRedisStore } = require('../../lib/store/index')
  const { keys, engine, redisUrl, origin, prefix, issuer, audience, dpopNonceSecret } = JSON.parse(process.env.AUTH_SHIELD_TEST_APP)
  const client = new Redis(redisUrl, { lazyConnect: true })
  client.on('error', () => {})
  await client.connect()
  const dpopReplayStore = createRedisStore(client, { prefix }).dpopReplay()
  const app = express()
  const config = { keys, dpop: true, rateLimitMax: 0, ...(issuer === undefined ? {} : { issuer }), ...(audience === undefined ? {} : { audience }), ...(dpopNonceSecret === undefined ? {} : { dpopNonceSecret }) }
  app.use(expressShield(config, { engine, dpopOrigin: origin, dpopReplayStore }), (req, res) => res.json({ ok: true, user: req.user }))
  const server = http.createServer(app)
  server.listen(0, '127.0.0.1', () => process.stdout.write(`port ${server.address().port}\n`))
  process.on('SIGTERM', () => {
    server.close()
    server.closeAllConnections()
    client.disconnect()
  })
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(String(err && err.stack))
    process.exit(1)
  })
}

/**
 * Starts one process per entry of `settingsList` at once, pushing each that started into `apps`
 * (in list order) for the caller to stop, even when another failed to start.
 */
async function startReplayApps(apps, settingsList) {
  const settled = await Promise.allSettled(settingsList.map((settings) => startReplayApp(settings)))
  for (const s of settled) if (s.status === 'fulfilled') apps.push(s.value)
  const failed = settled.find((s) => s.status === 'rejected')
  if (failed !== undefined) throw failed.reason
}

module.exports = { startReplayApp, startReplayApps }
