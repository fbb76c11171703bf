'use strict'
// False refusals of innocent users while a flood of distinct keys hits the rate limiter, and
// the memory it holds meanwhile (issue 12). Runs on its own:
//
//   node bench/limiter-flood.js [--keys=10000000] [--shape=one,exhaust] [--engine=native|js]
//
// Sizes are the defaults (the Authenticator's rateLimitMax 100, rateLimitRefill 10/s,
// rateLimitMaxKeys 100000, so a sketch of 4 × 131072 cells) on the exported RateLimiter, which
// is the Authenticator's limiter (same core). The flood is as fast as one thread can call it:
//   one      every flood key sends one request (one token of debt each);
//   exhaust  every flood key spends its whole bucket at once (consume(key, 100)): the most debt
//            a key can hold, 100× more debt per call than real requests could create.
// Meanwhile 5,000 innocent keys take turns: one request every 200 flood calls, each innocent at
// most once per 1.05 / refill seconds, so its own bucket is always full again by its next
// request and every refusal it gets is a false one (debt inherited from the sketch).

const { performance } = require('node:perf_hooks')
const path = require('node:path')

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v = 'true'] = a.replace(/^--/, '').split('=')
    return [k, v]
  }),
)
const KEYS = Number(args.keys ?? 10_000_000)
const SHAPES = (args.shape ?? 'one,exhaust').split(',')
const ENGINE = args.engine ?? 'native'
const CAPACITY = 100
const REFILL = 10
const MAX_KEYS = 100_000
const INNOCENTS = 5000
const CHECK_EVERY = 200

const lib = ENGINE === 'js' ? require(path.join(__dirname, '..', 'js')) : require(path.join(__dirname, '..'))
const mib = (bytes) => (bytes / 1048576).toFixed(1)

function settle() {
  if (global.gc) global.gc()
  return process.memoryUsage().rss
}

function run(shape) {
  const before = settle()
  const rl = new lib.RateLimiter({ capacity: CAPACITY, refillPerSec: REFILL, maxKeys: MAX_KEYS })
  const afterConstruction = settle()
  const cost = shape === 'exhaust' ? CAPACITY : 1
  const spacingMs = (1.05 * 1000) / REFILL
  const lastAt = new Float64Array(INNOCENTS).fill(-Infinity)
  let next = 0
  let innocentRequests = 0
  let falseRefusals = 0
  let maxSize = 0
  let peakRss = afterConstruction
  const started = performance.now()
  for (let i = 0; i < KEYS; i++) {
    rl.consume(`flood:${shape}:${i}`, cost)
    if (i % CHECK_EVERY === 0) {
      const now = performance.now()
      if (now - lastAt[next] >= spacingMs) {
        lastAt[next] = now
        innocentRequests++
        if (!rl.consume(`innocent:${next}`).allowed) falseRefusals++
      }
      next = (next + 1) % INNOCENTS
      if (i % (CHECK_EVERY * 1000) === 0) {
        maxSize = Math.max(maxSize, rl.size)
        peakRss = Math.max(peakRss, process.memoryUsage().rss)
      }
    }
  }
  const seconds = (performance.now() - started) / 1000
  maxSize = Math.max(maxSize, rl.size)
  const after = process.memoryUsage().rss
  peakRss = Math.max(peakRss, after)
  return {
    shape,
    engine: ENGINE,
    floodKeys: KEYS,
    seconds: Number(seconds.toFixed(1)),
    floodCallsPerSec: Math.round(KEYS / seconds),
    innocentRequests,
    falseRefusals,
    falseRefusalRate: innocentRequests === 0 ? null : falseRefusals / innocentRequests,
    maxKeysHeld: maxSize,
    sketchMiB: mib(4 * 131072 * 8),
    rssAtConstructionMiB: mib(afterConstruction - before),
    rssGrowthPeakMiB: mib(peakRss - before),
    rssTotalMiB: mib(peakRss),
  }
}

for (const shape of SHAPES) {
  const r = run(shape)
  console.log(JSON.stringify(r))
}
