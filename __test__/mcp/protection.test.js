'use strict'

// auth-shield/mcp without an authorization server: the options it reads (and refuses), and the
// fail-closed edges of per-tool scopes: a body Express never parsed, a batch, a body too large
// to read, a body that is not JSON; both engines, Express and Fetch. Tokens are HS256 with the
// config's own secret (the key source is not what these tests are about).

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const { mcpAuth, createMcpVerifier } = require('../../adapters/mcp')
const { token, SECRET } = require('../support/tokens')
const { listen } = require('../support/http')

const RESOURCE = 'https://mcp.example.com/mcp'
const METADATA_URL = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp'
const AS = 'https://login.example.com/'
const BASE = { resource: RESOURCE, authorizationServers: [AS], config: { accessSecret: SECRET }, scopes: ['mcp:tools'], toolScopes: { reset_index: ['mcp:admin'], drop: 'mcp:admin' } }

const now = () => Math.floor(Date.now() / 1000)
const tokenFor = (scope, aud = RESOURCE) => token({ sub: 'alice', client_id: 'host-1', aud, scope, exp: now() + 300, iat: now(), type: 'access' }, SECRET)
const call = (name, id = 1) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } })
const STEP_UP = `Bearer error="insufficient_scope", error_description="Token lacks a required scope", scope="mcp:tools mcp:admin", resource_metadata="${METADATA_URL}"`

describe('auth-shield/mcp options', () => {
  it('refuses what it cannot honour with a TypeError naming the option', () => {
    const cases = [
      [undefined, /takes an options object/],
      [{ ...BASE, resource: undefined }, /options.resource must be the MCP server's canonical URL/],
      [{ ...BASE, resource: 'http://mcp.example.com/mcp' }, /https URL/],
      [{ ...BASE, resource: 'https://mcp.example.com/mcp#x' }, /no fragment/],
      [{ ...BASE, colour: 'red' }, /options.colour is not a known option/],
      [{ ...BASE, config: { accessSecret: SECRET, audience: 'x' } }, /the audience is options.resource/],
      [{ ...BASE, config: { accessSecret: SECRET, requiredScope: 'x' } }, /give the scopes as options.scopes/],
      [{ ...BASE, options: { resourceMetadata: 'https://x.example/' } }, /options.options.resourceMetadata is set by auth-shield\/mcp/],
      [{ ...BASE, options: { jwks: {} } }, /give the key source as options.jwks or options.issuers/],
      [{ ...BASE, scopes: ['has space'] }, /scope-tokens/],
      [{ ...BASE, toolScopes: { a: [] } }, /needs at least one scope/],
      [{ ...BASE, toolScopes: { a: ['"quoted"'] } }, /scope-tokens/],
      [{ ...BASE, authorizationServers: undefined }, /options.authorizationServers: name the authorization servers/],
      [{ ...BASE, issuers: [AS], jwks: {} }, /two key sources/],
      [{ ...BASE, issuers: [] }, /non-empty array/],
    ]
    for (const factory of [mcpAuth, createMcpVerifier]) {
      for (const [options, message] of cases) assert.throws(() => factory(options), (err) => err instanceof TypeError && message.test(err.message), `${factory.name}: ${JSON.stringify(options)}`)
    }
  })

  it('the metadata document names the server, its authorization servers and every scope it uses', () => {
    const mcp = mcpAuth(BASE)
    assert.equal(mcp.metadata.url, METADATA_URL)
    assert.equal(mcp.metadata.path, '/.well-known/oauth-protected-resource/mcp')
    assert.deepEqual(mcp.metadata.document, { resource: RESOURCE, authorization_servers: [AS], scopes_supported: ['mcp:tools', 'mcp:admin'], bearer_methods_supported: ['header'] })
    // The authorization servers default to the issuers of whichever key source is given.
    const { authorizationServers, config, ...rest } = BASE
    const inline = createMcpVerifier({ ...rest, config: { issuers: [{ issuer: AS, keys: [{ kid: 'k', alg: 'HS256', secret: SECRET }] }] } })
    assert.deepEqual(inline.metadata.document.authorization_servers, [AS])
    assert.deepEqual(createMcpVerifier({ ...rest, config: { accessSecret: SECRET, issuer: AS } }).metadata.document.authorization_servers, [AS])
    const few = createMcpVerifier({ ...BASE, scopesSupported: ['mcp:tools'] })
    assert.deepEqual(few.metadata.document.scopes_supported, ['mcp:tools'])
    assert.equal(createMcpVerifier({ ...BASE, scopes: undefined, toolScopes: undefined }).metadata.document.scopes_supported, undefined)
  })
})

/** An Express app: the protection, then a handler answering req.auth (the SDK's AuthInfo). */
async function expressServer(engine, { parse = true } = {}) {
  const mcp = mcpAuth({ ...BASE, options: { engine } })
  const app = express()
  app.use(mcp.metadataRouter)
  const chain = parse ? [express.json({ limit: '8mb' }), mcp] : [mcp]
  app.post('/mcp', ...chain, (req, res) => res.json({ scopes: req.auth.scopes, clientId: req.auth.clientId, resource: req.auth.resource.href, sub: req.auth.extra.sub, claims: [req.auth.extra.claims.sub, req.tokenClaims.aud] }))
  // What reaches Express's error handler: the code, never a pass.
  app.use((err, req, res, next) => res.status(err.status || 500).json({ code: err.code }))
  return listen(http.createServer(app))
}

/** A Fetch handler behind node:http: the protection, then the AuthInfo and the parsed body. */
async function fetchServer(engine) {
  const verify = createMcpVerifier({ ...BASE, options: { engine } })
  const server = http.createServer(async (req, res) => {
    const chunks = []
    for await (const c of req) chunks.push(c)
    const body = Buffer.concat(chunks)
    const headers = new Headers()
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1])
    const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body: req.method === 'POST' ? body : undefined })
    const auth = await verify(request)
    const response = auth.ok
      ? Response.json({ scopes: auth.authInfo.scopes, clientId: auth.authInfo.clientId, resource: auth.authInfo.resource.href, sub: auth.authInfo.extra.sub, claims: [auth.authInfo.extra.claims.sub, auth.authInfo.extra.claims.aud], parsed: auth.body !== undefined, stillReadable: (await request.text()).length === body.length })
      : auth.response
    res.statusCode = response.status
    for (const [name, value] of response.headers) res.setHeader(name, value)
    res.end(Buffer.from(await response.arrayBuffer()))
  })
  return listen(server)
}

async function post(base, bearer, body, headers = {}) {
  const res = await fetch(`${base}/mcp`, { method: 'POST', headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })
  const text = await res.text()
  let json
  try {
    json = JSON.parse(text)
  } catch {}
  return { status: res.status, json, challenge: res.headers.get('www-authenticate') }
}

describe('auth-shield/mcp per-tool scopes, fail closed', () => {
  const servers = { express: expressServer, fetch: fetchServer }
  for (const kind of Object.keys(servers)) {
    for (const engine of ['native', 'js']) {
      it(`${kind}, ${engine}: a tool's scope is required of its call, alone or in a batch; other calls need the server's scopes only`, async () => {
        const server = await servers[kind](engine)
        try {
          const basic = tokenFor('mcp:tools')
          const admin = tokenFor('mcp:tools mcp:admin')
          const ok = await post(server.base, basic, call('whoami'))
          assert.equal(ok.status, 200)
          assert.equal(ok.json.sub, 'alice')
          assert.equal(ok.json.clientId, 'host-1')
          assert.deepEqual(ok.json.scopes, ['mcp:tools'])
          assert.equal(ok.json.resource, RESOURCE)
          assert.deepEqual(ok.json.claims, ['alice', RESOURCE])
          if (kind === 'fetch') assert.deepEqual([ok.json.parsed, ok.json.stillReadable], [true, true])
          for (const body of [call('reset_index'), call('drop'), [call('whoami'), call('reset_index', 2)], [{ jsonrpc: '2.0', method: 'notifications/initialized' }, call('drop', 3)]]) {
            const refused = await post(server.base, basic, body)
            assert.equal(refused.status, 403, JSON.stringify(body))
            assert.deepEqual(refused.json, { error: 'Token lacks a required scope', code: 'insufficient_scope' })
            assert.equal(refused.challenge, STEP_UP)
            assert.equal((await post(server.base, admin, body)).status, 200)
          }
          // Not a tool call, or not JSON-RPC at all: no tool runs from it, the server's scopes suffice.
          // (A bare `null` body: express.json()'s strict parser answers 400 before us.)
          for (const body of [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 42 } }, [], ...(kind === 'fetch' ? ['null'] : [])]) {
            assert.equal((await post(server.base, basic, body)).status, 200, JSON.stringify(body))
          }
          // The server's scope is still every request's: 403 naming it.
          const none = await post(server.base, tokenFor('mcp:admin'), call('whoami'))
          assert.equal(none.status, 403)
          assert.equal(none.challenge, `Bearer error="insufficient_scope", error_description="Token lacks a required scope", scope="mcp:tools", resource_metadata="${METADATA_URL}"`)
          // Another audience: 401 before any body is looked at.
          const other = await post(server.base, tokenFor('mcp:tools mcp:admin', 'https://other.example/mcp'), call('reset_index'))
          assert.equal(other.status, 401)
          assert.equal(other.json.code, 'invalid_audience')
          assert.equal(other.challenge, `Bearer error="invalid_token", error_description="Invalid token audience", scope="mcp:tools", resource_metadata="${METADATA_URL}"`)
          const bare = await fetch(`${server.base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call('whoami')) })
          assert.equal(bare.status, 401)
          assert.equal(bare.headers.get('www-authenticate'), `Bearer scope="mcp:tools", resource_metadata="${METADATA_URL}"`)
        } finally {
          await server.close()
        }
      })
    }
  }

  for (const engine of ['native', 'js']) {
    it(`express, ${engine}: toolScopes without express.json() is an error (500), a body that is not JSON 415, never a pass`, async () => {
      for (const parse of [false, true]) {
        const server = await expressServer(engine, { parse })
        try {
          if (!parse) {
            const r = await post(server.base, tokenFor('mcp:tools'), call('reset_index'))
            assert.equal(r.status, 500)
            assert.deepEqual(r.json, { code: 'ERR_AUTH_SHIELD_MCP_BODY' })
          }
          // A media type express.json() does not read: the body is unknown, so is its tool.
          for (const type of ['text/plain', 'application/vnd.mcp+json', 'application/x-www-form-urlencoded']) {
            const r = await post(server.base, tokenFor('mcp:tools'), call('reset_index'), { 'content-type': type })
            assert.equal(r.status, 415, type)
            assert.deepEqual(r.json, { code: 'ERR_AUTH_SHIELD_MCP_BODY' })
          }
        } finally {
          await server.close()
        }
      }
    })

    it(`fetch, ${engine}: a body too large to read for its tool is refused 413; a body that is not JSON runs no tool and passes`, async () => {
      const server = await fetchServer(engine)
      try {
        const big = JSON.stringify({ ...call('reset_index'), pad: 'x'.repeat(4 * 1024 * 1024) })
        const r = await post(server.base, tokenFor('mcp:tools'), big)
        assert.equal(r.status, 413)
        assert.equal(r.json.code, 'payload_too_large')
        const notJson = await post(server.base, tokenFor('mcp:tools'), '{"method":"tools/call"')
        assert.equal(notJson.status, 200)
        assert.equal(notJson.json.parsed, false)
      } finally {
        await server.close()
      }
    })
  }
})

describe('auth-shield/mcp behind another auth-shield middleware', () => {
  for (const engine of ['native', 'js']) {
    it(`express, ${engine}: a pass the other middleware left is never taken as this server's (a path its skip rules skip gets no AuthInfo)`, async () => {
      const authShield = require('../../adapters/express')
      // The first middleware checks no audience; the MCP protection skips the path.
      const first = authShield({ accessSecret: SECRET }, { engine, requestProperty: 'firstClaims' })
      const mcp = mcpAuth({ ...BASE, options: { engine, skip: ['/mcp'] } })
      const app = express()
      app.post('/mcp', express.json(), first, mcp, (req, res) => res.json({ auth: req.auth === undefined ? null : req.auth.resource.href }))
      const server = await listen(http.createServer(app))
      try {
        const r = await post(server.base, tokenFor('mcp:tools mcp:admin', 'https://other.example/mcp'), call('reset_index'))
        assert.equal(r.status, 200)
        assert.deepEqual(r.json, { auth: null })
      } finally {
        await server.close()
      }
    })
  }
})

describe('what auth-shield/mcp loads', () => {
  const { runAndListJsFiles, assertEngineNotLoaded } = require('../support/js-engine-loaded')
  const { spawnSync } = require('node:child_process')
  const entry = JSON.stringify(require.resolve('../../adapters/mcp'))
  const options = JSON.stringify(BASE)

  it('on the native engine, mcpAuth and createMcpVerifier never load the JS engine', () => {
    const { value, loaded } = runAndListJsFiles(`
      const { mcpAuth, createMcpVerifier } = require(${entry})
      report([mcpAuth(${options}).authenticate.engine, createMcpVerifier(${options}).verifyRequest.engine])`)
    assert.deepEqual(value, ['native', 'native'])
    assertEngineNotLoaded(loaded)
  })

  it('mcpAuth and createMcpVerifier never load the MCP SDK; createTokenVerifier loads its error classes only', () => {
    const script = `
      const sdk = () => Object.keys(require.cache).filter((f) => f.includes('@modelcontextprotocol')).map((f) => f.slice(f.indexOf('@modelcontextprotocol')))
      const { mcpAuth, createMcpVerifier, createTokenVerifier } = require(${entry})
      mcpAuth(${options}); createMcpVerifier(${options})
      const before = sdk()
      createTokenVerifier({ ...${options}, toolScopes: undefined })
      console.log(JSON.stringify({ before, after: sdk() }))`
    const child = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' })
    assert.equal(child.status, 0, child.stderr)
    const { before, after } = JSON.parse(child.stdout)
    assert.deepEqual(before, [])
    assert.deepEqual(after, ['@modelcontextprotocol/sdk/dist/cjs/server/auth/errors.js'])
  })
})
