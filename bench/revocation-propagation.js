'use strict'

// Revocation propagation across processes (docs/revocation.md): N child processes each follow
// the shared revocations with a RevocationFeed (node-redis, native engine); the parent revokes a
// token through its own feed and every child reports the moment its authenticator refuses it
// (checked in the feed's onApplied hook, i.e. when the entry reaches the native deny list).
// Latency = that moment minus the start of the parent's revokeToken call, on one machine's clock.
//
//   node bench/revocation-propagation.js [--processes=4] [--revocations=200]
//
// Starts its own redis-server (the test support module). `measurePropagation` is also used by
// __test__/store/revocation-feed.test.js, which checks that every process enforces every revocation.

const { fork } = require('node:child_process')
const path = require('node:path')

const now = () => performance.timeOrigin + performance.now()
const CONFIG = { accessSecret: 'propagation-bench-secret-0123456789ab', rateLimitMax: 0 }
const PREFIX = 'bench:propagation'

async function child() {
  const { createClient } = require('redis')
  const native = require('..')
  const { RevocationFeed } = require('../lib/store/revocations')
  const client = createClient({ url: process.env.REDIS_URL })
  client.on('error', () => {})
  await client.connect()
  const auth = new native.Authenticator(CONFIG)
  const waiting = new Map() // token -> id
  const settle = () => {
    for (const [token, id] of waiting) {
      if (auth.authenticate(`Bearer ${token}`).errorCode === 'token_revoked') {
        waiting.delete(token)
        process.send({ enforced: id, at: now() })
      }
    }
  }
  const feed = new RevocationFeed(client, { prefix: PREFIX, onApplied: settle }).attach(auth)
  await feed.start()
  process.on('message', async (m) => {
    if (m.watch) {
      waiting.set(m.watch.token, m.watch.id)
      settle()
      process.send({ watching: m.watch.id })
    } else if (m.stop) {
      await feed.close()
      await client.destroy()
      process.exit(0)
    }
  })
  process.send({ ready: true })
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

/** Returns `{ samples, p50, p99, max }` in milliseconds; every process must enforce every revocation. */
async function measurePropagation({ redisUrl, processes = 4, revocations = 200, timeoutMs = 5000 }) {
  const { createClient } = require('redis')
  const native = require('..')
  const { RevocationFeed } = require('../lib/store/revocations')
  const children = []
  for (let i = 0; i < processes; i++) {
    const c = fork(__filename, ['--child'], { env: { ...process.env, REDIS_URL: redisUrl }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    children.push(c)
  }
  const client = createClient({ url: redisUrl })
  client.on('error', () => {})
  await client.connect()
  const auth = new native.Authenticator(CONFIG)
  const feed = new RevocationFeed(client, { prefix: PREFIX }).attach(auth)
  try {
    await Promise.all(children.map((c) => new Promise((resolve, reject) => {
      c.once('exit', (code) => reject(new Error(`child exited (${code}) before it was ready`)))
      c.on('message', (m) => m.ready && resolve())
    })))
    await feed.start()
    const samples = []
    for (let id = 0; id < revocations; id++) {
      const token = auth.signAccessToken({ sub: `user-${id}` })
      const { jti, expiresAtSec } = auth.verifyAccessToken(token)
      await Promise.all(children.map((c) => new Promise((resolve) => {
        const on = (m) => m.watching === id && (c.off('message', on), resolve())
        c.on('message', on)
        c.send({ watch: { token, id } })
      })))
      const enforced = children.map((c) => new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`revocation ${id} not enforced within ${timeoutMs} ms`)), timeoutMs)
        const on = (m) => m.enforced === id && (c.off('message', on), clearTimeout(timer), resolve(m.at))
        c.on('message', on)
      }))
      const t0 = now()
      await auth.revokeToken(jti, expiresAtSec)
      for (const at of await Promise.all(enforced)) samples.push(at - t0)
    }
    const sorted = [...samples].sort((a, b) => a - b)
    return { samples: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) }
  } finally {
    for (const c of children) if (c.connected) c.send({ stop: true })
    await Promise.all(children.map((c) => (c.exitCode === null && c.signalCode === null ? new Promise((r) => c.once('exit', r)) : null)))
    await feed.close()
    await client.destroy()
  }
}

async function main() {
  const arg = (name, fallback) => Number((process.argv.find((a) => a.startsWith(`--${name}=`)) || '').split('=')[1] || fallback)
  const { startRedis } = require(path.join(__dirname, '..', '__test__', 'support', 'redis-server'))
  const redis = await startRedis()
  try {
    const processes = arg('processes', 4)
    const r = await measurePropagation({ redisUrl: redis.url, processes, revocations: arg('revocations', 200) })
    console.log(`revocation propagation, ${processes} processes, ${r.samples} samples: p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max.toFixed(2)} ms (target p99 <= 50 ms)`)
  } finally {
    await redis.stop()
  }
}

if (process.argv.includes('--child')) {
  child().catch((err) => {
    console.error(err)
    process.exit(1)
  })
} else if (require.main === module) {
  main().catch((err) => {
    console.error(err)
    process.exit(1)
  })
}

module.exports = { measurePropagation }
