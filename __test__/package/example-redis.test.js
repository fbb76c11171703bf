'use strict'

// The example service (examples/token-api) with REDIS_URL against a real redis-server: its
// `--workers 2` cluster shares one user's rate limit through auth-shield/redis (two workers
// without it would admit up to twice the limit), and it starts, serves and stops cleanly.

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const http = require('node:http')
const os = require('node:os')
const path = require('node:path')
const { redisSkip, startRedis } = require('../support/redis-server')
const { startServer } = require('../support/example-server')

const RATE_LIMIT_MAX = 5


/** One request on a fresh connection (no agent), so cluster workers take turns. */
function request(base, method, urlPath, { json, headers = {} } = {}) {
  const payload = json === undefined ? undefined : JSON.stringify(json)
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}${urlPath}`, { method, agent: false, headers: { ...(payload && { 'content-type': 'application/json' }), ...headers } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (c) => (text += c))
      res.on('end', () => {
        let body
        try {
          body = JSON.parse(text)
        } catch {
          body = text
        }
        resolve({ status: res.statusCode, body })
      })
    })
    req.on('error', reject)
    req.end(payload)
  })
}

describe('example service with REDIS_URL', { skip: redisSkip() }, () => {
  let redis, dataDir
  before(async () => {
    redis = await startRedis()
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'token-api-redis-'))
  })
  after(async () => {
    await redis.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })

  test('--workers 2 share one rate limit per user through Redis', async () => {
    const server = startServer(['--workers', '2'], { DATA_DIR: dataDir, REDIS_URL: redis.url, RATE_LIMIT_MAX: String(RATE_LIMIT_MAX), RATE_LIMIT_REFILL: '0.001' }, 2)
    try {
      const [url] = await server.ready
      assert.match(server.output(), /rate limits are shared through Redis/)
      const creds = { UserName: 'shared-limit', Password: 'shared limit password' }
      assert.equal((await request(url, 'POST', '/api/auth/register', { json: creds })).status, 201)
      const login = await request(url, 'POST', '/api/auth/get-user-token', { json: creds })
      assert.equal(login.status, 200)
      const statuses = []
      const pids = new Set()
      for (let i = 0; i < 4 * RATE_LIMIT_MAX; i++) {
        // A new connection each time, so the workers take turns (round robin); three requests
        // per step, so /api/me lands on each worker in turn.
        const headers = { authorization: `Bearer ${login.body.accessToken}` }
        statuses.push((await request(url, 'GET', '/api/me', { headers })).status)
        pids.add((await request(url, 'GET', '/health')).body.pid)
        pids.add((await request(url, 'GET', '/health')).body.pid)
      }
      assert.equal(pids.size, 2, `both workers served: ${[...pids]} ${statuses}`)
      const admitted = statuses.filter((s) => s === 200).length
      // At most the shared capacity (two separate buckets would admit up to 10); a worker may
      // still hold one leased token (lease 1 at this capacity) the other could not spend.
      assert.ok(admitted <= RATE_LIMIT_MAX, `admitted ${admitted}: ${statuses}`)
      assert.ok(admitted >= RATE_LIMIT_MAX - 2, `admitted ${admitted}: ${statuses}`)
      assert.ok(statuses.every((s) => s === 200 || s === 429), String(statuses))
    } finally {
      server.child.kill('SIGTERM')
      assert.equal((await server.exited).code, 0)
    }
  })

  test('refuses a REDIS_URL that is not a redis:// URL', async () => {
    const server = startServer([], { DATA_DIR: dataDir, REDIS_URL: 'http://example.com' }, 1)
    server.ready.catch(() => {})
    const { code } = await server.exited
    assert.equal(code, 1)
    assert.match(server.output(), /REDIS_URL must be a redis:\/\/ or rediss:\/\/ URL/)
  })
})
