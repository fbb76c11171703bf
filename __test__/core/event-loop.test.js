'use strict'

// Argon2 is slow on purpose, so the async helpers run on the libuv pool: while 50 hashes are
// in flight the event loop keeps turning (timers fire, delay stays small next to the work),
// whereas the ...Sync variants are documented as blocking and hold the loop for the whole hash.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { monitorEventLoopDelay } = require('node:perf_hooks')
const native = require('../..')

// The default costs (19 MiB, 2 passes, 1 lane: OWASP's Argon2id baseline).
const OPTIONS = undefined

function ticker() {
  let ticks = 0
  const timer = setInterval(() => ticks++, 1)
  return { stop: () => (clearInterval(timer), ticks) }
}

test('50 async password hashes leave the event loop responsive', async (t) => {
  const histogram = monitorEventLoopDelay({ resolution: 5 })
  const tick = ticker()
  histogram.enable()
  const started = process.hrtime.bigint()
  const hashes = await Promise.all(Array.from({ length: 50 }, (_, i) => native.hashPassword(`password-${i}`, OPTIONS)))
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6
  histogram.disable()
  const ticks = tick.stop()
  const maxDelayMs = histogram.max / 1e6
  t.diagnostic(`50 hashes in ${elapsedMs.toFixed(0)} ms; loop delay max ${maxDelayMs.toFixed(1)} ms, p99 ${(histogram.percentile(99) / 1e6).toFixed(1)} ms; ${ticks} timer ticks`)
  assert.equal(new Set(hashes).size, 50)
  for (const h of hashes) assert.match(h, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
  // The loop kept running during the work: timers fired throughout, and no single stall came
  // anywhere near the time the hashing took (a blocking implementation stalls for all of it).
  assert.ok(ticks >= 5, `only ${ticks} timer ticks in ${elapsedMs.toFixed(0)} ms`)
  assert.ok(maxDelayMs < elapsedMs / 2, `a ${maxDelayMs.toFixed(1)} ms stall during ${elapsedMs.toFixed(0)} ms of hashing`)
  const verified = await Promise.all(hashes.slice(0, 5).map((h, i) => native.verifyPassword(h, `password-${i}`)))
  assert.deepEqual(verified, [true, true, true, true, true])
})

test('hashPasswordSync blocks the event loop for the whole hash, as documented', async () => {
  const tick = ticker()
  await new Promise((r) => setTimeout(r, 5))
  const before = tick.stop()
  const tick2 = ticker()
  for (let i = 0; i < 3; i++) native.hashPasswordSync(`password-${i}`, OPTIONS)
  // No timer callback can run while the synchronous hashes hold the thread.
  assert.equal(tick2.stop(), 0)
  assert.ok(before >= 0)
})
