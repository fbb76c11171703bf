// Types of `auth-shield/jwks` (hand-written).

import type { KeyObject } from 'node:crypto'

/** The signature algorithms a JWKS key may be bound to. */
export type JwksAlgorithm = 'RS256' | 'RS384' | 'RS512' | 'PS256' | 'PS384' | 'PS512' | 'ES256' | 'ES384' | 'EdDSA' | 'Ed25519'

export declare const SUPPORTED_ALGORITHMS: readonly JwksAlgorithm[]

/** One verification key of the set in force, as handed to `setKeys`. */
export interface JwksKey {
  kid?: string
  alg: JwksAlgorithm
  publicKey: KeyObject
}

export interface RemoteJwksOptions {
  /** On-demand refreshes (a token naming an unknown kid) at most once per this many ms. Default 30000. */
  cooldownMs?: number
  /** Scheduled refresh this long after the last good document. Default 600000 (10 minutes). */
  cacheMaxAgeMs?: number
  /** Whole fetch, request to last byte. Default 5000. */
  timeoutMs?: number
  /** Largest document read; reading stops at the first byte past it. Default 262144 (256 KiB). */
  maxBytes?: number
  /** Most keys in a document; more refuses it. Default 64. */
  maxKeys?: number
  /** Only keys bound to these algorithms are used (others are skipped). Default: all supported. */
  algorithms?: JwksAlgorithm[]
}

/** An Authenticator of either engine, as the source needs it. */
export interface KeyedAuthenticator {
  setKeys(keys: readonly JwksKey[]): void
}

/** Error codes of `lastError` and of a `ready()` rejection. */
export type JwksErrorCode =
  | 'ERR_AUTH_SHIELD_JWKS_INVALID'
  | 'ERR_AUTH_SHIELD_JWKS_FETCH'
  | 'ERR_AUTH_SHIELD_JWKS_TIMEOUT'
  | 'ERR_AUTH_SHIELD_JWKS_TOO_LARGE'
  | 'ERR_AUTH_SHIELD_JWKS_CLOSED'

export interface JwksError extends Error {
  code: JwksErrorCode
}

export declare class RemoteJwks {
  private constructor()
  /** The URL fetched. */
  readonly url: string
  /** The key set in force, or null before the first good document. */
  readonly keys: readonly JwksKey[] | null
  /** Key sets installed so far (a refresh that changed nothing does not count). */
  readonly generation: number
  /** When the last good document was read (ms since the epoch), or null. */
  readonly updatedAtMs: number | null
  /** Why the last fetch failed, or null after a success. */
  readonly lastError: JwksError | null
  /** Feeds an Authenticator the current and every later key set; returns a detach function. */
  attach(authenticator: KeyedAuthenticator): () => void
  /** Refetches unless within the cooldown; true when a different key set was installed. Never rejects. */
  refresh(): Promise<boolean>
  /** Resolves once a key set is in force; rejects with lastError if the fetch under way fails. */
  ready(): Promise<void>
  /** Stops the schedule and aborts a fetch in flight. */
  close(): void
}

/** A source that starts fetching `url` at once. */
export declare function createRemoteJwks(url: string | URL, options?: RemoteJwksOptions): RemoteJwks

export declare function isJwksSource(value: unknown): value is RemoteJwks
