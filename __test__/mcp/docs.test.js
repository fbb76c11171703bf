'use strict'

// docs/mcp.md's Express and Fetch examples run as written: each block is taken from the page,
// only the issuer URL replaced by a real oidc-provider's on loopback, and served; its metadata,
// its 401, a tool call with a token for the documented resource and a tool's 403 are checked.
// The introspection example is run in the Express one's place of `mcpAuth({ … })`, against a
// provider issuing opaque tokens for the resource.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const http = require('node:http')
const { startAuthorizationServer } = require('./authorization-server')
const { listen } = require('../support/http')

const DOC = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'mcp.md'), 'utf8')
const RESOURCE = 'https://mcp.example.com/mcp'
const METADATA_URL = 'https://mcp.example.com/.well-known/oauth-protected-resource/mcp'

/** The ```js block under the heading `title`. */
function block(title) {
  const at = DOC.indexOf(`### ${title}`)
  assert.ok(at >= 0, title)
  const m = /```js\n([\s\S]*?)^```$/m.exec(DOC.slice(at))
  return m[1]
}

/** Runs `code` as a module body of this package (`auth-shield/mcp` self-resolves) and returns `names`. */
function run(code, issuer, names) {
  const body = `${code.replaceAll('https://login.example.com/', issuer)}\nreturn { ${names.join(', ')} }`
  return new Function('require', body)(require)
}

async function post(base, token, message) {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(message),
  })
  return { status: res.status, challenge: res.headers.get('www-authenticate'), text: await res.text() }
}

const whoami = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } }
const reset = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'reset_index', arguments: {} } }

describe('docs/mcp.md runs as written', () => {
  let as
  before(async () => {
    as = await startAuthorizationServer({ resources: { [RESOURCE]: ['mcp:tools', 'mcp:admin'] } })
  })
  after(() => as.close())

  async function check(base, metadataPath, server = as) {
    const doc = await (await fetch(`${base}${metadataPath}`)).json()
    assert.deepEqual(doc, { resource: RESOURCE, authorization_servers: [server.issuer], scopes_supported: ['mcp:tools', 'mcp:admin'], bearer_methods_supported: ['header'] })
    const bare = await post(base, undefined, whoami)
    assert.equal(bare.status, 401)
    assert.equal(bare.challenge, `Bearer scope="mcp:tools", resource_metadata="${METADATA_URL}"`)
    const token = await server.clientCredentialsToken(RESOURCE, 'mcp:tools')
    const ok = await post(base, token, whoami)
    assert.equal(ok.status, 200, ok.text)
    assert.match(ok.text, /m2m via m2m/)
    const stepUp = await post(base, token, reset)
    assert.equal(stepUp.status, 403)
    assert.equal(stepUp.challenge, `Bearer error="insufficient_scope", error_description="Token lacks a required scope", scope="mcp:tools mcp:admin", resource_metadata="${METADATA_URL}"`)
  }

  it('Express', async () => {
    const { app, mcp } = run(block('Express'), as.issuer, ['app', 'mcp'])
    const server = await listen(http.createServer(app))
    try {
      assert.equal(mcp.metadata.path, '/.well-known/oauth-protected-resource/mcp')
      await check(server.base, mcp.metadata.path)
    } finally {
      mcp.close()
      await server.close()
    }
  })

  it('Fetch API', async () => {
    const { handle, verify } = run(block('Fetch API (`WebStandardStreamableHTTPServerTransport`)'), as.issuer, ['handle', 'verify'])
    const server = http.createServer(async (req, res) => {
      const chunks = []
      for await (const c of req) chunks.push(c)
      const headers = new Headers()
      for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1])
      const response = await handle(new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body: req.method === 'POST' ? Buffer.concat(chunks) : undefined }))
      res.statusCode = response.status
      for (const [name, value] of response.headers) res.setHeader(name, value)
      res.end(Buffer.from(await response.arrayBuffer()))
    })
    const { base, close } = await listen(server)
    try {
      await check(base, verify.metadata.path)
    } finally {
      verify.close()
      await close()
    }
  })

  it('Opaque tokens (introspection), in the Express example', async () => {
    const opaque = await startAuthorizationServer({ resources: { [RESOURCE]: ['mcp:tools', 'mcp:admin'], 'https://other.example.com/mcp': ['mcp:tools'] }, accessTokenFormat: 'opaque' })
    const express = block('Express')
    const call = /^const mcp = mcpAuth\(\{\n[\s\S]*?^\}\)$/m
    assert.match(express, call)
    const code = express.replace(call, block('Opaque tokens (introspection)').trim())
    process.env.INTROSPECTION_SECRET = opaque.introspection.clientSecret
    const { app, mcp } = run(code, opaque.issuer, ['app', 'mcp'])
    delete process.env.INTROSPECTION_SECRET
    const server = await listen(http.createServer(app))
    try {
      const before = opaque.introspections()
      await check(server.base, mcp.metadata.path, opaque)
      assert.equal(opaque.introspections() - before, 1, 'the opaque token was introspected, once')
      const foreign = await post(server.base, await opaque.clientCredentialsToken('https://other.example.com/mcp', 'mcp:tools'), whoami)
      assert.equal(foreign.status, 401)
      assert.match(foreign.text, /invalid_audience/)
      const unknown = await post(server.base, 'an-opaque-token-nobody-issued', whoami)
      assert.equal(unknown.status, 401)
      assert.match(unknown.text, /token_inactive/)
    } finally {
      mcp.close()
      await server.close()
      await opaque.close()
    }
  })
})
