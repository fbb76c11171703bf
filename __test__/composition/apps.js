'use strict'

// The combination suite's apps: one protected route, GET /orders, behind each adapter (Express,
// Fastify, Koa, Fetch, Hono, expressjwt) with that adapter's own route requirement in front of
// the handler, on a loopback server: HTTP, or HTTPS asking for a client certificate (the
// certificate-bound combinations; each adapter reads the certificate as docs/sender-constrained.md
// says: Express, Fastify and Koa from the socket, the Fetch entry from the caller, Hono from its
// clientCertificate option). A pass answers 200 `{ sub }`; a refusal the adapter's `{ error,
// code }`, and a failure handed to the framework (expressjwt's next(err)) `{ code: errorCode }`
// with its status, so every adapter's refusal is read the same way.

const http = require('node:http')
const https = require('node:https')
const express = require('express')
const Koa = require('koa')
const Fastify = require('fastify')
const { Hono } = require('hono')
const { listen } = require('../support/http')

const MODULES = {
  express: require('../../adapters/express'),
  fastify: require('../../adapters/fastify'),
  koa: require('../../adapters/koa'),
  fetch: require('../../adapters/fetch'),
  hono: require('../../adapters/hono'),
}
MODULES.expressjwt = MODULES.express

const subOf = (claims) => ({ sub: claims == null ? null : claims.sub })

/** What the framework's error handler answers for an error handed to it: its status and our code. */
const errorBody = (err) => ({ code: err.errorCode ?? err.code ?? null, name: err.name })

function serverFor(tls, handler, around) {
  if (around !== undefined) {
    const inner = handler
    handler = (req, res) => around(req, res, () => inner(req, res))
  }
  if (tls === undefined) return http.createServer(handler)
  // Asks for a certificate without refusing the handshake: the adapters judge socket.authorized.
  return https.createServer({ key: tls.server.key, cert: tls.server.cert, ca: tls.ca.cert, requestCert: true, rejectUnauthorized: false }, handler)
}

/** The peer certificate of a verified handshake (DER), as docs/sender-constrained.md tells Fetch and Hono users to read it. */
function verifiedPeer(socket) {
  return socket.authorized === true ? socket.getPeerCertificate().raw : undefined
}

/** A Fetch Request for a node:http request (the body-less GETs of this suite). */
function toRequest(req, scheme) {
  const headers = new Headers()
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1])
  return new Request(`${scheme}://${req.headers.host}${req.url}`, { method: req.method, headers })
}

async function writeResponse(res, response) {
  res.statusCode = response.status
  for (const [name, value] of response.headers) res.setHeader(name, value)
  res.end(Buffer.from(await response.arrayBuffer()))
}

/** Bridges node:http to a Fetch handler `(request, req) => Response`; a throw answers 500 `{ code }`. */
function fetchBridge(tls, handle, around) {
  const scheme = tls === undefined ? 'http' : 'https'
  return serverFor(tls, async (req, res) => {
    let response
    try {
      response = await handle(toRequest(req, scheme), req)
    } catch (err) {
      response = Response.json(errorBody(err), { status: err.status || 500 })
    }
    await writeResponse(res, response)
  }, around)
}

const STARTS = {
  async express(m, config, options, requirement, tls, around) {
    const mw = m(config, options)
    const app = express()
    app.get('/orders', mw, ...(requirement ? [requirement(m)] : []), (req, res) => res.json(subOf(req.auth)))
    app.use((err, req, res, next) => res.status(err.status || 500).json(errorBody(err)))
    return { mw, server: await listen(serverFor(tls, app, around)) }
  },
  async expressjwt(m, config, options, requirement, tls, around) {
    // express-jwt's one options object: the config and the middleware options together.
    const mw = m.expressjwt({ ...config, ...options })
    const app = express()
    app.get('/orders', mw, ...(requirement ? [requirement(m)] : []), (req, res) => res.json(subOf(req.auth)))
    app.use((err, req, res, next) => res.status(err.status || 500).json(errorBody(err)))
    return { mw, server: await listen(serverFor(tls, app, around)) }
  },
  async fastify(m, config, options, requirement, tls, around) {
    const app = Fastify({ serverFactory: (handler) => serverFor(tls, handler, around) })
    await app.register(m, { config, ...options })
    app.get('/orders', requirement ? { preHandler: requirement(m) } : {}, async (request) => subOf(request.auth))
    await app.listen({ port: 0, host: '127.0.0.1' })
    const scheme = tls === undefined ? 'http' : 'https'
    return { mw: app.authShield, server: { base: `${scheme}://127.0.0.1:${app.server.address().port}`, close: () => app.close() } }
  },
  async koa(m, config, options, requirement, tls, around) {
    const mw = m(config, options)
    const app = new Koa()
    app.silent = true
    app.use(async (ctx, next) => {
      try {
        await next()
      } catch (err) {
        ctx.status = err.status || 500
        ctx.body = errorBody(err)
      }
    })
    app.use(mw)
    if (requirement) app.use(requirement(m))
    app.use((ctx) => {
      ctx.body = subOf(ctx.state.auth)
    })
    return { mw, server: await listen(serverFor(tls, app.callback(), around)) }
  },
  async fetch(m, config, options, requirement, tls, around) {
    const verifyRequest = m.createVerifier(config, options)
    const check = requirement ? requirement(m) : null
    const server = fetchBridge(tls, async (request, req) => {
      let auth = await verifyRequest(request, tls === undefined ? undefined : { clientCertificate: verifiedPeer(req.socket) })
      if (auth.ok && check !== null) auth = check(auth)
      if (!auth.ok) return auth.response
      return Response.json(subOf(auth.claims), { headers: auth.headers })
    }, around)
    return { mw: verifyRequest, server: await listen(server) }
  },
  async hono(m, config, options, requirement, tls, around) {
    const clientCertificate = tls === undefined ? undefined : (c) => verifiedPeer(c.env.incoming.socket)
    const mw = m(config, clientCertificate === undefined ? options : { ...options, clientCertificate })
    const app = new Hono()
    app.onError((err, c) => c.json(errorBody(err), err.status || 500))
    app.use('*', mw)
    app.get('/orders', ...(requirement ? [requirement(m)] : []), (c) => c.json(subOf(c.get('claims'))))
    // @hono/node-server's env shape: the node:http request as `incoming`.
    return { mw, server: await listen(fetchBridge(tls, (request, req) => app.fetch(request, { incoming: req }), around)) }
  },
}

/**
 * Starts `adapter`'s app: `config` and middleware `options`, `requirement(m)` (m: the adapter's
 * module) the route requirement or undefined, `tls` the certificates (./support/certificates.js)
 * for an HTTPS server asking for client certificates, `around(req, res, handle)` what the server
 * runs each request inside (an HTTP server span, say). Resolves to `{ base, close, middleware }`,
 * `middleware` carrying `authenticator` and `stats` (Fastify: `app.authShield`).
 */
async function startApp(adapter, config, options, requirement, tls, around) {
  const { mw, server } = await STARTS[adapter](MODULES[adapter], config, options, requirement, tls, around)
  const base = tls === undefined ? server.base : server.base.replace(/^http:/, 'https:')
  return { base, close: server.close, middleware: mw }
}

/**
 * GET `url` on a fresh connection with `headers`; over HTTPS presenting `client` ({ key, cert })
 * or no certificate, trusting `ca`. Resolves to `{ status, headers, json }`.
 */
function send(url, { headers = {}, client, ca } = {}) {
  const tls = url.startsWith('https:')
  const lib = tls ? https : http
  const options = { method: 'GET', headers, agent: false, ...(tls ? { ca, servername: 'localhost', ...(client ? { key: client.key, cert: client.cert } : {}) } : {}) }
  return new Promise((resolve, reject) => {
    const req = lib.request(url, options, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (body += chunk))
      res.on('end', () => {
        let json
        try {
          json = JSON.parse(body)
        } catch {}
        resolve({ status: res.statusCode, headers: res.headers, body, json })
      })
    })
    req.on('error', reject)
    req.end()
  })
}

module.exports = { startApp, send, MODULES }
