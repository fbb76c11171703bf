'use strict'

// The example token API's DPoP flow over real HTTP on loopback, both engines, with a client made
// by the `dpop` package: a DPoP header at the token endpoint gets an access token bound to the
// proof's key (cnf.jkt, tokenType 'DPoP'); /api/dpop/me takes it with a fresh proof from that
// key only; /api/me takes Bearer and DPoP; a bound token is never accepted as Bearer.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const dpop = require('dpop')
const jose = require('jose')
const { loadConfig, fillMissingSecrets } = require('../../examples/token-api/config')
const { startService } = require('../../examples/token-api/app')
const { tokenEndpointProofs } = require('../../examples/token-api/dpop-proof')
const { request } = require('../support/http')

const FAST_ARGON2 = { ARGON2_MEMORY_KIB: '64', ARGON2_TIME_COST: '1' }
const quiet = { info() {}, warn() {}, error() {} }
// What clients address (the service listens on a loopback port; proofs name this origin).
const ORIGIN = 'https://api.example.test'
const CREDS = { UserName: 'dora', Password: 'correct horse battery' }
// A second account: the service allows 10 logins per account per 15 minutes.
const OTHER = { UserName: 'rhea', Password: 'correct horse battery' }

for (const engine of ['native', 'js']) {
  describe(`token API DPoP flow (${engine})`, () => {
    let service
    let dataDir
    let previous
    let keyPair
    let jkt
    before(async () => {
      previous = process.env.USE_RUST_AUTH
      process.env.USE_RUST_AUTH = engine === 'js' ? 'false' : 'true'
      dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'token-api-dpop-'))
      const env = { ...FAST_ARGON2, DATA_DIR: dataDir, PORT: '0', PUBLIC_ORIGIN: ORIGIN }
      fillMissingSecrets(env)
      service = await startService(loadConfig(env), quiet)
      keyPair = await dpop.generateKeyPair('ES256')
      jkt = await jose.calculateJwkThumbprint(await jose.exportJWK(keyPair.publicKey), 'sha256')
      for (const creds of [CREDS, OTHER]) {
        const registered = await post('/api/auth/register', creds)
        assert.equal(registered.status, 201, registered.body)
      }
    })
    after(async () => {
      await service.close()
      fs.rmSync(dataDir, { recursive: true, force: true })
      if (previous === undefined) delete process.env.USE_RUST_AUTH
      else process.env.USE_RUST_AUTH = previous
    })

    async function post(urlPath, json, headers = {}) {
      const res = await fetch(`${service.url}${urlPath}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(json) })
      const body = await res.text()
      return { status: res.status, body, json: JSON.parse(body) }
    }
    const proofFor = (method, urlPath, token) => dpop.generateProof(keyPair, `${ORIGIN}${urlPath}`, method, undefined, token)
    const get = (urlPath, headers) => request(`${service.url}${urlPath}`, { headers })

    it('issues a DPoP-bound token for a proof at the token endpoint, and a Bearer one without', async () => {
      const login = await post('/api/auth/get-user-token', CREDS, { dpop: await proofFor('POST', '/api/auth/get-user-token') })
      assert.equal(login.status, 200, login.body)
      assert.equal(login.json.tokenType, 'DPoP')
      assert.deepEqual(jose.decodeJwt(login.json.accessToken).cnf, { jkt })
      const plain = await post('/api/auth/get-user-token', CREDS)
      assert.equal(plain.json.tokenType, undefined)
      assert.equal(jose.decodeJwt(plain.json.accessToken).cnf, undefined)
    })

    it('refuses a token request whose proof is bad: another URL or method, a replay, a forged signature', async () => {
      const cases = [
        await proofFor('POST', '/api/auth/refresh'),
        await proofFor('GET', '/api/auth/get-user-token'),
        'a.b.c',
      ]
      const good = await proofFor('POST', '/api/auth/get-user-token')
      assert.equal((await post('/api/auth/get-user-token', CREDS, { dpop: good })).status, 200)
      cases.push(good)
      const [h, p, s] = (await proofFor('POST', '/api/auth/get-user-token')).split('.')
      cases.push(`${h}.${p}.${s.slice(0, -4)}AAAA`)
      for (const proof of cases) {
        const refused = await post('/api/auth/get-user-token', CREDS, { dpop: proof })
        assert.equal(refused.status, 400, proof)
        assert.equal(refused.json.code, 'invalid_dpop_proof', proof)
      }
    })

    it('serves /api/dpop/me to the bound token with a fresh proof only', async () => {
      const { accessToken } = (await post('/api/auth/get-user-token', CREDS, { dpop: await proofFor('POST', '/api/auth/get-user-token') })).json
      const headers = { authorization: `DPoP ${accessToken}`, dpop: await proofFor('GET', '/api/dpop/me', accessToken) }
      const me = await get('/api/dpop/me', headers)
      assert.equal(me.status, 200, me.body)
      assert.equal(me.json.userName, 'dora')
      assert.equal((await get('/api/dpop/me', headers)).json.code, 'dpop_proof_replayed')
      const asBearer = await get('/api/dpop/me', { authorization: `Bearer ${accessToken}` })
      assert.equal(asBearer.status, 401)
      assert.equal(asBearer.json.code, 'dpop_bound_token_as_bearer')
      // Another key's proof: the token is bound to this client's key.
      const other = await dpop.generateKeyPair('ES256')
      const stolen = await get('/api/dpop/me', { authorization: `DPoP ${accessToken}`, dpop: await dpop.generateProof(other, `${ORIGIN}/api/dpop/me`, 'GET', undefined, accessToken) })
      assert.equal(stolen.json.code, 'dpop_key_mismatch')
      // /api/me takes it too, with its own proof.
      const anywhere = await get('/api/me', { authorization: `DPoP ${accessToken}`, dpop: await proofFor('GET', '/api/me', accessToken) })
      assert.equal(anywhere.status, 200, anywhere.body)
    })

    it('answers a Bearer token on /api/dpop/me with dpop_required and a DPoP challenge; /api/me takes it', async () => {
      const { accessToken } = (await post('/api/auth/get-user-token', OTHER)).json
      const refused = await get('/api/dpop/me', { authorization: `Bearer ${accessToken}` })
      assert.equal(refused.status, 401)
      assert.equal(refused.json.code, 'dpop_required')
      assert.match(refused.headers['www-authenticate'], /^DPoP algs="[^"]*ES256/)
      assert.equal((await get('/api/me', { authorization: `Bearer ${accessToken}` })).status, 200)
    })

    it('a refresh with a proof gives a token bound to the proof key', async () => {
      const { refreshToken } = (await post('/api/auth/get-user-token', OTHER)).json
      const refreshed = await post('/api/auth/refresh', { refreshToken }, { dpop: await proofFor('POST', '/api/auth/refresh') })
      assert.equal(refreshed.status, 200, refreshed.body)
      assert.equal(refreshed.json.tokenType, 'DPoP')
      assert.deepEqual(jose.decodeJwt(refreshed.json.accessToken).cnf, { jkt })
    })
  })
}

// The token endpoints' replay set (dpop-proof.js) at its bound: 10000 live proofs are held, the
// next new one is refused (503) rather than an old one forgotten, a held one stays refused, and
// the set takes proofs again once its entries' windows have passed. Proofs signed by
// node:crypto with Ed25519 (fast enough for ten thousand).
describe('token API DPoP proofs at the token endpoint: the replay bound', () => {
  const { generateKeyPairSync, sign, randomUUID } = require('node:crypto')
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  const jwk = publicKey.export({ format: 'jwk' })
  const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const header = b64({ typ: 'dpop+jwt', alg: 'EdDSA', jwk })
  const proofAt = (iat) => {
    const input = `${header}.${b64({ jti: randomUUID(), htm: 'POST', htu: `${ORIGIN}/api/auth/get-user-token`, iat })}`
    return `${input}.${sign(null, Buffer.from(input), privateKey).toString('base64url')}`
  }
  const req = (proof) => ({ method: 'POST', originalUrl: '/api/auth/get-user-token', headers: { dpop: proof } })

  // One set filled once for both cases (the fill is most of their time): iat 40 s ago, inside
  // the 60 s window while the set fills (slow on a loaded box), expired 22 s on, where the second
  // case then moves the clock.
  describe('filled with 10000 live proofs', () => {
    let check
    let first
    let now
    before(() => {
      check = tokenEndpointProofs(ORIGIN)
      now = Math.floor(Date.now() / 1000)
      const old = now - 40
      first = proofAt(old)
      const jkt = check(req(first))
      assert.match(jkt, /^[A-Za-z0-9_-]{43}$/)
      for (let i = 1; i < 10000; i++) assert.equal(check(req(proofAt(old))), jkt)
    })

    it('holds 10000 live proofs, refuses the next new one with 503 and every replay with 400', () => {
      assert.throws(() => check(req(proofAt(now))), { status: 503, code: 'dpop_replay_cache_full' })
      assert.throws(() => check(req(first)), { status: 400, code: 'invalid_dpop_proof' })
    })

    it('takes new proofs again once the held ones have expired', () => {
      assert.throws(() => check(req(proofAt(Math.floor(Date.now() / 1000)))), { status: 503 })
      const realNow = Date.now
      Date.now = () => realNow() + 22000
      try {
        assert.match(check(req(proofAt(Math.floor(Date.now() / 1000)))), /^[A-Za-z0-9_-]{43}$/)
      } finally {
        Date.now = realNow
      }
    })
  })

  it('refuses a proof without a DPoP header shape: two headers, a private key, alg none', () => {
    const check = tokenEndpointProofs(ORIGIN)
    assert.equal(check({ method: 'POST', originalUrl: '/api/auth/get-user-token', headers: {} }), null)
    assert.throws(() => check(req([proofAt(Math.floor(Date.now() / 1000))])), { status: 400 })
    const priv = privateKey.export({ format: 'jwk' })
    const leaky = `${b64({ typ: 'dpop+jwt', alg: 'EdDSA', jwk: priv })}.${b64({ jti: 'j', htm: 'POST', htu: `${ORIGIN}/api/auth/get-user-token`, iat: Math.floor(Date.now() / 1000) })}.AAAA`
    assert.throws(() => check(req(leaky)), { status: 400, code: 'invalid_dpop_proof' })
    const none = `${b64({ typ: 'dpop+jwt', alg: 'none', jwk })}.${b64({ jti: 'j', htm: 'POST', htu: `${ORIGIN}/api/auth/get-user-token`, iat: Math.floor(Date.now() / 1000) })}.`
    assert.throws(() => check(req(none)), { status: 400, code: 'invalid_dpop_proof' })
  })
})
