'use strict'

// A certificate-bound access token issued by a real oidc-provider (RFC 8705 tls_client_auth,
// client credentials, a JWT access token for one resource) over TLS on loopback, then presented
// to the Express adapter on both engines: accepted only over the certificate it is bound to.

const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const https = require('node:https')
const { X509Certificate } = require('node:crypto')
const express = require('express')
const jose = require('jose')
const expressShield = require('../../adapters/express')
const { makeCertificates } = require('../support/certificates')

const RESOURCE = 'https://api.example/'

let certs
let issuer
let idp
let publicJwk

function tlsOptions() {
  return { key: certs.server.key, cert: certs.server.cert, ca: certs.ca.cert, requestCert: true, rejectUnauthorized: false }
}

function listening(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve(server))
  })
}

function closing(server) {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(resolve))
}

/** One HTTPS request presenting `client` ({ key, cert }) or no certificate; `{ status, body }`. */
function send(port, path, { method = 'GET', headers = {}, body, client } = {}) {
  const options = { host: '127.0.0.1', port, path, method, headers, agent: false, ca: certs.ca.cert, servername: 'localhost', ...(client ? { key: client.key, cert: client.cert } : {}) }
  return new Promise((resolve, reject) => {
    const req = https.request(options, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

before(async () => {
  certs = makeCertificates()
  const { default: Provider } = await import('oidc-provider')
  const { privateKey, publicKey } = await jose.generateKeyPair('ES256', { extractable: true })
  const privateJwk = { ...(await jose.exportJWK(privateKey)), kid: 'idp-1', alg: 'ES256', use: 'sig' }
  publicJwk = { ...(await jose.exportJWK(publicKey)), kid: 'idp-1', alg: 'ES256' }
  idp = await listening(https.createServer(tlsOptions()))
  issuer = `https://127.0.0.1:${idp.address().port}`
  const peer = (ctx) => {
    const cert = ctx.socket.getPeerCertificate()
    return cert && cert.raw ? new X509Certificate(cert.raw) : undefined
  }
  const provider = new Provider(issuer, {
    jwks: { keys: [privateJwk] },
    clientAuthMethods: ['tls_client_auth'],
    clients: [
      {
        client_id: 'service-a',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        token_endpoint_auth_method: 'tls_client_auth',
        tls_client_auth_subject_dn: 'CN=client-a',
        tls_client_certificate_bound_access_tokens: true,
        id_token_signed_response_alg: 'ES256',
      },
    ],
    features: {
      clientCredentials: { enabled: true },
      mTLS: {
        enabled: true,
        certificateBoundAccessTokens: true,
        tlsClientAuth: true,
        getCertificate: peer,
        certificateAuthorized: (ctx) => ctx.socket.authorized === true,
        certificateSubjectMatches: (ctx, property, expected) => property === 'tls_client_auth_subject_dn' && peer(ctx)?.subject === expected,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => RESOURCE,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({ scope: 'api', audience: RESOURCE, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
      },
    },
  })
  idp.on('request', provider.callback())
})

after(async () => {
  if (idp) await closing(idp)
  certs.remove()
})

async function issueToken(client) {
  const body = new URLSearchParams({ grant_type: 'client_credentials', client_id: 'service-a', resource: RESOURCE, scope: 'api' }).toString()
  return send(idp.address().port, '/token', { method: 'POST', body, client, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) } })
}

test('an oidc-provider certificate-bound token passes only over its certificate, in both engines', async () => {
  const issued = await issueToken(certs.clientA)
  assert.equal(issued.status, 200, JSON.stringify(issued.body))
  const accessToken = issued.body.access_token
  const claims = jose.decodeJwt(accessToken)
  // The provider bound it to client A's certificate, by its own thumbprint computation.
  assert.deepEqual(claims.cnf, { 'x5t#S256': certs.clientA.thumbprint })
  // Client B cannot get a token for service-a (its subject does not match).
  assert.equal((await issueToken(certs.clientB)).status, 401)

  for (const engine of ['native', 'js']) {
    const config = { keys: [{ kid: 'idp-1', alg: 'ES256', publicKey: publicJwk }], issuer, audience: RESOURCE, rateLimitMax: 0, certificateBoundTokens: true }
    const app = express()
    app.use(expressShield(config, { engine }), (req, res) => res.json({ user: req.user.userId }))
    const api = await listening(https.createServer(tlsOptions(), app))
    const call = (client) => send(api.address().port, '/', { headers: { authorization: `Bearer ${accessToken}` }, client })
    try {
      assert.deepEqual(await call(certs.clientA), { status: 200, body: { user: claims.sub } }, engine)
      const stolen = await call(certs.clientB)
      assert.deepEqual([stolen.status, stolen.body.code], [401, 'certificate_mismatch'], engine)
      const bare = await call(undefined)
      assert.deepEqual([bare.status, bare.body.code], [401, 'certificate_required'], engine)
    } finally {
      await closing(api)
    }
  }
})
