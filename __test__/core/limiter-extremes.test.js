'use strict'

// The limiter at the edges of its options (issue 22): a refill so small that 1e9 / refill
// overflows (1e-300, Number.MIN_VALUE, any subnormal) made the interval infinite, and
// Infinity <= Infinity admitted every request (20 of 20 at capacity 3, both engines; the JS
// engine answered remaining: NaN). Property tests over subnormals, Number.MAX_VALUE and the
// values at and next to each bound of contract/options.json for rateLimitMax / rateLimitRefillPerSec (and
// RateLimiter's capacity / refillPerSec): admissions stay within capacity + refill × elapsed,
// and both engines give the same fields. Seeds are fixed so a failure replays.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { performance } = require('node:perf_hooks')
const fc = require('fast-check')
const native = require('../..')
const js = require('../../js')
const { RateLimiter: CoreLimiter } = require('../../js/rate-limit')
const { token, withoutRequestId } = require('../support/tokens')

const SECRET = 'extremes-access-secret-0123456789abcdef'
const RUNS = { seed: 0x22e, numRuns: 300 }
const U64_SATURATED = 2 ** 64
const LARGEST_SUBNORMAL = 2.2250738585072009e-308
const ABOVE_1E9 = 1000000000.0000001
const BELOW_1E9 = 999999999.9999999

// Refill rates in (0, 1e9]: the bounds, their neighbours, subnormals, tiny normals, powers of
// ten from 1e-323 up, and ordinary rates.
const refill = fc.oneof(
  fc.constantFrom(Number.MIN_VALUE, 2 * Number.MIN_VALUE, LARGEST_SUBNORMAL, 2.2250738585072014e-308, 1e-300, 5e-300, 1e-290, 1e-281, 1e-280, 1e-9, 1e-3, 1, 1e9, BELOW_1E9, 999999999),
  fc.double({ min: Number.MIN_VALUE, max: LARGEST_SUBNORMAL, noNaN: true }),
  fc.integer({ min: -323, max: 9 }).map((e) => 10 ** e),
  fc.double({ min: 1e-3, max: 1e9, noNaN: true }),
)
// Capacities in 1..1e9: the bounds and their neighbours, and anything between.
const capacity = fc.oneof(fc.constantFrom(1, 2, 3, 999999999, 1e9), fc.integer({ min: 1, max: 1e9 }))

/** Tokens admitted in any window of `admitted` ([nanos, cost]) never exceed capacity + refill × e. */
function assertWithinBound(admitted, cap, rate, label) {
  for (let i = 0; i < admitted.length; i++) {
    let tokens = 0
    for (let j = i; j < admitted.length; j++) {
      tokens += admitted[j][1]
      const bound = cap + (rate * (admitted[j][0] - admitted[i][0])) / 1e9
      // Float rounding of the TAT sums: a millionth of a token plus a billionth of the bound.
      assert.ok(tokens <= bound + 1e-6 + bound * 1e-9, `${label}: ${tokens} tokens at capacity ${cap}, refill ${rate}`)
    }
  }
}

/** A decision or result's fields are whole numbers in range, never NaN or Infinity. */
function assertWellFormed(allowed, remaining, retryAfterMs, cap, label) {
  assert.ok(Number.isInteger(remaining) && remaining >= 0 && remaining <= cap, `${label}: remaining ${remaining}`)
  if (allowed) assert.equal(retryAfterMs, 0, label)
  else assert.ok(Number.isInteger(retryAfterMs) && retryAfterMs >= 1 && retryAfterMs <= U64_SATURATED, `${label}: retryAfterMs ${retryAfterMs}`)
}

/**
 * Both engines' answers to one burst, compared: equal verdicts and remaining while the burst
 * cannot refill a thousandth of a token; retryAfterMs equal up to the burst's own duration
 * (each engine reads its own clock: whole nanoseconds natively, fractional ones in JS) and the
 * rounding of the TAT sums (a few units in the last place of capacity × interval), exactly
 * equal once saturated at 2^64.
 */
function assertAgree(pairs, cap, rate, elapsedMs, label) {
  if (rate > 1e-3 / Math.max(elapsedMs / 1000, 1)) return
  const roundingMs = (cap + 1) * (1e3 / rate) * 2 ** -49
  for (const [n, j] of pairs) {
    assert.equal(j.allowed, n.allowed, label)
    assert.equal(j.remaining, n.remaining, label)
    if (n.retryAfterMs === U64_SATURATED || j.retryAfterMs === U64_SATURATED) assert.equal(j.retryAfterMs, n.retryAfterMs, label)
    else assert.ok(Math.abs(j.retryAfterMs - n.retryAfterMs) <= elapsedMs + 1 + roundingMs, `${label}: ${j.retryAfterMs} vs ${n.retryAfterMs}`)
  }
}

test('a refill too small for 1e9 / refill never refills and never switches the limit off', () => {
  for (const rate of [1e-300, Number.MIN_VALUE, LARGEST_SUBNORMAL, 1e-290]) {
    const user = `Bearer ${token({ sub: 'tiny', exp: Math.floor(Date.now() / 1000) + 600 }, SECRET)}`
    for (const lib of [native, js]) {
      const auth = new lib.Authenticator({ accessSecret: SECRET, rateLimitMax: 3, rateLimitRefillPerSec: rate })
      const limiter = new lib.RateLimiter({ capacity: 3, refillPerSec: rate })
      const results = Array.from({ length: 20 }, () => auth.authenticate(user))
      const decisions = Array.from({ length: 20 }, () => limiter.consume('k'))
      assert.equal(results.filter((r) => r.authenticated).length, 3, `${rate}`)
      assert.equal(decisions.filter((d) => d.allowed).length, 3, `${rate}`)
      assert.deepEqual(results.map((r) => r.rateLimitRemaining).slice(0, 5), [2, 1, 0, 0, 0], `${rate}`)
      assert.deepEqual([results[19].errorCode, results[19].retryAfterMs], ['rate_limited', U64_SATURATED], `${rate}`)
      assert.deepEqual(decisions[19], { allowed: false, remaining: 0, retryAfterMs: U64_SATURATED }, `${rate}`)
    }
  }
})

test('property: admissions <= capacity + refill x elapsed on a simulated clock, extreme floats (JS core)', () => {
  const step = fc.oneof(fc.constant(0), fc.constant(1), fc.integer({ min: 0, max: 1e9 }), fc.integer({ min: 1e9, max: 1e11 }))
  // The monotonic clock after 16 minutes, 11.6 days, 104 days of uptime.
  const start = fc.constantFrom(1e12, 1e15, 2 ** 53)
  fc.assert(
    fc.property(capacity, refill, fc.array(fc.tuple(step, fc.nat()), { minLength: 1, maxLength: 40 }), start, (cap, rate, calls, from) => {
      const limiter = new CoreLimiter(cap, rate, 100, [3, 5])
      let now = from
      const admitted = []
      for (const [dt, draw] of calls) {
        now += dt
        const cost = 1 + (draw % cap)
        const d = limiter.consume('k', cost, now)
        assertWellFormed(d.allowed, d.remaining, d.allowed ? 0 : d.retryAfterMs, cap, 'core')
        if (d.allowed) admitted.push([now, cost])
      }
      assertWithinBound(admitted, cap, rate, 'core')
    }),
    { ...RUNS, numRuns: 600 },
  )
})

test('a refill near the 1e9 bound stays exact after days of uptime (JS core, simulated clock)', () => {
  // At 1e15 ns an f64 instant is exact to 1/8 ns: with the TAT kept as an instant, a refill of
  // 1e9/1.3 admitted 800,002 of 1,000,000 one-nanosecond-apart requests (bound 769,233).
  for (const rate of [1e9 / 1.3, 758252799.7981564, 3e8, 1e9]) {
    const limiter = new CoreLimiter(3, rate, 100, [3, 5])
    let admitted = 0
    for (let i = 1; i <= 1e6; i++) if (limiter.consume('u', 1, 1e15 + i).allowed) admitted++
    const bound = 3 + (rate * 1e6) / 1e9
    assert.ok(admitted <= bound && admitted >= Math.min(bound - 1, 1e6), `${rate}: ${admitted} admitted, bound ${bound}`)
  }
})

test('property: RateLimiter at extreme capacities and refills, both engines, equal fields', () => {
  fc.assert(
    fc.property(capacity, refill, fc.array(fc.nat(), { minLength: 1, maxLength: 12 }), (cap, rate, draws) => {
      // maxKeys 1000: a 32 KiB debt sketch per limiter instead of 4 MiB (one key is used).
      const n = new native.RateLimiter({ capacity: cap, refillPerSec: rate, maxKeys: 1000 })
      const j = new js.RateLimiter({ capacity: cap, refillPerSec: rate, maxKeys: 1000 })
      const pairs = []
      const admitted = { native: [], js: [] }
      const start = performance.now()
      for (const draw of draws) {
        const cost = 1 + (draw % cap)
        const pair = [n.consume('k', cost), j.consume('k', cost)]
        const at = (performance.now() - start) * 1e6
        pairs.push(pair)
        pair.forEach((d, i) => {
          assertWellFormed(d.allowed, d.remaining, d.retryAfterMs, cap, i === 0 ? 'native' : 'js')
          if (d.allowed) admitted[i === 0 ? 'native' : 'js'].push([at, cost])
        })
      }
      const elapsedMs = performance.now() - start
      // Admission times are read after the calls, so a window's elapsed time is only an upper
      // bound; add the whole burst to the allowance instead of trusting it.
      for (const [name, list] of Object.entries(admitted)) {
        const tokens = list.reduce((sum, [, cost]) => sum + cost, 0)
        const bound = cap + (rate * elapsedMs) / 1000
        assert.ok(tokens <= bound + 1e-6 + bound * 1e-9, `${name}: ${tokens} tokens at capacity ${cap}, refill ${rate}`)
      }
      assertAgree(pairs, cap, rate, elapsedMs, 'RateLimiter')
    }),
    RUNS,
  )
})

test('property: the Authenticator at extreme rateLimitMax and rateLimitRefillPerSec, both engines, equal results', () => {
  const user = `Bearer ${token({ sub: 'extreme', exp: Math.floor(Date.now() / 1000) + 3600 }, SECRET)}`
  const max = fc.oneof(fc.constant(0), capacity)
  fc.assert(
    fc.property(max, refill, fc.integer({ min: 1, max: 8 }), (rateLimitMax, rateLimitRefillPerSec, calls) => {
      const config = { accessSecret: SECRET, rateLimitMax, rateLimitRefillPerSec, rateLimitMaxKeys: 1000 }
      const n = new native.Authenticator(config)
      const j = new js.Authenticator(config)
      assert.deepEqual([j.rateLimitMax, j.rateLimitRefillPerSec], [n.rateLimitMax, n.rateLimitRefillPerSec])
      const pairs = []
      const start = performance.now()
      for (let i = 0; i < calls; i++) pairs.push([withoutRequestId(n.authenticate(user)), withoutRequestId(j.authenticate(user))])
      const elapsedMs = performance.now() - start
      let admitted = 0
      for (const [a, b] of pairs) {
        assert.equal(b.rateLimitLimit, a.rateLimitLimit)
        if (rateLimitMax === 0) {
          assert.deepEqual(b, a)
          continue
        }
        for (const r of [a, b]) assertWellFormed(r.authenticated, r.rateLimitRemaining, r.retryAfterMs, rateLimitMax, 'auth')
        if (a.authenticated) admitted++
      }
      assert.ok(admitted <= rateLimitMax + (rateLimitRefillPerSec * elapsedMs) / 1000 + 1e-6, `${admitted} of ${calls}`)
      if (rateLimitMax > 0) {
        const decisions = pairs.map(([a, b]) =>
          [a, b].map((r) => ({ allowed: r.authenticated, remaining: r.rateLimitRemaining, retryAfterMs: r.retryAfterMs })),
        )
        assertAgree(decisions, rateLimitMax, rateLimitRefillPerSec, elapsedMs, 'Authenticator')
        // Everything but the clock-dependent fields is equal, always.
        for (const [a, b] of pairs) {
          const strip = ({ rateLimitRemaining, retryAfterMs, ...rest }) => rest
          if (a.authenticated === b.authenticated) assert.deepEqual(strip(b), strip(a))
        }
      }
    }),
    { ...RUNS, numRuns: 200 },
  )
})

test('values past each bound (MAX_VALUE, 0, -0, the next double past 1e9, NaN) are refused alike', () => {
  const refused = (make) => {
    try {
      make()
    } catch (err) {
      return { name: err.name, code: err.code, message: err.message }
    }
    return 'accepted'
  }
  const badRefills = [0, -0, -Number.MIN_VALUE, ABOVE_1E9, 1e10, Number.MAX_VALUE, -Number.MAX_VALUE, Infinity, NaN]
  const badMax = [-1, 1e9 + 1, Number.MAX_VALUE, 0.5, Number.MIN_VALUE, BELOW_1E9, NaN, -Infinity]
  const cases = [
    ...badRefills.map((v) => (lib) => new lib.Authenticator({ accessSecret: SECRET, rateLimitRefillPerSec: v })),
    ...badMax.map((v) => (lib) => new lib.Authenticator({ accessSecret: SECRET, rateLimitMax: v })),
    ...badRefills.map((v) => (lib) => new lib.RateLimiter({ capacity: 3, refillPerSec: v })),
    ...[...badMax, 0].map((v) => (lib) => new lib.RateLimiter({ capacity: v, refillPerSec: 1 })),
  ]
  for (const make of cases) {
    const expected = refused(() => make(native))
    assert.notEqual(expected, 'accepted', make.toString())
    assert.deepEqual(refused(() => make(js)), expected)
  }
})

test('a refill that never refills writes whole delta-seconds (at most 2^31) in every rate-limit header, both adapters and engines', async () => {
  const express = require('express')
  const Fastify = require('fastify')
  const authShield = require('../../adapters/express')
  const authShieldPlugin = require('../../adapters/fastify')
  const { listen, get } = require('../support/http')
  const config = { accessSecret: SECRET, rateLimitMax: 1, rateLimitRefillPerSec: 1e-300 }
  const user = `Bearer ${token({ sub: 'headers', exp: Math.floor(Date.now() / 1000) + 600 }, SECRET)}`
  const seen = []
  for (const engine of ['native', 'js']) {
    const app = express()
    app.get('/x', authShield(config, { engine, rateLimitHeaders: 'both' }), (req, res) => res.json({ ok: true }))
    const fastify = Fastify()
    await fastify.register(authShieldPlugin, { config, engine, rateLimitHeaders: 'both' })
    fastify.get('/x', async () => ({ ok: true }))
    await fastify.ready()
    for (const [framework, server] of [['express', await listen(require('node:http').createServer(app))], ['fastify', await listen(fastify.server)]]) {
      try {
        const [first, second] = [await get(`${server.base}/x`, { authorization: user }), await get(`${server.base}/x`, { authorization: user })]
        const label = `${framework}, ${engine}`
        assert.deepEqual([first.status, second.status], [200, 429], label)
        const pick = (r) => [r.headers['ratelimit-reset'], r.headers['ratelimit-policy'], r.headers.ratelimit, r.headers['retry-after']]
        assert.deepEqual(pick(first), ['2147483648', '"default";q=1;w=2147483648', '"default";r=0;t=2147483648', undefined], label)
        assert.deepEqual(pick(second), ['2147483648', '"default";q=1;w=2147483648', '"default";r=0;t=2147483648', '2147483648'], label)
        seen.push([pick(first), pick(second)])
      } finally {
        await server.close()
      }
    }
  }
  assert.equal(new Set(seen.map((s) => JSON.stringify(s))).size, 1)
})
