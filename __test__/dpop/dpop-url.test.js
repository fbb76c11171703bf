'use strict'

// dpopUrl (lib/http/dpop.js): behind a real path-rewriting proxy on loopback, which forwards
// /api/* to the app's /*, clients make their proofs (the dpop package) for the URL they address,
// /api/orders; the app sees /orders. An origin alone (dpopOrigin) cannot say that, so the proof
// never matches; dpopUrl, the app's rebuilding of the external URL, can. The callback is code
// the library does not own: whatever it throws or answers that is not an absolute http(s) URL
// refuses the request (ERR_AUTH_SHIELD_CALLBACK, as a failing getToken does), never passes it,
// and never leaves an unhandled rejection. Every adapter, both engines.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const Koa = require('koa')
const Fastify = require('fastify')
const expressShield = require('../../adapters/express')
const fastifyShield = require('../../adapters/fastify')
const koaShield = require('../../adapters/koa')
const { createVerifier } = require('../../adapters/fetch')
const { listen, request, forward } = require('../support/http')
const { fetchServer } = require('../support/adapter-servers')
const { issuer, clientKey, proof } = require('../support/dpop')

const PREFIX = '/api'

/** Answers a failure handed to the framework (a failing callback) with its status and code. */
const thrown = (err) => ({ status: err.status || err.statusCode || 500, body: { thrown: err.code ?? null } })

// Each adapter: an app with `options` in front of GET /orders, the request target the app sees
// (what dpopUrl rebuilds the external URL from) and what the callback is given.
const ADAPTERS = {
  express: {
    start(config, options, errors) {
      const app = express()
      app.get('/orders', expressShield(config, options), (req, res) => res.json({ user: req.user }))
      app.use((err, req, res, next) => {
        errors.push(err)
        const { status, body } = thrown(err)
        res.status(status).json(body)
      })
      return listen(http.createServer(app))
    },
    target: (req) => req.originalUrl,
    isSubject: (req) => req instanceof http.IncomingMessage,
  },
  fastify: {
    async start(config, options, errors) {
      const app = Fastify()
      app.setErrorHandler((err, req, reply) => {
        errors.push(err)
        const { status, body } = thrown(err)
        reply.status(status).send(body)
      })
      await app.register(fastifyShield, { config, ...options })
      app.get('/orders', async (req) => ({ user: req.user }))
      await app.listen({ port: 0, host: '127.0.0.1' })
      return { base: `http://127.0.0.1:${app.server.address().port}`, close: () => app.close() }
    },
    target: (request) => request.url,
    isSubject: (request) => request.raw instanceof http.IncomingMessage && request !== request.raw,
  },
  koa: {
    start(config, options, errors) {
      const app = new Koa()
      app.silent = true
      app.use(async (ctx, next) => {
        try {
          await next()
        } catch (err) {
          errors.push(err)
          const { status, body } = thrown(err)
          ctx.status = status
          ctx.body = body
        }
      })
      app.use(koaShield(config, options))
      app.use((ctx) => {
        ctx.body = { user: ctx.state.user }
      })
      return listen(http.createServer(app.callback()))
    },
    target: (ctx) => ctx.originalUrl,
    isSubject: (ctx) => typeof ctx.state === 'object' && ctx.req instanceof http.IncomingMessage,
  },
  fetch: {
    start(config, options, errors) {
      const verify = createVerifier(config, options)
      return fetchServer(
        async (req) => {
          const auth = await verify(req)
          if (!auth.ok) return auth.response
          return Response.json({ user: auth.user }, { headers: auth.headers })
        },
        { errors },
      )
    },
    target: (req) => {
      const url = new URL(req.url)
      return url.pathname + url.search
    },
    isSubject: (req) => req instanceof Request,
  },
}

/** A plain-HTTP proxy on loopback: /api/<rest> goes to `target()`'s /<rest>; anything else 404. */
async function startProxy(target) {
  const server = http.createServer((req, res) => {
    if (!req.url.startsWith(`${PREFIX}/`)) {
      res.statusCode = 404
      return res.end()
    }
    const upstream = new URL(target())
    const headers = { ...req.headers, host: upstream.host, 'x-forwarded-proto': 'http', 'x-forwarded-prefix': PREFIX }
    const path = req.url.slice(PREFIX.length)
    forward(req, res, upstream, path, headers)
  })
  const { base, close } = await listen(server)
  // The name clients use: not the address the app sees.
  return { origin: base.replace('127.0.0.1', 'localhost'), close }
}

// What dpopUrl may answer that is not an absolute http(s) URL, or how it may fail: each refuses.
const BAD_ANSWERS = [
  [
    'throwing an Error',
    () => {
      throw new Error('no url')
    },
    'Error',
  ],
  [
    'throwing undefined',
    () => {
      throw undefined
    },
  ],
  ['answering 5', () => 5],
  ["answering ''", () => ''],
  ["answering 'not a url'", () => 'not a url'],
  ['answering undefined', () => undefined],
  ['answering a relative URL', () => '/api/orders'],
  ['answering a URL of another scheme', (origin) => `${origin.replace('http', 'ftp')}/api/orders`],
  ['answering a URL with userinfo', (origin) => origin.replace('http://', 'http://user@') + '/api/orders'],
  ['answering a URL with a space', (origin) => `${origin}/api/my orders`],
  ['answering a URL object', (origin) => new URL(`${origin}/api/orders`)],
  ['answering a Promise of the right URL', (origin) => Promise.resolve(`${origin}/api/orders`)],
  ['answering a Promise rejecting with undefined', () => Promise.reject(undefined)],
  [
    'answering a thenable whose then throws',
    () => ({
      then() {
        throw new Error('then')
      },
    }),
  ],
]

describe('dpopUrl behind a path-rewriting proxy', () => {
  let iss
  let key
  let bound
  let unbound
  let proxy
  let app
  const unhandled = []
  const onUnhandled = (reason) => unhandled.push(reason)
  before(async () => {
    process.on('unhandledRejection', onUnhandled)
    iss = await issuer()
    key = await clientKey('ES256')
    bound = await iss.sign({ cnf: { jkt: key.jkt } })
    unbound = await iss.sign({})
    proxy = await startProxy(() => app.base)
  })
  after(async () => {
    await proxy.close()
    process.off('unhandledRejection', onUnhandled)
    // Past the last test: a rejection left unhandled would have been reported by now.
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(unhandled, [])
  })

  const config = () => ({ keys: iss.keys, dpop: true, rateLimitMax: 0 })
  const external = () => `${proxy.origin}${PREFIX}/orders`
  const send = (headers, path = '/orders?page=2') => request(`${proxy.origin}${PREFIX}${path}`, { headers })
  const withProof = async (url = external()) => ({ authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url }) })

  for (const engine of ['native', 'js']) {
    for (const [name, adapter] of Object.entries(ADAPTERS)) {
      it(`${name} (${engine}): the proof for the external URL passes once with dpopUrl; other URLs never; Bearer requests never call it`, async () => {
        const subjects = []
        const dpopUrl = (req) => {
          subjects.push(adapter.isSubject(req))
          return proxy.origin + PREFIX + adapter.target(req)
        }
        const errors = []
        app = await adapter.start(config(), { engine, dpopUrl }, errors)
        try {
          const headers = await withProof()
          const ok = await send(headers)
          assert.equal(ok.status, 200, ok.body)
          assert.deepEqual(ok.json.user, { userId: 'user-1' })
          const replay = await send(headers)
          assert.equal(replay.status, 401)
          assert.equal(replay.json.code, 'dpop_proof_replayed')
          // The URL the app sees, the external one without the prefix, another path.
          for (const url of [`${app.base}/orders`, `${proxy.origin}/orders`, `${proxy.origin}${PREFIX}/other`]) {
            const refused = await send(await withProof(url))
            assert.equal(refused.status, 401, url)
            assert.equal(refused.json.code, 'dpop_proof_mismatch', url)
            assert.match(refused.headers['www-authenticate'], /^DPoP error="invalid_dpop_proof"/)
          }
          // Requests arriving together, each with its own proof.
          const burst = await Promise.all(Array.from({ length: 8 }, async () => send(await withProof())))
          assert.deepEqual(
            burst.map((r) => r.status),
            Array(8).fill(200),
          )
          assert.ok(subjects.length >= 13 && subjects.every(Boolean), `the callback got ${name}'s request: ${subjects}`)
          // Bearer (a proof beside it or not) pays nothing: the callback is not called.
          const calls = subjects.length
          assert.equal((await send({ authorization: `Bearer ${unbound}` })).status, 200)
          assert.equal((await send({ authorization: `Bearer ${unbound}`, dpop: headers.dpop })).status, 200)
          assert.equal((await send({ authorization: `Bearer ${bound}`, dpop: headers.dpop })).json.code, 'dpop_bound_token_as_bearer')
          assert.equal((await send({})).json.code, 'missing_authorization')
          assert.equal(subjects.length, calls)
          assert.deepEqual(errors, [])
        } finally {
          await app.close()
        }
      })

      it(`${name} (${engine}): dpopOrigin alone cannot say the prefix: the same proof is dpop_proof_mismatch`, async () => {
        app = await adapter.start(config(), { engine, dpopOrigin: proxy.origin }, [])
        try {
          const refused = await send(await withProof())
          assert.equal(refused.status, 401)
          assert.equal(refused.json.code, 'dpop_proof_mismatch')
          // What it can say: the URL without the prefix, as the app sees it.
          assert.equal((await send(await withProof(`${proxy.origin}/orders`))).status, 200)
        } finally {
          await app.close()
        }
      })

      it(`${name} (${engine}): a dpopUrl that throws or answers no absolute http(s) URL refuses the request (ERR_AUTH_SHIELD_CALLBACK)`, async () => {
        let answer
        const errors = []
        app = await adapter.start(config(), { engine, dpopUrl: () => answer(proxy.origin) }, errors)
        try {
          for (const [label, bad, errorName] of BAD_ANSWERS) {
            answer = bad
            errors.length = 0
            const refused = await send(await withProof())
            assert.equal(refused.status, 500, `${label}: ${refused.body}`)
            assert.equal(refused.json.thrown, errorName === 'Error' ? null : 'ERR_AUTH_SHIELD_CALLBACK', label)
            assert.equal(errors.length, 1, label)
            assert.ok(errors[0] instanceof Error, label)
            if (errorName === 'Error') assert.equal(errors[0].message, 'no url', label)
            else assert.match(errors[0].message, /^options\.dpopUrl (threw|answered) /, label)
          }
          // The same app, the callback mended: passes.
          answer = (origin) => `${origin}${PREFIX}/orders`
          assert.equal((await send(await withProof())).status, 200)
        } finally {
          await app.close()
        }
      })
    }
  }
})

describe('dpopUrl options', () => {
  const config = { accessSecret: 'x'.repeat(32), dpop: true }
  const dpopUrl = () => 'https://api.example.com/api/orders'
  for (const [name, build] of [
    ['express', (options) => expressShield(config, options)],
    ['koa', (options) => koaShield(config, options)],
    ['fetch', (options) => createVerifier(config, options)],
  ]) {
    it(`${name}: dpopUrl is a function, never with dpopOrigin; it serves the modes as dpopOrigin does`, () => {
      assert.throws(() => build({ dpopOrigin: 'https://api.example.com', dpopUrl }), {
        name: 'TypeError',
        message: 'options.dpopOrigin and options.dpopUrl both say which URL clients address: give one of them',
      })
      for (const bad of ['https://api.example.com/api', true, 0, '', {}]) {
        assert.throws(() => build({ dpopUrl: bad }), { name: 'TypeError', message: 'options.dpopUrl must be a function (req) => the absolute URL the client addressed' }, String(bad))
      }
      for (const mode of ['allowed', 'required']) {
        build({ dpopUrl, dpopMode: mode })
        assert.throws(() => build({ dpopMode: mode }), { name: 'TypeError', message: `options.dpopMode '${mode}' needs options.dpopOrigin or options.dpopUrl` })
      }
      build({ dpopUrl: null, dpopOrigin: 'https://api.example.com' })
      build({ dpopUrl, dpopMode: 'disabled' })
    })
  }

  it('fastify: both is a TypeError at registration', async () => {
    const app = Fastify()
    await assert.rejects(
      async () => {
        await app.register(fastifyShield, { config, dpopOrigin: 'https://api.example.com', dpopUrl })
        await app.ready()
      },
      { name: 'TypeError' },
    )
    await app.close()
  })
})
