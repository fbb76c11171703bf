'use strict'

// The example token API (examples/token-api): the whole flow over real HTTP on loopback, bad
// input on every endpoint, seeding, and `server.js` itself (single process and cluster mode).

const { test, describe, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const http = require('node:http')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')
const { startServer } = require('../support/example-server')

const { Authenticator, generateApiKey } = require('../..')
const { loadConfig } = require('../../examples/token-api/config')
const { startService } = require('../../examples/token-api/app')
const { seed } = require('../../examples/token-api/seed')
const { openDatabase } = require('../../examples/token-api/database')

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

// Low Argon2 costs keep the suite fast; the service's defaults are the library's (OWASP) ones.
const FAST_ARGON2 = { ARGON2_MEMORY_KIB: '64', ARGON2_TIME_COST: '1' }
const RATE_LIMIT_MAX = 20

function tempDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'token-api-test-'))
}

/** One HTTP request; resolves to { status, headers, body } with body parsed when JSON. */
function request(base, method, urlPath, { json, raw, headers = {} } = {}) {
  const payload = json !== undefined ? JSON.stringify(json) : raw
  const allHeaders = { ...headers }
  if (json !== undefined && !Object.keys(allHeaders).some((h) => h.toLowerCase() === 'content-type')) {
    allHeaders['content-type'] = 'application/json'
  }
  if (payload !== undefined) allHeaders['content-length'] = Buffer.byteLength(payload)
  return new Promise((resolve, reject) => {
    const req = http.request(new URL(urlPath, base), { method, headers: allHeaders }, (res) => {
      const chunks = []
      res.on('data', (c) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        const isJson = /application\/json/.test(res.headers['content-type'] || '')
        resolve({ status: res.statusCode, headers: res.headers, body: isJson ? JSON.parse(text) : text })
      })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

/** Asserts the one error shape: status, `{ error, code }` and nothing else. */
function assertError(res, status, code) {
  assert.equal(res.status, status, `status for ${code}: ${JSON.stringify(res.body)}`)
  assert.deepEqual(Object.keys(res.body).sort(), ['code', 'error'])
  assert.equal(res.body.code, code)
  assert.equal(typeof res.body.error, 'string')
  assert.ok(res.body.error.length > 0)
}

describe('token API in process', () => {
  let service
  let base
  const logLines = []
  const log = { info: (m) => logLines.push(m), warn: (m) => logLines.push(m), error: (m) => logLines.push(m) }
  let dataDir
  let config

  const post = (p, json, headers) => request(base, 'POST', p, { json, headers })
  const bearer = (token, extra = {}) => ({ authorization: `Bearer ${token}`, ...extra })

  async function registerAndLogin(userName, password = 'correct horse battery') {
    const reg = await post('/api/auth/register', { UserName: userName, Password: password })
    assert.equal(reg.status, 201, JSON.stringify(reg.body))
    const login = await post('/api/auth/get-user-token', { UserName: userName, Password: password })
    assert.equal(login.status, 200, JSON.stringify(login.body))
    return login.body
  }

  before(async () => {
    dataDir = tempDir()
    const env = {
      ...FAST_ARGON2,
      ACCESS_SECRET: 'test-access-secret-0123456789abcdef',
      REFRESH_SECRET: 'test-refresh-secret-0123456789abcdef',
      API_KEY_SECRET: 'test-api-key-secret-0123456789',
      DATA_DIR: dataDir,
      PORT: '0',
      RATE_LIMIT_MAX: String(RATE_LIMIT_MAX),
      // Practically no refill, so the rate-limit test does not depend on timing.
      RATE_LIMIT_REFILL: '0.001',
    }
    config = loadConfig(env)
    service = await startService(config, log)
    base = service.url
  })

  after(async () => {
    await service.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  test('health reports ok with a request id', async () => {
    const res = await request(base, 'GET', '/health')
    assert.equal(res.status, 200)
    assert.equal(res.body.status, 'ok')
    assert.equal(res.body.database, 'ok')
    assert.equal(res.body.engine, 'native')
    assert.match(res.headers['x-request-id'], UUID_V4)
  })

  test('creates the database file in the data folder', () => {
    assert.ok(fs.existsSync(path.join(dataDir, 'token-api.db')))
  })

  test('walks register, token, me, refresh, API key and OTP', async () => {
    // register
    const reg = await post('/api/auth/register', { UserName: 'Alice', Password: 'correct horse battery' })
    assert.equal(reg.status, 201)
    assert.equal(reg.body.userName, 'Alice')
    assert.match(reg.headers['x-request-id'], UUID_V4)

    // token
    const login = await post('/api/auth/get-user-token', { UserName: 'alice', Password: 'correct horse battery' })
    assert.equal(login.status, 200)
    assert.deepEqual(Object.keys(login.body).sort(), ['accessToken', 'expiresIn', 'refreshToken'])
    assert.equal(login.body.expiresIn, 900)
    const { accessToken, refreshToken } = login.body

    // me, tenant from the header, then from the subdomain
    const me = await request(base, 'GET', '/api/me', { headers: bearer(accessToken, { 'x-tenant-id': 'acme' }) })
    assert.equal(me.status, 200, JSON.stringify(me.body))
    assert.equal(me.body.userId, reg.body.id)
    assert.equal(me.body.userName, 'Alice')
    assert.equal(me.body.role, 'user')
    assert.equal(me.body.tenantId, 'acme')
    assert.equal(me.body.stepUpAt, null)
    assert.match(me.body.requestId, UUID_V4)
    assert.equal(me.headers['x-request-id'], me.body.requestId)
    assert.equal(me.headers['ratelimit-limit'], String(RATE_LIMIT_MAX))
    assert.equal(me.headers['ratelimit-remaining'], String(RATE_LIMIT_MAX - 1))
    const sub = await request(base, 'GET', '/api/me', { headers: bearer(accessToken, { host: 'Globex.localhost:3000' }) })
    assert.equal(sub.status, 200)
    assert.equal(sub.body.tenantId, 'globex')
    const none = await request(base, 'GET', '/api/me', { headers: bearer(accessToken) })
    assert.equal(none.body.tenantId, null)

    // refresh: a new pair, and the old refresh token is spent
    const refreshed = await post('/api/auth/refresh', { refreshToken })
    assert.equal(refreshed.status, 200)
    assert.deepEqual(Object.keys(refreshed.body).sort(), ['accessToken', 'expiresIn', 'refreshToken'])
    assert.notEqual(refreshed.body.refreshToken, refreshToken)
    assertError(await post('/api/auth/refresh', { refreshToken }), 401, 'refresh_token_reused')
    const meAgain = await request(base, 'GET', '/api/me', { headers: bearer(refreshed.body.accessToken) })
    assert.equal(meAgain.status, 200)
    assert.equal(meAgain.body.userId, reg.body.id)

    // API key: created once, accepted in either header form
    const created = await post('/api/keys', { name: 'ci runner' }, bearer(accessToken))
    assert.equal(created.status, 201, JSON.stringify(created.body))
    assert.match(created.body.key, /^tapi_[A-Za-z0-9]{38}$/)
    assert.equal(created.body.name, 'ci runner')
    assert.equal(created.body.lastFour, created.body.key.slice(-4))
    const ping = await request(base, 'GET', '/api/machine/ping', { headers: { 'x-api-key': created.body.key } })
    assert.equal(ping.status, 200)
    assert.deepEqual(ping.body, { pong: true, userId: reg.body.id, keyId: created.body.id, keyName: 'ci runner' })
    const ping2 = await request(base, 'GET', '/api/machine/ping', {
      headers: { authorization: `ApiKey ${created.body.key}` },
    })
    assert.equal(ping2.status, 200)
    const unnamed = await request(base, 'POST', '/api/keys', { headers: bearer(accessToken) })
    assert.equal(unnamed.status, 201)
    assert.equal(unnamed.body.name, 'default')
    assert.notEqual(unnamed.body.key, created.body.key)

    // OTP: the code appears in the server log; one wrong guess, then the right code
    const start = await post('/api/otp/start', undefined, bearer(accessToken))
    assert.equal(start.status, 202)
    assert.deepEqual(start.body, { sent: true, expiresIn: 300 })
    const line = logLines.find((l) => l.includes(`step-up code for user ${reg.body.id}:`))
    assert.ok(line, 'the OTP code is logged')
    const code = /: (\d{6}) /.exec(line)[1]
    const wrong = code === '000000' ? '111111' : '000000'
    assertError(await post('/api/otp/verify', { code: wrong }, bearer(accessToken)), 401, 'otp_invalid')
    const ok = await post('/api/otp/verify', { code }, bearer(accessToken))
    assert.equal(ok.status, 200)
    assert.equal(ok.body.verified, true)
    assert.equal(typeof ok.body.stepUpAt, 'number')
    assertError(await post('/api/otp/verify', { code }, bearer(accessToken)), 400, 'otp_not_started')
    const meStepped = await request(base, 'GET', '/api/me', { headers: bearer(accessToken) })
    assert.equal(meStepped.body.stepUpAt, ok.body.stepUpAt)
  })

  test('register refuses bad input with a code', async () => {
    const cases = [
      [{ Password: 'long enough pw' }, 'missing_field'],
      [{ UserName: 'bob' }, 'missing_field'],
      [{ UserName: '', Password: 'long enough pw' }, 'missing_field'],
      [{ UserName: 42, Password: 'long enough pw' }, 'invalid_field'],
      [{ UserName: 'bob', Password: ['long enough pw'] }, 'invalid_field'],
      [{ UserName: 'b', Password: 'long enough pw' }, 'invalid_field'],
      [{ UserName: 'bob smith', Password: 'long enough pw' }, 'invalid_field'],
      [{ UserName: 'bob\n', Password: 'long enough pw' }, 'invalid_field'],
      [{ UserName: 'x'.repeat(65), Password: 'long enough pw' }, 'invalid_field'],
      [{ UserName: 'bob', Password: 'short' }, 'invalid_field'],
      [{ UserName: 'bob', Password: 'p'.repeat(1025) }, 'invalid_field'],
      [[{ UserName: 'bob', Password: 'long enough pw' }], 'invalid_body'],
      ['just a string', 'invalid_json'], // body-parser's strict mode takes objects and arrays only
    ]
    for (const [json, code] of cases) {
      assertError(await post('/api/auth/register', json), 400, code)
    }
    await registerAndLogin('Dupe')
    assertError(await post('/api/auth/register', { UserName: 'DUPE', Password: 'another password' }), 409, 'user_exists')
  })

  test('every JSON endpoint refuses malformed, non-JSON and oversized bodies', async () => {
    const { accessToken } = await registerAndLogin('bodycheck')
    const endpoints = ['/api/auth/register', '/api/auth/get-user-token', '/api/auth/refresh', '/api/otp/verify']
    const auth = bearer(accessToken)
    for (const p of endpoints) {
      assertError(
        await request(base, 'POST', p, { raw: '{"UserName": ', headers: { ...auth, 'content-type': 'application/json' } }),
        400,
        'invalid_json',
      )
      assertError(
        await request(base, 'POST', p, { raw: 'UserName=a&Password=b', headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' } }),
        415,
        'unsupported_media_type',
      )
      assertError(await request(base, 'POST', p, { headers: auth }), 415, 'unsupported_media_type')
      const big = JSON.stringify({ UserName: 'big', Password: 'x'.repeat(20 * 1024) })
      assertError(
        await request(base, 'POST', p, { raw: big, headers: { ...auth, 'content-type': 'application/json' } }),
        413,
        'payload_too_large',
      )
    }
    const bigKey = JSON.stringify({ name: 'x'.repeat(20 * 1024) })
    assertError(
      await request(base, 'POST', '/api/keys', { raw: bigKey, headers: { ...auth, 'content-type': 'application/json' } }),
      413,
      'payload_too_large',
    )
  })

  test('JSON with __proto__ or constructor keys is refused and pollutes nothing', async () => {
    const bodies = [
      '{"UserName":"mallory","Password":"long enough pw","__proto__":{"polluted":true}}',
      '{"UserName":"mallory","Password":"long enough pw","constructor":{"prototype":{"polluted":true}}}',
      '{"UserName":"mallory","Password":"long enough pw","nested":{"deeper":[{"__proto__":{"polluted":true}}]}}',
      '{"UserName":"mallory","Password":"long enough pw","prototype":{"polluted":true}}',
    ]
    for (const raw of bodies) {
      const res = await request(base, 'POST', '/api/auth/register', { raw, headers: { 'content-type': 'application/json' } })
      assertError(res, 400, 'forbidden_json_key')
    }
    assert.equal({}.polluted, undefined)
    assert.equal(Object.prototype.polluted, undefined)
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false)
    // None of the refused bodies created the user.
    assertError(await post('/api/auth/get-user-token', { UserName: 'mallory', Password: 'long enough pw' }), 401, 'invalid_credentials')
  })

  test('get-user-token refuses wrong passwords and unknown users alike', async () => {
    await registerAndLogin('carol', 'carol password 1')
    assertError(await post('/api/auth/get-user-token', { UserName: 'carol', Password: 'wrong password' }), 401, 'invalid_credentials')
    assertError(await post('/api/auth/get-user-token', { UserName: 'nobody', Password: 'carol password 1' }), 401, 'invalid_credentials')
    assertError(await post('/api/auth/get-user-token', { UserName: 'carol' }), 400, 'missing_field')
    assertError(await post('/api/auth/get-user-token', { UserName: 'carol', Password: 7 }), 400, 'invalid_field')
    assertError(await post('/api/auth/get-user-token', { UserName: 'c'.repeat(65), Password: 'x' }), 400, 'invalid_field')
  })

  test('a reused refresh token revokes the tokens issued from it, not other logins (RFC 9700 4.14.2)', async () => {
    const first = await registerAndLogin('family')
    const second = (await post('/api/auth/get-user-token', { UserName: 'family', Password: 'correct horse battery' })).body
    // Two rotations: login token -> r2 -> r3.
    const r2 = await post('/api/auth/refresh', { refreshToken: first.refreshToken })
    assert.equal(r2.status, 200, JSON.stringify(r2.body))
    const r3 = await post('/api/auth/refresh', { refreshToken: r2.body.refreshToken })
    assert.equal(r3.status, 200, JSON.stringify(r3.body))
    // The stolen login token comes back: refused, and the family's live token r3 dies with it.
    assertError(await post('/api/auth/refresh', { refreshToken: first.refreshToken }), 401, 'refresh_token_reused')
    assertError(await post('/api/auth/refresh', { refreshToken: r3.body.refreshToken }), 401, 'refresh_token_revoked')
    assertError(await post('/api/auth/refresh', { refreshToken: r2.body.refreshToken }), 401, 'refresh_token_revoked')
    // The other login of the same user is another family and keeps working, as do access tokens.
    const other = await post('/api/auth/refresh', { refreshToken: second.refreshToken })
    assert.equal(other.status, 200, JSON.stringify(other.body))
    const again = await post('/api/auth/refresh', { refreshToken: other.body.refreshToken })
    assert.equal(again.status, 200, JSON.stringify(again.body))
    const me = await request(base, 'GET', '/api/me', { headers: bearer(r3.body.accessToken) })
    assert.equal(me.status, 200)
  })

  test('reusing a rotated refresh token mid-chain revokes the newer ones too', async () => {
    const login = await registerAndLogin('midchain')
    const r2 = (await post('/api/auth/refresh', { refreshToken: login.refreshToken })).body
    const r3 = (await post('/api/auth/refresh', { refreshToken: r2.refreshToken })).body
    assertError(await post('/api/auth/refresh', { refreshToken: r2.refreshToken }), 401, 'refresh_token_reused')
    assertError(await post('/api/auth/refresh', { refreshToken: r3.refreshToken }), 401, 'refresh_token_revoked')
    // A fresh login starts a new family.
    const fresh = (await post('/api/auth/get-user-token', { UserName: 'midchain', Password: 'correct horse battery' })).body
    assert.equal((await post('/api/auth/refresh', { refreshToken: fresh.refreshToken })).status, 200)
  })

  test('logout revokes the presented access token (and the refresh token sent with it); logout-all every token of the user', async () => {
    const first = await registerAndLogin('logan')
    const second = (await post('/api/auth/get-user-token', { UserName: 'logan', Password: 'correct horse battery' })).body
    assertError(await post('/api/auth/logout'), 401, 'missing_authorization')
    const out = await post('/api/auth/logout', { refreshToken: first.refreshToken }, bearer(first.accessToken))
    assert.equal(out.status, 204)
    assertError(await request(base, 'GET', '/api/me', { headers: bearer(first.accessToken) }), 401, 'token_revoked')
    assertError(await post('/api/auth/refresh', { refreshToken: first.refreshToken }), 401, 'token_revoked')
    // The other login of the same user is untouched.
    assert.equal((await request(base, 'GET', '/api/me', { headers: bearer(second.accessToken) })).status, 200)
    assertError(await post('/api/auth/logout', { refreshToken: 5 }, bearer(second.accessToken)), 400, 'invalid_field')

    assert.equal((await post('/api/auth/logout-all', undefined, bearer(second.accessToken))).status, 204)
    assertError(await request(base, 'GET', '/api/me', { headers: bearer(second.accessToken) }), 401, 'token_revoked')
    assertError(await post('/api/auth/refresh', { refreshToken: second.refreshToken }), 401, 'token_revoked')
    // A login right after works again, with no wait (docs/revocation.md).
    const again = (await post('/api/auth/get-user-token', { UserName: 'logan', Password: 'correct horse battery' })).body
    assert.equal((await request(base, 'GET', '/api/me', { headers: bearer(again.accessToken) })).status, 200)
  })

  test('refresh refuses missing, malformed, tampered and access tokens', async () => {
    const { accessToken, refreshToken } = await registerAndLogin('dave')
    assertError(await post('/api/auth/refresh', {}), 400, 'missing_field')
    assertError(await post('/api/auth/refresh', { refreshToken: 12 }), 400, 'invalid_field')
    assertError(await post('/api/auth/refresh', { refreshToken: 'not-a-jwt' }), 401, 'malformed_token')
    const [h, p, s] = refreshToken.split('.')
    const flipped = s[0] === 'A' ? 'B' + s.slice(1) : 'A' + s.slice(1)
    assertError(await post('/api/auth/refresh', { refreshToken: `${h}.${p}.${flipped}` }), 401, 'invalid_signature')
    // An access token is signed with the other secret: its signature fails, and the other
    // key then names it precisely (issue 17 point 8).
    assertError(await post('/api/auth/refresh', { refreshToken: accessToken }), 401, 'wrong_token_type')
    // And a refresh token is no access token.
    assertError(await request(base, 'GET', '/api/me', { headers: bearer(refreshToken) }), 401, 'wrong_token_type')
  })

  test('protected routes refuse missing or bad credentials with the middleware codes', async () => {
    const { accessToken } = await registerAndLogin('erin')
    const routes = [
      ['GET', '/api/me'],
      ['POST', '/api/keys'],
      ['POST', '/api/otp/start'],
      ['POST', '/api/otp/verify'],
    ]
    for (const [method, p] of routes) {
      const missing = await request(base, method, p)
      assertError(missing, 401, 'missing_authorization')
      assert.match(missing.headers['www-authenticate'], /^Bearer/)
      assert.match(missing.headers['x-request-id'], UUID_V4)
      assertError(await request(base, method, p, { headers: { authorization: 'Basic abc' } }), 401, 'invalid_authorization_format')
      assertError(await request(base, method, p, { headers: bearer('a.b.c') }), 401, 'malformed_token')
      assertError(
        await request(base, method, p, { headers: bearer(accessToken, { 'x-tenant-id': 'bad tenant!' }) }),
        400,
        'invalid_tenant',
      )
    }
  })

  test('a valid token whose user does not exist gets unknown_user, not a server error', async () => {
    // Same secrets and issuer as the service, so these tokens pass the signature checks.
    const signer = new Authenticator({
      accessSecret: config.auth.accessSecret,
      refreshSecret: config.auth.refreshSecret,
      issuer: config.auth.issuer,
    })
    for (const sub of ['999999', 'not-a-number', '0', '1e3']) {
      const access = signer.signAccessToken({ sub })
      for (const [method, p] of [
        ['GET', '/api/me'],
        ['POST', '/api/keys'],
        ['POST', '/api/otp/start'],
      ]) {
        assertError(await request(base, method, p, { headers: bearer(access) }), 401, 'unknown_user')
      }
      assertError(await post('/api/auth/refresh', { refreshToken: signer.signRefreshToken({ sub }) }), 401, 'unknown_user')
    }
  })

  test('API key and OTP routes refuse bad input', async () => {
    const { accessToken } = await registerAndLogin('frank')
    const auth = bearer(accessToken)
    assertError(await post('/api/keys', { name: 5 }, auth), 400, 'invalid_field')
    assertError(await post('/api/keys', { name: 'bad/name' }, auth), 400, 'invalid_field')
    assertError(await post('/api/keys', [1], auth), 400, 'invalid_body')

    const ping = (headers) => request(base, 'GET', '/api/machine/ping', { headers })
    assertError(await ping({}), 401, 'missing_api_key')
    assertError(await ping({ authorization: `Bearer ${accessToken}` }), 401, 'missing_api_key')
    assertError(await ping({ 'x-api-key': 'tapi_short' }), 401, 'invalid_api_key')
    assertError(await ping({ 'x-api-key': 'x'.repeat(5000) }), 401, 'invalid_api_key')
    const real = (await post('/api/keys', {}, auth)).body.key
    const lastChar = real.at(-1) === 'a' ? 'b' : 'a'
    assertError(await ping({ 'x-api-key': real.slice(0, -1) + lastChar }), 401, 'invalid_api_key')
    // Well-formed keys made with another secret or another prefix are not ours.
    const foreign = generateApiKey({ prefix: 'tapi', secret: 'some-other-secret-0123456789' }).key
    assertError(await ping({ 'x-api-key': foreign }), 401, 'invalid_api_key')
    const otherPrefix = generateApiKey({ prefix: 'auth1_pk', secret: 'test-api-key-secret-0123456789' }).key
    assertError(await ping({ 'x-api-key': otherPrefix }), 401, 'invalid_api_key')

    assertError(await post('/api/otp/verify', { code: '123456' }, auth), 400, 'otp_not_started')
    assertError(await post('/api/otp/verify', {}, auth), 400, 'missing_field')
    assertError(await post('/api/otp/verify', { code: 123456 }, auth), 400, 'invalid_field')
    assertError(await post('/api/otp/verify', { code: '12ab56' }, auth), 400, 'invalid_field')
    assertError(await post('/api/otp/verify', { code: '1'.repeat(11) }, auth), 400, 'invalid_field')
  })

  test('OTP codes burn after too many wrong guesses', async () => {
    const { accessToken } = await registerAndLogin('grace')
    const auth = bearer(accessToken)
    assert.equal((await post('/api/otp/start', undefined, auth)).status, 202)
    const me = await request(base, 'GET', '/api/me', { headers: auth })
    const line = logLines.findLast((l) => l.includes(`step-up code for user ${me.body.userId}:`))
    const code = /: (\d{6}) /.exec(line)[1]
    const wrong = code === '000000' ? '111111' : '000000'
    for (let i = 0; i < 5; i++) assertError(await post('/api/otp/verify', { code: wrong }, auth), 401, 'otp_invalid')
    // Five wrong guesses burn the code: the right one is refused now.
    assertError(await post('/api/otp/verify', { code }, auth), 429, 'otp_too_many_attempts')
  })

  test('rate limiting answers 429 with Retry-After once the bucket is empty', async () => {
    const { accessToken } = await registerAndLogin('heidi')
    const headers = bearer(accessToken, { 'x-tenant-id': 'limits' })
    for (let i = 1; i <= RATE_LIMIT_MAX; i++) {
      const res = await request(base, 'GET', '/api/me', { headers })
      assert.equal(res.status, 200)
      assert.equal(res.headers['ratelimit-remaining'], String(RATE_LIMIT_MAX - i))
    }
    const limited = await request(base, 'GET', '/api/me', { headers })
    assertError(limited, 429, 'rate_limited')
    assert.ok(Number(limited.headers['retry-after']) >= 1)
    // A tenant the client only asks for is the same user's bucket (issue 12).
    const other = await request(base, 'GET', '/api/me', { headers: bearer(accessToken, { 'x-tenant-id': 'other' }) })
    assertError(other, 429, 'rate_limited')
  })

  test('login is throttled per account: 12 wrong passwords end in 429 with Retry-After', async () => {
    await registerAndLogin('ivan', 'the right password!')
    const codes = []
    for (let i = 0; i < 12; i++) {
      const res = await post('/api/auth/get-user-token', { UserName: 'ivan', Password: `wrong guess ${i}` })
      codes.push(res.status)
      if (res.status === 429) {
        assertError(res, 429, 'too_many_attempts')
        assert.ok(Number(res.headers['retry-after']) >= 1, res.headers['retry-after'])
      }
    }
    // registerAndLogin spent one of the 10 attempts: 9 answers, then refusals.
    assert.deepEqual(codes, [...Array(9).fill(401), 429, 429, 429])
    // Throttled means throttled: the right password (any casing of the name) waits too.
    assertError(await post('/api/auth/get-user-token', { UserName: 'IVAN', Password: 'the right password!' }), 429, 'too_many_attempts')
    // Another account from the same address is not affected.
    await registerAndLogin('judy')
  })

  test('step-up code checks are throttled per user', async () => {
    const { accessToken } = await registerAndLogin('mallory')
    const auth = bearer(accessToken)
    assert.equal((await post('/api/otp/start', {}, auth)).status, 202)
    // Ten checks answered by the OTP store (wrong code, then burned code), then the throttle.
    const codes = []
    for (let i = 0; i < 10; i++) codes.push((await post('/api/otp/verify', { code: '000000' }, auth)).body.code)
    assert.ok(!codes.includes('too_many_attempts'), codes.join())
    const limited = await post('/api/otp/verify', { code: '000000' }, auth)
    assertError(limited, 429, 'too_many_attempts')
    assert.ok(Number(limited.headers['retry-after']) >= 1)
  })

  test('unknown routes answer 404 in the same error shape', async () => {
    assertError(await request(base, 'GET', '/nope'), 404, 'not_found')
    assertError(await request(base, 'GET', '/api/auth/register'), 404, 'not_found')
    assertError(await request(base, 'DELETE', '/api/me'), 404, 'not_found')
  })

  test('seeded users share one hash and can log in', async () => {
    const result = await seed({ count: 50, password: 'seed-password', prefix: 'seeduser' }, { ...FAST_ARGON2, DATA_DIR: dataDir })
    assert.equal(result.added, 50)
    const again = await seed({ count: 50, password: 'seed-password', prefix: 'seeduser' }, { ...FAST_ARGON2, DATA_DIR: dataDir })
    assert.equal(again.added, 0)
    assert.equal(again.existing, 50)
    const login = await post('/api/auth/get-user-token', { UserName: 'seeduser37', Password: 'seed-password' })
    assert.equal(login.status, 200)
    assertError(await post('/api/auth/get-user-token', { UserName: 'seeduser51', Password: 'seed-password' }), 401, 'invalid_credentials')
  })

  test('login upgrades a hash made with weaker Argon2 costs', async () => {
    // Seeded with 32 KiB while the service hashes with 64 KiB.
    await seed({ count: 2, password: 'weak-hash-pass', prefix: 'weakhash' }, { ARGON2_MEMORY_KIB: '32', ARGON2_TIME_COST: '1', DATA_DIR: dataDir })
    const db = openDatabase(dataDir)
    try {
      assert.match(db.users.findByName('weakhash1').passwordHash, /\$m=32,t=1,/)
      const login = await post('/api/auth/get-user-token', { UserName: 'weakhash1', Password: 'weak-hash-pass' })
      assert.equal(login.status, 200)
      assert.match(db.users.findByName('weakhash1').passwordHash, /\$m=64,t=1,/)
      assert.match(db.users.findByName('weakhash2').passwordHash, /\$m=32,t=1,/)
      const again = await post('/api/auth/get-user-token', { UserName: 'weakhash1', Password: 'weak-hash-pass' })
      assert.equal(again.status, 200)
    } finally {
      db.close()
    }
  })
})

describe('token API login throttling', () => {
  test('a throttled login attempt spends no Argon2 work', async () => {
    const { createApp } = require('../../examples/token-api/app')
    const { createPasswords } = require('../../examples/token-api/passwords')
    const { createThrottles } = require('../../examples/token-api/throttle')
    const authShield = require('../../adapters/express')
    const { OtpStore } = require('../..')
    const dataDir = tempDir()
    const config = loadConfig({ ...FAST_ARGON2, ACCESS_SECRET: 'throttle-access-secret-0123456789ab', REFRESH_SECRET: 'throttle-refresh-secret-0123456789a', API_KEY_SECRET: 'throttle-api-key-secret-0123456789', DATA_DIR: dataDir, PORT: '0' })
    const db = openDatabase(config.dataDir)
    const real = await createPasswords(config.argon2)
    let verifies = 0
    // The real Argon2 helper, counted.
    const passwords = { ...real, verify: (...args) => (verifies++, real.verify(...args)) }
    const log = { info() {}, warn() {}, error() {} }
    const throttles = createThrottles({ loginPerAccount: { capacity: 3 } })
    const app = createApp({ config, db, authenticate: authShield(config.auth), otpStore: new OtpStore(), passwords, log, throttles })
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    try {
      const base = `http://127.0.0.1:${server.address().port}`
      const attempt = () => request(base, 'POST', '/api/auth/get-user-token', { json: { UserName: 'nobody', Password: 'guess' } })
      for (let i = 0; i < 3; i++) assert.equal((await attempt()).status, 401)
      assert.equal(verifies, 3)
      for (let i = 0; i < 5; i++) assert.equal((await attempt()).status, 429)
      assert.equal(verifies, 3, 'a throttled attempt reached Argon2')
    } finally {
      await new Promise((resolve) => server.close(resolve))
      db.close()
      fs.rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

describe('token API configuration', () => {
  const secrets = { ACCESS_SECRET: 'a'.repeat(32), REFRESH_SECRET: 'b'.repeat(32), API_KEY_SECRET: 'c'.repeat(16) }

  test('defaults to loopback port 3000 and the library Argon2 costs', () => {
    const config = loadConfig(secrets)
    assert.equal(config.host, '127.0.0.1')
    assert.equal(config.port, 3000)
    assert.deepEqual(config.argon2, {})
    assert.equal(config.bodyLimit, '16kb')
    assert.equal(config.dataDir, path.join(__dirname, '..', '..', 'examples', 'token-api', 'data'))
  })

  test('refuses bad values with the variable named', () => {
    const cases = [
      [{ PORT: 'abc' }, /PORT/],
      [{ PORT: '70000' }, /PORT/],
      [{ RATE_LIMIT_REFILL: '0' }, /RATE_LIMIT_REFILL/],
      [{ ARGON2_MEMORY_KIB: '1' }, /ARGON2_MEMORY_KIB/],
      [{ BODY_LIMIT: 'lots' }, /BODY_LIMIT/],
      [{ API_KEY_SECRET: 'short' }, /API_KEY_SECRET/],
      [{ ACCESS_SECRET: '' }, /ACCESS_SECRET is not set/],
    ]
    for (const [env, message] of cases) {
      assert.throws(() => loadConfig({ ...secrets, ...env }), message)
    }
  })
})

describe('token API on the pure-JS engine (USE_RUST_AUTH=false)', () => {
  test('serves the same flow with the JS engine behind the middleware', async (t) => {
    const dataDir = tempDir()
    const saved = process.env.USE_RUST_AUTH
    process.env.USE_RUST_AUTH = 'false'
    let service
    try {
      service = await startService(
        loadConfig({
          ...FAST_ARGON2,
          ACCESS_SECRET: 'js-engine-access-secret-0123456789ab',
          REFRESH_SECRET: 'js-engine-refresh-secret-0123456789a',
          API_KEY_SECRET: 'js-engine-api-key-secret-0123',
          DATA_DIR: dataDir,
          PORT: '0',
        }),
        { info() {}, warn() {}, error() {} },
      )
    } finally {
      if (saved === undefined) delete process.env.USE_RUST_AUTH
      else process.env.USE_RUST_AUTH = saved
    }
    t.after(async () => {
      await service.close()
      fs.rmSync(dataDir, { recursive: true, force: true })
    })
    const base = service.url
    assert.equal((await request(base, 'GET', '/health')).body.engine, 'js')
    const creds = { UserName: 'jsengine', Password: 'js engine password' }
    assert.equal((await request(base, 'POST', '/api/auth/register', { json: creds })).status, 201)
    const tokens = (await request(base, 'POST', '/api/auth/get-user-token', { json: creds })).body
    const me = await request(base, 'GET', '/api/me', {
      headers: { authorization: `Bearer ${tokens.accessToken}`, host: 'initech.localhost' },
    })
    assert.equal(me.status, 200)
    assert.equal(me.body.tenantId, 'initech')
    assert.equal(me.headers['ratelimit-remaining'], '99')
    const refreshed = await request(base, 'POST', '/api/auth/refresh', { json: { refreshToken: tokens.refreshToken } })
    assert.equal(refreshed.status, 200)
    assertError(await request(base, 'GET', '/api/me'), 401, 'missing_authorization')
  })
})


describe('server.js', () => {
  test('starts with generated secrets, says so, serves, and stops on SIGTERM', async (t) => {
    const dataDir = tempDir()
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }))
    const server = startServer([], { DATA_DIR: dataDir })
    const [url] = await server.ready
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/)
    assert.match(server.output(), /ACCESS_SECRET, REFRESH_SECRET, API_KEY_SECRET not set/)
    assert.match(server.output(), /will NOT survive a restart/)
    const health = await request(url, 'GET', '/health')
    assert.equal(health.status, 200)
    server.child.kill('SIGTERM')
    assert.deepEqual(await server.exited, { code: 0, signal: null })
  })

  test('a stop that open requests would hold forever exits after SHUTDOWN_TIMEOUT_MS', async (t) => {
    const dataDir = tempDir()
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }))
    const server = startServer([], { DATA_DIR: dataDir, SHUTDOWN_TIMEOUT_MS: '300' })
    const [url] = await server.ready
    // A request whose headers never finish: server.close() waits for it (until headersTimeout).
    const { port } = new URL(url)
    const socket = net.connect(Number(port), '127.0.0.1')
    t.after(() => socket.destroy())
    await new Promise((resolve) => socket.once('connect', resolve))
    socket.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    await new Promise((resolve) => setTimeout(resolve, 100))
    server.child.kill('SIGTERM')
    assert.deepEqual(await server.exited, { code: 1, signal: null })
    assert.match(server.output(), /open requests still running 300 ms after SIGTERM: forcing exit/)
  })

  test('cluster mode shares the port, the secrets and the database across workers', async (t) => {
    const dataDir = tempDir()
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }))
    const server = startServer(['--workers', '2'], { DATA_DIR: dataDir }, 2)
    const urls = await server.ready
    assert.equal(urls[0], urls[1])
    assert.match(server.output(), /starting 2 workers/)
    const url = urls[0]
    const creds = { UserName: 'clustered', Password: 'cluster password' }
    assert.equal((await request(url, 'POST', '/api/auth/register', { json: creds })).status, 201)
    const pids = new Set()
    for (let i = 0; i < 6; i++) {
      // New connections each time, so both workers get a share; any of them accepts any token.
      const login = await request(url, 'POST', '/api/auth/get-user-token', { json: creds, headers: { connection: 'close' } })
      assert.equal(login.status, 200)
      const me = await request(url, 'GET', '/api/me', { headers: { authorization: `Bearer ${login.body.accessToken}`, connection: 'close' } })
      assert.equal(me.status, 200)
      assert.equal(me.body.userName, 'clustered')
      pids.add((await request(url, 'GET', '/health', { headers: { connection: 'close' } })).body.pid)
    }
    assert.equal(pids.size, 2, "round-robin scheduling spreads connections over both workers")
    server.child.kill('SIGTERM')
    assert.equal((await server.exited).code, 0)
  })

  test('refuses a bad --workers value with usage', async () => {
    const server = startServer(['--workers', '0'], {})
    server.ready.catch(() => {})
    const { code } = await server.exited
    assert.equal(code, 2)
    assert.match(server.output(), /--workers must be an integer/)
    assert.match(server.output(), /usage:/)
  })

  test('exits with an error when the port is taken', async (t) => {
    const blocker = http.createServer()
    await new Promise((r) => blocker.listen(0, '127.0.0.1', r))
    t.after(() => blocker.close())
    const dataDir = tempDir()
    t.after(() => fs.rmSync(dataDir, { recursive: true, force: true }))
    const server = startServer([], { DATA_DIR: dataDir, PORT: String(blocker.address().port) })
    server.ready.catch(() => {})
    const { code } = await server.exited
    assert.equal(code, 1)
    assert.match(server.output(), /cannot start: .*EADDRINUSE/)
  })
})
