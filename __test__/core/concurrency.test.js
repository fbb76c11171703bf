'use strict'

// Worker threads hammering one limiter. A native class instance cannot cross threads, so each
// worker calls the one-shot authenticateRequest with an identical config: the addon keeps one
// authenticator (and so one limiter) per process for each config digest. Whatever the
// interleaving, the requests allowed for one user never exceed capacity + refill × elapsed.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { Worker } = require('node:worker_threads')
const path = require('node:path')
const { token } = require('../support/tokens')

const NOW = 1_700_000_000
const SECRET = 'concurrency-access-secret-0123456789abc'
const WORKERS = 4

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const { authenticateRequest } = require(workerData.addon)
const { gate, header, config, attempts } = workerData
const flag = new Int32Array(gate)
// Ready, then wait for the start signal so every worker begins together.
Atomics.add(flag, 1, 1)
Atomics.wait(flag, 0, 0)
let allowed = 0
let limited = 0
let other = 0
let minRemaining = Infinity
for (let i = 0; i < attempts; i++) {
  const r = authenticateRequest(header, undefined, undefined, config)
  if (r.authenticated) {
    allowed++
    minRemaining = Math.min(minRemaining, r.rateLimitRemaining)
  } else if (r.errorCode === 'rate_limited' && r.retryAfterMs > 0 && r.rateLimitRemaining === 0) {
    limited++
  } else {
    other++
  }
}
parentPort.postMessage({ allowed, limited, other, minRemaining })
`

async function hammer(config, header, attempts) {
  const gate = new SharedArrayBuffer(8)
  const flag = new Int32Array(gate)
  const workerData = { addon: path.join(__dirname, '..', '..'), gate, header, config, attempts }
  const workers = Array.from({ length: WORKERS }, () => new Worker(WORKER_SOURCE, { eval: true, workerData }))
  const results = workers.map(
    (w) =>
      new Promise((resolve, reject) => {
        w.once('message', resolve)
        w.once('error', reject)
        w.once('exit', (code) => code !== 0 && reject(new Error(`worker exited with ${code}`)))
      }),
  )
  while (Atomics.load(flag, 1) < WORKERS) await new Promise((r) => setTimeout(r, 5))
  const started = process.hrtime.bigint()
  Atomics.store(flag, 0, 1)
  Atomics.notify(flag, 0)
  const counts = await Promise.all(results)
  const elapsedSec = Number(process.hrtime.bigint() - started) / 1e9
  await Promise.all(workers.map((w) => w.terminate()))
  return { counts, elapsedSec }
}

test('workers sharing one limiter never get more than capacity + refill × elapsed', async (t) => {
  const capacity = 500
  const refill = 200
  const config = { accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: capacity, rateLimitRefillPerSec: refill }
  const header = `Bearer ${token({ sub: 'hammer', exp: NOW + 600 }, SECRET)}`
  const { counts, elapsedSec } = await hammer(config, header, 20_000)
  const allowed = counts.reduce((n, c) => n + c.allowed, 0)
  const limited = counts.reduce((n, c) => n + c.limited, 0)
  assert.equal(counts.reduce((n, c) => n + c.other, 0), 0, 'every refusal is a well-formed rate_limited result')
  assert.equal(allowed + limited, WORKERS * 20_000)
  // The bucket starts full, is shared, and refills continuously: nothing beyond that budget.
  const budget = capacity + refill * elapsedSec
  t.diagnostic(`${allowed} allowed, ${limited} limited in ${elapsedSec.toFixed(3)} s (budget ${budget.toFixed(1)})`)
  assert.ok(allowed <= Math.floor(budget) + 1, `${allowed} allowed > ${budget.toFixed(1)} in ${elapsedSec.toFixed(3)} s`)
  assert.ok(allowed >= capacity, `only ${allowed} allowed: the full bucket was not usable`)
  assert.ok(limited > 0)
  for (const c of counts) if (c.allowed > 0) assert.ok(c.minRemaining >= 0 && c.minRemaining < capacity)
})

test('with no refill the shared bucket hands out exactly its capacity across workers', async () => {
  const capacity = 1000
  const config = { accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: capacity, rateLimitRefillPerSec: 1e-9 }
  const header = `Bearer ${token({ sub: 'exact', exp: NOW + 600 }, SECRET)}`
  const { counts } = await hammer(config, header, 5_000)
  assert.equal(counts.reduce((n, c) => n + c.allowed, 0), capacity)
  // Once drained, the process-wide limiter for this config stays drained for the main thread too.
  const { authenticateRequest } = require('../..')
  assert.equal(authenticateRequest(header, undefined, undefined, config).errorCode, 'rate_limited')
})

test('distinct users on the shared limiter are counted separately', async () => {
  const capacity = 50
  const config = { accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: capacity, rateLimitRefillPerSec: 1e-9 }
  const a = await hammer(config, `Bearer ${token({ sub: 'user-a', exp: NOW + 600 }, SECRET)}`, 1_000)
  const b = await hammer(config, `Bearer ${token({ sub: 'user-b', exp: NOW + 600 }, SECRET)}`, 1_000)
  assert.equal(a.counts.reduce((n, c) => n + c.allowed, 0), capacity)
  assert.equal(b.counts.reduce((n, c) => n + c.allowed, 0), capacity)
})
