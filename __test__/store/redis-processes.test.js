'use strict'

// Four processes share one identity's limit through a real redis-server (node-redis and
// ioredis, both engines): together they admit at least the bucket's capacity and never more
// than the documented bound, rateLimitMax + rateLimitRefillPerSec × elapsed + N × lease
// (docs/scale-out.md). And redis-server killed with SIGKILL under them, then restarted: every
// process keeps serving from its local share, sees the outage and the recovery, and exits
// cleanly.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { redisSkip, startRedis } = require('../support/redis-server')
const { CLIENT_KINDS } = require('../support/redis-clients')
const { sharedLimitRun, sleep } = require('../support/topology-run')
const { token } = require('../support/tokens')

const SECRET = 'redis-processes-test-secret-0123456789ab'
const PROCESSES = 4
const MAX = 200
const REFILL = 50
const LEASE = 10
const DURATION_MS = 1500

describe('a limit shared by 4 processes through Redis', { skip: redisSkip() }, () => {
  let redis
  before(async () => (redis = await startRedis()))
  after(() => redis.stop())

  for (const kind of CLIENT_KINDS) {
    for (const engine of ['native', 'js']) {
      it(`admits between the capacity and the lease bound (${kind}, ${engine} engine)`, async (t) => {
        const authorization = `Bearer ${token({ sub: `shared-${kind}-${engine}`, exp: Math.floor(Date.now() / 1000) + 600 }, SECRET)}`
        // Every worker loaded and connected before any starts: they compete for the whole run.
        const mix = Array.from({ length: PROCESSES }, () => ({ kind, engine }))
        const { results, admitted, elapsedSec } = await sharedLimitRun({ mix, url: redis.url, prefix: 'procs:', lease: LEASE, secret: SECRET, max: MAX, refill: REFILL, durationMs: DURATION_MS, authorization })
        const bound = MAX + REFILL * elapsedSec + PROCESSES * LEASE
        t.diagnostic(`admitted ${admitted} in ${elapsedSec.toFixed(2)} s (capacity ${MAX}, bound ${bound.toFixed(1)}), waits ${results.map((r) => r.waits).join('/')}`)
        assert.ok(admitted >= MAX, `admitted ${admitted} < capacity ${MAX}`)
        assert.ok(admitted <= bound, `admitted ${admitted} > bound ${bound.toFixed(1)} (${JSON.stringify(results)})`)
        assert.ok(results.every((r) => r.admitted > 0), 'every process was served')
        assert.ok(results.some((r) => r.refused > 0), 'the shared bucket ran dry')
      })
    }
  }

  it('4 processes survive SIGKILL of redis-server and its restart: fallback, then recovery', async () => {
    const authorization = `Bearer ${token({ sub: 'outage', exp: Math.floor(Date.now() / 1000) + 600 }, SECRET)}`
    const options = {
      url: redis.url,
      prefix: 'outage:',
      lease: 10,
      secret: SECRET,
      max: 1000,
      refill: 1000,
      durationMs: 4000, // room for the restart and the first probe on a loaded machine
      authorization,
      storeOptions: { commandTimeoutMs: 200, retryIntervalMs: 100, outageShare: 0.25 },
    }
    const mix = Array.from({ length: PROCESSES }, (_, i) => ({ kind: CLIENT_KINDS[i % 2], engine: i < 2 ? 'native' : 'js' }))
    const { results } = await sharedLimitRun({
      ...options,
      mix,
      during: async () => {
        await sleep(800)
        await redis.kill()
        await sleep(800)
        await redis.restart()
      },
    })
    for (const r of results) {
      assert.ok(r.outages >= 1, `no outage seen: ${JSON.stringify(r)}`)
      assert.ok(r.recoveries >= 1, `no recovery seen: ${JSON.stringify(r)}`)
      assert.ok(r.admittedWhileDown > 0, `nothing served while Redis was down: ${JSON.stringify(r)}`)
      assert.ok(r.admitted > r.admittedWhileDown, `nothing served from Redis: ${JSON.stringify(r)}`)
    }
  })
})
