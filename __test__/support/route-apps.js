'use strict'

// Test support: an app per adapter (Express, Fastify, Koa, Fetch) on a loopback server, with the
// adapter's authentication in front of every route and per-route requirements made by that
// adapter's own factories: `routes` maps a path to `(adapterModule) => [requirement, …]`. A
// route that passes answers `{ sub }` (null for an anonymous pass); an error handed to the
// framework answers its status (500 without one) and `{ thrown: code }`.

const http = require('node:http')
const express = require('express')
const Koa = require('koa')
const Fastify = require('fastify')
const { listen } = require('./http')
const { fetchServer } = require('./adapter-servers')

const ADAPTERS = {
  express: require('../../adapters/express'),
  fastify: require('../../adapters/fastify'),
  koa: require('../../adapters/koa'),
  fetch: require('../../adapters/fetch'),
}

const subOf = (claims) => ({ sub: claims === undefined ? null : claims.sub })

async function expressApp(m, source, options, routes) {
  const app = express()
  const middleware = m(source, options)
  app.use(middleware)
  for (const [path, reqs] of Object.entries(routes)) app.get(path, ...reqs(m), (req, res) => res.json(subOf(req.auth)))
  app.use((err, req, res, next) => res.status(err.status || 500).json({ thrown: err.code ?? null }))
  return withDecision(await listen(http.createServer(app)), middleware.decision)
}

async function fastifyApp(m, source, options, routes) {
  const app = Fastify()
  await app.register(m, { [typeof source.authenticate === 'function' ? 'authenticator' : 'config']: source, ...options })
  for (const [path, reqs] of Object.entries(routes)) app.get(path, { preHandler: reqs(m) }, async (request) => subOf(request.auth))
  await app.listen({ port: 0, host: '127.0.0.1' })
  return withDecision({ base: `http://127.0.0.1:${app.server.address().port}`, close: () => app.close() }, app.authShield.decision)
}

async function koaApp(m, source, options, routes) {
  const app = new Koa()
  app.silent = true
  app.use(async (ctx, next) => {
    try {
      await next()
    } catch (err) {
      ctx.status = err.status || 500
      ctx.body = { thrown: err.code ?? null }
    }
  })
  const middleware = m(source, options)
  app.use(middleware)
  app.use(async (ctx) => {
    const chain = [...(routes[ctx.path] || (() => []))(m), async (c) => (c.body = subOf(c.state.auth))]
    const run = (i) => chain[i](ctx, () => run(i + 1))
    await run(0)
  })
  return withDecision(await listen(http.createServer(app.callback())), middleware.decision)
}

async function fetchApp(m, source, options, routes) {
  const verify = m.createVerifier(source, options)
  const checks = Object.fromEntries(Object.entries(routes).map(([path, reqs]) => [path, reqs(m)]))
  const server = await fetchServer(async (request) => {
    // The first check takes the Promise verifyRequest gives, the others its answer.
    let auth = verify(request)
    for (const check of checks[new URL(request.url).pathname] || []) auth = check(await auth)
    auth = await auth
    if (!auth.ok) return auth.response
    return Response.json(subOf(auth.claims))
  })
  return withDecision(server, verify.decision)
}

/** The server with its middleware's decision (lib/http/decision.js), for tests that reach the engines. */
function withDecision(server, decision) {
  server.decision = decision
  return server
}

const APPS = { express: expressApp, fastify: fastifyApp, koa: koaApp, fetch: fetchApp }

/** Starts `adapter`'s app for `source` (a config or an Authenticator); `{ base, close }`. */
function routeApp(adapter, source, options, routes) {
  return APPS[adapter](ADAPTERS[adapter], source, options, routes)
}

module.exports = { ADAPTERS, routeApp }
