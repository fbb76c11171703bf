// Types shared by auth-shield/express and auth-shield/fastify (hand-written).

import type { AuthConfig, AuthFailure, AuthResult, Authenticator as NativeAuthenticator, ErrorCode, TenantSource } from '../index'
import type { Authenticator as JsAuthenticator } from './index'
import type { RemoteJwks } from '../jwks'

export type { ErrorCode, TenantSource }

export type EngineName = 'native' | 'js'

/** An Authenticator of either engine. */
export type AnyAuthenticator = NativeAuthenticator | JsAuthenticator

/** What the middleware puts on `req.user` / `request.user` after a successful check. */
export interface AuthUser {
  /** The token's `sub` claim. */
  userId: string
  email?: string
  role?: string
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
  shadowEngine?: EngineName
  /** Requests authenticated (skipped paths are not counted). */
  requests: number
  /** Requests whose two results differed (shadow mode only). */
  mismatches: number
  /** Mismatches per AuthResult field. */
  mismatchesByField: Record<string, number>
  /** onMismatch calls that threw (the request was served regardless). */
  onMismatchErrors: number
}

/** Options common to the Express middleware and the Fastify plugin. */
export interface CommonOptions<Req> {
  /** false lets requests without an Authorization header through anonymously. Default true. */
  credentialsRequired?: boolean
  /** Reads the bare token from the request (a cookie, a query parameter…) instead of the header. */
  getToken?: (req: Req) => string | null | undefined
  /** Paths (exact, without the query), patterns, or a predicate for requests not to authenticate. */
  skip?: string | RegExp | Array<string | RegExp> | ((req: Req, path: string) => boolean)
  /**
   * 'native' (the default) or 'js'; without it, USE_RUST_AUTH decides (true/1/yes/on: native,
   * false/0/no/off: js, any case; unset or empty: native; anything else throws a TypeError).
   */
  engine?: EngineName
  /** Run both engines per request, serve the primary's result and count differences. */
  shadow?: boolean
  /** Called for each shadow-mode difference. */
  onMismatch?: (mismatch: ShadowMismatch) => void
  /** retryAfterMs values within this many ms count as equal in shadow mode. Default 1000. */
  retryAfterToleranceMs?: number
  /** `realm` of the WWW-Authenticate challenge. */
  realm?: string
  /**
   * A remote key set (`createRemoteJwks` from auth-shield/jwks): it feeds the Authenticator its
   * keys, and a request failing with `unknown_key` waits for its one shared refresh, then
   * authenticates once more.
   */
  jwks?: RemoteJwks
}

/** The error an `onError` hook receives. */
export declare class AuthShieldError extends Error {
  name: 'AuthShieldError'
  /** The HTTP status to answer with (400, 401, 403 or 429). */
  status: AuthFailure['errorStatus']
  statusCode: AuthFailure['errorStatus']
  /** The stable error code, e.g. `token_expired` (see `auth-shield/error-codes.json`). */
  code: ErrorCode
  requestId: string
  retryAfterMs: number
  /** The whole AuthResult (a failure). */
  result: AuthFailure
}
