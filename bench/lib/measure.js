'use strict'
// Interleaved sampling: every round times each contender once (rotating the order), so slow
// drift of the machine (other tenants, thermal, GC of an earlier contender) spreads over all
// contenders instead of landing on whichever ran last.

const { progress } = require('./progress')

const AsyncFunction = (async () => {}).constructor
const LOOP_BODY = 'let last; for (let i = 0; i < n; i++) last = fn(); return last;'
const ASYNC_LOOP_BODY = 'let last; for (let i = 0; i < n; i++) last = await fn(); return last;'

// Each contender gets its own compiled loop, so V8 type feedback from one contender's call
// site never deoptimises or de-inlines another's.
function createLoop(isAsync) {
  return isAsync ? new AsyncFunction('fn', 'n', ASYNC_LOOP_BODY) : new Function('fn', 'n', LOOP_BODY)
}

async function timeLoop(contender, n) {
  const start = process.hrtime.bigint()
  const pending = contender.loop(contender.run, n)
  const last = contender.async ? await pending : pending
  const elapsedNs = Number(process.hrtime.bigint() - start)
  if (!contender.accept(last)) {
    throw new Error(`${contender.label} returned a rejection while being timed: ${JSON.stringify(last)}`)
  }
  return elapsedNs
}

// Finds how many calls fill one sample, then keeps running for the warm-up time so the JIT has
// optimised the contender before the first timed round.
async function calibrate(contender, { sampleMs, warmupMs }) {
  const targetNs = sampleMs * 1e6
  let n = 1
  let elapsed = await timeLoop(contender, n)
  while (elapsed < targetNs / 10 && n < 1e9) {
    n *= 4
    elapsed = await timeLoop(contender, n)
  }
  n = Math.max(1, Math.round((n * targetNs) / elapsed))
  const warmEnd = process.hrtime.bigint() + BigInt(Math.round(warmupMs * 1e6))
  while (process.hrtime.bigint() < warmEnd) await timeLoop(contender, n)
  return n
}

/**
 * contenders: [{ id, label, run: () => result | Promise<result>, async?, accept(result) }]
 * Returns { [id]: { nsPerOp: number[] (one per round), callsPerSample } }.
 */
async function measureInterleaved(section, contenders, { rounds, sampleMs, warmupMs }) {
  const prepared = contenders.map((c) => ({ ...c, loop: createLoop(Boolean(c.async)) }))
  const out = {}
  for (const c of prepared) {
    progress(`${section}: warming up ${c.label}`)
    out[c.id] = { nsPerOp: [], callsPerSample: await calibrate(c, { sampleMs, warmupMs }) }
  }
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < prepared.length; k++) {
      const c = prepared[(k + round) % prepared.length]
      progress(`${section}: round ${round + 1}/${rounds} ${c.label}`)
      const n = out[c.id].callsPerSample
      out[c.id].nsPerOp.push((await timeLoop(c, n)) / n)
    }
  }
  return out
}

module.exports = { measureInterleaved }
