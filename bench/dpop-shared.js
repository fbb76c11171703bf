'use strict'

// What the shared DPoP replay store (auth-shield/redis createDpopReplayStore) adds to a DPoP
// request: the same Express app on loopback with the in-process replay cache only, then with
// the Redis store (a redis-server started here), sequential requests, each with a fresh
// pre-generated ES256 proof. Prints p50/p99 latency and req/s of both. Release build only.
//
//   node bench/dpop-shared.js [--n=2000]

const http = require('node:http')
const { performance } = require('node:perf_hooks')
const jose = require('jose')
const dpop = require('dpop')
const express = require('express')
const Redis = require('ioredis')
const authShield = require('../adapters/express')
const { createDpopReplayStore } = require('../lib/store/index')
const { startRedis } = require('../__test__/support/redis-server')

const N = Number((process.argv.find((a) => a.startsWith('--n=')) || '--n=2000').slice(4))
const ORIGIN = 'https://api.example.com'

function send(port, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/orders', headers, agent }, (res) => {
      res.resume()
      res.on('end', () => resolve(res.statusCode))
    })
    req.on('error', reject)
    req.end()
  })
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

async function measure(label, options, config, token, proofs) {
  const app = express()
  app.use(authShield(config, { dpopOrigin: ORIGIN, ...options }), (req, res) => res.end('ok'))
  const server = http.createServer(app)
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address()
  const times = []
  const start = performance.now()
  let ok = 0
  for (const p of proofs) {
    const t = performance.now()
    if ((await send(port, { authorization: `DPoP ${token}`, dpop: p })) === 200) ok++
    times.push(performance.now() - t)
  }
  const total = performance.now() - start
  server.close()
  times.sort((a, b) => a - b)
  const q = (f) => times[Math.min(times.length - 1, Math.floor(f * times.length))].toFixed(3)
  return { label, ok, p50: q(0.5), p99: q(0.99), rps: Math.round((proofs.length * 1000) / total) }
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
  const redis = await startRedis()
  const client = new Redis(redis.url)
  try {
    const rows = [await measure('in-process cache', {}, config, token, await proofs())]
    rows.push(await measure('+ Redis SET NX PX', { dpopReplayStore: createDpopReplayStore(client) }, config, token, await proofs()))
    rows.push(await measure('in-process cache', {}, config, token, await proofs()))
    rows.push(await measure('+ Redis SET NX PX', { dpopReplayStore: createDpopReplayStore(client) }, config, token, await proofs()))
    console.log(`DPoP over loopback HTTP, ${N} sequential requests per row (keep-alive), node ${process.version}`)
    for (const r of rows) console.log(`${r.label.padEnd(20)} p50 ${r.p50} ms  p99 ${r.p99} ms  ${r.rps} req/s  (${r.ok}/${N} passed)`)
  } finally {
    client.disconnect()
    await redis.stop()
    agent.destroy()
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
