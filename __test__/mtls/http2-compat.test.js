'use strict'

// Sender-constrained tokens beyond HTTP/1.1 and the main middleware, both engines:
// - mTLS over HTTP/2 (node:http2 secure servers with requestCert): Koa on its callback, Fastify
//   with `http2: true`, a Fetch route on a plain stream handler (clientCertificate from the
//   session's socket) and a plain handler calling authenticateRequest; certificates made by
//   openssl for this run. Express 5 does not run on node:http2's compatibility API.
// - express-jwt's compatible export (`expressjwt`) with a certificate-bound and a DPoP-bound
//   token: each passes only with its certificate or proof, and onExpired never revives a bound
//   token (it would skip the binding check).

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const http2 = require('node:http2')
const https = require('node:https')
const { createHash } = require('node:crypto')
const Koa = require('koa')
const Fastify = require('fastify')
const express = require('express')
const jose = require('jose')
const koaShield = require('../../adapters/koa')
const fastifyShield = require('../../adapters/fastify')
const { expressjwt } = require('../../adapters/express')
const { createVerifier } = require('../../adapters/fetch')
const { makeCertificates } = require('../support/certificates')
const { listen, request } = require('../support/http')
const { clientKey, proof } = require('../support/dpop')

const ENGINES = { native: require('../..'), js: require('../../js') }

let certs
let keys
let sign
let tokens

before(async () => {
  certs = makeCertificates()
  const { publicKey, privateKey } = await jose.generateKeyPair('ES256', { extractable: true })
  const jwk = await jose.exportJWK(publicKey)
  keys = [{ kid: 'k1', alg: 'ES256', publicKey: { ...jwk, kid: 'k1', alg: 'ES256' } }]
  sign = (claims, exp = '10m') =>
    new jose.SignJWT({ sub: 'alice', ...claims }).setProtectedHeader({ alg: 'ES256', kid: 'k1', typ: 'at+jwt' }).setIssuedAt().setExpirationTime(exp).sign(privateKey)
  tokens = { boundA: await sign({ cnf: { 'x5t#S256': certs.clientA.thumbprint } }), unbound: await sign({}) }
})

after(() => certs.remove())

const tlsOptions = () => ({ key: certs.server.key, cert: certs.server.cert, ca: certs.ca.cert, requestCert: true, rejectUnauthorized: false })

function listening(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve(server))
  })
}

/** GET / over HTTP/2 with `token`, presenting `client` ({ key, cert }) or no certificate. */
function h2get(port, token, client) {
  return new Promise((resolve, reject) => {
    const session = http2.connect(`https://127.0.0.1:${port}`, { ca: certs.ca.cert, servername: 'localhost', ...(client ? { key: client.key, cert: client.cert } : {}) })
    session.on('error', reject)
    const stream = session.request({ ':path': '/', authorization: `Bearer ${token}` })
    let status
    let challenge
    let body = ''
    stream.on('response', (headers) => {
      status = headers[':status']
      challenge = headers['www-authenticate']
    })
    stream.setEncoding('utf8')
    stream.on('data', (chunk) => (body += chunk))
    stream.on('end', () => {
      session.close()
      resolve({ status, challenge, body: JSON.parse(body) })
    })
    stream.on('error', reject)
    stream.end()
  })
}

const H2_APPS = {
  async koa(cfg) {
    const app = new Koa()
    app.use(koaShield(cfg, {}))
    app.use((ctx) => {
      ctx.body = { user: ctx.state.user.userId }
    })
    return listening(http2.createSecureServer(tlsOptions(), app.callback()))
  },
  async fastify(cfg) {
    const app = Fastify({ http2: true, https: tlsOptions() })
    await app.register(fastifyShield, { config: cfg })
    app.get('/', async (req) => ({ user: req.user.userId }))
    await app.listen({ port: 0, host: '127.0.0.1' })
    return app.server
  },
  // A plain stream handler: the certificate is the session's, handed to verifyRequest.
  async fetch(cfg) {
    const verifyRequest = createVerifier(cfg, {})
    const server = http2.createSecureServer(tlsOptions())
    server.on('stream', async (stream, headers) => {
      const socket = stream.session.socket
      const peer = socket.authorized ? socket.getPeerCertificate().raw : undefined
      const plain = Object.fromEntries(Object.entries(headers).filter(([name]) => !name.startsWith(':')))
      const auth = await verifyRequest(new Request(`https://localhost${headers[':path']}`, { headers: plain }), { clientCertificate: peer })
      const response = auth.ok ? Response.json({ user: auth.user.userId }) : auth.response
      stream.respond({ ':status': response.status, ...Object.fromEntries(response.headers) })
      stream.end(Buffer.from(await response.arrayBuffer()))
    })
    return listening(server)
  },
}

for (const [engine, E] of Object.entries(ENGINES)) {
  for (const [name, start] of Object.entries(H2_APPS)) {
    describe(`${name} over HTTP/2 (${engine}): certificate-bound tokens`, () => {
      let server
      before(async () => {
        server = await start(new E.Authenticator({ keys, rateLimitMax: 0, certificateBoundTokens: true }))
      })
      after(() => new Promise((resolve) => server.close(resolve)))

      it('passes the bound token over its certificate only', async () => {
        const { port } = server.address()
        const ok = await h2get(port, tokens.boundA, certs.clientA)
        assert.equal(ok.status, 200, JSON.stringify(ok.body))
        assert.deepEqual(ok.body, { user: 'alice' })
        const other = await h2get(port, tokens.boundA, certs.clientB)
        assert.equal(other.status, 401)
        assert.equal(other.body.code, 'certificate_mismatch')
        assert.match(other.challenge, /^Bearer error="invalid_token"/)
        const none = await h2get(port, tokens.boundA, undefined)
        assert.equal(none.body.code, 'certificate_required')
        // Self-signed: Node did not verify its chain, so it is no certificate here.
        const self = await h2get(port, tokens.boundA, certs.selfSigned)
        assert.equal(self.body.code, 'certificate_required')
        assert.equal((await h2get(port, tokens.unbound, undefined)).status, 200)
      })
    })
  }

  describe(`a plain HTTP/2 handler with authenticateRequest (${engine})`, () => {
    it('takes the thumbprint of the session certificate as the SenderContext', async () => {
      const config = { keys, rateLimitMax: 0, certificateBoundTokens: true }
      const server = http2.createSecureServer(tlsOptions())
      server.on('stream', (stream, headers) => {
        const socket = stream.session.socket
        const raw = socket.authorized ? socket.getPeerCertificate().raw : undefined
        const sender = raw === undefined ? undefined : { clientCertThumbprint: createHash('sha256').update(raw).digest('base64url') }
        const r = E.authenticateRequest(headers.authorization, undefined, undefined, config, sender)
        stream.respond({ ':status': r.authenticated ? 200 : r.errorStatus, 'content-type': 'application/json' })
        stream.end(JSON.stringify(r.authenticated ? { user: r.userId } : { code: r.errorCode }))
      })
      await listening(server)
      try {
        const { port } = server.address()
        assert.equal((await h2get(port, tokens.boundA, certs.clientA)).status, 200)
        assert.equal((await h2get(port, tokens.boundA, certs.clientB)).body.code, 'certificate_mismatch')
        assert.equal((await h2get(port, tokens.boundA, undefined)).body.code, 'certificate_required')
      } finally {
        await new Promise((resolve) => server.close(resolve))
      }
    })
  })
}

// expressjwt: failures go to next(err) as express-jwt's UnauthorizedError; the app's handler
// answers its status with both codes.
function compatApp(middleware, tls) {
  const app = express()
  app.use(middleware, (req, res) => res.json({ sub: req.auth.sub }))
  app.use((err, req, res, next) => res.status(err.status || 500).json({ code: err.code, errorCode: err.errorCode ?? null }))
  return tls ? listening(https.createServer(tlsOptions(), app)) : listen(http.createServer(app))
}

function tlsGet(server, token, client) {
  const options = {
    host: '127.0.0.1',
    port: server.address().port,
    path: '/',
    headers: { authorization: `Bearer ${token}` },
    agent: false,
    ca: certs.ca.cert,
    servername: 'localhost',
    ...(client ? { key: client.key, cert: client.cert } : {}),
  }
  return new Promise((resolve, reject) => {
    const req = https.request(options, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (body += chunk))
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(body) }))
    })
    req.on('error', reject)
    req.end()
  })
}

const ORIGIN = 'https://api.example.com'

for (const engine of Object.keys(ENGINES)) {
  describe(`expressjwt (${engine}): sender-constrained tokens`, () => {
    it('a certificate-bound token passes over its certificate only; onExpired does not revive an expired one', async () => {
      const expired = await sign({ cnf: { 'x5t#S256': certs.clientA.thumbprint } }, Math.floor(Date.now() / 1000) - 30)
      const expiredUnbound = await sign({}, Math.floor(Date.now() / 1000) - 30)
      const server = await compatApp(expressjwt({ keys, rateLimitMax: 0, certificateBoundTokens: true }, { engine, onExpired: () => {} }), true)
      try {
        assert.deepEqual(await tlsGet(server, tokens.boundA, certs.clientA), { status: 200, body: { sub: 'alice' } })
        assert.deepEqual(await tlsGet(server, tokens.boundA, certs.clientB), { status: 401, body: { code: 'invalid_token', errorCode: 'certificate_mismatch' } })
        assert.deepEqual(await tlsGet(server, tokens.boundA, undefined), { status: 401, body: { code: 'invalid_token', errorCode: 'certificate_required' } })
        // The control: onExpired lets an expired unbound token through, as express-jwt does.
        assert.equal((await tlsGet(server, expiredUnbound, undefined)).status, 200)
        for (const client of [undefined, certs.clientB, certs.clientA]) {
          assert.deepEqual(await tlsGet(server, expired, client), { status: 401, body: { code: 'invalid_token', errorCode: 'token_expired' } })
        }
      } finally {
        await new Promise((resolve) => server.close(resolve))
      }
    })

    it('a DPoP-bound token passes with a fresh proof only; as Bearer, without a proof or expired it is refused', async () => {
      const key = await clientKey('ES256')
      const bound = await sign({ cnf: { jkt: key.jkt } })
      const expired = await sign({ cnf: { jkt: key.jkt } }, Math.floor(Date.now() / 1000) - 30)
      // express-jwt's isRevoked sees the DPoP request's token as a Bearer one's.
      const seen = []
      const isRevoked = (req, token) => {
        seen.push(token.payload.cnf.jkt)
        return false
      }
      const server = await compatApp(expressjwt({ keys, rateLimitMax: 0, dpop: true }, { engine, dpopOrigin: ORIGIN, onExpired: () => {}, isRevoked }), false)
      try {
        const send = (headers) => request(`${server.base}/`, { headers })
        const headers = { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: `${ORIGIN}/` }) }
        const ok = await send(headers)
        assert.equal(ok.status, 200, ok.body)
        assert.deepEqual(ok.json, { sub: 'alice' })
        assert.deepEqual(seen, [key.jkt])
        assert.deepEqual((await send(headers)).json, { code: 'invalid_token', errorCode: 'dpop_proof_replayed' })
        assert.deepEqual((await send({ authorization: `Bearer ${bound}` })).json, { code: 'invalid_token', errorCode: 'dpop_bound_token_as_bearer' })
        assert.deepEqual((await send({ authorization: `DPoP ${bound}` })).json, { code: 'invalid_token', errorCode: 'missing_dpop_proof' })
        for (const h of [
          { authorization: `DPoP ${expired}`, dpop: await proof(key, { token: expired, url: `${ORIGIN}/` }) },
          { authorization: `Bearer ${expired}` },
        ]) {
          const refused = await send(h)
          assert.equal(refused.status, 401, h.authorization)
          assert.equal(refused.json.errorCode, 'token_expired')
        }
      } finally {
        await server.close()
      }
    })

    it("dpopMode: 'disabled' hands the DPoP scheme on as express-jwt's credentials_bad_scheme", async () => {
      const server = await compatApp(expressjwt({ keys, rateLimitMax: 0, dpop: true }, { engine, dpopMode: 'disabled' }), false)
      try {
        const refused = await request(`${server.base}/`, { headers: { authorization: `DPoP ${tokens.unbound}` } })
        assert.deepEqual(refused.json, { code: 'credentials_bad_scheme', errorCode: 'dpop_not_allowed' })
        assert.equal((await request(`${server.base}/`, { headers: { authorization: `Bearer ${tokens.unbound}` } })).status, 200)
      } finally {
        await server.close()
      }
    })
  })
}
