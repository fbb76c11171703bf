'use strict'
// Child process of the scale-out section: node:http or Express with auth-shield (native
// engine), its limits in memory (the default) or shared through Redis (auth-shield/redis with
// node-redis: createClient, or createCluster when `cluster` lists root nodes). Reports its port over IPC; answers { requests, waited, cpuUs } when asked
// ('stats'): `waited` counts requests that had to wait for Redis (a lease fetched on the request
// path), `cpuUs` is this process's CPU time so far (user + system, microseconds), `roundTrips`
// the store's Redis round trips so far.

const http = require('node:http')
const { loadNative } = require('../lib/ours')

const { framework, store: useStore, redisUrl, cluster, config } = JSON.parse(process.argv[2])
const { native } = loadNative()
const counts = { requests: 0, waited: 0 }

async function main() {
  let store = null
  if (useStore) {
    const { createClient, createCluster } = require('redis')
    const { createRedisStore } = require('../../lib/store/index')
    const client = cluster ? createCluster({ rootNodes: cluster.map(({ host, port }) => ({ socket: { host, port } })) }) : createClient({ url: redisUrl })
    client.on('error', () => {})
    await client.connect()
    store = createRedisStore(client)
  }
  let server
  if (framework === 'express') {
    const express = require('express')
    const authShield = require('../../adapters/express')
    const app = express()
    const options = { engine: 'native' }
    if (store !== null) options.store = store
    const mw = authShield(config, options)
    app.get('/', (req, res, next) => (counts.requests++, next()), mw, (req, res) => {
      res.json({ ok: true, user: req.user.userId, tenant: req.tenantId ?? null, id: req.id })
    })
    server = http.createServer(app)
  } else {
    const authenticator = new native.Authenticator(config)
    if (store !== null) store.attach(authenticator)
    const answer = (res, result) => {
      if (!result.authenticated) {
        res.writeHead(result.errorStatus, { 'content-type': 'application/json' })
        return res.end(JSON.stringify({ error: result.errorCode }))
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ ok: true, user: result.userId, tenant: result.tenantId ?? null, id: result.requestId }))
    }
    server = http.createServer((req, res) => {
      counts.requests++
      const h = req.headers
      const result = authenticator.authenticate(h.authorization, h['x-tenant-id'], h.host)
      // A new identity (or a lease not renewed in time) waits for one round trip, as the
      // middleware's recovery does.
      if (result.errorCode === 'rate_limit_pending' && store !== null) {
        counts.waited++
        store.flush().then(() => answer(res, authenticator.authenticate(h.authorization, h['x-tenant-id'], h.host)))
        return
      }
      answer(res, result)
    })
  }
  process.on('message', (m) => {
    // Express waits through the middleware's recovery, which the store counts.
    const waited = framework === 'express' && store !== null ? store.stats.recoveries : counts.waited
    const cpu = process.cpuUsage()
    if (m === 'stats') process.send({ requests: counts.requests, waited, cpuUs: cpu.user + cpu.system, roundTrips: store === null ? 0 : store.stats.roundTrips })
  })
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }))
  process.on('disconnect', () => process.exit(0))
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
