'use strict'
// Argon2 password helpers: round trips, interop with the `argon2` (C reference) and
// `@node-rs/argon2` npm packages in both directions, caps, typed errors, event-loop behaviour.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const fixtures = require('../fixtures/argon2_phc.json')
const {
  hashPassword,
  hashPasswordSync,
  verifyPassword,
  verifyPasswordSync,
  needsRehash,
} = require('../..')

function tryRequire(name) {
  try {
    return require(name)
  } catch {
    return null
  }
}
const argon2C = tryRequire('argon2')
const nodeRs = tryRequire('@node-rs/argon2')

// Small costs keep the debug build fast; the defaults get their own test.
const FAST = { memoryCost: 1024, timeCost: 1, parallelism: 1 }

test('hashPassword resolves to an argon2id PHC string with the default costs', async () => {
  const hash = await hashPassword('hunter2')
  assert.match(hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
  assert.equal(await verifyPassword(hash, 'hunter2'), true)
  assert.equal(await verifyPassword(hash, 'hunter3'), false)
})

test('salts are random: the same password hashes differently', () => {
  assert.notEqual(hashPasswordSync('pw', FAST), hashPasswordSync('pw', FAST))
})

test('sync pair and Buffer passwords', () => {
  const hash = hashPasswordSync(Buffer.from('pässwörd'), FAST)
  assert.equal(verifyPasswordSync(hash, 'pässwörd'), true)
  assert.equal(verifyPasswordSync(hash, new Uint8Array(Buffer.from('pässwörd'))), true)
  assert.equal(verifyPasswordSync(hash, 'passwort'), false)
})

test('a pepper (secret) is required to verify a peppered hash', async () => {
  const secret = Buffer.from('server-side-pepper')
  const hash = await hashPassword('pw', { ...FAST, secret })
  assert.equal(await verifyPassword(hash, 'pw', { secret }), true)
  assert.equal(await verifyPassword(hash, 'pw'), false)
  assert.equal(await verifyPassword(hash, 'pw', { secret: 'other-pepper' }), false)
})

test('verifies stored PHC strings from the argon2 and @node-rs/argon2 packages (i, d, id)', async () => {
  for (const c of fixtures.cases) {
    const opts = c.secret ? { secret: Buffer.from(c.secret) } : undefined
    assert.equal(await verifyPassword(c.hash, fixtures.password, opts), true, `${c.lib} ${c.hash}`)
    assert.equal(verifyPasswordSync(c.hash, fixtures.password + '!', opts), false, c.hash)
  }
})

test('live interop with npm argon2 (C reference) both ways', { skip: !argon2C && 'argon2 npm package not loadable' }, async () => {
  for (const type of [argon2C.argon2i, argon2C.argon2d, argon2C.argon2id]) {
    const theirs = await argon2C.hash('interop', { type, memoryCost: 2048, timeCost: 2, parallelism: 2 })
    assert.equal(await verifyPassword(theirs, 'interop'), true, theirs)
  }
  const ours = await hashPassword('interop', FAST)
  assert.equal(await argon2C.verify(ours, 'interop'), true)
  assert.equal(await argon2C.verify(ours, 'nope'), false)
  const secret = Buffer.from('pepper-pepper-pepper')
  const peppered = await hashPassword('interop', { ...FAST, secret })
  assert.equal(await argon2C.verify(peppered, 'interop', { secret }), true)
})

test('live interop with @node-rs/argon2 both ways', { skip: !nodeRs && '@node-rs/argon2 not loadable' }, async () => {
  const theirs = await nodeRs.hash('interop', { memoryCost: 2048, timeCost: 2, parallelism: 1 })
  assert.equal(await verifyPassword(theirs, 'interop'), true)
  const ours = await hashPassword('interop', FAST)
  assert.equal(await nodeRs.verify(ours, 'interop'), true)
  assert.equal(await nodeRs.verify(ours, 'nope'), false)
})

test('malformed hashes: verifyPassword rejects, the sync functions throw, TypeError ERR_INVALID_HASH', async () => {
  for (const bad of ['', 'plaintext', '$2b$10$abcdefghijklmnopqrstuv', '$argon2id$v=19$m=abc,t=1,p=1$c2FsdHNhbHQ$aGFzaA', '$argon2id$v=19$m=64,t=1,p=1$$', '$'.repeat(5000)]) {
    const label = bad.slice(0, 40)
    await assert.rejects(verifyPassword(bad, 'pw'), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_HASH', label)
    assert.throws(() => verifyPasswordSync(bad, 'pw'), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_HASH', label)
    assert.throws(() => needsRehash(bad), { code: 'ERR_INVALID_HASH' })
  }
})

test('stored hashes above the cost caps are refused before any work', async () => {
  const huge = '$argon2id$v=19$m=4194304,t=1,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA'
  assert.throws(() => verifyPasswordSync(huge, 'pw'), (e) => e instanceof RangeError && e.code === 'ERR_HASH_TOO_COSTLY')
  await assert.rejects(verifyPassword(huge, 'pw'), (e) => e instanceof RangeError && e.code === 'ERR_HASH_TOO_COSTLY')
  const slow = '$argon2id$v=19$m=1024,t=4000,p=1$c2FsdHNhbHRzYWx0$aGFzaGhhc2hoYXNoaGFzaA'
  await assert.rejects(verifyPassword(slow, 'pw'), { code: 'ERR_HASH_TOO_COSTLY' })
})

test('costs and password length are capped with RangeError (thrown by sync, rejected by async)', async () => {
  const isRange = (e) => e instanceof RangeError && e.code === 'ERR_OUT_OF_RANGE' && /options\.|password/.test(e.message)
  const range = (fn) => assert.throws(fn, isRange)
  range(() => hashPasswordSync('pw', { memoryCost: 262145 }))
  range(() => hashPasswordSync('pw', { memoryCost: 4 }))
  range(() => hashPasswordSync('pw', { timeCost: 0 }))
  range(() => hashPasswordSync('pw', { timeCost: 17 }))
  range(() => hashPasswordSync('pw', { parallelism: 17 }))
  range(() => hashPasswordSync('pw', { timeCost: 1.5 }))
  range(() => hashPasswordSync('x'.repeat(4097)))
  range(() => verifyPasswordSync(fixtures.cases[0].hash, 'x'.repeat(4097)))
  await assert.rejects(hashPassword('x'.repeat(4097)), isRange)
  await assert.rejects(hashPassword('pw', { secret: 'x'.repeat(1025) }), isRange)
  await assert.rejects(hashPassword('pw', { memoryCost: 262145 }), isRange)
})

test('a 5,000-byte password makes the Promise functions reject, never throw', async () => {
  const long = 'p'.repeat(5000)
  let hashing
  assert.doesNotThrow(() => {
    hashing = hashPassword(long)
  })
  assert.ok(hashing instanceof Promise)
  await assert.rejects(hashing, (e) => e instanceof RangeError && e.code === 'ERR_OUT_OF_RANGE' && /password/.test(e.message))
  let verifying
  assert.doesNotThrow(() => {
    verifying = verifyPassword(fixtures.cases[0].hash, long)
  })
  await assert.rejects(verifying, (e) => e instanceof RangeError && e.code === 'ERR_OUT_OF_RANGE')
  // The usual `.catch` route handler sees it (no unhandled rejection, no synchronous 500).
  const status = await hashPassword(Buffer.alloc(5000)).then(() => 200, (e) => (e.code === 'ERR_OUT_OF_RANGE' ? 400 : 500))
  assert.equal(status, 400)
})

test('wrong argument types: TypeError naming the argument, thrown by sync, rejected by async', async () => {
  const isType = (name) => (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_TYPE' && e.message.includes(name)
  await assert.rejects(hashPassword(12345), isType('password'))
  await assert.rejects(hashPassword(undefined), isType('password'))
  await assert.rejects(hashPassword('pw', 'fast'), isType('options'))
  await assert.rejects(verifyPassword(null, 'pw'), isType('hash'))
  await assert.rejects(verifyPassword(fixtures.cases[0].hash, {}), isType('password'))
  await assert.rejects(verifyPassword(fixtures.cases[0].hash, 'pw', { secret: 5 }), isType('options'))
  assert.throws(() => hashPasswordSync(undefined), isType('password'))
  assert.throws(() => hashPasswordSync('pw', 'fast'), isType('options'))
  assert.throws(() => hashPasswordSync('pw', { memoryCost: '1024' }), isType('memoryCost'))
  assert.throws(() => verifyPasswordSync('$argon2id$', {}), isType('password'))
})

test('every call of hashPassword/verifyPassword returns a Promise, whatever the arguments', async () => {
  const args = [[], [1], [{}], [null, null], ['pw', 1], ['pw', {}, 'signal'], ['pw', { timeCost: 99 }], [Symbol('x')]]
  for (const a of args) {
    for (const fn of [hashPassword, verifyPassword]) {
      let p
      assert.doesNotThrow(() => {
        p = fn(...a)
      }, `${fn.name}(${a.map(String)})`)
      assert.ok(p instanceof Promise)
      await assert.rejects(p, (e) => e instanceof Error && /^ERR_[A-Z_]+$/.test(e.code))
    }
  }
})

test('needsRehash flags weaker or different parameters', () => {
  const weak = hashPasswordSync('pw', FAST)
  assert.equal(needsRehash(weak), true)
  assert.equal(needsRehash(weak, FAST), false)
  assert.equal(needsRehash(weak, { ...FAST, timeCost: 2 }), true)
  const argon2i = fixtures.cases.find((c) => c.variant === 'argon2i').hash
  assert.equal(needsRehash(argon2i, { memoryCost: 1024, timeCost: 1, parallelism: 2 }), true)
})

test('the event loop keeps ticking while several async hashes run', async () => {
  let ticks = 0
  let maxGap = 0
  let last = Date.now()
  const timer = setInterval(() => {
    const now = Date.now()
    maxGap = Math.max(maxGap, now - last)
    last = now
    ticks++
  }, 5)
  const started = Date.now()
  let rounds = 0
  // Keep 4 hashes in flight for at least 400 ms whatever the build's speed.
  while (Date.now() - started < 400 || rounds < 1) {
    const hashes = await Promise.all([1, 2, 3, 4].map((i) => hashPassword(`pw${i}`, { memoryCost: 8192, timeCost: 2 })))
    assert.equal(hashes.length, 4)
    rounds++
  }
  clearInterval(timer)
  const elapsed = Date.now() - started
  // A hash on the main thread would freeze the timer for the whole run; off-thread it keeps firing.
  assert.ok(ticks >= Math.floor(elapsed / 50), `only ${ticks} ticks in ${elapsed} ms`)
  assert.ok(maxGap < Math.max(250, elapsed / 2), `event loop stalled for ${maxGap} ms`)
})

test('an already aborted AbortSignal rejects at once with AbortError ABORT_ERR, without hashing', async () => {
  const signal = AbortSignal.abort()
  const isAbort = (e) => e instanceof Error && e.name === 'AbortError' && e.code === 'ABORT_ERR'
  await assert.rejects(hashPassword('pw', FAST, signal), isAbort)
  await assert.rejects(verifyPassword(fixtures.cases[0].hash, 'pw', undefined, signal), isAbort)
  // Argument errors still win over the abort (they are the caller's bug either way).
  await assert.rejects(hashPassword(42, FAST, signal), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_TYPE')
})

test('an AbortSignal cancels a hash that has not started yet', async () => {
  const poolSize = Number(process.env.UV_THREADPOOL_SIZE || 4)
  // Occupy every libuv worker so the next task waits in the queue, where it can be cancelled.
  const busy = Array.from({ length: poolSize }, (_, i) => hashPassword(`busy${i}`, { memoryCost: 19456 }))
  const controller = new AbortController()
  const queued = hashPassword('queued', FAST, controller.signal)
  controller.abort()
  await assert.rejects(queued, (e) => e.name === 'AbortError')
  await Promise.all(busy)
  assert.match(await hashPassword('pw', FAST, new AbortController().signal), /^\$argon2id\$/)
  await assert.rejects(hashPassword('pw', FAST, {}), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_TYPE' && /signal/.test(e.message))
  await assert.rejects(verifyPassword(fixtures.cases[0].hash, 'pw', undefined, 'signal'), TypeError)
})
