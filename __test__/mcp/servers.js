'use strict'

// Test support for the MCP suite: an MCP server (the SDK's McpServer, stateless Streamable HTTP)
// with two tools, protected by auth-shield/mcp, on Express (the SDK's Node transport) and on a
// Fetch-API handler (the SDK's web-standard transport) behind node:http, plain or in a Hono
// app. `whoami` needs the server's scope; `reset_index` needs `mcp:admin` as well (per-tool
// scope, step-up).

const http = require('node:http')
const { Readable } = require('node:stream')
const express = require('express')
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js')
const { StreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/streamableHttp.js')
const { WebStandardStreamableHTTPServerTransport } = require('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js')
const { mcpAuth, createMcpVerifier } = require('../../adapters/mcp')
const { listen } = require('../support/http')

const SCOPES = ['mcp:tools']
const TOOL_SCOPES = { reset_index: ['mcp:admin'] }

/** A fresh MCP server whose tools answer what the SDK handed them as `authInfo`. */
function mcpServer() {
  const server = new McpServer({ name: 'auth-shield-test', version: '1.0.0' })
  const describe = (authInfo) => ({
    content: [{ type: 'text', text: JSON.stringify({ sub: authInfo.extra.sub, clientId: authInfo.clientId, scopes: authInfo.scopes, resource: authInfo.resource.href, expiresAt: authInfo.expiresAt }) }],
  })
  server.registerTool('whoami', { description: 'Who the token says the caller is' }, async (extra) => describe(extra.authInfo))
  server.registerTool('reset_index', { description: 'An admin tool: needs mcp:admin' }, async (extra) => describe(extra.authInfo))
  return server
}

/**
 * Starts an MCP server on loopback at `/mcp`, protected for `issuer` (trusted issuers, by
 * discovery) with the `engine` given; `kind` is 'express', 'fetch' or 'hono'; `introspection`
 * (the trusted issuer's option) makes the issuer's opaque tokens introspected. Resolves to
 * { base, resource, protection, close() }.
 */
async function startMcpServer(kind, { issuer, engine, introspection }) {
  let handler = null
  const server = http.createServer((req, res) => handler(req, res))
  const { base, close } = await listen(server)
  const resource = `${base}/mcp`
  const options = { resource, issuers: [introspection === undefined ? issuer : { issuer, introspection }], scopes: SCOPES, toolScopes: TOOL_SCOPES, resourceName: 'auth-shield test MCP server', options: { engine } }
  let protection
  if (kind === 'express') {
    const mcp = mcpAuth(options)
    const app = express()
    app.use(mcp.metadataRouter)
    app.all('/mcp', express.json(), mcp, async (req, res) => {
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
      const mcpSrv = mcpServer()
      res.on('close', () => {
        transport.close()
        mcpSrv.close()
      })
      await mcpSrv.connect(transport)
      await transport.handleRequest(req, res, req.body)
    })
    handler = app
    protection = mcp
  } else if (kind === 'hono') {
    const { Hono } = require('hono')
    const mcp = createMcpVerifier(options)
    const app = new Hono()
    app.get(mcp.metadata.path, (c) => mcp.metadata.handler(c.req.raw))
    app.all('/mcp', async (c) => {
      const auth = await mcp(c.req.raw)
      if (!auth.ok) return auth.response
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
      const mcpSrv = mcpServer()
      await mcpSrv.connect(transport)
      return transport.handleRequest(c.req.raw, { authInfo: auth.authInfo, parsedBody: auth.body })
    })
    handler = (req, res) => nodeToFetch(req, res, (request) => app.fetch(request), base)
    protection = mcp
  } else {
    const mcp = createMcpVerifier(options)
    const fetchHandler = async (request) => {
      const path = new URL(request.url).pathname
      if (path === mcp.metadata.path) return mcp.metadata.handler(request)
      if (path !== '/mcp') return new Response('not found', { status: 404 })
      const auth = await mcp(request)
      if (!auth.ok) return auth.response
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
      const mcpSrv = mcpServer()
      await mcpSrv.connect(transport)
      return transport.handleRequest(request, { authInfo: auth.authInfo, parsedBody: auth.body })
    }
    handler = (req, res) => nodeToFetch(req, res, fetchHandler, base)
    protection = mcp
  }
  return {
    base,
    resource,
    protection,
    close: async () => {
      protection.close()
      await close()
    },
  }
}

/** node:http → a Fetch-API handler → node:http. */
async function nodeToFetch(req, res, fetchHandler, base) {
  try {
    const headers = new Headers()
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1])
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD'
    const request = new Request(`${base}${req.url}`, { method: req.method, headers, body: hasBody ? Readable.toWeb(req) : undefined, duplex: 'half' })
    const response = await fetchHandler(request)
    res.statusCode = response.status
    for (const [name, value] of response.headers) res.setHeader(name, value)
    res.end(Buffer.from(await response.arrayBuffer()))
  } catch (err) {
    res.statusCode = 500
    res.end(String(err && err.stack))
  }
}

module.exports = { startMcpServer, SCOPES, TOOL_SCOPES }
