'use strict'

// Every function of the application that a middleware calls, driven with hostile answers in
// every adapter (Express 5 and 4, Fastify, Koa, Fetch, express-jwt's `expressjwt` on Express 5
// and 4) and both engines, on real servers over loopback. The user functions are enumerated
// from contract/options.json (kind "function", and each "custom" option that accepts a
// function) plus the adapters' own: each must have a driver below, so an option added to the
// contract without one fails this file. For every answer the protected route must not run
// (unless the answer is one the option documents as a pass), an answer must come (no hang), and
// no rejection may go unhandled.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express5 = require('express')
const express4 = require('express4')
const Fastify = require('fastify')
const Koa = require('koa')
const authShield = require('../../adapters/express')
const authShieldPlugin = require('../../adapters/fastify')
const authShieldKoa = require('../../adapters/koa')
const { createVerifier } = require('../../adapters/fetch')
const honoShield = require('../../adapters/hono')
const { Hono } = require('hono')
const contract = require('../../contract/options.json')
const { token } = require('../support/tokens')
const { listen } = require('../support/http')
const { fetchServer } = require('../support/adapter-servers')

const NOW = Math.floor(Date.now() / 1000)
const SECRET = 'user-functions-test-secret-0123456789'
const JTI = 'user-functions-jti'
const VALID = `Bearer ${token({ sub: 'u1', exp: NOW + 600, jti: JTI }, SECRET)}`
const EXPIRED = `Bearer ${token({ sub: 'u1', exp: NOW - 600 }, SECRET)}`
const FORGED = `Bearer ${token({ sub: 'u1', exp: NOW + 600 }, 'another-secret-0123456789abcdefghij')}`
// Small: the never-settling rows end quickly. Nothing here measures time.
const CALLBACK_TIMEOUT_MS = 50

/** Hostile behaviours of a user function: [label, make] (`make()` gives a fresh function). */
const HOSTILE = [
  ['async false', () => async () => false],
  ['resolves to undefined', () => async () => undefined],
  ['returns undefined', () => () => undefined],
  ['rejects with an Error', () => () => Promise.reject(new Error('hostile'))],
  ['rejects with undefined', () => () => Promise.reject(undefined)],
  ['never settles', () => () => new Promise(() => {})],
  [
    'throws an Error',
    () => () => {
      throw new Error('hostile')
    },
  ],
  [
    'throws undefined',
    () => () => {
      throw undefined
    },
  ],
  ['answers 1', () => () => 1],
  ["answers 'yes'", () => () => 'yes'],
  ['answers {}', () => () => ({})],
  ['resolves to 1', () => async () => 1],
  ["a thenable resolving to 'yes'", () => () => ({ then: (resolve) => resolve('yes') })],
  ['a thenable that never calls back', () => () => ({ then() {} })],
  [
    'a thenable whose then throws',
    () => () => ({
      then() {
        throw undefined
      },
    }),
  ],
  // Express hands onError `next`: a handler that "lets it continue" must not reach the route.
  ['calls next()', () => (...args) => void (typeof args[3] === 'function' && args[3]())],
  ["calls next('route')", () => (...args) => void (typeof args[3] === 'function' && args[3]('route'))],
]

// The answers that do not throw, reject or hang: for a function whose answer is not a verdict
// (formatUser shapes the user; express-jwt's onExpired lets an expired token through unless it throws).
const SETTLES = new Set(['async false', 'resolves to undefined', 'returns undefined', 'answers 1', "answers 'yes'", 'answers {}', 'resolves to 1', "a thenable resolving to 'yes'", 'calls next()', "calls next('route')"])

const EXPRESS_ADAPTERS = ['express 5', 'express 4']
const COMPAT_ADAPTERS = ['expressjwt (express 5)', 'expressjwt (express 4)']
const ALL_ADAPTERS = [...EXPRESS_ADAPTERS, 'fastify', 'koa', 'fetch', 'hono', ...COMPAT_ADAPTERS]
// The Fetch entry and Hono (built on it) answer every refusal themselves: no onError.
const ANSWERING_ADAPTERS = ['fetch', 'hono']

/**
 * One driver per user function: `options(f)` the middleware options giving it (or `chain(mw, f)`
 * for a method of the middleware), `headers` of the request, `adapters` that take it (the
 * others must refuse it at construction), `passes(label)` the answers the option documents as a
 * pass with the credentials sent, `refusal` the status a handler that answered nothing leaves
 * (the adapter's own), `prepare(decision)` anything the mount needs.
 */
const DRIVERS = {
  getToken: { options: (f) => ({ getToken: f }) },
  skip: { options: (f) => ({ skip: f }) },
  unless: { options: (f) => ({ unless: f }) },
  'unless.custom': { options: (f) => ({ unless: { path: ['/elsewhere'], custom: f } }) },
  '.unless(fn)': { chain: (mw, f) => mw.unless(f), adapters: [...EXPRESS_ADAPTERS, 'koa', ...COMPAT_ADAPTERS] },
  '.unless({ custom })': { chain: (mw, f) => mw.unless({ custom: f }), adapters: [...EXPRESS_ADAPTERS, 'koa', ...COMPAT_ADAPTERS] },
  onError: { refusal: 401, options: (f) => ({ onError: f }), adapters: ALL_ADAPTERS.filter((a) => !ANSWERING_ADAPTERS.includes(a)) },
  'onError (a forged token)': { refusal: 401, options: (f) => ({ onError: f }), headers: { authorization: FORGED }, adapters: ALL_ADAPTERS.filter((a) => !ANSWERING_ADAPTERS.includes(a)) },
  'onError (an expired token)': { refusal: 401, options: (f) => ({ onError: f }), headers: { authorization: EXPIRED }, adapters: ALL_ADAPTERS.filter((a) => !ANSWERING_ADAPTERS.includes(a)) },
  isRevoked: {
    options: (f) => ({ isRevoked: f }),
    headers: { authorization: VALID },
    // `false` (or a Promise of it) is "not revoked"; any other answer refuses.
    passes: (label) => label === 'async false',
  },
  onMismatch: {
    // The primary engine alone has the token revoked: every request is a mismatch the primary
    // refuses, and whatever onMismatch does must not turn that into a pass.
    options: (f) => ({ shadow: true, onMismatch: f }),
    prepare: (decision) => decision.engine.authenticator.revokeToken(JTI, NOW + 600),
    headers: { authorization: VALID },
    adapters: ALL_ADAPTERS,
  },
  dpopUrl: {
    // Called for DPoP requests: a garbage proof is refused whatever the URL; a bad URL earlier.
    config: { dpop: true },
    options: (f) => ({ dpopUrl: f }),
    headers: { authorization: `DPoP ${VALID.slice(7)}`, dpop: 'garbage' },
  },
  formatUser: {
    options: (f) => ({ formatUser: f }),
    headers: { authorization: VALID },
    adapters: ['fastify'],
    passes: (label) => SETTLES.has(label),
  },
  'secret (a getter)': {
    // express-jwt's single object; the compatible export alone takes a getter.
    options: (f) => ({ secret: f }),
    compatConfig: (f) => ({ secret: f }),
    headers: { authorization: VALID },
    adapters: COMPAT_ADAPTERS,
  },
  onExpired: {
    options: (f) => ({ onExpired: f }),
    headers: { authorization: EXPIRED },
    adapters: COMPAT_ADAPTERS,
    passes: (label) => SETTLES.has(label),
  },
}

// The functions of options.json that are not called on a request's path, with the reason.
const NOT_ON_REQUEST_PATH = {
  'feedOptions.onApplied': 'the revocation feed, a background loop (auth-shield/redis)',
  'feedOptions.onError': 'the revocation feed, a background loop (auth-shield/redis)',
}

/** Every middleware option of the contract that takes a function of the application. */
function userFunctionOptions() {
  const names = []
  for (const [bag, list] of Object.entries(contract)) {
    if (!Array.isArray(list)) continue
    for (const option of list) {
      if (option.kind === 'function') names.push(bag === 'middlewareOptions' ? option.name : `${bag}.${option.name}`)
      // A custom option takes a function when the reader accepts one.
      else if (option.kind === 'custom' && bag === 'middlewareOptions' && acceptsFunction(option.name)) names.push(option.name)
    }
  }
  return names
}

function acceptsFunction(name) {
  try {
    authShield({ accessSecret: SECRET, dpop: true }, { engine: 'js', [name]: () => true })
    return true
  } catch {
    return false
  }
}

describe('every user function of the contract has a driver here', () => {
  it('options.json', () => {
    const names = userFunctionOptions()
    // The contract's function options are found (a broken probe would find none).
    for (const known of ['getToken', 'skip', 'unless', 'onError', 'isRevoked', 'onMismatch']) assert.ok(names.includes(known), known)
    const missing = names.filter((n) => !(n in DRIVERS) && !(n in NOT_ON_REQUEST_PATH))
    assert.deepEqual(missing, [], 'a user function of options.json without a driver in DRIVERS')
  })
})

/** Builds the guard of one mount for `adapter` (throws when the adapter refuses the options). */
function guardFor(adapter, engine, driver, f) {
  const compat = COMPAT_ADAPTERS.includes(adapter)
  const own = compat && driver.compatConfig ? {} : driver.options ? driver.options(f) : {}
  const options = { engine, callbackTimeoutMs: CALLBACK_TIMEOUT_MS, ...own }
  const config = { accessSecret: SECRET, ...driver.config }
  let mw
  if (compat) {
    const secret = driver.compatConfig ? driver.compatConfig(f) : { secret: SECRET }
    const source = { ...driver.config, ...secret, algorithms: ['HS256'] }
    mw = authShield.expressjwt(source, options)
  } else if (EXPRESS_ADAPTERS.includes(adapter)) mw = authShield(config, options)
  else if (adapter === 'koa') mw = authShieldKoa(config, options)
  else if (adapter === 'fetch') mw = createVerifier(config, options)
  else if (adapter === 'hono') {
    if (driver.chain) throw new TypeError('Hono middleware has no .unless()')
    mw = honoShield(config, options)
  }
  // A plugin, not a middleware: nothing to chain `.unless()` on.
  else if (driver.chain) throw new TypeError('the Fastify plugin has no .unless()')
  else return { fastify: { config, ...options } }
  if (driver.prepare) driver.prepare(mw.decision)
  return driver.chain ? driver.chain(mw, f) : mw
}

/** An app for `adapter` with one mount per row: `seen.ran` records the route runs. */
async function appFor(adapter, engine, mounts, seen) {
  const route = (path) => seen.ran.add(path)
  if (adapter === 'fastify') {
    const app = Fastify()
    app.setErrorHandler((err, request, reply) => reply.code(500).send({ handled: true }))
    for (const m of mounts) {
      await app.register(
        async (child) => {
          await child.register(authShieldPlugin, m.guard.fastify)
          if (m.driver.prepare) m.driver.prepare(child.authShield.decision)
          child.all('/', async () => {
            route(m.path)
            return { ran: true }
          })
        },
        { prefix: m.path },
      )
    }
    await app.ready()
    return listen(app.server)
  }
  if (adapter === 'koa') {
    const app = new Koa()
    app.silent = true
    const byPath = new Map(mounts.map((m) => [m.path, m]))
    app.use(async (ctx, next) => {
      try {
        await next()
      } catch (err) {
        ctx.status = 500
        ctx.body = { handled: true }
      }
    })
    app.use((ctx) => {
      const m = byPath.get(ctx.path)
      return m.guard(ctx, async () => {
        route(m.path)
        ctx.body = { ran: true }
      })
    })
    return listen(http.createServer(app.callback()))
  }
  if (adapter === 'fetch') {
    const byPath = new Map(mounts.map((m) => [m.path, m]))
    const server = http.createServer(async (req, res) => {
      const m = byPath.get(req.url)
      let status = 500
      try {
        const headers = new Headers()
        for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1])
        const auth = await m.guard(new Request(`http://${req.headers.host}${req.url}`, { headers }))
        if (auth.ok) {
          route(m.path)
          status = 200
        } else status = auth.status
      } catch {
        status = 500
      }
      res.statusCode = status
      res.end()
    })
    return listen(server)
  }
  if (adapter === 'hono') {
    const app = new Hono()
    app.onError((err, c) => c.json({ handled: true }, 500))
    for (const m of mounts) {
      app.all(m.path, m.guard, (c) => {
        route(m.path)
        return c.json({ ran: true })
      })
    }
    return fetchServer((request) => app.fetch(request))
  }
  const express = adapter.endsWith('4)') || adapter === 'express 4' ? express4 : express5
  const app = express()
  for (const m of mounts) {
    app.all(m.path, m.guard, (req, res) => {
      route(m.path)
      res.json({ ran: true })
    })
  }
  app.use((err, req, res, next) => res.status(500).json({ handled: true }))
  return listen(http.createServer(app))
}

async function call(base, m) {
  try {
    const res = await fetch(`${base}${m.path}`, { headers: m.driver.headers || {}, signal: AbortSignal.timeout(10_000) })
    await res.arrayBuffer()
    return res.status
  } catch (err) {
    return `no answer (${err.name})`
  }
}

const unhandled = []
const onUnhandled = (reason) => unhandled.push(reason)
before(() => process.on('unhandledRejection', onUnhandled))
after(async () => {
  await new Promise((resolve) => setTimeout(resolve, CALLBACK_TIMEOUT_MS * 4))
  process.off('unhandledRejection', onUnhandled)
  assert.deepEqual(unhandled, [], 'no unhandled rejection')
})

for (const adapter of ALL_ADAPTERS) {
  for (const engine of ['native', 'js']) {
    describe(`${adapter}, ${engine} engine: hostile user functions never let a request through`, () => {
      const mounts = []
      const refusedAtConstruction = []
      const fastifyNotTaken = []
      for (const [name, driver] of Object.entries(DRIVERS)) {
        const applies = (driver.adapters || ALL_ADAPTERS).includes(adapter)
        for (const [label, make] of HOSTILE) {
          let guard
          try {
            guard = guardFor(adapter, engine, driver, make())
          } catch (err) {
            if (applies) throw err
            refusedAtConstruction.push(name)
            break
          }
          if (!applies) {
            // The plugin reads its options when registered: checked in the test below.
            if (guard.fastify !== undefined) fastifyNotTaken.push([name, guard.fastify])
            else refusedAtConstruction.push(`${name}: accepted but not driven`)
            break
          }
          mounts.push({ path: `/m${mounts.length}`, name, label, driver, guard })
        }
      }
      const seen = { ran: new Set() }
      const results = new Map()
      let server
      before(async () => {
        server = await appFor(adapter, engine, mounts, seen)
        await Promise.all(mounts.map(async (m) => results.set(m.path, await call(server.base, m))))
      })
      after(() => server.close())

      it('options it does not take are refused when the middleware is made', async () => {
        assert.deepEqual(
          refusedAtConstruction.filter((n) => n.includes('not driven')),
          [],
        )
        for (const [name, options] of fastifyNotTaken) {
          const app = Fastify()
          try {
            await assert.rejects(app.register(authShieldPlugin, options).ready(), TypeError, `${name}: accepted but not driven`)
          } finally {
            await app.close()
          }
        }
      })

      for (const name of new Set(mounts.map((m) => m.name))) {
        it(name, () => {
          const problems = []
          for (const m of mounts.filter((x) => x.name === name)) {
            const status = results.get(m.path)
            const ran = seen.ran.has(m.path)
            const passes = m.driver.passes !== undefined && m.driver.passes(m.label)
            if (typeof status !== 'number') problems.push(`${m.label}: ${status}`)
            else if (passes) {
              if (status !== 200 || !ran) problems.push(`${m.label}: a documented pass answered ${status}`)
            } else if (ran) problems.push(`${m.label}: the route ran (${status})`)
            else if (status < 400) problems.push(`${m.label}: answered ${status}`)
            // A handler that answered nothing: the adapter's own refusal, not a hang or Koa's 404.
            else if (m.driver.refusal !== undefined && SETTLES.has(m.label) && status !== m.driver.refusal) problems.push(`${m.label}: answered ${status}, not the refusal`)
          }
          assert.deepEqual(problems, [])
        })
      }
    })
  }
}

// The issue's own example: `onError: (err, req) => req.log.warn(err)` in Fastify let requests
// without credentials, with a forged and with an expired token reach the route (200); Express
// hung and Koa answered 404. A handler that answers nothing gets the adapter's own refusal: the
// status and body the adapter sends without onError.
describe('a log-only onError: the adapter answers its own refusal', () => {
  const logOnly = (err, req) => void (req && req.log && req.log.warn ? req.log.warn(err) : err)
  const drivers = {
    'log-only onError': { options: () => ({ onError: logOnly }) },
    'no onError': { options: () => ({ errors: 'respond' }) },
  }
  for (const adapter of ALL_ADAPTERS.filter((a) => !ANSWERING_ADAPTERS.includes(a))) {
    for (const engine of ['native', 'js']) {
      it(`${adapter}, ${engine} engine`, async () => {
        const mounts = []
        for (const [name, driver] of Object.entries(drivers)) {
          for (const authorization of [undefined, FORGED, EXPIRED]) {
            const headers = authorization === undefined ? {} : { authorization }
            mounts.push({ path: `/m${mounts.length}`, name, driver: { ...driver, headers }, guard: guardFor(adapter, engine, driver, undefined) })
          }
        }
        const seen = { ran: new Set() }
        const server = await appFor(adapter, engine, mounts, seen)
        try {
          const answers = {}
          for (const m of mounts) {
            const res = await fetch(`${server.base}${m.path}`, { headers: m.driver.headers, signal: AbortSignal.timeout(10_000) })
            ;(answers[m.name] ??= []).push([res.status, await res.text()])
          }
          assert.equal(seen.ran.size, 0, 'the route ran')
          assert.deepEqual(answers['log-only onError'], answers['no onError'])
          assert.deepEqual(
            answers['no onError'].map(([status]) => status),
            [401, 401, 401],
          )
        } finally {
          await server.close()
        }
      })
    }
  }
})
