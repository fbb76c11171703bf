// Types shared by auth-shield/express and auth-shield/fastify (hand-written).

import type { AuthConfig, AuthFailure, AuthResult, Authenticator as NativeAuthenticator, ErrorCode, TenantSource } from '../../index'
import type { Authenticator as JsAuthenticator } from '../../js/index'
import type { RemoteJwks, TrustedIssuers } from '../jwks/index'

export type { ErrorCode, TenantSource }

export type EngineName = 'native' | 'js'

/** A route's DPoP mode (the middleware option `dpopMode`). */
export type DpopMode = 'disabled' | 'allowed' | 'required'

/** An Authenticator of either engine. */
export type AnyAuthenticator = NativeAuthenticator | JsAuthenticator

/** What the middleware puts on `req.user` / `request.user` after a successful check. */
export interface AuthUser {
  /** The token's `sub` claim. */
  userId: string
  email?: string | undefined
  role?: string | undefined
}

/**
 * A config, or an Authenticator of either engine to use as is (no shadow mode then; an explicit
 * `engine` option or USE_RUST_AUTH naming the other engine throws a TypeError).
 */
export type AuthSource = AuthConfig | AnyAuthenticator

/** One request on which the two engines disagreed in shadow mode. */
export interface ShadowMismatch {
  /** The AuthResult fields that differ (`requestId` is never compared). */
  fields: string[]
  /** The result that was served. */
  primary: AuthResult
  /** The other engine's result. */
  shadow: AuthResult
  primaryEngine: EngineName
  shadowEngine: EngineName
}

/** Counters of a middleware, from `middleware.stats()` / `fastify.authShield.stats()`. */
export interface AuthShieldStats {
  engine: EngineName
  /** Whether shadow mode runs (false when asked for but the native binary is missing). */
  shadow: boolean
  shadowEngine?: EngineName | undefined
  /** Requests authenticated (skipped paths are not counted). */
  requests: number
  /** Requests whose two results differed (shadow mode only). */
  mismatches: number
  /** Mismatches per AuthResult field. */
  mismatchesByField: Record<string, number>
  /** onMismatch calls that threw, rejected or did not settle (each refused its request: fail closed). */
  onMismatchErrors: number
}

declare global {
  namespace AuthShield {
    /**
     * The declaration-merging point for your identity provider's claims: every place that
     * gives the verified payload (`req.auth`, `request.auth`, `ctx.state.auth`, the Fetch and
     * Hono `claims`, `isRevoked`'s second argument) is typed with them.
     *
     *   declare global {
     *     namespace AuthShield {
     *       interface Claims { org_id: string; permissions?: string[] }
     *     }
     *   }
     *
     * Nothing checks them at run time: require a claim with `requireClaims` or your own check.
     */
    interface Claims {}
  }
}

/** The claims every verified token has (exp and sub are required by default), and any other. */
export interface StandardClaims {
  sub: string
  exp: number
  [claim: string]: unknown
}

/**
 * The whole verified JWT payload (`req.auth`, `request.auth`, `isRevoked`'s second argument):
 * parsed from the token the engine just verified, on first read; with your claims
 * (`AuthShield.Claims`) merged in.
 */
export type JwtClaims = StandardClaims & AuthShield.Claims

/**
 * A callback option compared both ways (as a method is): a callback written for the
 * framework's own request type (Express's `Request`, Fastify's `FastifyRequest`) is accepted
 * where the option names the part of it auth-shield reads.
 */
export type Bivariant<F extends (...args: any[]) => any> = { bivarianceHack(...args: Parameters<F>): ReturnType<F> }['bivarianceHack']

/** A path rule of express-unless: exact, a pattern, or either limited to some methods. */
export type PathRule = string | RegExp | { url: string | RegExp; methods?: string[]; method?: string | string[] }

/** express-unless's rule object: the request is skipped when any of its rules matches. */
export interface UnlessRules<Req> {
  path?: PathRule | PathRule[] | undefined
  method?: string | string[] | undefined
  /** File extensions (`'css'` or `'.css'`) the path may end with. */
  ext?: string | string[] | undefined
  /** Skips only when it answers `true` (or a Promise of `true`); any other answer authenticates. */
  custom?: Bivariant<(req: Req) => boolean | Promise<boolean>> | undefined
  /** Only `true` (the default): rules match the path the client asked for. */
  useOriginalUrl?: true | undefined
}

/**
 * Requests not to authenticate: paths, patterns, express-unless rules, or a predicate (which
 * answers `true` to skip or `false`, or a Promise of one; any other answer refuses the request).
 */
export type SkipRule<Req> = PathRule | PathRule[] | UnlessRules<Req> | ((req: Req, path: string) => boolean | Promise<boolean>)

/** Options common to the Express middleware and the Fastify plugin. */
export interface CommonOptions<Req> {
  /**
   * false lets requests without credentials through anonymously, and those with another scheme
   * (`Authorization: Basic …`); a bad bearer token is still refused. Default true.
   */
  credentialsRequired?: boolean | undefined
  /**
   * Reads the bare token from the request (a cookie, a query parameter…) instead of the header;
   * may return a Promise. A throw or rejection reaches the framework's error handling as an
   * Error (see `callbackTimeoutMs`).
   */
  getToken?: Bivariant<(req: Req) => string | null | undefined | Promise<string | null | undefined>> | undefined
  /**
   * The cookie holding the token when there is no Authorization header: a name, or
   * `{ cookieName }`. Read from `req.cookies` when a cookie parser ran, else from the Cookie header.
   */
  cookie?: string | { cookieName: string; signed?: false } | undefined
  /** Paths (exact, without the query), patterns, express-unless rules, or a predicate. */
  skip?: SkipRule<Req> | undefined
  /** express-unless's name for `skip` (give one of the two). */
  unless?: SkipRule<Req> | undefined
  /**
   * CORS preflights (OPTIONS with Access-Control-Request-Method; in `expressjwt`, express-jwt's
   * rule: OPTIONS whose Access-Control-Request-Headers names authorization) pass untouched.
   * Default true.
   */
  skipPreflight?: boolean | undefined
  /**
   * Behind a TLS-terminating proxy only: the lowercase name of the header in which the proxy
   * passes the client certificate for certificate-bound tokens (RFC 9440 `Client-Cert`,
   * `:` base64 DER `:`); the socket is then not read. Never set it unless the proxy always
   * overwrites that header. Default: none (the TLS socket's certificate).
   */
  clientCertificateHeader?: string | undefined
  /**
   * Use the TLS socket's client certificate even when Node did not verify its chain
   * (`socket.authorized` false), as RFC 8705 §2.2 self-signed certificates need. Default false.
   */
  acceptUnverifiedClientCertificates?: boolean | undefined
  /**
   * 'respond' (the default; `expressjwt`: 'next') answers failures with `{ error, code }`; 'next'
   * hands an `UnauthorizedError` to the framework (Express `next(err)`, Fastify's error handler),
   * a `TooManyRequestsError` for 429 and a `ServiceUnavailableError` for 503.
   */
  errors?: 'respond' | 'next' | undefined
  /**
   * Asked after the engine accepted the token: `true` (or a Promise of it) refuses the request
   * with `token_revoked` (401), `false` lets it through. Any other answer, a throw or a
   * rejection reaches the framework's error handling as an Error (`ERR_AUTH_SHIELD_CALLBACK`).
   */
  isRevoked?: Bivariant<(req: Req, claims: JwtClaims) => boolean | Promise<boolean>> | undefined
  /**
   * Rate-limit header shape: 'legacy' (the default: RateLimit-Limit/-Remaining/-Reset),
   * 'draft' (RateLimit-Policy and RateLimit of draft-ietf-httpapi-ratelimit-headers), 'both',
   * or false (none; a 429 keeps Retry-After).
   */
  rateLimitHeaders?: 'draft' | 'legacy' | 'both' | false | undefined
  /**
   * express-jwt's allow-list of token algorithms, applied to the keys of every key source
   * (static keys, `accessSecret` as HS256, a remote JWKS, trusted issuers): a token of another
   * `alg` is refused; a list no static key meets is a TypeError when the middleware is made.
   */
  algorithms?: string[] | undefined
  /**
   * 'native' (the default) or 'js'; without it, USE_RUST_AUTH decides (true/1/yes/on: native,
   * false/0/no/off: js, any case; unset or empty: native; anything else throws a TypeError).
   */
  engine?: EngineName | undefined
  /** Run both engines per request, serve the primary's result and count differences. */
  shadow?: boolean | undefined
  /**
   * Called for each shadow-mode difference (a returned Promise is awaited). A throw or rejection
   * refuses the request it reports on (fail closed) and counts in `onMismatchErrors`.
   */
  onMismatch?: ((mismatch: ShadowMismatch) => void | Promise<void>) | undefined
  /** retryAfterMs values within this many ms count as equal in shadow mode. Default 1000. */
  retryAfterToleranceMs?: number | undefined
  /**
   * The origin clients address (`'https://api.example.com'`: scheme, host and port only). With
   * it, each request's `DPoP` header, method and this origin plus its path go to `authenticate`
   * as a `SenderContext`: a config with `dpop: true` checks the proof (docs/sender-constrained.md). Never
   * built from `Host` or `X-Forwarded-*`, which clients choose.
   */
  dpopOrigin?: string | undefined
  /**
   * Instead of `dpopOrigin` (not with it), for a proxy that strips or adds a path prefix: the
   * absolute URL the client addressed (`'https://api.example.com/api/orders'`), rebuilt from
   * the request the other callbacks get (Koa: `ctx`; Fetch: the `Request`). Called for
   * requests with the DPoP scheme only; query and fragment are ignored. A throw, or an answer
   * that is not an absolute http(s) URL (a Promise included: it is not awaited), refuses the
   * request with an `ERR_AUTH_SHIELD_CALLBACK` error. Never build it from `Host` or
   * `X-Forwarded-*` that a client can choose (docs/sender-constrained.md).
   */
  dpopUrl?: Bivariant<(req: Req) => string> | undefined
  /**
   * @deprecated Use `dpopMode: 'required'` (`AUTH_SHIELD_DEP_DPOP_REQUIRED`). Refuse requests
   * authenticated with a Bearer token (401 `dpop_required`). Needs `dpopOrigin` or `dpopUrl`. Default false.
   */
  dpopRequired?: boolean | undefined
  /**
   * What this route does with DPoP (docs/sender-constrained.md): `'allowed'` (the default)
   * checks DPoP requests and takes Bearer ones; `'required'` refuses a Bearer success (401
   * `dpop_required`, a DPoP challenge); `'disabled'` refuses every `Authorization: DPoP`
   * request (401 `dpop_not_allowed`, a Bearer `invalid_request` challenge) and reads no proof.
   * `'allowed'` and `'required'` need `dpopOrigin` or `dpopUrl`. A DPoP-bound token sent as Bearer is refused
   * in every mode.
   */
  dpopMode?: DpopMode | undefined
  /**
   * A `DpopReplayStore` of auth-shield/redis (`createDpopReplayStore`, or `store.dpopReplay()`
   * of a `createRedisStore`): every proof the engine accepted is also recorded there, so a proof
   * is accepted once across every process sharing the Redis (requests arriving together share
   * one round trip); Redis failing refuses with 503 `dpop_replay_unavailable`. Needs `dpopOrigin` or `dpopUrl`.
   */
  dpopReplayStore?: import('../store/index').DpopReplayStore | undefined
  /** `realm` of the WWW-Authenticate challenge. */
  realm?: string | undefined
  /**
   * The RFC 9728 protected-resource metadata (an adapter's `protectedResourceMetadata()`) or
   * the https URL of its document: every challenge then carries `resource_metadata`.
   */
  resourceMetadata?: string | ProtectedResourceMetadata<unknown> | undefined
  /**
   * true names the required scopes (`requiredScope`) in the 401 Bearer challenges too
   * (`scope="…"`, RFC 6750 §3), as the MCP authorization specification asks; the 403
   * insufficient_scope challenge always names them. Default false.
   */
  challengeScope?: boolean | undefined
  /**
   * Milliseconds the middleware waits for a Promise returned by any callback of the application
   * (getToken, isRevoked, skip/unless predicates, onError, formatUser, onMismatch) and for a
   * recovery (a JWKS refresh, a store lease); past it the request is refused
   * (`ERR_AUTH_SHIELD_CALLBACK_TIMEOUT`, status 503; a recovery keeps its first failure).
   * Whatever a callback throws or rejects with is refused too: an Error as it is, any other
   * value (`undefined`, `''`, `'route'`…) as an `ERR_AUTH_SHIELD_CALLBACK` Error whose `cause`
   * is the value. 1..2147483647, default 10000.
   */
  callbackTimeoutMs?: number | undefined
  /**
   * A shared store (`createRedisStore` of `auth-shield/redis`): the rate limit is shared by every
   * process, and an identity this process has not seen waits for one round trip.
   */
  store?: import('../store/index').RedisStore | undefined
  /**
   * A remote key set (`createRemoteJwks` from auth-shield/jwks): it feeds the Authenticator its
   * keys, and a request failing with `unknown_key` waits for its one shared refresh, then
   * authenticates once more. Or trusted issuers (`createTrustedIssuers`): their keys by
   * discovery, each token's key checked to be its `iss`'s (docs/resource-server.md).
   */
  jwks?: RemoteJwks | TrustedIssuers | undefined
  /**
   * OpenTelemetry tracing: each decision's `auth_shield.authentication.result`
   * (`success`/`failure`/`none`), `error.type` (the errorCode), `auth_shield.rate_limiting.result`
   * (`acquired`/`rejected`/`pending`) and, with a store, `auth_shield.store.fallback` are set on
   * the active span (docs/observability.md#tracing). Absent: nothing is done per request.
   */
  tracing?: TracingOptions | undefined
}

/**
 * The `tracing` middleware option. The members of `@opentelemetry/api` it uses are typed
 * structurally: auth-shield does not depend on it.
 */
export interface TracingOptions {
  /** `trace` of `@opentelemetry/api` (its `getActiveSpan` and `getTracer` are used). */
  trace?: { getActiveSpan(): TracingSpan | undefined; getTracer(name: string, version?: string): TracingTracer } | undefined
  /** The Tracer for `spans: true` (default: `trace.getTracer('auth-shield', version)`). */
  tracer?: TracingTracer | undefined
  /**
   * A span of our own, `auth_shield.authenticate`, around each decision (active while it is
   * taken), carrying the attributes instead of the active span. Default false.
   */
  spans?: boolean | undefined
}

/** The members of an OpenTelemetry `Span` the `tracing` option calls. */
export interface TracingSpan {
  setAttribute(key: string, value: string | boolean): unknown
  isRecording?(): boolean
  recordException?(exception: unknown): void
  setStatus?(status: { code: number; message?: string }): unknown
  end?(): void
}

/** The member of an OpenTelemetry `Tracer` the `tracing` option calls. */
export interface TracingTracer {
  startActiveSpan(name: string, fn: (span: any) => any): any
}

/** express-jwt's codes, and ours where it has none (tenant checks). */
export type UnauthorizedCode =
  | 'credentials_required'
  | 'credentials_bad_scheme'
  | 'credentials_bad_format'
  | 'invalid_token'
  | 'revoked_token'
  | 'invalid_tenant'
  | 'tenant_mismatch'
  | 'insufficient_scope'

/**
 * express-jwt's error: `new UnauthorizedError(code, { message })` as in express-jwt (a `getToken`
 * may throw one). The failures `errors: 'next'` hands to the framework also carry `errorCode`,
 * `statusCode`, `requestId` and `headers`.
 */
export declare class UnauthorizedError extends Error {
  constructor(code: string, error: { message: string })
  name: 'UnauthorizedError'
  /** express-jwt's code where it has one. */
  code: UnauthorizedCode
  /** auth-shield's own code, e.g. `token_expired`, as `errorCode` of the AuthResult (absent on one built by the constructor). */
  errorCode: ErrorCode
  /** @deprecated The old name of `errorCode` (a one-time DeprecationWarning `AUTH_SHIELD_DEP_AUTH_CODE`). */
  authCode: ErrorCode
  status: AuthFailure['errorStatus']
  statusCode: AuthFailure['errorStatus']
  requestId: string
  /**
   * The cause: the AuthShieldError with the whole AuthResult (`authShield`), jsonwebtoken's
   * error shape (`name` 'TokenExpiredError', 'NotBeforeError', 'JsonWebTokenError'; the
   * compatible export `expressjwt`), or the constructor's second argument.
   */
  inner: AuthShieldError | JsonWebTokenErrorLike | { message: string }
  /** The response headers already set (X-Request-Id, WWW-Authenticate, Retry-After…). */
  headers: Record<string, string>
}

/** jsonwebtoken's error shape, as `err.inner` of the compatible export. */
export interface JsonWebTokenErrorLike extends Error {
  name: 'JsonWebTokenError' | 'TokenExpiredError' | 'NotBeforeError'
  /** TokenExpiredError: the token's `exp`. */
  expiredAt?: Date | undefined
  /** NotBeforeError: the token's `nbf`. */
  date?: Date | undefined
}

/**
 * A failure that is not about credentials, with http-errors' fields, so that an error handler
 * written for express-jwt (`err.name === 'UnauthorizedError'` → 401) keeps its status.
 */
declare class HttpStatusError extends Error {
  /** Our code (express-jwt has none for these), also as `errorCode`. */
  code: ErrorCode
  errorCode: ErrorCode
  /** @deprecated The old name of `errorCode` (a one-time DeprecationWarning `AUTH_SHIELD_DEP_AUTH_CODE`). */
  authCode: ErrorCode
  status: number
  statusCode: number
  /** http-errors' convention: the message is safe to show for a status below 500. */
  expose: boolean
  requestId: string
  retryAfterMs: number
  /** The response headers already set (X-Request-Id, Retry-After, RateLimit-*…). */
  headers: Record<string, string>
  inner: AuthShieldError
}

/** 429 `rate_limited` with `errors: 'next'`. */
export declare class TooManyRequestsError extends HttpStatusError {
  name: 'TooManyRequestsError'
  status: 429
  statusCode: 429
}

/** 503 (`rate_limit_pending`, `revocation_unavailable`, …) with `errors: 'next'`. */
export declare class ServiceUnavailableError extends HttpStatusError {
  name: 'ServiceUnavailableError'
  status: 503
  statusCode: 503
}

/** The error an `onError` hook receives. */
export declare class AuthShieldError extends Error {
  name: 'AuthShieldError'
  /** The HTTP status to answer with (400, 401, 403, 429, or 503 for rate_limit_pending). */
  status: AuthFailure['errorStatus']
  statusCode: AuthFailure['errorStatus']
  /** The stable error code, e.g. `token_expired` (see `auth-shield/error-codes.json`). */
  code: ErrorCode
  requestId: string
  retryAfterMs: number
  /** The whole AuthResult (a failure). */
  result: AuthFailure
}

/**
 * The scopes of `requireScopes` / `requireAnyScope`: scope-tokens (RFC 6749 §3.3) as arguments,
 * or one array of them.
 */
export type RequiredScopes = string[] | [readonly string[]]

/** A value `requireClaims` matches a claim against (docs/resource-server.md). */
export type RequiredClaimValue = string | number | boolean | ReadonlyArray<string | number | boolean> | RequiredClaims

/**
 * `requireClaims`'s argument: each claim equals the value or, an array claim, includes it; a
 * list needs every value; an object is matched inside the claim's object (Keycloak's
 * `realm_access: { roles: 'admin' }`).
 */
export interface RequiredClaims {
  readonly [claim: string]: RequiredClaimValue
}

/** `requireAuthentication`'s options (RFC 9470 step-up); at least one. */
export interface RequiredAuthentication {
  /** The accepted `acr` values (exact, case-sensitive); named in the challenge's `acr_values`. */
  acrValues?: string | readonly string[] | undefined
  /** The most seconds since `auth_time` (the process clock); named in the challenge's `max_age`. */
  maxAgeSec?: number | undefined
}

/** The options of `protectedResourceMetadata()` (RFC 9728 §2); any other name is a TypeError. */
export interface ProtectedResourceMetadataOptions {
  /** This API's resource identifier: an https URL without fragment (http only on loopback). */
  resource: string
  /** Issuer identifiers of the authorization servers that issue its tokens. */
  authorizationServers?: string[] | undefined
  /** Scope-tokens (RFC 6749 §3.3) this API uses. */
  scopesSupported?: string[] | undefined
  /** How a token may be sent (RFC 6750 §2). Default ['header']. */
  bearerMethodsSupported?: Array<'header' | 'body' | 'query'> | undefined
  /** A name for people. */
  resourceName?: string | undefined
  /** An https URL of the API's documentation. */
  resourceDocumentation?: string | undefined
}

/**
 * RFC 9728 protected-resource metadata, built once: `url` (what the challenges name; the
 * `resourceMetadata` middleware option takes this object), `path` (where to serve it),
 * `document` and its `json`, and a route `handler` of the adapter serving it.
 */
export interface ProtectedResourceMetadata<Handler> {
  readonly resource: string
  readonly url: string
  readonly path: string
  readonly document: Readonly<Record<string, unknown>>
  readonly json: string
  readonly handler: Handler
}
