'use strict'

// The example service (examples/token-api) serves /metrics (auth-shield/prometheus): scraped
// over real HTTP after requests the test makes, the counters say what those requests got.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { loadConfig } = require('../../examples/token-api/config')
const { startService } = require('../../examples/token-api/app')
const { get } = require('../support/http')

test('the example service exposes /metrics with the refusals it answered', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'token-api-metrics-'))
  const config = loadConfig({
    ACCESS_SECRET: 'test-access-secret-0123456789abcdef',
    REFRESH_SECRET: 'test-refresh-secret-0123456789abcdef',
    API_KEY_SECRET: 'test-api-key-secret-0123456789',
    ARGON2_MEMORY_KIB: '64',
    ARGON2_TIME_COST: '1',
    DATA_DIR: dataDir,
    PORT: '0',
  })
  const log = { info() {}, warn() {}, error() {} }
  const service = await startService(config, log)
  try {
    for (let i = 0; i < 3; i++) assert.equal((await get(`${service.url}/api/me`)).status, 401)
    assert.equal((await get(`${service.url}/api/me`, { authorization: 'Bearer not.a.token' })).status, 401)
    const res = await get(`${service.url}/metrics`)
    assert.equal(res.status, 200)
    assert.match(res.headers['content-type'], /^text\/plain; version=0\.0\.4/)
    const line = (code) => new RegExp(`^auth_shield_authentication_requests_total\\{auth_shield_authenticator="api",auth_shield_authentication_result="failure",error_type="${code}"\\} (\\d+)$`, 'm')
    assert.equal(Number(line('missing_authorization').exec(res.body)?.[1]), 3)
    assert.equal(Number(line('malformed_token').exec(res.body)?.[1]), 1)
    assert.match(res.body, /^# TYPE auth_shield_authentication_duration_seconds histogram$/m)
  } finally {
    await service.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
})
