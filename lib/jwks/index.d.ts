// Types of `auth-shield/jwks` (hand-written).

import type { KeyObject } from 'node:crypto'
import { EventEmitter } from 'node:events'

/** The signature algorithms a JWKS key may be bound to. */
export type JwksAlgorithm = 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512' | 'ES256' | 'ES384' | 'EdDSA' | 'Ed25519'

export declare const SUPPORTED_ALGORITHMS: readonly JwksAlgorithm[]

/** One verification key of the set in force, as handed to `setKeys`. */
export interface JwksKey {
  kid?: string | undefined
  alg: JwksAlgorithm
  publicKey: KeyObject
}

export interface RemoteJwksOptions {
  /**
   * On-demand refreshes (a token naming an unknown kid) at most once per this many ms; one asked
   * for inside it is made at its end, so a newly published key is in force within this time.
   * Default 5000.
   */
  cooldownMs?: number | undefined
  /** Scheduled refresh this long after the last good document. Default 600000 (10 minutes). */
  cacheMaxAgeMs?: number | undefined
  /**
   * While fetches fail, the key set in force is kept this long past `cacheMaxAgeMs` (RFC 5861
   * stale-if-error), then withdrawn: the middleware answers `keys_unavailable` (503). Default 3600000 (1 hour).
   */
  staleIfErrorMs?: number | undefined
  /** First retry this long after a failed fetch, doubling per further failure. 100 or more; default 1000. */
  retryMinMs?: number | undefined
  /** Longest wait between two retries after failed fetches. At least `retryMinMs`; default 30000. */
  retryMaxMs?: number | undefined
  /** Whole fetch, request to last byte. Default 5000. */
  timeoutMs?: number | undefined
  /** Largest document read; reading stops at the first byte past it. Default 262144 (256 KiB). */
  maxBytes?: number | undefined
  /** Most keys in a document; more refuses it. Default 64. */
  maxDocumentKeys?: number | undefined
  /** @deprecated The old name of `maxDocumentKeys` (a one-time DeprecationWarning `AUTH_SHIELD_DEP_JWKS_MAX_KEYS`; not with it). */
  maxKeys?: number | undefined
  /** Only keys bound to these algorithms are used (others are skipped). Default: all supported. */
  algorithms?: JwksAlgorithm[] | undefined
}

/** An Authenticator of either engine, as the source needs it. */
export interface KeyedAuthenticator {
  setKeys(keys: readonly JwksKey[], options?: { issuer?: string | null }): unknown
}

/** What `RemoteJwks#metrics()` returns (docs/observability.md). */
export interface RemoteJwksMetrics {
  /** Fetches completed, failed ones included. */
  fetches: number
  failures: number
  /** Seconds since the key set in force was read; null when none is in force. */
  keyAgeSeconds: number | null
  keysAvailable: boolean
}

/**
 * What `TrustedIssuers#metrics()` returns: the four counters of RemoteJwksMetrics over every issuer
 * (discovery documents and key sets both count as fetches; `keyAgeSeconds` of the oldest key set
 * in force; `keysAvailable` when every issuer has keys), and each configured issuer's own.
 */
export interface TrustedIssuersMetrics extends RemoteJwksMetrics {
  issuers: Record<string, RemoteJwksMetrics>
}

/** Error codes of `lastError`, of a `ready()` rejection and of the source's events. */
export type JwksErrorCode =
  | 'ERR_AUTH_SHIELD_JWKS_INVALID'
  | 'ERR_AUTH_SHIELD_JWKS_FETCH'
  | 'ERR_AUTH_SHIELD_JWKS_TIMEOUT'
  | 'ERR_AUTH_SHIELD_JWKS_TOO_LARGE'
  | 'ERR_AUTH_SHIELD_JWKS_CLOSED'
  | 'ERR_AUTH_SHIELD_JWKS_EXPIRED'
  | 'ERR_AUTH_SHIELD_JWKS_DISCOVERY'

export interface JwksError extends Error {
  code: JwksErrorCode
}

/**
 * A remote key set, and an EventEmitter: `'keys'` (a different set was installed), `'error'` (a
 * fetch or document failed; the set in force stays; emitted only to listeners, never thrown),
 * `'expired'` (the set passed `cacheMaxAgeMs + staleIfErrorMs` and was withdrawn). A listener
 * that throws or rejects is ignored.
 */
export declare class RemoteJwks extends EventEmitter {
  private constructor()
  /** The URL fetched. */
  readonly url: string
  /** The key set in force, or null: before the first good document, and once withdrawn past its maximum age. */
  readonly keys: readonly JwksKey[] | null
  /** Key sets installed so far (a refresh that changed nothing does not count). */
  readonly generation: number
  /** When the last good document was read (ms since the epoch), or null. */
  readonly updatedAtMs: number | null
  /** Why the last fetch failed, or null after a success. */
  readonly lastError: JwksError | null
  /** Counters read now (docs/observability.md). */
  metrics(): RemoteJwksMetrics
  /** Feeds an Authenticator the current and every later key set; returns a detach function. */
  attach(authenticator: KeyedAuthenticator): () => void
  /** Refetches unless within the cooldown (then once at its end); true when a different key set was installed. Never rejects. */
  refresh(): Promise<boolean>
  /** Resolves once a key set is in force; rejects with lastError if the fetch under way fails. */
  ready(): Promise<void>
  /** Stops the schedule and aborts a fetch in flight. */
  close(): void
  on(event: 'keys', listener: (keys: readonly JwksKey[]) => void): this
  on(event: 'error' | 'expired', listener: (error: JwksError) => void): this
  once(event: 'keys', listener: (keys: readonly JwksKey[]) => void): this
  once(event: 'error' | 'expired', listener: (error: JwksError) => void): this
  off(event: 'keys', listener: (keys: readonly JwksKey[]) => void): this
  off(event: 'error' | 'expired', listener: (error: JwksError) => void): this
}

/** A source that starts fetching `url` at once. */
export declare function createRemoteJwks(url: string | URL, options?: RemoteJwksOptions): RemoteJwks

export declare function isJwksSource(value: unknown): value is RemoteJwks

/** One trusted issuer with options of its own (`createTrustedIssuers`). */
export interface TrustedIssuerOptions {
  /** The issuer identifier: tokens' `iss` must equal it exactly, and so must its metadata's `issuer`. */
  issuer: string
  /** This issuer's tokens must name one of these in `aud` (in place of the config's `audience`). */
  audience?: string | readonly string[] | undefined
  /**
   * Only keys of this issuer bound to these algorithms are used, and its tokens' `alg` must be
   * one of them. Default: the options' `algorithms`.
   */
  algorithms?: readonly string[] | undefined
  /** The key set URL, discovery skipped (https:, or http: on loopback for a loopback issuer). */
  jwksUri?: string | undefined
  /** The tenant this issuer's tokens belong to: `tenantId`, with `tenantSource` `'issuer'`. */
  tenant?: string | undefined
  /**
   * Opaque access tokens of this issuer are introspected (RFC 7662; at most one issuer of a
   * registry): docs/resource-server.md#opaque-tokens-introspection.
   */
  introspection?: TrustedIssuerIntrospectionOptions | undefined
}

/** How the resource server introspects an issuer's opaque tokens (RFC 7662, RFC 9701). */
export interface TrustedIssuerIntrospectionOptions {
  /** The resource server's client id at the authorization server. */
  clientId: string
  /** Its secret, for client_secret_basic (the default) and client_secret_post. */
  clientSecret?: string | undefined
  /** Its private key (PEM, private JWK or KeyObject), for private_key_jwt (RFC 7523; the default when given). */
  privateKey?: string | Buffer | object | undefined
  /** The client assertion's alg: RS256 or PS256 for RSA, ES256/ES384 for EC, EdDSA for Ed25519 (default: the first). */
  privateKeyAlg?: string | undefined
  /** The client assertion's `kid` header. */
  privateKeyKid?: string | undefined
  /** Default: private_key_jwt with a privateKey, else client_secret_basic. */
  authMethod?: 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | undefined
  /** The introspection endpoint; default: the metadata's `introspection_endpoint` (https:, or loopback http: for a loopback issuer). */
  endpoint?: string | undefined
  /** Introspect JWTs too (each token's state asked of the server, within cacheMaxSec); default false: a JWT is verified locally. */
  introspectJwts?: boolean | undefined
  /** Ask for RFC 9701 signed answers (Accept: application/token-introspection+jwt), verified with the issuer's keys; a plain JSON answer is then refused. Default false. */
  jwtResponse?: boolean | undefined
  /** Longest an active answer is held, in seconds (never past the token's `exp`). Default 300, 1 to 86400. */
  cacheMaxSec?: number | undefined
  /** How long an inactive answer is held, in seconds (0: not held). Default 10, 0 to 3600. */
  negativeCacheSec?: number | undefined
  /** Each exchange's time-out, request to last byte. Default 5000 ms, 1 to 60000. */
  timeoutMs?: number | undefined
  /** Largest answer read, in bytes. Default 65536, 256 to 1048576. */
  maxBytes?: number | undefined
  /** Most exchanges in flight with this issuer. Default 8, 1 to 1000. */
  maxConcurrent?: number | undefined
  /** Most requests waiting for a free exchange; past it, 503 at once. Default 1000, 0 to 100000. */
  maxQueued?: number | undefined
  /** Back-off after a failed exchange: from retryMinMs doubling to retryMaxMs (defaults 1000 and 30000). */
  retryMinMs?: number | undefined
  retryMaxMs?: number | undefined
}

/** One key in force, as `TrustedIssuers#status()` describes it. */
export interface TrustedIssuerKeySummary {
  kid: string | null
  alg: string
  /** The key type: 'rsa', 'rsa-pss', 'ec', 'ed25519', … */
  type: string
  /** RSA modulus length. */
  bits?: number
  /** EC or OKP curve. */
  curve?: string
  /** RFC 7638 SHA-256 JWK thumbprint, base64url: compare it with the provider's JWKS. */
  thumbprint: string
}

/** One trusted issuer's state (`TrustedIssuers#status()`). */
export interface TrustedIssuerStatus {
  /** The issuer identifier, as configured. */
  issuer: string
  /** The `jwks_uri` its metadata named, or null before a discovery succeeded. */
  jwksUri: string | null
  /** Its key set in force, described (a KeyObject prints as `{}`), or null while none is. */
  keys: readonly TrustedIssuerKeySummary[] | null
  /** Why its last discovery or fetch failed, or null. */
  lastError: JwksError | null
  /** With an `introspection` option: its endpoint (null before discovery) and counters, summed over the middlewares using it. */
  introspection?: { endpoint: string | null; introspections: number; failures: number; lastError: Error | null }
  /** True for an introspecting issuer whose metadata has no `jwks_uri`: no key set is ever fetched, its JWTs are refused `unknown_key` (unless `introspectJwts`). */
  introspectionOnly?: true
}

/**
 * Trusted issuers with discovery (docs/resource-server.md#trusted-issuers-with-discovery): each
 * issuer's `jwks_uri` read from its OpenID Connect or RFC 8414 metadata (whose `issuer` must
 * equal the configured one exactly), one remote key set per issuer. Given as the middleware's
 * `jwks` option (with a config without `issuer`, `issuers`, `keys` or `accessSecret`), the
 * middleware's Authenticator gets the engine's registry (its `issuers` option): a token's `iss`
 * selects the issuer before any key, then that issuer's own key set by `kid`. Events as
 * RemoteJwks: `'error'` (a discovery or fetch failed), `'expired'`.
 */
export declare class TrustedIssuers extends EventEmitter {
  private constructor()
  /** The trusted issuer identifiers, as configured. */
  readonly issuers: readonly string[]
  /** Every issuer's key set in force, one after the other, or null while none has keys. */
  readonly keys: readonly JwksKey[] | null
  /** The Authenticator's `issuers` option for these issuers: each with its keys in force, audiences, algorithms and tenant. */
  engineIssuers(): Array<{ issuer: string; keys?: readonly JwksKey[]; audience?: readonly string[]; algorithms?: readonly string[]; tenant?: string }>
  /** Each issuer's state, in the configured order. */
  status(): TrustedIssuerStatus[]
  /** Counters read now, over every issuer and per issuer (docs/observability.md). */
  metrics(): TrustedIssuersMetrics
  /**
   * Feeds an Authenticator built with `engineIssuers()` each issuer's key set now and every later
   * one (`setKeys(keys, { issuer })`); returns a detach function.
   */
  attach(authenticator: KeyedAuthenticator): () => void
  /** Refreshes every issuer's key set (discovery first where it has not succeeded), each within its cooldown. Never rejects. */
  refresh(): Promise<boolean>
  /** Resolves once every issuer has a key set in force; rejects with the first failure (retries go on). */
  ready(): Promise<void>
  /** Stops every schedule and aborts fetches in flight. */
  close(): void
  on(event: 'error' | 'expired', listener: (error: JwksError) => void): this
  once(event: 'error' | 'expired', listener: (error: JwksError) => void): this
  off(event: 'error' | 'expired', listener: (error: JwksError) => void): this
}

/** Most issuers one TrustedIssuers holds (50). */
export declare const MAX_ISSUERS: number

/**
 * Starts discovery of every issuer (https: URLs, http: on loopback; no query or fragment; at most
 * MAX_ISSUERS). The options are createRemoteJwks's, for every issuer; discovery uses timeoutMs,
 * maxBytes, cooldownMs, retryMinMs and retryMaxMs as well.
 */
export declare function createTrustedIssuers(issuers: readonly (string | TrustedIssuerOptions)[], options?: RemoteJwksOptions): TrustedIssuers

export declare function isTrustedIssuers(value: unknown): value is TrustedIssuers
