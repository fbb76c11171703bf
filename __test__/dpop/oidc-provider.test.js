'use strict'

// The "done when", against a real identity provider: oidc-provider (DPoP and client
// credentials on, JWT access tokens for our resource) issues a DPoP-bound token on loopback; both
// engines accept it only with a fresh proof from the key it is bound to, and two apps sharing a
// redis-server accept one proof once between them.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const jose = require('jose')
const dpop = require('dpop')
const native = require('../..')
const js = require('../../js')
const expressShield = require('../../adapters/express')
const { createDpopReplayStore } = require('../../lib/store/index')
const { request } = require('../support/http')
const { expressServer } = require('../support/adapter-servers')
const { redisSkip, startRedis } = require('../support/redis-server')
const { connectClient } = require('../support/redis-clients')
const { startReplayApps } = require('../support/dpop-replay-app')
const { clientKey, craftedProof, symmetricProof, ath } = require('../support/dpop')
const { withoutRequestId } = require('../support/tokens')

const RESOURCE = 'https://api.example.com'
const ORDERS = `${RESOURCE}/orders`

describe('a DPoP-bound token issued by oidc-provider', () => {
  let op
  before(async () => {
    const { default: Provider } = await import('oidc-provider')
    const { privateKey, publicKey } = await jose.generateKeyPair('ES256', { extractable: true })
    const server = http.createServer()
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    const issuer = `http://127.0.0.1:${server.address().port}`
    const provider = new Provider(issuer, {
      jwks: { keys: [{ ...(await jose.exportJWK(privateKey)), alg: 'ES256', use: 'sig', kid: 'op-1' }] },
      clients: [
        {
          client_id: 'svc',
          client_secret: 'svc-secret-0123456789abcdef',
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
          token_endpoint_auth_method: 'client_secret_post',
          id_token_signed_response_alg: 'ES256',
        },
      ],
      ttl: { ClientCredentials: 600 },
      features: {
        devInteractions: { enabled: false },
        clientCredentials: { enabled: true },
        dPoP: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => RESOURCE,
          useGrantedResource: () => true,
          getResourceServerInfo: () => ({ scope: 'orders', audience: RESOURCE, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } }),
        },
      },
    })
    server.on('request', provider.callback())
    const publicJwk = await jose.exportJWK(publicKey)
    // A client key and a token bound to it, requested with a proof for the token endpoint.
    const token = async (key) => {
      const url = `${issuer}/token`
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', dpop: await dpop.generateProof(key, url, 'POST') },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: 'svc', client_secret: 'svc-secret-0123456789abcdef', scope: 'orders', resource: RESOURCE }),
      })
      const body = await res.json()
      assert.equal(res.status, 200, JSON.stringify(body))
      assert.equal(body.token_type, 'DPoP')
      return body.access_token
    }
    const config = { keys: [{ kid: 'op-1', alg: 'ES256', publicKey: publicJwk }], issuer, audience: RESOURCE, dpop: true, rateLimitMax: 0 }
    op = { server, token, config }
  })
  after(() => op.server.close())

  for (const [name, Authenticator] of [
    ['native', native.Authenticator],
    ['js', js.Authenticator],
  ]) {
    it(`${name}: passes only with a fresh proof from the bound key`, async () => {
      const key = await dpop.generateKeyPair('ES256')
      const other = await dpop.generateKeyPair('ES256')
      const token = await op.token(key)
      assert.equal(jose.decodeJwt(token).cnf.jkt, await dpop.calculateThumbprint(key.publicKey))
      const auth = new Authenticator(op.config)
      const call = async (scheme, proof) => {
        const r = auth.authenticate(`${scheme} ${token}`, null, null, { dpop: proof, method: 'GET', url: ORDERS })
        return r.authenticated ? `ok:${r.userId}` : r.errorCode
      }
      const proof = await dpop.generateProof(key, ORDERS, 'GET', undefined, token)
      assert.equal(await call('DPoP', proof), 'ok:svc')
      assert.equal(await call('DPoP', proof), 'dpop_proof_replayed')
      assert.equal(await call('DPoP', await dpop.generateProof(other, ORDERS, 'GET', undefined, token)), 'dpop_key_mismatch')
      assert.equal(await call('DPoP', await dpop.generateProof(key, `${RESOURCE}/admin`, 'GET', undefined, token)), 'dpop_proof_mismatch')
      assert.equal(await call('DPoP', undefined), 'missing_dpop_proof')
      assert.equal(await call('Bearer', undefined), 'dpop_bound_token_as_bearer')
      assert.equal(await call('DPoP', await dpop.generateProof(key, ORDERS, 'GET', undefined, token)), 'ok:svc')
    })
  }

  it('two apps sharing a redis-server accept one proof once between them', { skip: redisSkip() }, async () => {
    const redis = await startRedis()
    const conns = [await connectClient('ioredis', redis.url), await connectClient('node-redis', redis.url)]
    const apps = []
    try {
      for (const [i, engine] of ['native', 'js'].entries()) {
        const store = createDpopReplayStore(conns[i].client)
        apps.push(await expressServer(expressShield(op.config, { engine, dpopOrigin: RESOURCE, dpopReplayStore: store })))
      }
      const key = await dpop.generateKeyPair('ES256')
      const token = await op.token(key)
      const headers = { authorization: `DPoP ${token}`, dpop: await dpop.generateProof(key, ORDERS, 'GET', undefined, token) }
      const answers = await Promise.all([...apps, ...apps].map((app) => request(`${app.base}/orders`, { headers })))
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 401, 401, 401])
      const fresh = { authorization: `DPoP ${token}`, dpop: await dpop.generateProof(key, ORDERS, 'GET', undefined, token) }
      assert.equal((await request(`${apps[1].base}/orders`, { headers: fresh })).status, 200)
    } finally {
      for (const app of apps) await app.close()
      for (const c of conns) await c.close()
      await redis.stop()
    }
  })

  for (const engine of ['native', 'js']) {
    it(`two processes (${engine}) sharing a redis-server accept one proof once between them`, { skip: redisSkip() }, async () => {
      const redis = await startRedis()
      const apps = []
      try {
        const { keys, issuer, audience } = op.config
        await startReplayApps(apps, [0, 1].map(() => ({ keys, issuer, audience, engine, redisUrl: redis.url, origin: RESOURCE, prefix: 'op:' })))
        const [a, b] = apps
        const key = await dpop.generateKeyPair('ES256')
        const token = await op.token(key)
        const send = async (app, scheme, proof) => {
          const r = await request(`${app.base}/orders`, { headers: proof === undefined ? { authorization: `${scheme} ${token}` } : { authorization: `${scheme} ${token}`, dpop: proof } })
          return r.status === 200 ? `ok:${r.json.user.userId}` : `${r.status} ${r.json.code}`
        }
        const fresh = () => dpop.generateProof(key, ORDERS, 'GET', undefined, token)
        // Accepted by one process; the same proof is a replay in the other and in itself.
        const proof = await fresh()
        assert.equal(await send(a, 'DPoP', proof), 'ok:svc')
        assert.equal(await send(b, 'DPoP', proof), '401 dpop_proof_replayed')
        assert.equal(await send(a, 'DPoP', proof), '401 dpop_proof_replayed')
        // One fresh proof racing over both processes, twice each: one pass.
        const raced = await fresh()
        const answers = await Promise.all([a, b, a, b].map((app) => send(app, 'DPoP', raced)))
        assert.deepEqual(answers.sort(), ['401 dpop_proof_replayed', '401 dpop_proof_replayed', '401 dpop_proof_replayed', 'ok:svc'])
        // Only the bound key's fresh proofs, only as DPoP.
        const other = await dpop.generateKeyPair('ES256')
        assert.equal(await send(b, 'DPoP', await dpop.generateProof(other, ORDERS, 'GET', undefined, token)), '401 dpop_key_mismatch')
        assert.equal(await send(b, 'Bearer', undefined), '401 dpop_bound_token_as_bearer')
        assert.equal(await send(b, 'DPoP', await fresh()), 'ok:svc')
      } finally {
        for (const app of apps) await app.stop()
        await redis.stop()
      }
    })
  }

  it('two processes sharing the nonce secret (one per engine): a nonce handed out by one is accepted by the other', { skip: redisSkip() }, async () => {
    const redis = await startRedis()
    const apps = []
    try {
      const { keys, issuer, audience } = op.config
      const dpopNonceSecret = 'two-process-nonce-secret-0123456789'
      await startReplayApps(apps, ['native', 'js'].map((engine) => ({ keys, issuer, audience, engine, redisUrl: redis.url, origin: RESOURCE, prefix: 'nonce:', dpopNonceSecret })))
      const key = await dpop.generateKeyPair('ES256')
      const token = await op.token(key)
      const send = (app, nonce) => dpop.generateProof(key, ORDERS, 'GET', nonce, token).then((proof) => request(`${app.base}/orders`, { headers: { authorization: `DPoP ${token}`, dpop: proof } }))
      for (const [from, to] of [apps, [...apps].reverse()]) {
        const first = await send(from, undefined)
        assert.equal(first.status, 401)
        assert.equal(first.json.code, 'use_dpop_nonce')
        const nonce = first.headers['dpop-nonce']
        assert.match(nonce, /^[A-Za-z0-9_-]{43}$/)
        const other = await send(to, nonce)
        assert.equal(other.status, 200, other.body)
        assert.equal(other.json.user.userId, 'svc')
      }
    } finally {
      for (const app of apps) await app.stop()
      await redis.stop()
    }
  })

  // The list of attacks, one row each, on an oidc-provider token: both engines refuse
  // each with the same result. The replay through Redis is the two-process tests above.
  it('refuses every attack of the issue in both engines, with the same result and challenge', async () => {
    const key = await clientKey('ES256')
    const other = await clientKey('ES256')
    const token = await op.token(key.keyPair)
    const now = Math.floor(Date.now() / 1000)
    const window = 60
    const secret = 'attack-table-nonce-secret-0123456789'
    const lifetime = 30
    const engines = { native: native.Authenticator, js: js.Authenticator }
    const make = (Authenticator, extra = {}) => new Authenticator({ ...op.config, clockTimestamp: now, dpopIatWindowSec: window, ...extra })
    const nonceOf = (t) => make(js.Authenticator, { clockTimestamp: t, dpopNonceSecret: secret, dpopNonceLifetimeSec: lifetime }).dpopNonce()
    const crafted = (payload, header) => craftedProof(key, { token, payload: { iat: now, ...payload }, header })
    const replayed = await crafted({})
    const ATTACKS = [
      // [attack, scheme, proof, expected code, extra config]
      ['replayed proof (same process)', 'DPoP', replayed, 'dpop_proof_replayed'],
      ['proof for another URL', 'DPoP', await crafted({ htu: `${RESOURCE}/admin` }), 'dpop_proof_mismatch'],
      ['proof for another origin', 'DPoP', await crafted({ htu: 'https://evil.example.com/orders' }), 'dpop_proof_mismatch'],
      ['proof for another method', 'DPoP', await crafted({ htm: 'POST' }), 'dpop_proof_mismatch'],
      ['stale iat', 'DPoP', await crafted({ iat: now - window - 1 }), 'dpop_proof_stale'],
      ['future iat', 'DPoP', await crafted({ iat: now + window + 1 }), 'dpop_proof_stale'],
      ['missing ath', 'DPoP', await crafted({ ath: undefined }), 'invalid_dpop_proof'],
      ['wrong ath (another token)', 'DPoP', await crafted({ ath: ath(`${token}x`) }), 'dpop_proof_mismatch'],
      ['private key material in jwk', 'DPoP', await crafted({}, { jwk: key.privateJwk }), 'invalid_dpop_proof'],
      ['alg none', 'DPoP', symmetricProof(key, 'none', token), 'invalid_dpop_proof'],
      ['alg HS256', 'DPoP', symmetricProof(key, 'HS256', token), 'invalid_dpop_proof'],
      ['thumbprint mismatch (another key)', 'DPoP', await craftedProof(other, { token, payload: { iat: now } }), 'dpop_key_mismatch'],
      ['bound token as Bearer', 'Bearer', undefined, 'dpop_bound_token_as_bearer'],
      ['bound token as Bearer beside a valid proof', 'Bearer', await crafted({}), 'dpop_bound_token_as_bearer'],
      ['nonce replay after rotation (two slots old)', 'DPoP', await crafted({ nonce: nonceOf(now - 2 * lifetime) }), 'use_dpop_nonce', { dpopNonceSecret: secret, dpopNonceLifetimeSec: lifetime }],
      ['nonce of another secret', 'DPoP', await crafted({ nonce: make(js.Authenticator, { dpopNonceSecret: `${secret}!`, dpopNonceLifetimeSec: lifetime }).dpopNonce() }), 'use_dpop_nonce', { dpopNonceSecret: secret, dpopNonceLifetimeSec: lifetime }],
    ]
    const results = {}
    for (const [name, Authenticator] of Object.entries(engines)) {
      const auth = make(Authenticator)
      // The replayed proof passes once first.
      assert.equal(auth.authenticate(`DPoP ${token}`, null, null, { dpop: replayed, method: 'GET', url: ORDERS }).authenticated, true, name)
      const nonced = make(Authenticator, { dpopNonceSecret: secret, dpopNonceLifetimeSec: lifetime })
      results[name] = ATTACKS.map(([attack, scheme, proof, expected, extra]) => {
        const r = (extra === undefined ? auth : nonced).authenticate(`${scheme} ${token}`, null, null, { dpop: proof, method: 'GET', url: ORDERS })
        assert.equal(r.authenticated, false, `${name}: ${attack}`)
        assert.equal(r.errorCode, expected, `${name}: ${attack}`)
        return withoutRequestId(r)
      })
      // Nothing refused above was remembered; the same token with a fresh proof still passes.
      assert.equal(auth.dpopReplayEntries, 1, name)
      assert.equal(auth.authenticate(`DPoP ${token}`, null, null, { dpop: await crafted({}), method: 'GET', url: ORDERS }).authenticated, true, name)
      assert.equal(nonced.authenticate(`DPoP ${token}`, null, null, { dpop: await crafted({ nonce: nonceOf(now - lifetime) }), method: 'GET', url: ORDERS }).authenticated, true, name)
    }
    assert.deepStrictEqual(results.js, results.native)

    // The same attacks over HTTP (Express): 401, the code, and the RFC 9449 §7.1 challenge.
    const challenge = {
      dpop_key_mismatch: /^DPoP error="invalid_token", error_description="[^"]+", algs="ES256 /,
      dpop_bound_token_as_bearer: /^Bearer error="invalid_token"/,
      use_dpop_nonce: /^DPoP error="use_dpop_nonce", error_description="[^"]+", algs="ES256 /,
    }
    for (const engine of Object.keys(engines)) {
      const options = { engine, dpopOrigin: RESOURCE }
      const plain = await expressServer(expressShield(make(engines[engine]), options))
      const nonced = await expressServer(expressShield(make(engines[engine], { dpopNonceSecret: secret, dpopNonceLifetimeSec: lifetime }), options))
      try {
        const send = (app, scheme, proof) => request(`${app.base}/orders?x=1`, { headers: proof === undefined ? { authorization: `${scheme} ${token}` } : { authorization: `${scheme} ${token}`, dpop: proof } })
        assert.equal((await send(plain, 'DPoP', replayed)).status, 200, engine)
        for (const [attack, scheme, proof, expected, extra] of ATTACKS) {
          const r = await send(extra === undefined ? plain : nonced, scheme, proof)
          const what = `${engine}: ${attack}`
          assert.equal(r.status, 401, what)
          assert.equal(r.json.code, expected, what)
          assert.match(r.headers['www-authenticate'], challenge[expected] ?? /^DPoP error="invalid_dpop_proof", error_description="[^"]+", algs="ES256 /, what)
          assert.equal(r.headers['dpop-nonce'], expected === 'use_dpop_nonce' ? nonceOf(now) : undefined, what)
        }
      } finally {
        await plain.close()
        await nonced.close()
      }
    }
  })
})
