'use strict'

// What the shared DPoP replay store adds to a DPoP request: the same Express app on loopback
// with the in-process replay cache only, then with the Redis store (a redis-server started
// here), every request with a fresh pre-generated ES256 proof. Prints p50/p99 latency, req/s,
// and the round trips Redis counted (INFO commandstats: EVAL calls) per request. Alternating
// rows, release build only. Two modes:
//
// - concurrent (the default): C keep-alive connections each sending its requests back to back,
//   the store from store.dpopReplay() of a createRedisStore; the writes of requests arriving
//   while one is in flight share the next script.
// - sequential (--sequential): one keep-alive connection, one request after another, the store
//   from createDpopReplayStore: the price of one round trip per request.
//
//   node bench/dpop-replay-batch.js [--n=3000] [--c=1,16,64]
//   node bench/dpop-replay-batch.js --sequential [--n=2000]

const http = require('node:http')
const { performance } = require('node:perf_hooks')
const jose = require('jose')
const dpop = require('dpop')
const express = require('express')
const Redis = require('ioredis')
const authShield = require('../adapters/express')
const { createRedisStore, createDpopReplayStore } = require('../lib/store/index')
const { startRedis } = require('../__test__/support/redis-server')

const arg = (name, fallback) => (process.argv.find((a) => a.startsWith(`--${name}=`)) || `--${name}=${fallback}`).slice(name.length + 3)
const SEQUENTIAL = process.argv.includes('--sequential')
const N = Number(arg('n', SEQUENTIAL ? 2000 : 3000))
const CONCURRENCY = SEQUENTIAL ? [1] : arg('c', '1,16,64').split(',').map(Number)
const ORIGIN = 'https://api.example.com'

function send(agent, port, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/orders', headers, agent }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode))
    })
    req.on('error', reject)
    req.end()
  })
}

async function measure(label, options, config, token, proofs, c, redis) {
  const app = express()
  app.use(authShield(config, { dpopOrigin: ORIGIN, ...options }), (req, res) => res.end('ok'))
  const server = http.createServer(app)
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address()
  const agent = new http.Agent({ keepAlive: true, maxSockets: c })
  await redis.call('CONFIG', 'RESETSTAT')
  const times = []
  let ok = 0
  let next = 0
  const start = performance.now()
  const worker = async () => {
    while (next < proofs.length) {
      const p = proofs[next++]
      const t = performance.now()
      if ((await send(agent, port, { authorization: `DPoP ${token}`, dpop: p })) === 200) ok++
      times.push(performance.now() - t)
    }
  }
  await Promise.all(Array.from({ length: c }, worker))
  const total = performance.now() - start
  const stats = String(await redis.call('INFO', 'commandstats'))
  const evals = Number((/cmdstat_eval:calls=(\d+)/.exec(stats) || [0, 0])[1])
  agent.destroy()
  server.close()
  times.sort((a, b) => a - b)
  const q = (f) => times[Math.min(times.length - 1, Math.floor(f * times.length))].toFixed(3)
  return { label, c, ok, p50: q(0.5), p99: q(0.99), rps: Math.round((proofs.length * 1000) / total), evalsPerRequest: (evals / proofs.length).toFixed(3) }
}

async function main() {
  const issuer = await jose.generateKeyPair('ES256', { extractable: true })
  const key = await dpop.generateKeyPair('ES256')
  const jkt = await dpop.calculateThumbprint(key.publicKey)
  const token = await new jose.SignJWT({ sub: 'u', cnf: { jkt } }).setProtectedHeader({ alg: 'ES256' }).setIssuedAt().setExpirationTime('1h').sign(issuer.privateKey)
  const config = { keys: [{ alg: 'ES256', publicKey: await jose.exportJWK(issuer.publicKey) }], dpop: true, rateLimitMax: 0 }
  const proofs = async () => {
    const list = []
    for (let i = 0; i < N; i++) list.push(await dpop.generateProof(key, `${ORIGIN}/orders`, 'GET', undefined, token))
    return list
  }
  const server = await startRedis()
  const client = new Redis(server.url)
  const admin = new Redis(server.url)
  // Both give the same store class; the modes keep the two ways an app makes one.
  const sharedStore = SEQUENTIAL ? () => createDpopReplayStore(client) : () => createRedisStore(client).dpopReplay()
  try {
    const rows = []
    for (const c of CONCURRENCY) {
      for (let run = 0; run < 2; run++) {
        rows.push(await measure('in-process cache', {}, config, token, await proofs(), c, admin))
        rows.push(await measure('+ shared store', { dpopReplayStore: sharedStore() }, config, token, await proofs(), c, admin))
      }
    }
    const mode = SEQUENTIAL ? 'sequential requests on one keep-alive connection, createDpopReplayStore' : 'C keep-alive connections, store.dpopReplay()'
    console.log(`DPoP over loopback HTTP, ${N} requests per row, ${mode}, node ${process.version}`)
    for (const r of rows) {
      console.log(`C=${String(r.c).padEnd(3)} ${r.label.padEnd(17)} p50 ${r.p50} ms  p99 ${r.p99} ms  ${r.rps} req/s  EVAL/request ${r.evalsPerRequest}  (${r.ok}/${N} passed)`)
    }
  } finally {
    client.disconnect()
    admin.disconnect()
    await server.stop()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
