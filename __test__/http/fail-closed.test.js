'use strict'

// Fail closed (lib/http/callback-fence.js): every callback of the application that the adapters call
// (getToken, isRevoked, skip / unless predicates, express-unless's custom, `.unless()`, onError,
// Fastify's formatUser, shadow mode's onMismatch, a recovery registered on the decision) is
// made to throw or reject with each falsy value, a string, an Error, or to never settle, through
// both adapters and both engines on real servers over loopback. The route must never run, the
// answer is never a 2xx, and the app's error handler receives a real Error: the one thrown, or
// an ERR_AUTH_SHIELD_CALLBACK error with the value as `cause`. Express reads
// `next(undefined | null | 0 | '' | false)` as "continue" and `next('route')` as "next route":
// before the fence those requests reached the protected route.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { types } = require('node:util')
const express = require('express')
const Fastify = require('fastify')
const authShield = require('../../adapters/express')
const authShieldPlugin = require('../../adapters/fastify')
const { token } = require('../support/tokens')
const { listen } = require('../support/http')

const NOW = Math.floor(Date.now() / 1000)
const SECRET = 'fail-closed-test-secret-0123456789abcdef'
const EXP = NOW + 600
const JTI = 'fail-closed-jti'
const VALID = `Bearer ${token({ sub: 'u1', exp: EXP, jti: JTI }, SECRET)}`
const CONFIG = { accessSecret: SECRET }
// Small, so that the never-settling rows end quickly; nothing here measures time.
const CALLBACK_TIMEOUT_MS = 100

// What a callback throws or rejects with. An Error passes as it is; anything else is wrapped.
const THROWN = [
  ['undefined', undefined],
  ['null', null],
  ['0', 0],
  ["''", ''],
  ['false', false],
  ["'a string'", 'a string'],
  ["'route'", 'route'],
  ['an Error', new Error('x')],
]

// What a callback answers that it may not: isRevoked and the skip predicates answer a yes or a
// no (true or false, or a Promise of one); any other answer is an error, never a guess.
const ANSWERS = [
  ['undefined', undefined],
  ['null', null],
  ['0', 0],
  ["''", ''],
  ["'yes'", 'yes'],
  ['1', 1],
  ['{}', {}],
]

/**
 * The rows: [label, behave, expect]. `behave()` is the callback; `expect` is
 * `{ error: value }` (the handler gets a real Error for `value`), `{ timeout: true }`, or
 * `{ refused: code }` (answered with that failure code, no error).
 */
function rows({ answers = null, onThrow = (value) => ({ error: value }), onTimeout = { timeout: true } } = {}) {
  const list = []
  for (const [label, value] of THROWN) {
    list.push([`throws ${label}`, thrower(value), onThrow(value)])
    list.push([`rejects with ${label}`, () => Promise.reject(value), onThrow(value)])
  }
  // A thenable that is not a native Promise, as a client library may return.
  list.push(['returns a thenable rejecting with undefined', () => ({ then: (resolve, reject) => reject(undefined) }), onThrow(undefined)])
  list.push(['returns a Promise whose constructor getter throws undefined', promiseWithHostileConstructor, onThrow(undefined)])
  list.push(['never settles', () => new Promise(() => {}), onTimeout])
  if (answers !== null) {
    for (const [label, value] of ANSWERS) {
      list.push([`answers ${label}`, () => value, answers(value)])
      list.push([`resolves to ${label}`, () => Promise.resolve(value), answers(value)])
    }
    const nested = () => ({ then: (resolve) => resolve(Promise.resolve(undefined)) })
    list.push(['returns a thenable resolving to a Promise of undefined', nested, answers(undefined)])
  }
  return list
}

function thrower(value) {
  return () => {
    throw value
  }
}

// Promise.resolve(p) reads p.constructor: a getter there throws out of it synchronously.
function promiseWithHostileConstructor() {
  const p = Promise.resolve(true)
  Object.defineProperty(p, 'constructor', {
    get() {
      throw undefined
    },
  })
  return p
}

const REFUSED = { refused: 'missing_authorization' }

/**
 * The callbacks: how a mount uses the row's callback, which request it gets, and the control
 * (a well-behaved callback under which the route does run, or the callback is called), which
 * shows the mount really reaches that callback.
 */
const CALLBACKS = {
  getToken: {
    options: (f) => ({ getToken: f }),
    rows: rows(),
    control: { behave: () => VALID.slice(7), status: 200 },
  },
  isRevoked: {
    options: (f) => ({ isRevoked: f }),
    headers: { authorization: VALID },
    // Only `false` passes and `true` revokes: any other answer is an error (fail closed).
    rows: rows({ answers: (value) => ({ error: value }) }),
    control: { behave: () => false, status: 200 },
  },
  skip: {
    options: (f) => ({ skip: f }),
    rows: rows({ answers: (value) => ({ error: value }) }),
    control: { behave: async () => true, status: 200 },
  },
  'unless (a function)': {
    options: (f) => ({ unless: f }),
    rows: rows({ answers: (value) => ({ error: value }) }),
    control: { behave: () => true, status: 200 },
  },
  'unless.custom': {
    options: (f) => ({ unless: { path: ['/elsewhere'], custom: f } }),
    rows: rows({ answers: (value) => ({ error: value }) }),
    control: { behave: async () => true, status: 200 },
  },
  '.unless(fn)': {
    only: 'express',
    chain: (mw, f) => mw.unless(f),
    rows: rows({ answers: (value) => ({ error: value }) }),
    control: { behave: () => true, status: 200 },
  },
  '.unless({ custom })': {
    only: 'express',
    chain: (mw, f) => mw.unless({ custom: f }),
    rows: rows({ answers: (value) => ({ error: value }) }),
    control: { behave: async () => true, status: 200 },
  },
  onError: {
    options: (f) => ({ onError: f }),
    rows: rows(),
    control: {
      behave: (err, req, res) => (res.status ? res.status(418).send('formatted') : res.code(418).send('formatted')),
      status: 418,
    },
  },
  formatUser: {
    only: 'fastify',
    options: (f) => ({ formatUser: f }),
    headers: { authorization: VALID },
    rows: rows(),
    control: { behave: async (claims) => ({ id: claims.sub }), status: 200 },
  },
  onMismatch: {
    // The shadow engine alone has the token revoked: every request is a mismatch, the primary
    // passes it, and only the failing hook stands between the request and the route.
    options: (f) => ({ shadow: true, onMismatch: f }),
    prepare: (decision) => decision.engine.shadowAuthenticator.revokeToken(JTI, EXP),
    headers: { authorization: VALID },
    rows: rows(),
    control: { behave: () => undefined, status: 200 },
  },
  'a recovery (AuthDecision#recover)': {
    // A recovery that fails keeps the first failure: a refusal with its own code, no error.
    prepare: (decision, f) => decision.recover('missing_authorization', f),
    rows: rows({ onThrow: () => REFUSED, onTimeout: REFUSED }),
    control: {
      behave: (result, req) => {
        req.headers.authorization = VALID
        return true
      },
      status: 200,
    },
  },
}

/** Every mount of one app: { path, callback, label, behave, expect, headers }. */
function mountsFor(framework) {
  const mounts = []
  for (const [callback, spec] of Object.entries(CALLBACKS)) {
    if (spec.only !== undefined && spec.only !== framework) continue
    const all = [...spec.rows, ['control', spec.control.behave, { control: spec.control.status }]]
    all.forEach(([label, behave, expect], i) => {
      mounts.push({ path: `/m${mounts.length}`, callback, label, behave, expect, spec, index: i })
    })
  }
  return mounts
}

function middlewareOptions(engine, mount) {
  const { spec, behave } = mount
  return { engine, callbackTimeoutMs: CALLBACK_TIMEOUT_MS, ...(spec.options ? spec.options(behave) : {}) }
}

/** An Express app with one mount per row; `seen` records route runs and handled errors. */
function expressApp(engine, mounts, seen) {
  const app = express()
  for (const mount of mounts) {
    const mw = authShield(CONFIG, middlewareOptions(engine, mount))
    if (mount.spec.prepare) mount.spec.prepare(mw.decision, mount.behave)
    const guard = mount.spec.chain ? mount.spec.chain(mw, mount.behave) : mw
    app.all(mount.path, guard, (req, res) => {
      seen.ran.add(mount.path)
      res.json({ ran: true })
    })
  }
  app.use((err, req, res, next) => {
    seen.handled.set(req.path, err)
    res.status(500).json({ handled: true })
  })
  return listen(http.createServer(app))
}

async function fastifyApp(engine, mounts, seen) {
  const app = Fastify()
  app.setErrorHandler((err, request, reply) => {
    seen.handled.set(request.url, err)
    reply.code(500).send({ handled: true })
  })
  for (const mount of mounts) {
    await app.register(
      async (child) => {
        await child.register(authShieldPlugin, { config: CONFIG, ...middlewareOptions(engine, mount) })
        if (mount.spec.prepare) mount.spec.prepare(child.authShield.decision, mount.behave)
        child.all('/', async () => {
          seen.ran.add(mount.path)
          return { ran: true }
        })
      },
      { prefix: mount.path },
    )
  }
  await app.ready()
  return listen(app.server)
}

/** Status and JSON body; status 0 when no answer came within 30 s (a hang). */
async function call(base, mount) {
  let res
  let body
  try {
    res = await fetch(`${base}${mount.path}`, { headers: mount.spec.headers || {}, signal: AbortSignal.timeout(30_000) })
    body = await res.text()
  } catch (err) {
    return { status: 0, failure: err.name }
  }
  let json
  try {
    json = JSON.parse(body)
  } catch {
    json = undefined
  }
  return { status: res.status, json }
}

/** What was wrong with one row's outcome, or null. */
function problem(mount, res, seen) {
  const { expect } = mount
  const ran = seen.ran.has(mount.path)
  const err = seen.handled.get(mount.path)
  if (expect.control !== undefined) {
    return res.status === expect.control ? null : `control answered ${res.status}, expected ${expect.control}`
  }
  if (ran) return 'the route ran'
  if (res.status === 0) return `no answer (${res.failure})`
  if (res.status >= 200 && res.status < 300) return `answered ${res.status}`
  if (expect.refused !== undefined) {
    if (err !== undefined) return `expected the refusal ${expect.refused}, the error handler got ${String(err && err.code)}`
    const refused = res.status === 401 && res.json && res.json.code === expect.refused
    return refused ? null : `expected 401 ${expect.refused}, got ${res.status} ${JSON.stringify(res.json)}`
  }
  if (err === undefined) return `the error handler got nothing (answered ${res.status})`
  if (!types.isNativeError(err)) return `the error handler got ${typeof err}, not an Error`
  if (expect.timeout) return err.code === 'ERR_AUTH_SHIELD_CALLBACK_TIMEOUT' ? null : `expected a time-out, got ${err.code}`
  if (types.isNativeError(expect.error)) return err === expect.error ? null : 'the Error thrown was not handed on as it is'
  if (err.code !== 'ERR_AUTH_SHIELD_CALLBACK') return `expected ERR_AUTH_SHIELD_CALLBACK, got ${err.code}`
  if (!Object.hasOwn(err, 'cause') || !Object.is(err.cause, expect.error)) return `cause is ${String(err.cause)}`
  return null
}

// Any rejection nobody handled (a late rejection of a callback the fence gave up on, a fenced
// Promise nobody awaited) fails the file.
const unhandled = []
const onUnhandled = (reason) => unhandled.push(reason)

before(() => process.on('unhandledRejection', onUnhandled))
after(async () => {
  // Rejections are reported after the microtask queue drains: let it.
  await new Promise((resolve) => setTimeout(resolve, CALLBACK_TIMEOUT_MS * 2))
  process.off('unhandledRejection', onUnhandled)
  assert.deepEqual(unhandled, [], 'no unhandled rejection')
})

for (const framework of ['express', 'fastify']) {
  for (const engine of ['native', 'js']) {
    describe(`${framework}, ${engine} engine: a failing callback never lets the request through`, () => {
      const mounts = mountsFor(framework)
      const seen = { ran: new Set(), handled: new Map() }
      const results = new Map()
      let server
      before(async () => {
        server = await (framework === 'express' ? expressApp : fastifyApp)(engine, mounts, seen)
        // All rows at once: the never-settling ones wait for their time-out side by side.
        await Promise.all(mounts.map(async (mount) => results.set(mount.path, await call(server.base, mount))))
      })
      after(() => server.close())

      for (const callback of new Set(mounts.map((m) => m.callback))) {
        it(callback, () => {
          const rowsOf = mounts.filter((m) => m.callback === callback)
          assert.ok(rowsOf.length > 15)
          const problems = rowsOf.map((m) => [m.label, problem(m, results.get(m.path), seen)]).filter(([, p]) => p !== null)
          assert.deepEqual(problems, [])
        })
      }
    })
  }
}

describe('callbackTimeoutMs', () => {
  it('is checked when the middleware is made', async () => {
    for (const [value, type] of [
      ['10', TypeError],
      [0, RangeError],
      [-1, RangeError],
      [1.5, RangeError],
      [Number.NaN, RangeError],
      [2 ** 31, RangeError],
    ]) {
      assert.throws(() => authShield(CONFIG, { callbackTimeoutMs: value }), type, String(value))
      await assert.rejects(async () => {
        const app = Fastify()
        try {
          await app.register(authShieldPlugin, { config: CONFIG, callbackTimeoutMs: value })
          await app.ready()
        } finally {
          await app.close()
        }
      }, type)
    }
    assert.equal(authShield(CONFIG).decision.options.fence.timeoutMs, 10_000)
    assert.equal(authShield(CONFIG, { callbackTimeoutMs: 2 ** 31 - 1 }).decision.options.fence.timeoutMs, 2 ** 31 - 1)
  })
})
