'use strict'

// Certificate-bound access tokens (RFC 8705 §3) over real TLS on loopback: certificates made by
// openssl for this run, ES256 tokens with cnf x5t#S256 signed by jose, and the Express, Fastify,
// Koa and Fetch adapters on both engines. The thumbprint the tokens carry comes from
// node:crypto's X509Certificate fingerprint, the one the adapters compare from the TLS socket.

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const https = require('node:https')
const { X509Certificate } = require('node:crypto')
const express = require('express')
const Koa = require('koa')
const Fastify = require('fastify')
const jose = require('jose')
const expressShield = require('../../adapters/express')
const fastifyShield = require('../../adapters/fastify')
const koaShield = require('../../adapters/koa')
const { createVerifier } = require('../../adapters/fetch')
const { makeCertificates, derOf } = require('../support/certificates')

const ENGINES = ['native', 'js']

let certs
// The keys of every authenticator here (each test adds its binding option).
let config
let tokens

before(async () => {
  certs = makeCertificates()
  const { publicKey, privateKey } = await jose.generateKeyPair('ES256', { extractable: true })
  const jwk = await jose.exportJWK(publicKey)
  config = { keys: [{ kid: 'k1', alg: 'ES256', publicKey: { ...jwk, kid: 'k1', alg: 'ES256' } }], rateLimitMax: 0 }
  const sign = (claims) =>
    new jose.SignJWT({ sub: 'alice', ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' }).setIssuedAt().setExpirationTime('10m').sign(privateKey)
  tokens = {
    boundA: await sign({ cnf: { 'x5t#S256': certs.clientA.thumbprint } }),
    boundSelf: await sign({ cnf: { 'x5t#S256': certs.selfSigned.thumbprint } }),
    unbound: await sign({}),
    malformed: await sign({ cnf: { 'x5t#S256': certs.clientA.thumbprint.slice(0, 42) } }),
    notObject: await sign({ cnf: certs.clientA.thumbprint }),
  }
})

after(() => certs.remove())

/** TLS options of a server that asks for a client certificate without refusing the handshake. */
function tlsOptions() {
  return { key: certs.server.key, cert: certs.server.cert, ca: certs.ca.cert, requestCert: true, rejectUnauthorized: false }
}

function listening(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve(server))
  })
}

async function expressApp(cfg, options, tls = true) {
  const app = express()
  app.use(expressShield(cfg, options), (req, res) => res.json({ user: req.user.userId }))
  return listening(tls ? https.createServer(tlsOptions(), app) : http.createServer(app))
}

async function koaApp(cfg, options) {
  const app = new Koa()
  app.use(koaShield(cfg, options))
  app.use((ctx) => {
    ctx.body = { user: ctx.state.user.userId }
  })
  return listening(https.createServer(tlsOptions(), app.callback()))
}

async function fastifyApp(cfg, options) {
  const app = Fastify({ https: tlsOptions() })
  await app.register(fastifyShield, { config: cfg, ...options })
  app.get('/', async (request) => ({ user: request.user.userId }))
  await app.listen({ port: 0, host: '127.0.0.1' })
  return app.server
}

/** A Fetch route behind a TLS server: the caller hands verifyRequest the socket's certificate. */
async function fetchApp(cfg, options) {
  const verifyRequest = createVerifier(cfg, options)
  const server = https.createServer(tlsOptions(), async (req, res) => {
    const request = new Request(`https://${req.headers.host}${req.url}`, { headers: req.headers })
    const peer = req.socket.authorized ? req.socket.getPeerCertificate().raw : undefined
    const auth = await verifyRequest(request, { clientCertificate: peer })
    const response = auth.ok ? Response.json({ user: auth.user.userId }) : auth.response
    res.writeHead(response.status, Object.fromEntries(response.headers))
    res.end(Buffer.from(await response.arrayBuffer()))
  })
  return listening(server)
}

/** GET / with `token` over TLS, presenting `client` ({ key, cert }) or no certificate. */
function call(server, token, client, headers = {}) {
  const { port } = server.address()
  const tls = server instanceof https.Server
  const options = {
    host: '127.0.0.1',
    port,
    path: '/',
    headers: { authorization: `Bearer ${token}`, ...headers },
    agent: false,
    ...(tls ? { ca: certs.ca.cert, servername: 'localhost', ...(client ? { key: client.key, cert: client.cert } : {}) } : {}),
  }
  return new Promise((resolve, reject) => {
    const req = (tls ? https : http).request(options, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(body), challenge: res.headers['www-authenticate'] }))
    })
    req.on('error', reject)
    req.end()
  })
}

function closing(server) {
  server.closeAllConnections?.()
  return new Promise((resolve) => server.close(resolve))
}

const ADAPTERS = [
  ['Express', expressApp],
  ['Fastify', fastifyApp],
  ['Koa', koaApp],
  ['Fetch', fetchApp],
]

for (const engine of ENGINES) {
  for (const [name, start] of ADAPTERS) {
    describe(`${name} on the ${engine} engine over TLS`, () => {
      let checked
      let required
      before(async () => {
        checked = await start({ ...config, certificateBoundTokens: true }, { engine })
        required = await start({ ...config, requireCertificateBoundTokens: true }, { engine })
      })
      after(async () => {
        await closing(checked)
        await closing(required)
      })

      test('accepts a bound token over its certificate only', async () => {
        assert.deepEqual(await call(checked, tokens.boundA, certs.clientA), { status: 200, body: { user: 'alice' }, challenge: undefined })
        const other = await call(checked, tokens.boundA, certs.clientB)
        assert.equal(other.status, 401)
        assert.equal(other.body.code, 'certificate_mismatch')
        assert.match(other.challenge, /error="invalid_token"/)
        const none = await call(checked, tokens.boundA, undefined)
        assert.equal(none.status, 401)
        assert.equal(none.body.code, 'certificate_required')
      })

      test('refuses a malformed cnf', async () => {
        for (const token of [tokens.malformed, tokens.notObject]) {
          const res = await call(checked, token, certs.clientA)
          assert.equal(res.status, 401)
          assert.equal(res.body.code, 'invalid_claims')
        }
      })

      test('lets unbound tokens through unless bound ones are required', async () => {
        assert.equal((await call(checked, tokens.unbound, certs.clientA)).status, 200)
        assert.equal((await call(checked, tokens.unbound, undefined)).status, 200)
        const refused = await call(required, tokens.unbound, certs.clientA)
        assert.equal(refused.status, 401)
        assert.equal(refused.body.code, 'unbound_token')
        assert.equal((await call(required, tokens.boundA, certs.clientA)).status, 200)
      })

      test('a certificate whose chain Node did not verify binds nothing by default', async () => {
        const res = await call(checked, tokens.boundSelf, certs.selfSigned)
        assert.equal(res.status, 401)
        assert.equal(res.body.code, 'certificate_required')
      })
    })
  }
}

describe('self-signed client certificates (RFC 8705 §2.2)', () => {
  for (const engine of ENGINES) {
    test(`acceptUnverifiedClientCertificates binds the presented certificate (${engine})`, async () => {
      const server = await expressApp({ ...config, certificateBoundTokens: true }, { engine, acceptUnverifiedClientCertificates: true })
      try {
        assert.equal((await call(server, tokens.boundSelf, certs.selfSigned)).status, 200)
        assert.equal((await call(server, tokens.boundA, certs.clientA)).status, 200)
        assert.equal((await call(server, tokens.boundSelf, certs.clientA)).body.code, 'certificate_mismatch')
        assert.equal((await call(server, tokens.boundSelf, undefined)).body.code, 'certificate_required')
      } finally {
        await closing(server)
      }
    })
  }
})

describe('behind a TLS-terminating proxy (RFC 9440 Client-Cert)', () => {
  const clientCert = (pem) => `:${derOf(pem).toString('base64')}:`
  for (const engine of ENGINES) {
    test(`the named header carries the certificate; unnamed, a header is never trusted (${engine})`, async () => {
      const bound = { ...config, certificateBoundTokens: true }
      const proxied = await expressApp(bound, { engine, clientCertificateHeader: 'client-cert' }, false)
      const direct = await expressApp(bound, { engine }, false)
      try {
        assert.equal((await call(proxied, tokens.boundA, undefined, { 'client-cert': clientCert(certs.clientA.cert) })).status, 200)
        const other = await call(proxied, tokens.boundA, undefined, { 'client-cert': clientCert(certs.clientB.cert) })
        assert.equal(other.body.code, 'certificate_mismatch')
        assert.equal((await call(proxied, tokens.boundA, undefined)).body.code, 'certificate_required')
        for (const bad of ['', certs.clientA.cert.replace(/\n/g, ' '), derOf(certs.clientA.cert).toString('base64'), `:${derOf(certs.clientA.cert).toString('base64url')}:`, '::']) {
          const res = await call(proxied, tokens.boundA, undefined, { 'client-cert': bad })
          assert.equal(res.body.code, 'certificate_required', JSON.stringify(bad.slice(0, 20)))
        }
        // No header named: a client's Client-Cert proves nothing and is not read.
        const forged = await call(direct, tokens.boundA, undefined, { 'client-cert': clientCert(certs.clientA.cert) })
        assert.equal(forged.body.code, 'certificate_required')
      } finally {
        await closing(proxied)
        await closing(direct)
      }
    })
  }

  test('the header option is checked', () => {
    for (const bad of ['Client-Cert', 'client cert', '', 7, 'authorization']) {
      assert.throws(() => expressShield({ ...config, certificateBoundTokens: true }, { clientCertificateHeader: bad }), { name: 'TypeError' })
    }
  })
})

describe('without binding checks', () => {
  test('no certificate is read, so a bound token is refused, even over mTLS with its certificate (both engines)', async () => {
    for (const engine of ENGINES) {
      const server = await expressApp(config, { engine })
      try {
        for (const cert of [undefined, certs.clientA]) {
          const refused = await call(server, tokens.boundA, cert)
          assert.equal(refused.status, 401)
          assert.equal(refused.body.code, 'certificate_required')
          assert.equal((await call(server, tokens.malformed, cert)).body.code, 'invalid_claims')
        }
        assert.equal((await call(server, tokens.unbound, undefined)).status, 200)
      } finally {
        await closing(server)
      }
    }
  })

  test('the Fetch verifier takes an X509Certificate as well as DER bytes', async () => {
    for (const engine of ENGINES) {
      const verifyRequest = createVerifier({ ...config, certificateBoundTokens: true }, { engine })
      const request = () => new Request('https://api.example/', { headers: { authorization: `Bearer ${tokens.boundA}` } })
      assert.equal((await verifyRequest(request(), { clientCertificate: new X509Certificate(certs.clientA.cert) })).ok, true)
      assert.equal((await verifyRequest(request(), { clientCertificate: derOf(certs.clientB.cert) })).code, 'certificate_mismatch')
      assert.equal((await verifyRequest(request())).code, 'certificate_required')
      await assert.rejects(verifyRequest(request(), { clientCertificate: 'pem?' }), { name: 'TypeError' })
    }
  })
})

describe('tokens signed by signAccessToken', () => {
  for (const engine of ENGINES) {
    test(`a cnf among the claims binds the token (${engine})`, async () => {
      const { Authenticator } = engine === 'js' ? require('../../js') : require('../..')
      const auth = new Authenticator({ accessSecret: 'mtls-issuing-secret-0123456789abcdef', rateLimitMax: 0, certificateBoundTokens: true })
      const bound = auth.signAccessToken({ sub: 'bob', cnf: { 'x5t#S256': certs.clientB.thumbprint } })
      const app = express()
      app.use(expressShield(auth), (req, res) => res.json({ user: req.user.userId }))
      const server = await listening(https.createServer(tlsOptions(), app))
      try {
        assert.deepEqual((await call(server, bound, certs.clientB)).body, { user: 'bob' })
        assert.equal((await call(server, bound, certs.clientA)).body.code, 'certificate_mismatch')
      } finally {
        await closing(server)
      }
    })
  }
})
