'use strict'

// auth-shield/fetch behind a loopback node:http server that turns each request into a Fetch
// `Request` and writes the returned `Response` back, with both engines: the decision's shape
// (pass, skip, refusal with its ready Response), the answers to missing, malformed, invalid and
// expired tokens and to an empty bucket, skipped paths, optional auth, callbacks that receive
// the Request, and callbacks that fail (verifyRequest rejects: the route never runs).

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { createVerifier, UnauthorizedError, TooManyRequestsError } = require('../../adapters/fetch')
const { get } = require('../support/http')
const { token } = require('../support/tokens')
const { fetchServer, fetchRoute, adapterFixtures, assertEmptyBucket, assertFenceRefused, FAILING_CALLBACKS } = require('../support/adapter-servers')

const { NOW, CONFIG, jwt, bearer } = adapterFixtures('fetch-test-secret-0123456789abcdef')
const CALLBACK_TIMEOUT_MS = 100
const request = (headers = {}, path = '/x') => new Request(`http://acme.example.com${path}`, { headers })

for (const engine of ['native', 'js']) {
  describe(`auth-shield/fetch (${engine} engine)`, () => {
    const servers = {}
    const url = (name, path = '/x') => `${servers[name].base}${path}`
    const seenBy = []

    before(async () => {
      const mk = (options) => createVerifier(CONFIG, { engine, ...options })
      servers.api = await fetchServer(fetchRoute(mk()))
      servers.optional = await fetchServer(fetchRoute(mk({ credentialsRequired: false })))
      servers.skip = await fetchServer(
        fetchRoute(
          mk({
            skip: {
              path: ['/health', /^\/public\//],
              custom: (req) => {
                seenBy.push(req instanceof Request)
                return new URL(req.url).searchParams.get('open') === '1'
              },
            },
          }),
        ),
      )
      servers.query = await fetchServer(fetchRoute(mk({ getToken: (req) => new URL(req.url).searchParams.get('token') })))
    })
    after(async () => {
      for (const s of Object.values(servers)) await s.close()
    })

    it('passes a valid token: ok, user, tenant, request id, headers to set and the payload as claims', async () => {
      const verifyRequest = createVerifier(CONFIG, { engine })
      assert.equal(verifyRequest.engine, engine)
      const d = await verifyRequest(request(bearer({ sub: 'u1', email: 'u1@example.com', role: 'admin', extra: { a: 1 } })))
      assert.equal(d.ok, true)
      assert.equal(d.action, 'pass')
      assert.deepEqual(d.user, { userId: 'u1', email: 'u1@example.com', role: 'admin' })
      // From the Request's Host: acme.example.com under baseDomain example.com.
      assert.equal(d.tenantId, 'acme')
      assert.equal(d.tenantSource, 'host')
      assert.match(d.requestId, /^[0-9a-f-]{36}$/)
      assert.deepEqual(d.claims.extra, { a: 1 })
      const headers = new Headers(d.headers)
      assert.equal(headers.get('x-request-id'), d.requestId)
      assert.equal(headers.get('ratelimit-limit'), '3')
      assert.equal(headers.get('ratelimit-remaining'), '2')

      const r = await get(url('api'), bearer({ sub: 'u2' }))
      assert.equal(r.status, 200, r.body)
      assert.equal(r.json.user.userId, 'u2')
      assert.equal(r.json.requestId, r.headers['x-request-id'])
      assert.equal(r.json.claims.sub, 'u2')
    })

    it('refuses with status, code, error, headers, the JSON body and a ready Response', async () => {
      const verifyRequest = createVerifier(CONFIG, { engine, realm: 'orders' })
      const d = await verifyRequest(request(bearer({ sub: 'u', exp: NOW - 120 })))
      assert.equal(d.ok, false)
      assert.equal(d.action, 'fail')
      assert.equal(d.status, 401)
      assert.equal(d.code, 'token_expired')
      assert.equal(d.error, 'Token has expired')
      assert.equal(d.body, JSON.stringify({ error: d.error, code: d.code }))
      assert.equal(d.response, d.response, 'one Response per refusal')
      assert.equal(d.response.status, 401)
      assert.equal(d.response.headers.get('content-type'), 'application/json; charset=utf-8')
      assert.equal(d.response.headers.get('www-authenticate'), 'Bearer realm="orders", error="invalid_token", error_description="Token has expired"')
      assert.equal(d.response.headers.get('x-request-id'), d.requestId)
      assert.deepEqual(await d.response.json(), { error: 'Token has expired', code: 'token_expired' })
      const err = d.toError()
      assert.ok(err instanceof UnauthorizedError)
      assert.equal(err.authCode, 'token_expired')
      assert.equal(err.status, 401)
    })

    it('answers missing, malformed, invalid and expired tokens over HTTP with the status, code and challenge of the result', async () => {
      const missing = await get(url('api'))
      assert.equal(missing.status, 401)
      assert.equal(missing.json.code, 'missing_authorization')
      assert.equal(missing.headers['www-authenticate'], 'Bearer')
      assert.equal(missing.headers['content-type'], 'application/json; charset=utf-8')
      const format = await get(url('api'), { authorization: 'Bearer' })
      assert.equal(format.json.code, 'invalid_authorization_format')
      assert.match(format.headers['www-authenticate'], /^Bearer error="invalid_request"/)
      const forged = await get(url('api'), bearer({ sub: 'u1' }, 'another-secret-0123456789abcdef!!'))
      assert.deepEqual([forged.status, forged.json.code], [401, 'invalid_signature'])
      const expired = await get(url('api'), bearer({ sub: 'u1', exp: NOW - 120 }))
      assert.deepEqual([expired.status, expired.json.code], [401, 'token_expired'])
    })

    it('answers an empty bucket with 429 and Retry-After', async () => {
      await assertEmptyBucket(url('api'), bearer({ sub: 'busy' }))
      const verifyRequest = createVerifier(CONFIG, { engine, rateLimitHeaders: false })
      const burst = request(bearer({ sub: 'busy' }))
      for (let i = 0; i < 3; i++) assert.equal((await verifyRequest(burst)).ok, true)
      const d = await verifyRequest(burst)
      assert.ok(d.toError() instanceof TooManyRequestsError)
      assert.ok(Number(new Headers(d.headers).get('retry-after')) > 990)
      assert.equal(new Headers(d.headers).get('ratelimit-remaining'), null)
    })

    it('skips paths and predicates, which receive the Request: ok, action skip, nothing to set', async () => {
      seenBy.length = 0
      for (const path of ['/health', '/public/a.css', '/x?open=1']) {
        const r = await get(url('skip', path))
        assert.equal(r.status, 200, path)
        assert.equal(r.headers['x-request-id'], undefined)
      }
      assert.equal((await get(url('skip', '/x?open=0'))).status, 401)
      assert.deepEqual(seenBy, [true, true])
      const verifyRequest = createVerifier(CONFIG, { engine, skip: '/health' })
      assert.deepEqual(await verifyRequest(request({}, '/health?x=1#top')), {
        ok: true,
        action: 'skip',
        requestId: undefined,
        headers: [],
        user: undefined,
        tenantId: undefined,
        tenantSource: undefined,
        claims: undefined,
      })
      // A CORS preflight is left to the route's CORS handling.
      const preflight = new Request('http://acme.example.com/x', { method: 'OPTIONS', headers: { 'access-control-request-method': 'GET' } })
      assert.equal((await verifyRequest(preflight)).action, 'skip')
    })

    it('lets anonymous requests through with credentialsRequired: false, but not bad tokens', async () => {
      const anonymous = await get(url('optional'))
      assert.equal(anonymous.status, 200)
      assert.deepEqual([anonymous.json.user, anonymous.json.tenantId, anonymous.json.claims], [null, null, null])
      assert.equal(anonymous.json.requestId, anonymous.headers['x-request-id'])
      assert.equal((await get(url('optional'), bearer({ sub: 'u', exp: NOW - 120 }))).json.code, 'token_expired')
    })

    it('reads the token with getToken(request) and from a cookie', async () => {
      const r = await get(url('query', `/x?token=${jwt({ sub: 'q1' })}`))
      assert.equal(r.status, 200, r.body)
      assert.equal(r.json.user.userId, 'q1')
      const verifyRequest = createVerifier(CONFIG, { engine, cookie: 'session' })
      const d = await verifyRequest(request({ cookie: `session=${jwt({ sub: 'c1' })}` }))
      assert.equal(d.user.userId, 'c1')
    })

    it('refuses what is not a Request, and the options that only a framework adapter has', async () => {
      const verifyRequest = createVerifier(CONFIG, { engine })
      for (const bad of [undefined, null, 'http://x/', { url: 'http://x/' }]) {
        await assert.rejects(verifyRequest(bad), { name: 'TypeError' })
      }
      assert.throws(() => createVerifier(CONFIG, { onError() {} }), { name: 'TypeError', message: /onError/ })
      assert.throws(() => createVerifier(CONFIG, { errors: 'next' }), { name: 'TypeError', message: "options.errors must be 'respond'" })
      assert.throws(() => createVerifier(CONFIG, { key: 'auth' }), { name: 'TypeError', message: /key/ })
    })

    describe('callbacks fail closed: verifyRequest rejects with a real Error', () => {
      const VALID = bearer({ sub: 'fenced' })
      for (const [label, options] of FAILING_CALLBACKS) {
        it(`refuses the request when ${label}`, async () => {
          const errors = []
          let reached = false
          const verifyRequest = createVerifier(CONFIG, { engine, callbackTimeoutMs: CALLBACK_TIMEOUT_MS, ...options })
          const s = await fetchServer(async (req) => {
            const auth = await verifyRequest(req)
            reached = true
            return auth.ok ? new Response('through') : auth.response
          }, { errors })
          await assertFenceRefused(s, VALID, errors)
          assert.equal(reached, false)
        })
      }

      it('refuses a token isRevoked calls revoked (401 token_revoked); the Request is its first argument', async () => {
        const args = []
        const verifyRequest = createVerifier(CONFIG, {
          engine,
          isRevoked: (req, claims) => {
            args.push(req instanceof Request)
            return claims.sub === 'gone'
          },
        })
        const d = await verifyRequest(request(bearer({ sub: 'gone' })))
        assert.deepEqual([d.status, d.code], [401, 'token_revoked'])
        assert.equal((await verifyRequest(request(bearer({ sub: 'kept' })))).ok, true)
        assert.deepEqual(args, [true, true])
      })
    })
  })
}

it('the ESM entry exports the CommonJS exports by name, the module as default', async () => {
  const esm = await import('../../adapters/fetch.mjs')
  const cjs = require('../../adapters/fetch')
  assert.equal(esm.default, cjs)
  for (const name of Object.keys(cjs)) assert.equal(esm[name], cjs[name], name)
})

it('the Fetch example of docs/middleware.md runs as written', async () => {
  const { docsExample } = require('../support/adapter-servers')
  const entry = require('node:url').pathToFileURL(require.resolve('../../adapters/fetch.mjs')).href
  const secret = 'docs-example-secret-0123456789abcdef'
  const example = docsExample('Fetch-API request handlers')
    .replace("'auth-shield/fetch'", JSON.stringify(entry))
    .replace('process.env.JWT_SECRET', JSON.stringify(secret))
    // The example is TypeScript (docs/middleware.md, compiled by __test__/package/doc-snippets.test.js): its one annotation off.
    .replace('(request: Request): Promise<Response>', '(request)')
  const { GET } = await import(`data:text/javascript,${encodeURIComponent(example)}`)
  const s = await fetchServer(GET)
  try {
    const refused = await get(`${s.base}/me`)
    assert.deepEqual([refused.status, refused.json.code], [401, 'missing_authorization'])
    const r = await get(`${s.base}/me`, { authorization: `Bearer ${token({ sub: 'd1', scope: 'read', exp: NOW + 60 }, secret)}` })
    assert.equal(r.status, 200)
    assert.deepEqual(r.json, { user: { userId: 'd1' }, scope: 'read' })
    assert.match(r.headers['x-request-id'], /^[0-9a-f-]{36}$/)
  } finally {
    await s.close()
  }
})

for (const engine of ['native', 'js']) {
  it(`runs both engines in shadow mode and counts requests (${engine} engine)`, async () => {
    const mismatches = []
    const verifyRequest = createVerifier(CONFIG, { engine, shadow: true, onMismatch: (m) => mismatches.push(m) })
    assert.equal((await verifyRequest(request(bearer({ sub: 'shadowed' })))).ok, true)
    assert.equal((await verifyRequest(request())).code, 'missing_authorization')
    const stats = verifyRequest.stats()
    assert.equal(stats.requests, 2)
    assert.equal(stats.shadowEngine, engine === 'native' ? 'js' : 'native')
    assert.deepEqual(mismatches, [])
  })
}
