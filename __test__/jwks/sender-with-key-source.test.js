'use strict'

// DPoP and certificate-bound tokens with an identity provider's keys (issue 35, defect 1): the
// `jwks` option (a remote JWKS, or trusted issuers discovered from a real oidc-provider) is how
// every external IdP is connected, and the request's sender context (its DPoP proof, method and
// URL, its client certificate) must reach the engine through it whole. Every adapter (Express,
// Fastify, Koa, Fetch, expressjwt), both engines, real servers on loopback.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const jose = require('jose')
const { request } = require('../support/http')
const { ADAPTER_STARTS, expressServer, fetchServer, honoServer, seen } = require('../support/adapter-servers')
const { clientKey, proof } = require('../support/dpop')
const { makeCertificates, derOf } = require('../support/certificates')
const { startJwksServer } = require('../support/jwks-server')
const { startProvider } = require('../support/oidc-provider')
const { createRemoteJwks, createTrustedIssuers } = require('../../lib/jwks/index')

const ORIGIN = 'https://api.example.com'
const HTU = `${ORIGIN}/orders`
const JWKS_ISSUER = 'https://idp.test/'

const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

/** The Fetch adapter, handed the certificate the proxy header carries (as a TLS server would hand its peer's). */
function fetchWithCertificate(config, options) {
  const verifyRequest = require('../../adapters/fetch').createVerifier(config, options)
  return fetchServer(async (req) => {
    const header = req.headers.get('client-cert')
    const clientCertificate = header === null ? undefined : Buffer.from(header.slice(1, -1), 'base64')
    const auth = await verifyRequest(req, { clientCertificate })
    return auth.ok ? Response.json(seen(auth), { headers: auth.headers }) : auth.response
  })
}

/** The Hono adapter, its clientCertificate option reading the proxy header. */
function honoWithCertificate(config, options) {
  const clientCertificate = (c) => {
    const header = c.req.header('client-cert')
    return header === undefined ? undefined : Buffer.from(header.slice(1, -1), 'base64')
  }
  return honoServer(require('../../adapters/hono')(config, { ...options, clientCertificate }))
}

const ADAPTERS = [
  ...ADAPTER_STARTS.filter(([name]) => name !== 'fetch' && name !== 'hono'),
  ['fetch', fetchWithCertificate],
  ['hono', honoWithCertificate],
  // express-jwt's one options object: the key source and the middleware options together.
  ['expressjwt', (config, options) => expressServer(require('../../adapters/express').expressjwt({ ...config, ...options, algorithms: options.algorithms }))],
]

let certs
let key
let jwksServer
let provider
// Per key source: { name, config, source(), sign(claims) }.
const SOURCES = []

before(async () => {
  certs = makeCertificates()
  key = await clientKey('ES256')
  const pair = await jose.generateKeyPair('ES256', { extractable: true })
  const jwk = { ...(await jose.exportJWK(pair.publicKey)), kid: 'idp-es256', alg: 'ES256', use: 'sig' }
  jwksServer = await startJwksServer()
  jwksServer.serve({ keys: [jwk] })
  provider = await startProvider()
  const opKey = await jose.importJWK(provider.signingJwk, 'RS256')
  const signer = (privateKey, alg, kid, iss) => (claims) =>
    new jose.SignJWT({ sub: 'alice', ...claims }).setProtectedHeader({ alg, kid, typ: 'at+jwt' }).setIssuer(iss).setIssuedAt().setExpirationTime('10m').sign(privateKey)
  SOURCES.push(
    { name: 'a remote JWKS', config: { issuer: JWKS_ISSUER }, source: () => createRemoteJwks(jwksServer.url), sign: signer(pair.privateKey, 'ES256', 'idp-es256', JWKS_ISSUER), algorithms: ['ES256'] },
    { name: 'trusted issuers (oidc-provider discovery)', config: {}, source: () => createTrustedIssuers([provider.issuer]), sign: signer(opKey, 'RS256', provider.signingJwk.kid, provider.issuer), algorithms: ['RS256'] },
  )
})

after(async () => {
  certs.remove()
  await jwksServer.close()
  await provider.close()
  assert.deepEqual(unhandled, [])
})

const clientCert = (pem) => `:${derOf(pem).toString('base64')}:`

for (const sourceIndex of [0, 1]) {
  for (const engine of ['native', 'js']) {
    for (const [adapter, start] of ADAPTERS) {
      describe(`${adapter} (${engine}) with ${sourceIndex === 0 ? 'a remote JWKS' : 'trusted issuers'}: the sender context reaches the engine`, () => {
        let source
        let dpopServer
        let mtlsServer
        let s
        before(async () => {
          s = SOURCES[sourceIndex]
          source = s.source()
          await source.ready()
          const base = { ...s.config, rateLimitMax: 0 }
          // express-jwt requires `algorithms`; the other forms leave it out.
          const options = { engine, jwks: source, ...(adapter === 'expressjwt' ? { algorithms: s.algorithms } : {}) }
          dpopServer = await start({ ...base, dpop: true }, { ...options, dpopOrigin: ORIGIN })
          mtlsServer = await start({ ...base, certificateBoundTokens: true }, { ...options, clientCertificateHeader: 'client-cert' })
        })
        after(async () => {
          source?.close()
          await dpopServer?.close()
          await mtlsServer?.close()
        })

        it('a DPoP-bound token with a valid proof gets 200; without the proof 401', async () => {
          const token = await s.sign({ cnf: { jkt: key.jkt } })
          const ok = await request(`${dpopServer.base}/orders`, { headers: { authorization: `DPoP ${token}`, dpop: await proof(key, { token, url: HTU }) } })
          assert.equal(ok.status, 200, ok.body)
          const missing = await request(`${dpopServer.base}/orders`, { headers: { authorization: `DPoP ${token}` } })
          assert.equal(missing.status, 401)
          // expressjwt hands refusals to next(err) (express-jwt's UnauthorizedError, code invalid_token).
          if (adapter !== 'expressjwt') assert.equal(missing.json.code, 'missing_dpop_proof')
        })

        it('a certificate-bound token gets 200 with its certificate, 401 with another', async () => {
          const token = await s.sign({ cnf: { 'x5t#S256': certs.clientA.thumbprint } })
          const ok = await request(`${mtlsServer.base}/orders`, { headers: { authorization: `Bearer ${token}`, 'client-cert': clientCert(certs.clientA.cert) } })
          assert.equal(ok.status, 200, ok.body)
          const other = await request(`${mtlsServer.base}/orders`, { headers: { authorization: `Bearer ${token}`, 'client-cert': clientCert(certs.clientB.cert) } })
          assert.equal(other.status, 401)
          if (adapter !== 'expressjwt') assert.equal(other.json.code, 'certificate_mismatch')
        })
      })
    }
  }
}
