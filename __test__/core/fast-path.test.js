'use strict'
// The fast per-request paths: own methods installed on first call that still behave like
// ordinary methods, verification results with every key present, and the one-shot
// authenticateRequest's per-config-object cache (changes to the config always take effect).
const test = require('node:test')
const assert = require('node:assert/strict')
const { Authenticator, authenticateRequest } = require('../..')
const { token, SECRET, REFRESH_SECRET, NOW } = require('../support/tokens')

const config = { accessSecret: SECRET, refreshSecret: REFRESH_SECRET, clockTimestamp: NOW }
const good = token({ sub: 'u1', email: 'e@x.io', exp: NOW + 60, jti: 'j1', tenant_id: 'acme' }, SECRET)
const VERIFICATION_KEYS = ['valid', 'userId', 'email', 'role', 'tenantId', 'jti', 'expiresAtSec', 'error', 'errorCode', 'errorStatus']

for (const method of ['authenticate', 'verifyAccessToken', 'verifyRefreshToken']) {
  test(`${method} can be replaced on an instance before and after its first call`, () => {
    const before = new Authenticator(config)
    const calls = []
    before[method] = (...args) => calls.push(args)
    before[method]('x')
    // A call through the prototype must not overwrite the caller's own property.
    Authenticator.prototype[method].call(before, 'Bearer x')
    before[method]('y')
    assert.deepEqual(calls, [['x'], ['y']])

    const after = new Authenticator(config)
    after[method]('Bearer x')
    after[method]('Bearer x')
    after[method] = (...args) => calls.push(args)
    after[method]('z')
    assert.equal(calls.at(-1)[0], 'z')
    // And deleting the replacement brings back a working method.
    delete after[method]
    assert.equal(typeof after[method]('Bearer x'), 'object')
  })
}

test('the fast methods are not enumerable own keys and give the prototype result', () => {
  const auth = new Authenticator(config)
  const first = auth.verifyAccessToken(good)
  const second = auth.verifyAccessToken(good)
  assert.deepEqual(first, second)
  assert.deepEqual(Object.keys(auth), [])
  assert.deepEqual(Authenticator.prototype.verifyAccessToken.call(auth, good), first)
})

test('verification results list every key, undefined where it does not apply', () => {
  const auth = new Authenticator(config)
  const valid = auth.verifyAccessToken(good)
  assert.deepEqual(Object.keys(valid), VERIFICATION_KEYS)
  assert.deepEqual(valid, {
    valid: true,
    userId: 'u1',
    email: 'e@x.io',
    role: undefined,
    tenantId: 'acme',
    jti: 'j1',
    expiresAtSec: NOW + 60,
    error: undefined,
    errorCode: undefined,
    errorStatus: undefined,
  })
  const invalid = auth.verifyAccessToken(`${good}x`)
  assert.deepEqual(Object.keys(invalid), VERIFICATION_KEYS)
  assert.deepEqual(
    [invalid.valid, invalid.userId, invalid.errorCode, invalid.errorStatus, typeof invalid.error],
    [false, undefined, 'invalid_signature', 401, 'string'],
  )
  const refresh = auth.verifyRefreshToken(token({ sub: 'u1', exp: NOW + 60, type: 'refresh' }, REFRESH_SECRET))
  assert.deepEqual(Object.keys(refresh), VERIFICATION_KEYS)
  assert.equal(refresh.valid, true)
})

test('verifyAccessToken applies the size limit like verifyRefreshToken, multi-byte text included', () => {
  const auth = new Authenticator({ ...config, maxTokenBytes: 64 })
  assert.equal(auth.verifyAccessToken('a'.repeat(65)).errorCode, 'token_too_large')
  assert.equal(auth.verifyRefreshToken('a'.repeat(65)).errorCode, 'token_too_large')
  // 63 ASCII bytes + a 3-byte character: 66 bytes, however the copy is cut.
  assert.equal(auth.verifyAccessToken(`${'a'.repeat(63)}€`).errorCode, 'token_too_large')
  assert.equal(auth.verifyAccessToken('a'.repeat(64)).errorCode, 'malformed_token')
  for (const bad of [undefined, null, 5, {}]) {
    assert.throws(() => auth.verifyAccessToken(bad), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })
  }
  const noRefresh = new Authenticator({ accessSecret: SECRET })
  noRefresh.verifyAccessToken(good)
  assert.throws(() => noRefresh.verifyRefreshToken('a.b.c'), { name: 'Error', code: 'ERR_AUTH_SHIELD_NO_REFRESH_SECRET', message: /set refreshSecret/ })
})

test('authenticateRequest with a reused config object gives the Authenticator results', () => {
  const cfg = { ...config, rateLimitMax: 0 }
  const auth = new Authenticator(cfg)
  const strip = ({ requestId, ...rest }) => rest
  for (const authorization of [`Bearer ${good}`, 'Bearer x', undefined]) {
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(strip(authenticateRequest(authorization, 'h', 'x.example.com', cfg)), strip(auth.authenticate(authorization, 'h', 'x.example.com')))
    }
  }
})

test('authenticateRequest notices every change to a reused config object', () => {
  const secret = Buffer.from(SECRET)
  const cfg = { accessSecret: secret, clockTimestamp: NOW, rateLimitMax: 5 }
  const bearer = `Bearer ${good}`
  assert.equal(authenticateRequest(bearer, null, null, cfg).rateLimitLimit, 5)
  cfg.rateLimitMax = 7
  assert.equal(authenticateRequest(bearer, null, null, cfg).rateLimitLimit, 7)
  // The Buffer's bytes change in place: the old key must no longer verify.
  secret[0] ^= 1
  assert.equal(authenticateRequest(bearer, null, null, cfg).errorCode, 'invalid_signature')
  secret[0] ^= 1
  assert.equal(authenticateRequest(bearer, null, null, cfg).authenticated, true)
  // Added and removed keys.
  cfg.issuer = ['someone-else']
  assert.equal(authenticateRequest(bearer, null, null, cfg).errorCode, 'invalid_issuer')
  cfg.issuer.push('')
  assert.throws(() => authenticateRequest(bearer, null, null, cfg), { name: 'RangeError', message: /issuer/ })
  delete cfg.issuer
  assert.equal(authenticateRequest(bearer, null, null, cfg).authenticated, true)
  cfg.typo = 1
  assert.throws(() => authenticateRequest(bearer, null, null, cfg), { name: 'TypeError', message: /typo/ })
  delete cfg.typo
  cfg.clockTimestamp = NOW + 3600
  assert.equal(authenticateRequest(bearer, null, null, cfg).errorCode, 'token_expired')
  assert.throws(() => authenticateRequest(bearer, null, null, null), { name: 'TypeError' })
  assert.throws(() => authenticateRequest(bearer, null, null, 'config'), { name: 'TypeError' })
})

test('authenticateRequest shares rate-limit buckets between equal config objects', () => {
  const make = () => ({ accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 3, rateLimitRefillPerSec: 0.001, issuer: undefined })
  const user = `Bearer ${token({ sub: 'shared-bucket-user', exp: NOW + 60 }, SECRET)}`
  const remaining = [make(), make(), make()].map((cfg) => authenticateRequest(user, null, null, cfg).rateLimitRemaining)
  assert.deepEqual(remaining, [2, 1, 0])
  assert.equal(Authenticator.shared(make()).authenticate(user).errorCode, 'rate_limited')
})

test('a flood of distinct config objects keeps working (entries die with their objects)', () => {
  // 2000 objects of 10 distinct settings: the process keeps at most 64 distinct configs and
  // never forgets one (docs/api.md; __test__/core/one-shot.test.js tests the bound).
  const user = `Bearer ${good}`
  for (let i = 0; i < 2000; i++) {
    const r = authenticateRequest(user, null, null, { accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 1000 + (i % 10) })
    assert.equal(r.rateLimitLimit, 1000 + (i % 10))
  }
})

test('each worker thread gets its own result factories, released when the worker ends', async () => {
  const { Worker } = require('node:worker_threads')
  const path = require('node:path')
  const source = `
    const { parentPort, workerData } = require('node:worker_threads')
    const { Authenticator, authenticateRequest } = require(workerData.root)
    const auth = new Authenticator(workerData.config)
    const a = auth.authenticate('Bearer ' + workerData.good, null, 'acme.example.com')
    const v = auth.verifyAccessToken(workerData.good)
    const o = authenticateRequest('Bearer x', null, null, workerData.config)
    parentPort.postMessage([a.authenticated, a.tenantSource, v.valid, Object.keys(v).length, o.errorCode])
  `
  for (let i = 0; i < 4; i++) {
    const worker = new Worker(source, { eval: true, workerData: { root: path.resolve(__dirname, '..', '..'), config, good } })
    const [message] = await Promise.all([
      new Promise((resolve, reject) => worker.once('message', resolve).once('error', reject)),
      new Promise((resolve) => worker.once('exit', resolve)),
    ])
    assert.deepEqual(message, [true, 'token', true, VERIFICATION_KEYS.length, 'malformed_token'])
  }
  // The main thread's factories were never touched by the workers' teardown.
  assert.equal(new Authenticator(config).verifyAccessToken(good).valid, true)
})
