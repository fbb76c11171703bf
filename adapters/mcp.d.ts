// Types of `auth-shield/mcp` (hand-written). The MCP SDK is the app's dependency, never
// auth-shield's: `McpAuthInfo` and `McpTokenVerifier` are written out here and match the SDK's
// `AuthInfo` and `OAuthTokenVerifier` structurally, so they are accepted where the SDK asks for
// them without these types importing it.

import type { IncomingMessage, ServerResponse } from 'node:http'
import type * as middleware from '../lib/http/middleware'
import type { AuthConfigOptions } from '../index'
import type { RemoteJwks, TrustedIssuers, TrustedIssuerOptions } from '../lib/jwks/index'
import type fetchEntry = require('./fetch')

declare namespace mcp {
  /** The options of mcpAuth, createMcpVerifier and createTokenVerifier; any other name is a TypeError. */
  export interface McpAuthOptions {
    /**
     * The MCP server's canonical URL (RFC 8707 §2; MCP's "canonical server URI"), e.g.
     * `https://mcp.example.com/mcp`: the RFC 9728 document's `resource`, and the audience every
     * token must name in `aud`. https (http only on a loopback host), no fragment.
     */
    resource: string
    /** Trusted issuers by identifier (discovery; auth-shield/jwks's createTrustedIssuers, made and closed here). */
    issuers?: readonly (string | TrustedIssuerOptions)[] | undefined
    /** A key source of your own (createRemoteJwks or createTrustedIssuers); not with `issuers`. */
    jwks?: RemoteJwks | TrustedIssuers | undefined
    /** The issuer of a `jwks` key set (the `iss` tokens must carry); default authorization server. */
    issuer?: string | undefined
    /** The scopes every request needs (the config's `requiredScope`): 403 insufficient_scope naming them. */
    scopes?: string | readonly string[] | undefined
    /**
     * Per tool, the scopes a `tools/call` of it needs besides `scopes` (not with
     * createTokenVerifier): 403 insufficient_scope with `scope` naming `scopes` and the tool's,
     * which the MCP client asks for in a new authorization (step-up).
     */
    toolScopes?: Readonly<Record<string, string | readonly string[]>> | undefined
    /** The RFC 9728 document's `scopes_supported` (what a client asks for when the 401 names no scope). Default: `scopes`, then every tool's. */
    scopesSupported?: string[] | undefined
    /** The RFC 9728 document's `authorization_servers`. Default: the key source's issuers (`issuers`, `issuer`, a `jwks` registry's, `config.issuer`, `config.issuers`). */
    authorizationServers?: string[] | undefined
    /** The RFC 9728 document's `resource_name`. */
    resourceName?: string | undefined
    /** The RFC 9728 document's `resource_documentation` (an https URL). */
    resourceDocumentation?: string | undefined
    /** More Authenticator config (clock tolerance, the RFC 9068 profile, keys of your own…); not `audience` or `requiredScope`. */
    config?: Omit<AuthConfigOptions, 'audience' | 'requiredScope'> & Record<string, unknown> | undefined
    /** More middleware options (engine, realm, metrics, tracing, rate-limit headers…); not `jwks`, `resourceMetadata` or `requestProperty`. */
    options?: Omit<middleware.CommonOptions<unknown>, 'jwks' | 'resourceMetadata'> & Record<string, unknown> | undefined
  }

  /** The MCP SDK's `AuthInfo` (its transports hand it to tool handlers as `extra.authInfo`). */
  export interface McpAuthInfo {
    /** The access token. */
    token: string
    /** `client_id` (RFC 9068), else `azp`, else ''. */
    clientId: string
    /** The scopes the token grants (`scope`, `scp`, `permissions`). */
    scopes: string[]
    /** `exp`, seconds since the epoch (absent when the token has none: only with requireExpiration: false). */
    expiresAt?: number
    /** The canonical URL the token's audience was checked against. */
    resource?: URL
    /** `sub`, `iss`, `tenantId` and `claims` (the verified payload). */
    extra?: { sub?: string | undefined; iss?: unknown; tenantId?: string | undefined; claims?: middleware.JwtClaims | undefined } & Record<string, unknown>
  }

  /**
   * The auth-shield Express middleware inside mcpAuth. Typed here, not as auth-shield/express's:
   * that module declares Express's `req.auth` as the verified payload, and the MCP SDK's types
   * declare it as their AuthInfo (what mcpAuth sets); one program cannot hold both.
   */
  export interface McpAuthenticate {
    (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void
    readonly engine: middleware.EngineName
    readonly authenticator: middleware.AnyAuthenticator
    stats(): middleware.AuthShieldStats
  }

  /** Express middleware protecting an MCP endpoint: on success `req.auth` is the SDK's AuthInfo. */
  export interface McpAuthMiddleware {
    (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void
    /** The RFC 9728 document, its URL, path and an Express route handler. */
    readonly metadata: middleware.ProtectedResourceMetadata<(req: IncomingMessage, res: ServerResponse) => void>
    /** Middleware serving the document at its well-known path (GET, HEAD); `next()` elsewhere. */
    readonly metadataRouter: (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void
    /** The auth-shield Express middleware inside (its verified payload is `req.tokenClaims`). */
    readonly authenticate: McpAuthenticate
    /** The trusted-issuers registry made from `issuers` (`on('error')`, `ready()`, `status()`, `metrics()`); null with another key source. */
    readonly issuers: TrustedIssuers | null
    /** Stops the trusted-issuers registry made from `issuers` (nothing else). */
    close(): void
  }

  /** A request createMcpVerifier admitted. */
  export interface McpVerified {
    ok: true
    action: 'pass'
    /** The SDK's AuthInfo; undefined on an anonymous pass (credentialsRequired: false). */
    authInfo: McpAuthInfo | undefined
    /** The parsed JSON-RPC body when toolScopes made it read (POST), else undefined: the transport's `parsedBody`. */
    body: unknown
    /** X-Request-Id and rate-limit headers to set on the response. */
    headers: fetchEntry.Verified['headers']
    requestId: string
  }

  /** A body too large to read for the tool it calls (past 4 MiB): answer `response` (413). */
  export interface McpTooLarge {
    ok: false
    action: 'fail'
    status: 413
    code: 'payload_too_large'
    readonly response: Response
  }

  /** The Fetch-API protection: `verify(request)`, and the document with a handler answering it. */
  export interface McpVerifier {
    (request: Request): Promise<McpVerified | fetchEntry.Skipped | fetchEntry.Refused | McpTooLarge>
    readonly metadata: middleware.ProtectedResourceMetadata<(request?: Request) => Response>
    /** The auth-shield Fetch verifier inside. */
    readonly verifyRequest: fetchEntry.VerifyRequest
    readonly issuers: TrustedIssuers | null
    close(): void
  }

  /** The MCP SDK's `OAuthTokenVerifier`, for its `requireBearerAuth({ verifier })`. */
  export interface McpTokenVerifier {
    /** The token's AuthInfo, or the SDK's error of the refusal (InvalidTokenError: 401, InsufficientScopeError: 403, ServerError: 500, InvalidRequestError: 400). */
    verifyAccessToken(token: string): Promise<McpAuthInfo>
    readonly verifyRequest: fetchEntry.VerifyRequest
    readonly issuers: TrustedIssuers | null
    close(): void
  }

  /** Express: protects an MCP endpoint (mount express.json() before it when toolScopes are given). */
  export function mcpAuth(options: McpAuthOptions): McpAuthMiddleware
  /** Fetch API (the SDK's WebStandardStreamableHTTPServerTransport, Hono, workers). */
  export function createMcpVerifier(options: McpAuthOptions): McpVerifier
  /** An OAuthTokenVerifier for the SDK's requireBearerAuth (no toolScopes). Needs @modelcontextprotocol/sdk installed. */
  export function createTokenVerifier(options: Omit<McpAuthOptions, 'toolScopes'>): McpTokenVerifier
}

export = mcp
