'use strict'

// The example token API signing with EdDSA (TOKEN_SIGNING_ALG=EdDSA) over real HTTP on loopback:
// it publishes its public key at /.well-known/jwks.json, and its access tokens verify in jose
// against that URL and in an auth-shield Authenticator fed by auth-shield/jwks from it.

const { test, describe, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const jose = require('jose')
const { Authenticator } = require('../..')
const { createRemoteJwks } = require('../../lib/jwks/index')
const { loadConfig, fillMissingSecrets } = require('../../examples/token-api/config')
const { startService } = require('../../examples/token-api/app')
const { get } = require('../support/http')

const FAST_ARGON2 = { ARGON2_MEMORY_KIB: '64', ARGON2_TIME_COST: '1' }
const quiet = { info() {}, warn() {}, error() {} }

async function post(base, urlPath, json) {
  const res = await fetch(new URL(urlPath, base), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(json),
  })
  return { status: res.status, body: await res.json() }
}

describe('token API signing with EdDSA (TOKEN_SIGNING_ALG)', () => {
  let service
  let dataDir
  let generated
  before(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'token-api-eddsa-'))
    const env = { ...FAST_ARGON2, TOKEN_SIGNING_ALG: 'EdDSA', DATA_DIR: dataDir, PORT: '0' }
    generated = fillMissingSecrets(env)
    service = await startService(loadConfig(env), quiet)
  })
  after(async () => {
    await service.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  test('generates a signing key instead of an access secret', () => {
    assert.deepEqual(generated.sort(), ['API_KEY_SECRET', 'REFRESH_SECRET', 'TOKEN_SIGNING_KEY'])
  })

  test('serves its public key, and only that, at /.well-known/jwks.json', async () => {
    const res = await get(`${service.url}/.well-known/jwks.json`)
    assert.equal(res.status, 200)
    assert.equal(res.json.keys.length, 1)
    const [key] = res.json.keys
    assert.equal(key.kty, 'OKP')
    assert.equal(key.crv, 'Ed25519')
    assert.equal(key.alg, 'EdDSA')
    assert.equal(key.kid, 'token-api-1')
    assert.equal(key.d, undefined)
  })

  test('issues EdDSA access tokens that jose and a remote-JWKS Authenticator verify', async () => {
    const creds = { UserName: 'edna', Password: 'correct horse battery' }
    assert.equal((await post(service.url, '/api/auth/register', creds)).status, 201)
    const login = await post(service.url, '/api/auth/get-user-token', creds)
    assert.equal(login.status, 200)
    const { accessToken, refreshToken } = login.body
    assert.deepEqual(jose.decodeProtectedHeader(accessToken), { alg: 'EdDSA', kid: 'token-api-1', typ: 'JWT' })

    // The service's own middleware.
    const me = await get(`${service.url}/api/me`, { authorization: `Bearer ${accessToken}` })
    assert.equal(me.status, 200, me.body)
    assert.equal(me.json.userName, 'edna')

    // jose, from the published JWKS.
    const jwksUrl = new URL('/.well-known/jwks.json', service.url)
    const { payload } = await jose.jwtVerify(accessToken, jose.createRemoteJWKSet(jwksUrl), { algorithms: ['EdDSA'] })
    assert.equal(payload.sub, me.json.userId)

    // Another service on auth-shield, fed by auth-shield/jwks.
    const source = createRemoteJwks(jwksUrl)
    try {
      await source.ready()
      const verifier = new Authenticator({ keys: source.keys })
      source.attach(verifier)
      const result = verifier.authenticate(`Bearer ${accessToken}`)
      assert.equal(result.authenticated, true, result.error)
      assert.equal(result.userId, me.json.userId)
      // A refresh token is HMAC: no use to the other service.
      assert.equal(verifier.authenticate(`Bearer ${refreshToken}`).authenticated, false)
    } finally {
      source.close()
    }

    const refreshed = await post(service.url, '/api/auth/refresh', { refreshToken })
    assert.equal(refreshed.status, 200)
  })
})

describe('token API signing configuration', () => {
  test('serves an empty key set with HS256', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'token-api-hs256-'))
    const env = { ...FAST_ARGON2, DATA_DIR: dataDir, PORT: '0' }
    fillMissingSecrets(env)
    const service = await startService(loadConfig(env), quiet)
    try {
      assert.deepEqual((await get(`${service.url}/.well-known/jwks.json`)).json, { keys: [] })
    } finally {
      await service.close()
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })

  test('refuses an unknown TOKEN_SIGNING_ALG and a missing TOKEN_SIGNING_KEY', () => {
    const env = { REFRESH_SECRET: 'r'.repeat(32), API_KEY_SECRET: 'a'.repeat(32) }
    assert.throws(() => loadConfig({ ...env, TOKEN_SIGNING_ALG: 'ES512' }), { name: 'RangeError', message: /TOKEN_SIGNING_ALG/ })
    assert.throws(() => loadConfig({ ...env, TOKEN_SIGNING_ALG: 'EdDSA' }), { message: /TOKEN_SIGNING_KEY is not set/ })
  })
})
