'use strict'

// A remote JWKS when the identity provider misbehaves, end to end on loopback (real JWKS
// servers whose answers a test changes, tokens signed by jose, both engines, both adapters):
// - a redirect is never followed: the keys another host serves are never installed;
// - a provider down at start-up: the middleware is built anyway, answers 503 keys_unavailable
//   (Retry-After) and serves once the provider is back, the source retrying with back-off;
// - a provider down later: the keys in force are kept (stale-if-error) up to their maximum
//   age, then withdrawn (503), then installed again once the provider is back;
// - a key published within the cooldown of the last fetch is in force at the end of it, with
//   no further request; a flood of random kids still costs at most one fetch per cooldown.
// Waits are bounded loops on observable state; no test asserts a duration.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { randomUUID } = require('node:crypto')
const express = require('express')
const Fastify = require('fastify')
const jose = require('jose')
const authShield = require('../../adapters/express')
const authShieldPlugin = require('../../adapters/fastify')
const { createRemoteJwks } = require('../../lib/jwks/index')
const { listen, get } = require('../support/http')
const { startJwksServer, keyPair } = require('../support/jwks-server')

const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

const ISSUER = 'https://idp.test/'
const real = keyPair('ES256', 'real-1')
const rotated = keyPair('EdDSA', 'real-2')
const attacker = keyPair('ES256', 'attacker')
const DOC = { keys: [real.jwk] }
const ENGINES = ['native', 'js']

/** A token jose signs with `pair`'s private key, naming `kid` (the pair's own by default). */
function token(pair, { sub = 'user-1', kid = pair.kid } = {}) {
  return new jose.SignJWT({})
    .setProtectedHeader({ alg: pair.alg, kid, typ: 'JWT' })
    .setSubject(sub)
    .setIssuer(ISSUER)
    .setIssuedAt()
    .setExpirationTime('10m')
    .sign(pair.privateKey)
}

const bearer = (t) => ({ authorization: `Bearer ${t}` })
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits until `predicate()` (maybe async) holds, checking every 20 ms; fails after `limitMs`. */
async function until(predicate, what, limitMs = 20_000) {
  const deadline = Date.now() + limitMs
  while (!(await predicate())) {
    if (Date.now() > deadline) assert.fail(`still waiting for ${what} after ${limitMs} ms`)
    await sleep(20)
  }
}

/** An Express app or a Fastify app behind auth-shield with `source`; { base, close }. */
async function startApp(adapter, engine, source) {
  if (adapter === 'express') {
    const app = express()
    app.get('/api', authShield({ issuer: ISSUER }, { jwks: source, engine }), (req, res) => res.json({ userId: req.user.userId }))
    return listen(http.createServer(app))
  }
  const app = Fastify()
  await app.register(authShieldPlugin, { config: { issuer: ISSUER }, jwks: source, engine })
  app.get('/api', async (request) => ({ userId: request.user.userId }))
  await app.ready()
  const { base } = await listen(app.server)
  return { base, close: () => app.close() }
}

const APPS = [
  ['express', 'native'],
  ['express', 'js'],
  ['fastify', 'native'],
  ['fastify', 'js'],
]

describe('a redirect from the configured URL is never followed', () => {
  let idp
  let evil
  before(async () => {
    idp = await startJwksServer()
    evil = await startJwksServer()
    evil.serve({ keys: [attacker.jwk] })
  })
  after(async () => {
    await idp.close()
    await evil.close()
  })
  const redirect = (req, res) => res.writeHead(302, { location: evil.url }).end()

  for (const engine of ENGINES) {
    it(`keeps the real keys when the provider starts answering 302 to another host (${engine} engine, Express)`, async () => {
      idp.serve(DOC)
      const source = createRemoteJwks(idp.url, { cooldownMs: 0 })
      await source.ready()
      const app = await startApp('express', engine, source)
      try {
        idp.answer(redirect)
        const fetched = idp.fetches
        // The attacker's kid is unknown: the source refetches its URL, gets the 302, stops there.
        const forged = await get(`${app.base}/api`, bearer(await token(attacker, { sub: 'admin' })))
        assert.equal(forged.status, 401, forged.body)
        assert.equal(forged.json.code, 'unknown_key')
        assert.equal(idp.fetches, fetched + 1)
        assert.equal(evil.fetches, 0)
        assert.equal(source.lastError.code, 'ERR_AUTH_SHIELD_JWKS_FETCH')
        assert.match(source.lastError.message, /redirect/)
        const genuine = await get(`${app.base}/api`, bearer(await token(real)))
        assert.equal(genuine.status, 200, genuine.body)
        assert.equal(source.keys[0].kid, 'real-1')
      } finally {
        source.close()
        await app.close()
      }
    })

    it(`installs nothing from a URL that redirects from the start (${engine} engine, Express)`, async () => {
      idp.answer(redirect)
      const source = createRemoteJwks(idp.url, { cooldownMs: 0 })
      await assert.rejects(source.ready(), { code: 'ERR_AUTH_SHIELD_JWKS_FETCH', message: /redirect/ })
      const app = await startApp('express', engine, source)
      try {
        const forged = await get(`${app.base}/api`, bearer(await token(attacker, { sub: 'admin' })))
        assert.equal(forged.status, 503, forged.body)
        assert.equal(forged.json.code, 'keys_unavailable')
        assert.equal(source.keys, null)
        assert.equal(evil.fetches, 0)
      } finally {
        source.close()
        await app.close()
      }
    })
  }
})

describe('a provider down at start-up', () => {
  for (const [adapter, engine] of APPS) {
    it(`builds the middleware, answers 503 keys_unavailable with Retry-After, then 200 once the provider is back (${adapter}, ${engine} engine)`, async () => {
      const idp = await startJwksServer()
      idp.answer((req, res) => res.writeHead(503).end())
      const errors = []
      const installed = []
      const source = createRemoteJwks(idp.url, { retryMinMs: 100, retryMaxMs: 400, cooldownMs: 200 })
      source.on('error', (err) => errors.push(err))
      source.on('keys', (keys) => installed.push(keys))
      // No `await source.ready()`: the provider is down, and the API must come up anyway.
      const app = await startApp(adapter, engine, source)
      try {
        await until(() => errors.length >= 2, 'two failed fetches (the start-up one and a retry)')
        assert.equal(errors[0].code, 'ERR_AUTH_SHIELD_JWKS_FETCH')
        const good = await token(real)
        for (const t of [good, await token(real, { kid: randomUUID() })]) {
          const res = await get(`${app.base}/api`, bearer(t))
          assert.equal(res.status, 503, res.body)
          assert.deepEqual(res.json, { error: 'The token signing keys are unavailable; retry', code: 'keys_unavailable' })
          assert.ok(Number(res.headers['retry-after']) >= 1, `Retry-After: ${res.headers['retry-after']}`)
          assert.equal(res.headers['www-authenticate'], undefined)
        }
        // A request without credentials is still the client's fault.
        assert.equal((await get(`${app.base}/api`)).status, 401)
        idp.serve(DOC)
        let status
        await until(async () => (status = (await get(`${app.base}/api`, bearer(good))).status) === 200, 'a 200 after the provider came back')
        assert.equal(installed.length, 1)
        assert.equal(source.lastError, null)
      } finally {
        source.close()
        await app.close()
        await idp.close()
      }
    })
  }

  it('backs off exponentially between retries while nothing asks, up to retryMaxMs', async () => {
    const idp = await startJwksServer()
    idp.answer((req, res) => res.writeHead(500).end())
    const at = []
    const source = createRemoteJwks(idp.url, { retryMinMs: 100, retryMaxMs: 400 })
    source.on('error', () => at.push(Date.now()))
    try {
      await until(() => at.length >= 6, 'six failed fetches')
      // Fetches only come from the schedule here: six failures, five waits of 100, 200, 400,
      // 400, 400 ms at least (timers never fire early).
      const gaps = at.slice(1).map((t, i) => t - at[i])
      const least = [100, 200, 400, 400, 400]
      for (let i = 0; i < least.length; i++) assert.ok(gaps[i] >= least[i] - 5, `gap ${i}: ${gaps[i]} ms (${gaps})`)
    } finally {
      source.close()
      await idp.close()
    }
  })
})

// Each case has its own provider, key source and app, so the four wait out their windows at once.
describe('a provider down later (stale-if-error)', { concurrency: true }, () => {
  for (const [adapter, engine] of APPS) {
    it(`keeps the keys in force while fetches fail, withdraws them past cacheMaxAgeMs + staleIfErrorMs, installs them again when the provider is back (${adapter}, ${engine} engine)`, async () => {
      const idp = await startJwksServer()
      idp.serve(DOC)
      const source = createRemoteJwks(idp.url, { cacheMaxAgeMs: 300, staleIfErrorMs: 3_000, retryMinMs: 100, retryMaxMs: 200, cooldownMs: 100 })
      const expired = []
      source.on('expired', (err) => expired.push(err))
      await source.ready()
      const app = await startApp(adapter, engine, source)
      try {
        const good = await token(real)
        assert.equal((await get(`${app.base}/api`, bearer(good))).status, 200)
        idp.answer((req, res) => res.destroy())
        await until(() => source.lastError !== null, 'a failed scheduled refresh')
        // Stale, not yet past its maximum age: still served; an unknown kid is the client's fault.
        assert.equal((await get(`${app.base}/api`, bearer(good))).status, 200)
        const unknown = await get(`${app.base}/api`, bearer(await token(real, { kid: randomUUID() })))
        assert.equal(unknown.status, 401)
        assert.equal(unknown.json.code, 'unknown_key')
        await until(() => expired.length === 1, "the key set's expiry")
        assert.equal(expired[0].code, 'ERR_AUTH_SHIELD_JWKS_EXPIRED')
        assert.equal(source.keys, null)
        const after = await get(`${app.base}/api`, bearer(good))
        assert.equal(after.status, 503, after.body)
        assert.equal(after.json.code, 'keys_unavailable')
        assert.ok(Number(after.headers['retry-after']) >= 1)
        // The same document as before is installed again once it can be read.
        idp.serve(DOC)
        await until(async () => (await get(`${app.base}/api`, bearer(good))).status === 200, 'a 200 after the provider came back')
        assert.equal(source.keys[0].kid, 'real-1')
      } finally {
        source.close()
        await app.close()
        await idp.close()
      }
    })
  }
})

describe('key rotation within the cooldown', () => {
  it('a kid published just after a fetch is in force at the end of the default cooldown (5 s), with no further request (Express, both engines)', async () => {
    const idp = await startJwksServer()
    idp.serve(DOC)
    const source = createRemoteJwks(idp.url)
    await source.ready()
    const apps = await Promise.all(ENGINES.map((engine) => startApp('express', engine, source)))
    try {
      // The provider rotates a key in right after our start-up fetch, and issues a token with it.
      idp.serve({ keys: [real.jwk, rotated.jwk] })
      const fresh = await token(rotated, { sub: 'rotated' })
      const fetched = idp.fetches
      const first = await get(`${apps[0].base}/api`, bearer(fresh))
      // Within the cooldown the request is refused at once (a flood of random kids must not
      // fetch), but one fetch is now set for the cooldown's end.
      if (first.status !== 200) assert.equal(first.json.code, 'unknown_key')
      await until(() => source.generation === 2, 'the fetch at the end of the cooldown', 15_000)
      assert.equal(idp.fetches, fetched + 1)
      for (const app of apps) {
        const res = await get(`${app.base}/api`, bearer(fresh))
        assert.equal(res.status, 200, res.body)
        assert.deepEqual(res.json, { userId: 'rotated' })
      }
    } finally {
      source.close()
      for (const app of apps) await app.close()
      await idp.close()
    }
  })
})

describe('a flood of random kids', () => {
  for (const [adapter, engine] of APPS) {
    it(`costs at most one fetch per cooldown, with keys in force and without (${adapter}, ${engine} engine)`, async () => {
      const idp = await startJwksServer()
      const cooldownMs = 250
      for (const up of [true, false]) {
        if (up) idp.serve(DOC)
        else idp.answer((req, res) => res.writeHead(503).end())
        const start = idp.fetches
        const t0 = Date.now()
        // Scheduled retries far away: every fetch here is one a request asked for.
        const source = createRemoteJwks(idp.url, { cooldownMs, retryMinMs: 60_000, retryMaxMs: 60_000 })
        if (up) await source.ready()
        const app = await startApp(adapter, engine, source)
        try {
          const tokens = await Promise.all(Array.from({ length: 30 }, () => token(real, { kid: randomUUID() })))
          for (let wave = 0; wave < 8; wave++) {
            const answers = await Promise.all(tokens.map((t) => get(`${app.base}/api`, bearer(t))))
            const expected = up ? 'unknown_key' : 'keys_unavailable'
            assert.ok(
              answers.every((r) => r.json.code === expected),
              answers.map((r) => r.json.code),
            )
          }
        } finally {
          source.close()
          await app.close()
        }
        const elapsed = Date.now() - t0
        const fetches = idp.fetches - start
        // The start-up fetch, then at most one per cooldown begun.
        assert.ok(fetches <= 1 + Math.ceil(elapsed / cooldownMs), `${fetches} fetches in ${elapsed} ms (${up ? 'up' : 'down'})`)
      }
      await idp.close()
    })
  }
})

describe('the source as an EventEmitter', () => {
  it('survives listeners that throw or reject, and no error listener at all', async () => {
    const idp = await startJwksServer()
    idp.answer((req, res) => res.writeHead(500).end())
    const source = createRemoteJwks(idp.url, { retryMinMs: 100, retryMaxMs: 100, cooldownMs: 0 })
    try {
      await assert.rejects(source.ready(), { code: 'ERR_AUTH_SHIELD_JWKS_FETCH' })
      let calls = 0
      source.on('error', () => {
        calls++
        throw new Error('a broken listener')
      })
      source.on('error', async () => {
        calls++
        throw undefined
      })
      source.on('keys', () => Promise.reject(new Error('a broken listener')))
      await until(() => calls >= 4, 'two more failures, each seen by both listeners')
      idp.serve(DOC)
      assert.equal(await source.refresh(), true)
      await sleep(50)
      assert.deepEqual(unhandled, [])
    } finally {
      source.close()
      await idp.close()
    }
  })

  it('refuses bad back-off and stale options', () => {
    const url = 'http://127.0.0.1:1/jwks.json'
    assert.throws(() => createRemoteJwks(url, { retryMinMs: 5_000, retryMaxMs: 1_000 }), { name: 'RangeError', message: /retryMinMs/ })
    assert.throws(() => createRemoteJwks(url, { retryMinMs: 10 }), { name: 'RangeError' })
    assert.throws(() => createRemoteJwks(url, { staleIfErrorMs: -1 }), { name: 'RangeError' })
    assert.throws(() => createRemoteJwks(url, { staleIfErrorMs: 1.5 }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' })
  })
})

after(() => assert.deepEqual(unhandled, []))
