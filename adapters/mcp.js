'use strict'

// `require('auth-shield/mcp')`: an MCP server (the `@modelcontextprotocol/sdk` Streamable HTTP
// transport) protected as the MCP authorization specification asks, with the ordinary
// resource-server pieces: the RFC 9728 document at its well-known URL, 401 challenges naming
// it (`resource_metadata`), the audience bound to the server's canonical URL (RFC 8707), 403
// insufficient_scope with `scope="…"` for a tool that needs more (step-up). Nothing here is
// MCP-only but reading which tool a JSON-RPC body calls: the Express and Fetch adapters
// authenticate, the route requirements refuse, and the MCP SDK's `AuthInfo` is built from
// what they verified. The SDK is never loaded by this module (createTokenVerifier loads its
// error classes when it is made: they are the app's).
//
//   const { mcpAuth } = require('auth-shield/mcp')
//   const mcp = mcpAuth({ resource: 'https://mcp.example.com/mcp', issuers: ['https://login.example.com/'], scopes: ['mcp:tools'] })
//   app.use(mcp.metadataRouter)
//   app.post('/mcp', express.json(), mcp, (req, res) => transport.handleRequest(req, res, req.body))

const authShield = require('./express')
const { createVerifier, protectedResourceMetadata: fetchMetadata, requireScopes: fetchRequireScopes } = require('./fetch')
const { ROUTE_PASS } = require('../lib/http/route-requirements')
const { readMcpOptions } = require('../lib/mcp/options')
const { authInfoOf } = require('../lib/mcp/auth-info')
const { toolRequirements } = require('../lib/mcp/tool-calls')
const { readJsonBody, TOO_LARGE } = require('../lib/mcp/request-body')
const { requireSdkErrors, sdkErrorOf } = require('../lib/mcp/sdk-errors')
const { typeError } = require('../base/error')

/** Builds with `read` (readMcpOptions' answer), closing the registry it made if that fails. */
function built(read, build) {
  try {
    return build()
  } catch (err) {
    if (read.owned !== null) read.owned.close()
    throw err
  }
}

function closerOf(read) {
  return function close() {
    if (read.owned !== null) read.owned.close()
  }
}

/**
 * Express (4 and 5) middleware protecting an MCP endpoint. Mount `express.json()` before it
 * when `toolScopes` are given (the tool a request calls is in its body): a POST body no parser
 * read is an `ERR_AUTH_SHIELD_MCP_BODY` error (500; 415 for a body that is not JSON), never a
 * pass. On success `req.auth` is the MCP SDK's `AuthInfo` (its transports hand it to tool
 * handlers as `extra.authInfo`).
 * Properties: `metadata` (protectedResourceMetadata's answer), `metadataRouter` (middleware
 * serving it at its well-known path), `authenticate` (the auth-shield middleware inside, with
 * `engine`, `authenticator`, `stats`), `issuers` (the registry made from `issuers`: its
 * `on('error')`, `ready()`, `status()`, `metrics()`; null with another key source) and `close()` (stops it).
 */
function mcpAuth(options) {
  const read = readMcpOptions(options)
  return built(read, () => {
    const metadata = authShield.protectedResourceMetadata(read.metadataOptions)
    // requestProperty: the verified payload is req.tokenClaims; req.auth is the SDK's AuthInfo.
    const authenticate = authShield(read.config, { ...read.options, requestProperty: 'tokenClaims', resourceMetadata: metadata })
    const { decision } = authenticate
    const requirements = new Map([...read.toolScopes].map(([tool, scopes]) => [tool, authShield.requireScopes(scopes)]))
    const { resource } = read

    function mcpAuthMiddleware(req, res, next) {
      authenticate(req, res, (err) => {
        if (err !== undefined) return next(err)
        const pass = req[ROUTE_PASS]
        // A path the options' skip rules skip: nothing was checked, nothing is set (a pass another
        // auth-shield middleware left on the request is not this server's).
        if (pass === undefined || pass.decision !== decision) return next()
        if (requirements.size > 0 && req.method === 'POST' && req.body === undefined) {
          return next(bodyNotRead(req.headers['content-type']))
        }
        const needed = toolRequirements(req.body, requirements)
        let i = 0
        const step = (err) => {
          if (err !== undefined) return next(err)
          if (i < needed.length) return needed[i++](req, res, step)
          // An anonymous pass (credentialsRequired: false) carries no token: no AuthInfo.
          if (pass.authorization !== undefined) req.auth = authInfoOf(pass, resource)
          next()
        }
        step()
      })
    }

    function metadataRouter(req, res, next) {
      if ((req.method === 'GET' || req.method === 'HEAD') && pathOnly(req.originalUrl || req.url) === metadataPath) return metadata.handler(req, res)
      next()
    }
    const metadataPath = pathOnly(metadata.path)

    mcpAuthMiddleware.metadata = metadata
    mcpAuthMiddleware.metadataRouter = metadataRouter
    mcpAuthMiddleware.authenticate = authenticate
    mcpAuthMiddleware.issuers = read.owned
    mcpAuthMiddleware.close = closerOf(read)
    return mcpAuthMiddleware
  })
}

function pathOnly(url) {
  const q = url.indexOf('?')
  return q < 0 ? url : url.slice(0, q)
}

/**
 * A POST whose body no parser read: which tool it calls cannot be known, so it is never let
 * through. A JSON body means express.json() is not mounted before mcpAuth (the app's wiring:
 * 500); any other media type is not a JSON-RPC body the MCP transport takes (415, as the SDK's
 * transport answers it).
 */
function bodyNotRead(contentType) {
  const json = mediaType(contentType) === 'application/json'
  const err = new Error(
    json ? 'auth-shield/mcp: toolScopes are read from the JSON-RPC body: mount express.json() before mcpAuth' : 'auth-shield/mcp: an MCP request body must be application/json',
  )
  err.code = 'ERR_AUTH_SHIELD_MCP_BODY'
  err.status = err.statusCode = json ? 500 : 415
  // A 4xx is the client's: Express's error handler may show its message.
  err.expose = !json
  return err
}

/** The media type of a Content-Type value, lowercased, parameters dropped ('' when absent). */
function mediaType(value) {
  if (typeof value !== 'string') return ''
  const semi = value.indexOf(';')
  return (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase()
}

/**
 * The same protection for a Fetch-API handler (the SDK's WebStandardStreamableHTTPServerTransport,
 * Hono, workers). `verify(request)` resolves to a refusal (`ok: false`, `response` to answer
 * with, as the Fetch adapter's) or `{ ok: true, authInfo, body, headers, requestId }`: hand
 * `authInfo` and `body` (the parsed JSON-RPC body when toolScopes made it read; undefined
 * otherwise) to `transport.handleRequest(request, { authInfo, parsedBody: body })`. The body is
 * read from a clone: the request stays readable. Properties: `metadata` (with its `handler`
 * answering the document), `verifyRequest` (the Fetch verifier inside), `issuers`, `close()`.
 */
function createMcpVerifier(options) {
  const read = readMcpOptions(options)
  return built(read, () => {
    const metadata = fetchMetadata(read.metadataOptions)
    const verifyRequest = createVerifier(read.config, { ...read.options, resourceMetadata: metadata })
    const requirements = new Map([...read.toolScopes].map(([tool, scopes]) => [tool, fetchRequireScopes(scopes)]))
    const { resource } = read

    async function verify(request) {
      const auth = await verifyRequest(request)
      if (!auth.ok || auth.action === 'skip') return auth
      let body
      if (requirements.size > 0 && request.method === 'POST') {
        body = await readJsonBody(request)
        if (body === TOO_LARGE) return tooLarge()
        for (const requirement of toolRequirements(body, requirements)) {
          const checked = requirement(auth)
          if (!checked.ok) return checked
        }
      }
      const pass = auth[ROUTE_PASS]
      return {
        ok: true,
        action: 'pass',
        authInfo: pass.authorization === undefined ? undefined : authInfoOf(pass, resource),
        body,
        headers: auth.headers,
        requestId: auth.requestId,
      }
    }

    verify.metadata = metadata
    verify.verifyRequest = verifyRequest
    verify.issuers = read.owned
    verify.close = closerOf(read)
    return verify
  })
}

function tooLarge() {
  const body = JSON.stringify({ error: 'Request body too large to read the tool it calls', code: 'payload_too_large' })
  return { ok: false, action: 'fail', status: 413, code: 'payload_too_large', response: new Response(body, { status: 413, headers: { 'content-type': 'application/json; charset=utf-8' } }) }
}

/**
 * An `OAuthTokenVerifier` for the MCP SDK's own `requireBearerAuth({ verifier })`: the SDK
 * writes the challenges and checks its `requiredScopes` and `expectedResource`; auth-shield
 * verifies the token (signature, issuer, audience = `resource`, expiry, revocation, rate
 * limit…) and answers the SDK's `AuthInfo`, or throws the SDK's error of the refusal.
 * `toolScopes` is not an option here (requireBearerAuth has no per-tool scopes: use mcpAuth).
 * `sdkErrors` (internal) is the SDK's errors module the ESM entry imported.
 */
function createTokenVerifier(options, sdkErrors) {
  if (options !== null && typeof options === 'object' && options.toolScopes !== undefined) {
    throw typeError('options.toolScopes is not an option of createTokenVerifier (the SDK\'s requireBearerAuth has none): use mcpAuth for per-tool scopes')
  }
  const errors = sdkErrors === undefined ? requireSdkErrors() : sdkErrors
  const read = readMcpOptions(options)
  return built(read, () => {
    const verifyRequest = createVerifier(read.config, read.options)
    const { resource } = read
    return {
      async verifyAccessToken(token) {
        const loaded = typeof errors.then === 'function' ? await errors : errors
        if (typeof token !== 'string' || token === '') throw new loaded.InvalidTokenError('Missing access token')
        const auth = await verifyRequest(new Request(resource, { headers: { authorization: `Bearer ${token}` } }))
        if (!auth.ok) throw sdkErrorOf(loaded, auth)
        const pass = auth[ROUTE_PASS]
        if (pass === undefined || pass.authorization === undefined) throw new loaded.InvalidTokenError('Missing access token')
        return authInfoOf(pass, resource)
      },
      verifyRequest,
      issuers: read.owned,
      close: closerOf(read),
    }
  })
}

module.exports = { mcpAuth, createMcpVerifier, createTokenVerifier }
