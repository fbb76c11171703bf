'use strict'

// DPoP behind a real TLS-terminating reverse proxy on loopback (RFC 9449 §4.3 htu), every
// adapter, both engines: clients address the proxy's https origin and make their proofs (the
// dpop package) for it; the proxy forwards over plain HTTP to the app with its own Host and
// X-Forwarded-* headers. The app is told the external origin (dpopOrigin): the proof for it
// passes once; a proof for the app's internal URL, or for a host a client slipped into
// X-Forwarded-Host, never does.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { forward } = require('../support/http')
const https = require('node:https')
const { ADAPTER_STARTS } = require('../support/adapter-servers')
const { makeCertificates } = require('../support/certificates')
const { issuer, clientKey, proof } = require('../support/dpop')

const ADAPTERS = ADAPTER_STARTS

/** A TLS-terminating proxy on localhost: forwards each request to `target()` (an http base URL). */
async function startProxy(certs, target) {
  const server = https.createServer({ key: certs.server.key, cert: certs.server.cert }, (req, res) => {
    const upstream = new URL(target())
    const headers = { ...req.headers, host: upstream.host, 'x-forwarded-proto': 'https', 'x-forwarded-for': req.socket.remoteAddress }
    // As many proxies do: a client's X-Forwarded-Host is passed on, its own Host added after it.
    headers['x-forwarded-host'] = req.headers['x-forwarded-host'] === undefined ? req.headers.host : `${req.headers['x-forwarded-host']}, ${req.headers.host}`
    forward(req, res, upstream, req.url, headers)
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    origin: `https://localhost:${server.address().port}`,
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(resolve)
    }),
  }
}

/** GET over TLS through the proxy, trusting the test CA: { status, json, headers }. */
function get(url, ca, headers) {
  return new Promise((resolve, reject) => {
    const req = https.request(url, { method: 'GET', headers, ca, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c) => (body += c))
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, json: JSON.parse(body || 'null') }))
    })
    req.on('error', reject)
    req.end()
  })
}

describe('DPoP behind a TLS-terminating proxy', () => {
  let certs
  let iss
  let key
  let bound
  let proxy
  let app
  before(async () => {
    certs = makeCertificates()
    iss = await issuer()
    key = await clientKey('ES256')
    bound = await iss.sign({ cnf: { jkt: key.jkt } })
    proxy = await startProxy(certs, () => app.base)
  })
  after(async () => {
    await proxy.close()
    certs.remove()
  })

  for (const engine of ['native', 'js']) {
    for (const [name, start] of ADAPTERS) {
      it(`${name} (${engine}): the proof for the external URL passes once; internal or forwarded hosts never`, async () => {
        app = await start({ keys: iss.keys, dpop: true, rateLimitMax: 0 }, { engine, dpopOrigin: proxy.origin })
        try {
          const external = `${proxy.origin}/orders`
          const send = async (url, headers) => get(`${proxy.origin}/orders?page=2`, certs.ca.cert, { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url }), ...headers })
          const ok = await get(`${proxy.origin}/orders?page=2`, certs.ca.cert, { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: external }) })
          assert.equal(ok.status, 200, JSON.stringify(ok.json))
          const headers = { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: external }) }
          assert.equal((await get(`${proxy.origin}/orders`, certs.ca.cert, headers)).status, 200)
          const replay = await get(`${proxy.origin}/orders`, certs.ca.cert, headers)
          assert.equal(replay.status, 401)
          assert.equal(replay.json.code, 'dpop_proof_replayed')
          // The URL the app sees (the proxy's upstream), and the public origin over plain http.
          assert.equal((await send(`${app.base}/orders`)).json.code, 'dpop_proof_mismatch')
          assert.equal((await send(`http://localhost:${new URL(proxy.origin).port}/orders`)).json.code, 'dpop_proof_mismatch')
          // A host the client put in X-Forwarded-Host, which the proxy passed on.
          const forwarded = await send('https://evil.example.com/orders', { 'x-forwarded-host': 'evil.example.com' })
          assert.equal(forwarded.status, 401)
          assert.equal(forwarded.json.code, 'dpop_proof_mismatch')
        } finally {
          await app.close()
        }
      })
    }
  }
})
