'use strict'

// Certificate-bound tokens (RFC 8705 §3) behind a real TLS-terminating proxy on loopback: the
// proxy verifies client certificates against the test CA, drops any Client-Cert a client sent
// and passes the verified one in RFC 9440 Client-Cert to Express, Fastify and Koa apps over
// plain HTTP, both engines. With clientCertificateHeader named, the bound token passes over its
// certificate only; without it the header is never read (never trusted by default), so the
// bound token is certificate_required even behind the proxy.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const https = require('node:https')
const express = require('express')
const Koa = require('koa')
const Fastify = require('fastify')
const jose = require('jose')
const expressShield = require('../../adapters/express')
const fastifyShield = require('../../adapters/fastify')
const koaShield = require('../../adapters/koa')
const { listen, forward } = require('../support/http')
const { makeCertificates, derOf } = require('../support/certificates')

const APPS = {
  express(config, options) {
    const app = express()
    app.use(expressShield(config, options), (req, res) => res.json({ user: req.user.userId }))
    return listen(http.createServer(app))
  },
  async fastify(config, options) {
    const app = Fastify()
    await app.register(fastifyShield, { config, ...options })
    app.get('/', async (req) => ({ user: req.user.userId }))
    await app.listen({ port: 0, host: '127.0.0.1' })
    return { base: `http://127.0.0.1:${app.server.address().port}`, close: () => app.close() }
  },
  koa(config, options) {
    const app = new Koa()
    app.use(koaShield(config, options))
    app.use((ctx) => {
      ctx.body = { user: ctx.state.user.userId }
    })
    return listen(http.createServer(app.callback()))
  },
}

/** The proxy: TLS with optional client certificates (verified against the CA), forwards to `target()`. */
async function startProxy(certs, target) {
  const tls = { key: certs.server.key, cert: certs.server.cert, ca: certs.ca.cert, requestCert: true, rejectUnauthorized: false }
  const server = https.createServer(tls, (req, res) => {
    const upstream = new URL(target())
    const headers = { ...req.headers, host: upstream.host }
    // A client's own Client-Cert is never passed on; a verified certificate is (RFC 9440 §2).
    delete headers['client-cert']
    if (req.socket.authorized) headers['client-cert'] = `:${req.socket.getPeerCertificate().raw.toString('base64')}:`
    forward(req, res, upstream, req.url, headers)
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: server.address().port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(resolve)
      }),
  }
}

describe('certificate-bound tokens behind a TLS-terminating proxy (RFC 9440 Client-Cert)', () => {
  let certs
  let proxy
  let app
  let config
  let bound
  before(async () => {
    certs = makeCertificates()
    const { publicKey, privateKey } = await jose.generateKeyPair('ES256', { extractable: true })
    config = { keys: [{ alg: 'ES256', publicKey: await jose.exportJWK(publicKey) }], rateLimitMax: 0, certificateBoundTokens: true }
    bound = await new jose.SignJWT({ sub: 'alice', cnf: { 'x5t#S256': certs.clientA.thumbprint } }).setProtectedHeader({ alg: 'ES256' }).setIssuedAt().setExpirationTime('10m').sign(privateKey)
    proxy = await startProxy(certs, () => app.base)
  })
  after(async () => {
    await proxy.close()
    certs.remove()
  })

  /** GET / through the proxy with the bound token, presenting `client` or no certificate. */
  const call = (client, headers = {}) =>
    new Promise((resolve, reject) => {
      const options = { host: '127.0.0.1', port: proxy.port, path: '/', servername: 'localhost', ca: certs.ca.cert, agent: false, headers: { authorization: `Bearer ${bound}`, ...headers } }
      if (client) Object.assign(options, { key: client.key, cert: client.cert })
      const req = https.request(options, (res) => {
        let body = ''
        res.setEncoding('utf8')
        res.on('data', (c) => (body += c))
        res.on('end', () => resolve(res.statusCode === 200 ? `ok:${JSON.parse(body).user}` : `${res.statusCode} ${JSON.parse(body).code}`))
      })
      req.on('error', reject)
      req.end()
    })
  const forged = () => ({ 'client-cert': `:${derOf(certs.clientA.cert).toString('base64')}:` })

  for (const engine of ['native', 'js']) {
    for (const [name, start] of Object.entries(APPS)) {
      it(`${name} (${engine}): the named header binds the proxy's verified certificate; unnamed, it is never read`, async () => {
        app = await start(config, { engine, clientCertificateHeader: 'client-cert' })
        try {
          assert.equal(await call(certs.clientA), 'ok:alice')
          assert.equal(await call(certs.clientB), '401 certificate_mismatch')
          assert.equal(await call(undefined), '401 certificate_required')
          // A client's own Client-Cert: dropped by the proxy; a self-signed certificate: not verified there.
          assert.equal(await call(undefined, forged()), '401 certificate_required')
          assert.equal(await call(certs.selfSigned, forged()), '401 certificate_required')
        } finally {
          await app.close()
        }
        // The same app without the option: the proxy's header is not trusted, whatever it holds.
        app = await start(config, { engine })
        try {
          assert.equal(await call(certs.clientA), '401 certificate_required')
          assert.equal(await call(undefined, forged()), '401 certificate_required')
        } finally {
          await app.close()
        }
      })
    }
  }
})
