// auth-shield/mcp as docs/mcp.md shows it: strict, type-checked only (the behaviour is in
// __test__/mcp/). The verifier and the AuthInfo are the SDK's own types, structurally: no cast.
import { randomUUID } from 'node:crypto'
import express from 'express'
import { mcpAuth, createMcpVerifier, createTokenVerifier, type McpAuthInfo } from 'auth-shield/mcp'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js'
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'

const resource = 'https://mcp.example.com/mcp'
const issuers = ['https://login.example.com/']

// Express
const mcp = mcpAuth({ resource, issuers, scopes: ['mcp:tools'], toolScopes: { delete_repo: ['repo:admin'] }, options: { engine: 'js' } })
const app = express()
app.use(mcp.metadataRouter)
app.post('/mcp', express.json(), mcp, async (req, res) => {
  const scopes: string[] = req.auth?.scopes ?? []
  void scopes
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: randomUUID })
  await transport.handleRequest(req, res, req.body)
})
const url: string = mcp.metadata.url
void url

// Fetch
const verify = createMcpVerifier({ resource, issuers, scopes: 'mcp:tools' })
export async function handle(request: Request): Promise<Response> {
  if (new URL(request.url).pathname === verify.metadata.path) return verify.metadata.handler(request)
  const auth = await verify(request)
  if (!auth.ok) return auth.response
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: randomUUID })
  const authInfo: AuthInfo | undefined = auth.action === 'pass' ? auth.authInfo : undefined
  return transport.handleRequest(request, authInfo === undefined ? {} : { authInfo, parsedBody: auth.action === 'pass' ? auth.body : undefined })
}

// The SDK's requireBearerAuth with auth-shield's verifier
const verifier = createTokenVerifier({ resource, issuers })
app.post('/sdk', requireBearerAuth({ verifier, requiredScopes: ['mcp:tools'], resourceMetadataUrl: verify.metadata.url }), (req, res) => {
  // The SDK's types declare req.auth as its AuthInfo; auth-shield's is the same shape.
  const info: McpAuthInfo | undefined = req.auth
  res.json({ scopes: info?.scopes ?? [] })
})

// @ts-expect-error toolScopes is not an option of createTokenVerifier
createTokenVerifier({ resource, issuers, toolScopes: { a: 'b' } })
