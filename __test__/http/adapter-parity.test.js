'use strict'

// One decision, every adapter: the same requests sent over loopback HTTP to the Express
// middleware, the Koa middleware and a Fetch-API route (auth-shield/fetch behind a node:http
// bridge), each with its own authenticator of the same config, get the same status, body and
// auth headers (X-Request-Id, WWW-Authenticate, Retry-After, RateLimit-*, Content-Type), and so
// in both engines. The shared options that reach outside the process work through Koa and
// Fetch too: a remote key set (auth-shield/jwks) and a shared store (auth-shield/redis).

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const jose = require('jose')
const authShield = require('../../adapters/express')
const koaShield = require('../../adapters/koa')
const { createVerifier } = require('../../adapters/fetch')
const { createRemoteJwks } = require('../../lib/jwks/index')
const { createRedisStore } = require('../../lib/store/index')
const { token } = require('../support/tokens')
const { get } = require('../support/http')
const { expressServer, koaServer, fetchServer, fetchRoute, comparable } = require('../support/adapter-servers')
const { startJwksServer, keyPair } = require('../support/jwks-server')
const { redisSkip, startRedis } = require('../support/redis-server')
const { connectClient } = require('../support/redis-clients')

const NOW = Math.floor(Date.now() / 1000)
const SECRET = 'parity-test-secret-0123456789abcdef'
const CONFIG = { accessSecret: SECRET, rateLimitMax: 3, rateLimitRefill: 0.001, baseDomain: 'example.com', enforceTenantMatch: true }
const jwt = (claims, secret = SECRET) => token({ exp: NOW + 600, ...claims }, secret)
const auth = (value) => ({ authorization: value })

// [label, headers]: every kind of answer the decision gives.
const REQUESTS = [
  ['a valid token', auth(`Bearer ${jwt({ sub: 'ok', email: 'ok@example.com', role: 'r', extra: [1, 'x'] })}`)],
  ['a valid token with its tenant on the host', { ...auth(`Bearer ${jwt({ sub: 't', tenant_id: 'acme' })}`), host: 'acme.example.com' }],
  ['no credentials', {}],
  ['another scheme', auth('Basic dTpw')],
  ['a bare Bearer', auth('Bearer')],
  ['a malformed token', auth('Bearer a.b')],
  ['an expired token', auth(`Bearer ${jwt({ sub: 'u', exp: NOW - 120 })}`)],
  ['a forged signature', auth(`Bearer ${jwt({ sub: 'u' }, 'another-secret-0123456789abcdef!!')}`)],
  ['a tenant other than the host', { ...auth(`Bearer ${jwt({ sub: 't', tenant_id: 'acme' })}`), host: 'globex.example.com' }],
  ...[1, 2, 3, 4].map((i) => [`request ${i} of one identity (the 4th is over the limit)`, auth(`Bearer ${jwt({ sub: 'busy' })}`)]),
]

const VARIANTS = [
  ['the default options', {}],
  ['realm, both rate-limit header shapes', { realm: 'orders', rateLimitHeaders: 'both' }],
  ['credentialsRequired: false', { credentialsRequired: false }],
]

// Seconds until the bucket refills (about 1000 s at 0.001 token/s) count down while the test
// runs: a loaded machine may take a second between two adapters' answers.
const nearly1000 = (s) => (Number(s) > 990 && Number(s) <= 1000 ? '~1000' : s)

/** An answer with what differs per request and per framework (the id, the 200 body's type) set aside. */
function normalised(res) {
  const c = comparable(res)
  for (const name of ['retry-after', 'ratelimit-reset']) if (c.headers[name] !== undefined) c.headers[name] = nearly1000(c.headers[name])
  if (c.headers.ratelimit !== undefined) c.headers.ratelimit = c.headers.ratelimit.replace(/t=(\d+)/, (m, t) => `t=${nearly1000(t)}`)
  if (res.status === 200) {
    const body = JSON.parse(res.body)
    assert.equal(body.requestId, res.headers['x-request-id'])
    body.requestId = '<id>'
    c.body = body
    delete c.headers['content-type']
  }
  return c
}

describe('Express, Koa and Fetch give the same answers, in both engines', () => {
  for (const [variant, options] of VARIANTS) {
    it(`for every kind of request, with ${variant}`, async () => {
      const servers = []
      try {
        const answers = {}
        for (const engine of ['native', 'js']) {
          const o = { engine, ...options }
          const adapters = {
            express: await expressServer(authShield(CONFIG, o)),
            koa: await koaServer(koaShield(CONFIG, o)),
            fetch: await fetchServer(fetchRoute(createVerifier(CONFIG, o))),
          }
          servers.push(...Object.values(adapters))
          for (const [name, server] of Object.entries(adapters)) {
            const list = (answers[`${name} (${engine})`] = [])
            for (const [label, headers] of REQUESTS) list.push([label, normalised(await get(`${server.base}/x`, headers))])
          }
        }
        const [reference, ...others] = Object.entries(answers)
        for (const [name, list] of others) assert.deepEqual(list, reference[1], `${name} answers as ${reference[0]}`)
        // The rows really cover each kind of answer.
        const statuses = reference[1].map(([, a]) => a.status)
        for (const status of [200, 401, 403, 429]) assert.ok(statuses.includes(status), `a ${status} among ${statuses}`)
      } finally {
        for (const s of servers) await s.close()
      }
    })
  }
})

describe('a remote key set (jwks option) through Koa and Fetch', () => {
  const ISSUER = 'https://idp.test/'
  const pair = keyPair('ES256', 'kid-es')
  const stranger = keyPair('ES256', 'kid-unknown')
  const sign = (p) => new jose.SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: p.kid }).setSubject('j1').setIssuer(ISSUER).setExpirationTime('10m').sign(p.privateKey)
  let jwksServer
  let source
  before(async () => {
    jwksServer = await startJwksServer()
    jwksServer.serve({ keys: [pair.jwk] })
    source = createRemoteJwks(jwksServer.url, { cooldownMs: 0 })
    await source.ready()
  })
  after(async () => {
    source.close()
    await jwksServer.close()
  })

  for (const engine of ['native', 'js']) {
    it(`accepts a key from the document and refetches it once for an unknown kid (${engine} engine)`, async () => {
      const koa = await koaServer(koaShield({ issuer: ISSUER }, { engine, jwks: source }))
      const fetchApp = await fetchServer(fetchRoute(createVerifier({ issuer: ISSUER }, { engine, jwks: source })))
      try {
        for (const server of [koa, fetchApp]) {
          const ok = await get(`${server.base}/x`, auth(`Bearer ${await sign(pair)}`))
          assert.equal(ok.status, 200, ok.body)
          assert.equal(ok.json.user.userId, 'j1')
          const start = jwksServer.fetches
          const unknown = await get(`${server.base}/x`, auth(`Bearer ${await sign(stranger)}`))
          assert.deepEqual([unknown.status, unknown.json.code], [401, 'unknown_key'])
          assert.equal(jwksServer.fetches, start + 1)
        }
      } finally {
        await koa.close()
        await fetchApp.close()
      }
    })
  }
})

describe('a shared store (store option) through Koa and Fetch', { skip: redisSkip() }, () => {
  let redis
  before(async () => (redis = await startRedis()))
  after(() => redis.stop())

  for (const engine of ['native', 'js']) {
    it(`shares one bucket across a Koa app and a Fetch verifier (${engine} engine)`, async () => {
      const conn = await connectClient('ioredis', redis.url)
      const store = createRedisStore(conn.client, { prefix: `parity:${engine}:` })
      const config = { accessSecret: SECRET, rateLimitMax: 3, rateLimitRefill: 0.001 }
      const koa = await koaServer(koaShield(config, { engine, store }))
      const fetchApp = await fetchServer(fetchRoute(createVerifier(config, { engine, store })))
      try {
        const h = auth(`Bearer ${jwt({ sub: `shared-${engine}` })}`)
        const statuses = []
        for (const server of [koa, fetchApp, koa, fetchApp, koa]) statuses.push((await get(`${server.base}/x`, h)).status)
        // The capacity is the store's, whichever process a request reaches (leases split it).
        assert.deepEqual(statuses.toSorted(), [200, 200, 200, 429, 429], String(statuses))
      } finally {
        await koa.close()
        await fetchApp.close()
        await store.close()
        await conn.close()
      }
    })
  }
})
