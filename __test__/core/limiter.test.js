'use strict'

// The rate limiter's invariant (issue 12): for every verified identity — the token's `sub` and
// its own `tenant_id` claim — admissions over any interval never exceed
// rateLimitMax + rateLimitRefillPerSec × elapsed, whatever the client varies (tenant header, Host,
// several tokens of one user, floods of other keys evicting buckets). Both engines, plus the
// standalone RateLimiter: its API, errors, memory bound and agreement between engines.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { performance } = require('node:perf_hooks')
const fc = require('fast-check')
const native = require('../..')
const js = require('../../js')
const { hashKey, DebtSketch, seedsFromSecret } = require('../../js/rate-limit/debt-sketch')
const { token, withoutRequestId, random } = require('../support/tokens')

const NOW = 1_700_000_000
const SECRET = 'limiter-access-secret-0123456789abcdef'
const ENGINES = [
  ['native', native],
  ['js', js],
]

const bearer = (claims) => `Bearer ${token({ exp: NOW + 3600, ...claims }, SECRET)}`
const authFor = (lib, config) => new lib.Authenticator({ accessSecret: SECRET, clockTimestamp: NOW, ...config })

test('cycling X-Tenant-ID or Host buys no extra requests (issue 12, reproduction 1)', () => {
  for (const [name, lib] of ENGINES) {
    const config = { rateLimitMax: 5, rateLimitRefillPerSec: 0.01 }
    const h = bearer({ sub: 'mallory' })
    const same = authFor(lib, config)
    const byHeader = authFor(lib, config)
    const byHost = authFor(lib, config)
    let allowed = [0, 0, 0]
    for (let i = 0; i < 1000; i++) {
      if (same.authenticate(h, 't0').authenticated) allowed[0]++
      if (byHeader.authenticate(h, `t${i}`).authenticated) allowed[1]++
      if (byHost.authenticate(h, undefined, `x${i}.example.com`).authenticated) allowed[2]++
    }
    assert.deepEqual(allowed, [5, 5, 5], name)
    // The header still names the request's tenant; it just does not key the bucket.
    const r = authFor(lib, config).authenticate(h, 'victim-tenant')
    assert.equal(r.tenantId, 'victim-tenant', name)
  }
})

test('an exhausted tenant-bound token stays refused after a second token cycles X-Tenant-ID (issue 12, reproduction 2)', () => {
  for (const [name, lib] of ENGINES) {
    const auth = authFor(lib, { rateLimitMax: 5, rateLimitRefillPerSec: 0.001, rateLimitMaxKeys: 1000 })
    const bound = bearer({ sub: 'eve', tenant_id: 'acme' })
    for (let i = 0; i < 5; i++) assert.equal(auth.authenticate(bound).authenticated, true, name)
    assert.equal(auth.authenticate(bound).errorCode, 'rate_limited', name)
    const second = bearer({ sub: 'eve', jti: 'second' })
    let allowed = 0
    for (let i = 0; i < 5000; i++) if (auth.authenticate(second, `t${i}`).authenticated) allowed++
    assert.equal(allowed, 5, `${name}: the second token has one bucket, whatever the header`)
    assert.equal(auth.authenticate(bound).errorCode, 'rate_limited', name)
  }
})

/** Cheap valid Bearer headers for floods (hand-signed, as in flood.test.js). */
function floodBearer(sub) {
  return bearer({ sub })
}

test('an exhausted user stays refused after 300,000 requests from other users at the default key bound', () => {
  const tokens = Array.from({ length: 300_000 }, (_, i) => floodBearer(`other${i}`))
  for (const [name, lib] of ENGINES) {
    const auth = authFor(lib, { rateLimitMax: 5, rateLimitRefillPerSec: 0.001 })
    const victim = bearer({ sub: 'eve' })
    for (let i = 0; i < 5; i++) auth.authenticate(victim)
    assert.equal(auth.authenticate(victim).errorCode, 'rate_limited', name)
    for (const t of tokens) auth.authenticate(t)
    assert.ok(auth.rateLimitBuckets <= 100_001, `${name}: ${auth.rateLimitBuckets} buckets`)
    assert.equal(auth.authenticate(victim).errorCode, 'rate_limited', `${name}: the debt was forgotten`)
  }
})

// ---- the invariant, as a property ----------------------------------------------------------

const USERS = ['alice', 'bob', 'carol:acme']
const TOKEN_VARIANTS = [{}, { tenant_id: 'acme' }, { tenant_id: 'globex' }, { jti: 'another-token' }, { tenant_id: 'acme', jti: 'x' }]
const TOKENS = USERS.map((sub) => TOKEN_VARIANTS.map((extra) => bearer({ sub, ...extra })))
const FLOOD = Array.from({ length: 3000 }, (_, i) => floodBearer(`flood${i}`))

const op = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      user: fc.nat(USERS.length - 1),
      variant: fc.nat(TOKEN_VARIANTS.length - 1),
      header: fc.option(fc.constantFrom('acme', 'globex', 'initech', 'ACME', 't1', 't2')),
      host: fc.option(fc.constantFrom('acme.example.com', 'globex.example.com', 'x9.example.com', 'example.com')),
    }),
  },
  { weight: 1, arbitrary: fc.record({ flood: fc.integer({ min: 1, max: 60 }) }) },
)

test('property: per identity, admissions never exceed max + refill × elapsed, and engines agree', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 4 }),
      fc.integer({ min: 1, max: 30 }),
      fc.array(op, { minLength: 1, maxLength: 120 }),
      (max, maxKeys, ops) => {
        const refill = 0.01
        const config = { rateLimitMax: max, rateLimitRefillPerSec: refill, rateLimitMaxKeys: maxKeys }
        const n = authFor(native, config)
        const j = authFor(js, config)
        const admitted = [new Map(), new Map()]
        let flood = 0
        const started = performance.now()
        for (const o of ops) {
          if (o.flood !== undefined) {
            for (let k = 0; k < o.flood; k++) {
              const t = FLOOD[flood++ % FLOOD.length]
              n.authenticate(t)
              j.authenticate(t)
            }
            continue
          }
          const args = [TOKENS[o.user][o.variant], o.header ?? undefined, o.host ?? undefined]
          const a = n.authenticate(...args)
          const b = j.authenticate(...args)
          if (a.errorCode === 'rate_limited' && b.errorCode === 'rate_limited') b.retryAfterMs = a.retryAfterMs
          assert.deepStrictEqual(withoutRequestId(b), withoutRequestId(a))
          const identity = `${USERS[o.user]} / ${TOKEN_VARIANTS[o.variant].tenant_id ?? ''}`
          for (const [i, r] of [a, b].entries()) {
            if (r.authenticated) admitted[i].set(identity, (admitted[i].get(identity) ?? 0) + 1)
          }
        }
        const elapsedSec = (performance.now() - started) / 1000
        const bound = Math.floor(max + refill * elapsedSec + 1e-6)
        for (const counts of admitted) {
          for (const [identity, count] of counts) {
            assert.ok(count <= bound, `${identity}: ${count} admitted, bound ${bound}`)
          }
        }
      },
    ),
    { numRuns: 150, seed: 0x11e12 },
  )
})

test('sketch seeds come from the config secret, so both engines fold and read the same cells after a flood', () => {
  // HMAC-SHA256(secret, label), first 8 bytes little-endian; the vector was computed with
  // Python's hmac module and is pinned in src/rate_limit.rs too.
  assert.deepEqual(seedsFromSecret('key-of-the-seeds-vector'), [3886601657, 3471708251])
  assert.deepEqual(seedsFromSecret(Buffer.from('key-of-the-seeds-vector')), [3886601657, 3471708251])
  // With one bucket kept, every other identity is folded into the sketch, and 3,000 flood
  // identities fill most of its cells: a user's verdict then depends on which cells collide.
  // Random seeds per engine made the engines disagree here (a flaky property test above).
  for (const config of [
    { accessSecret: SECRET },
    { keys: [{ kid: 'a', alg: 'HS256', secret: SECRET }] },
  ]) {
    const engines = ENGINES.map(([, lib]) => new lib.Authenticator({ clockTimestamp: NOW, rateLimitMax: 1, rateLimitRefillPerSec: 0.01, rateLimitMaxKeys: 1, ...config }))
    const sign = (claims) => `Bearer ${token({ exp: NOW + 3600, ...claims }, SECRET)}`
    const users = Array.from({ length: 200 }, (_, i) => sign({ sub: `user${i}` }))
    for (const t of FLOOD) for (const auth of engines) auth.authenticate(t)
    const verdicts = engines.map((auth) => users.map((t) => auth.authenticate(t).errorCode ?? 'ok').join(','))
    assert.equal(verdicts[1], verdicts[0], Object.keys(config)[0])
    // 3,000 folded identities in 1,024-cell rows: many never-seen users find all their cells
    // owed and start indebted (the sketch's false refusals far past its bound,
    // docs/rate-limiting.md), and the same users in both engines.
    assert.ok(verdicts[0].includes('ok') && verdicts[0].includes('rate_limited'), verdicts[0])
  }
})

// ---- the standalone RateLimiter ------------------------------------------------------------

test('RateLimiter: capacity, cost, remaining and retryAfterMs in both engines', () => {
  for (const [name, lib] of ENGINES) {
    const rl = new lib.RateLimiter({ capacity: 3, refillPerSec: 1 })
    assert.equal(rl.capacity, 3)
    assert.deepEqual(rl.consume('a'), { allowed: true, remaining: 2, retryAfterMs: 0 }, name)
    assert.deepEqual(rl.consume('a', 2), { allowed: true, remaining: 0, retryAfterMs: 0 }, name)
    const refused = rl.consume('a')
    assert.equal(refused.allowed, false, name)
    assert.equal(refused.remaining, 0, name)
    assert.ok(refused.retryAfterMs > 900 && refused.retryAfterMs <= 1000, `${name}: ${refused.retryAfterMs}`)
    // A refused cost takes nothing: 2 of 3 left, asking for 3 fails, then 2 succeeds.
    assert.deepEqual(rl.consume('b'), { allowed: true, remaining: 2, retryAfterMs: 0 }, name)
    const tooMuch = rl.consume('b', 3)
    assert.equal(tooMuch.allowed, false, name)
    assert.equal(tooMuch.remaining, 2, name)
    assert.equal(rl.consume('b', 2).allowed, true, name)
    assert.equal(rl.size, 2, name)
  }
})

test('RateLimiter: tokens come back at refillPerSec', async () => {
  for (const [name, lib] of ENGINES) {
    const rl = new lib.RateLimiter({ capacity: 1, refillPerSec: 50 })
    assert.equal(rl.consume('k').allowed, true, name)
    const refused = rl.consume('k')
    assert.equal(refused.allowed, false, name)
    await new Promise((resolve) => setTimeout(resolve, refused.retryAfterMs + 5))
    assert.equal(rl.consume('k').allowed, true, name)
  }
})

test('RateLimiter: bad arguments throw the same typed errors in both engines', () => {
  const badOptions = [
    undefined,
    null,
    'x',
    [],
    {},
    { capacity: 1 },
    { capacity: '5', refillPerSec: 1 },
    { capacity: 0, refillPerSec: 1 },
    { capacity: 1.5, refillPerSec: 1 },
    { capacity: 2e9, refillPerSec: 1 },
    { capacity: NaN, refillPerSec: 1 },
    { capacity: 1, refillPerSec: 0 },
    { capacity: 1, refillPerSec: -1 },
    { capacity: 1, refillPerSec: Infinity },
    { capacity: 1, refillPerSec: NaN },
    { capacity: 1, refillPerSec: 1, maxKeys: 0 },
    { capacity: 1, refillPerSec: 1, maxKeys: 1e9 },
    { capacity: 1, refillPerSec: 1, maxKeys: '10' },
  ]
  const errorOf = (fn) => {
    try {
      fn()
    } catch (e) {
      return { class: e.constructor.name, code: e.code, message: e.message }
    }
    return null
  }
  for (const options of badOptions) {
    const n = errorOf(() => new native.RateLimiter(options))
    const j = errorOf(() => new js.RateLimiter(options))
    assert.ok(n !== null && /^ERR_/.test(n.code), `${JSON.stringify(options)}: ${JSON.stringify(n)}`)
    assert.ok(['TypeError', 'RangeError'].includes(n.class))
    assert.deepEqual(j, n, JSON.stringify(options))
  }
  const badCalls = [[], [1], [null], [{}], ['k', 0], ['k', 4], ['k', 1.5], ['k', '1'], ['x'.repeat(1025)], ['é'.repeat(513)], ['😀'.repeat(257)]]
  const rn = new native.RateLimiter({ capacity: 3, refillPerSec: 1 })
  const rj = new js.RateLimiter({ capacity: 3, refillPerSec: 1 })
  for (const args of badCalls) {
    const n = errorOf(() => rn.consume(...args))
    assert.ok(n !== null && /^ERR_/.test(n.code), `${JSON.stringify(args).slice(0, 40)}: ${JSON.stringify(n)}`)
    assert.deepEqual(errorOf(() => rj.consume(...args)), n, JSON.stringify(args).slice(0, 40))
  }
  // Longest accepted key: 1024 bytes of UTF-8.
  for (const rl of [rn, rj]) {
    assert.equal(rl.consume('x'.repeat(1024)).allowed, true)
    assert.equal(rl.consume('é'.repeat(512)).allowed, true)
  }
})

test('RateLimiter: engines agree on random sequences of keys and costs', () => {
  const rng = random(12)
  for (let s = 0; s < 40; s++) {
    const capacity = 1 + rng.int(6)
    const options = { capacity, refillPerSec: 1e-6, maxKeys: 1 + rng.int(12) }
    const rn = new native.RateLimiter(options)
    const rj = new js.RateLimiter(options)
    const started = performance.now()
    for (let i = 0; i < 60; i++) {
      const key = rng.pick(['a', 'b', 'c', 'd', 'é', '', 'k:1', 'k1:'])
      const cost = 1 + rng.int(capacity)
      const a = rn.consume(key, cost)
      const b = rj.consume(key, cost)
      // Each engine reads its own clock: a wait may differ by the time between the calls.
      assert.ok(Math.abs(a.retryAfterMs - b.retryAfterMs) <= performance.now() - started + 1)
      assert.deepEqual({ ...b, retryAfterMs: 0 }, { ...a, retryAfterMs: 0 }, `sequence ${s} step ${i}`)
      assert.equal(rj.size, rn.size)
    }
  }
})

test('RateLimiter: a flood of distinct keys stays at maxKeys and never frees an exhausted key', () => {
  for (const [name, lib] of ENGINES) {
    const rl = new lib.RateLimiter({ capacity: 5, refillPerSec: 0.001, maxKeys: 1000 })
    assert.equal(rl.consume('victim@example.com', 5).allowed, true)
    let maxSize = 0
    let leaked = 0
    for (let i = 0; i < 200_000; i++) {
      rl.consume(`guess${i}@example.com`, 1 + (i % 5))
      if ((i & 255) === 0) {
        maxSize = Math.max(maxSize, rl.size)
        if (rl.consume('victim@example.com').allowed) leaked++
      }
    }
    assert.ok(maxSize <= 1001, `${name}: ${maxSize} keys held`)
    assert.equal(leaked, 0, `${name}: the exhausted key was admitted ${leaked} times`)
  }
})

test('RateLimiter: a million distinct keys keep RSS within the documented bound', (t) => {
  // docs/rate-limiting.md: table ≈ maxKeys buckets plus a fixed sketch (32 KiB at maxKeys 1000).
  const settle = () => {
    if (global.gc) global.gc()
    return process.memoryUsage().rss
  }
  const rl = new native.RateLimiter({ capacity: 5, refillPerSec: 1000, maxKeys: 1000 })
  for (let i = 0; i < 5000; i++) rl.consume(`warm${i}`)
  const before = settle()
  for (let i = 0; i < 1_000_000; i++) rl.consume(`user${i}@example.com`)
  const after = settle()
  t.diagnostic(`1,000,000 keys: ${rl.size} held, RSS ${((after - before) / 1048576).toFixed(1)} MiB growth`)
  assert.ok(rl.size <= 1001)
  assert.ok(after - before < 64 * 1024 * 1024, `RSS grew ${((after - before) / 1048576).toFixed(1)} MiB`)
})

test('the debt sketch hashes keys exactly as the native core does', () => {
  // The same vectors are pinned in src/rate_limit/debt_sketch.rs.
  const seeds = [0x9e3779b9, 0x7f4a7c15]
  assert.deepEqual(hashKey(0, 0, ''), [0, 1])
  assert.deepEqual(hashKey(...seeds, 'acme:alice'), [0xb5654bdc, 0x669f0d7b])
  assert.deepEqual(hashKey(...seeds, ':bob'), [0xeaf7006b, 0x6cee6b17])
  assert.deepEqual(hashKey(...seeds, 'été:😀'), [0x02b629ba, 0x16373b81])
  // A lone surrogate hashes as U+FFFD, as Node encodes it to UTF-8 for the native side.
  assert.deepEqual(hashKey(...seeds, 'a\ud800b'), hashKey(...seeds, 'a\ufffdb'))
  const sketch = new DebtSketch(1024, seeds)
  assert.deepEqual(sketch.cellsOf(sketch.hash('acme:alice')), [988, 1024 + 343, 2048 + 722, 3072 + 77])
})

test('the JS debt sketch is allocated at its first debt: reads 0 until then, its size is the fixed bound either way', () => {
  const sketch = new DebtSketch(1024, [1, 2])
  assert.equal(sketch.bytes, 4 * 1024 * 8)
  assert.equal(sketch.cells, null)
  const hash = sketch.hash('acme:alice')
  assert.equal(sketch.tatOf(hash), 0)
  sketch.fold(hash, 5e9)
  assert.equal(sketch.cells.byteLength, sketch.bytes)
  assert.equal(sketch.tatOf(hash), 5e9)
  // Another key shares no cell with it in every row: it owes nothing.
  assert.equal(sketch.tatOf(sketch.hash('globex:bob')), 0)
})
