// Types of js/store/revocations.js (docs/revocation.md): revocations shared through Redis.

import type { RevokeTokenOptions, RevokeSubjectOptions } from '../../index'

/** What a feed needs of an Authenticator (native or auth-shield/js). */
export interface RevocableAuthenticator {
  revokeToken(jti: string | undefined, expiresAtSec: number | undefined, options?: RevokeTokenOptions | null): unknown
  revokeSubject(sub: string, options?: RevokeSubjectOptions | null): unknown
  setRevocationUnavailable(unavailable: boolean): void
  readonly accessTtlSec: number
  readonly refreshTtlSec: number
}

export interface RevocationFeedOptions {
  /** Key prefix of the sets and the stream. Default `'auth-shield:revocations'`. */
  prefix?: string
  /** Approximate bound of the stream (`XADD MAXLEN ~`), 100..1e8. Default 100000. */
  maxLen?: number
  /** Milliseconds without a successful stream read before the feed is stale, 100..86400000. Default 5000. */
  maxRevocationLagMs?: number
  /** While stale: `'open'` (default) admits tokens not known to be revoked; `'closed'` refuses them with `revocation_unavailable` (503). */
  onStale?: 'open' | 'closed'
  /** Milliseconds before a Redis command is given up (`ERR_AUTH_SHIELD_STORE_TIMEOUT`), 10..600000. Default 2000. */
  commandTimeoutMs?: number
  /** How long a subject revocation is kept in Redis after its cut-off. Default: the attached authenticators' longest TTL plus one day. */
  subjectRetentionSec?: number
  /** Failed reads and entries an authenticator refused (at `maxRevocations`); never thrown. */
  onError?: (err: Error) => void
  /** Called with the number of stream entries just applied (metrics, tests). */
  onApplied?: (count: number) => void
}

export interface RevocationFeedStats {
  applied: number
  reloads: number
  readErrors: number
  refused: number
  written: number
  stale: boolean
  lastId: string | null
}

/** Follows the shared revocations of one Redis and applies them to the attached authenticators. */
export declare class RevocationFeed {
  /** `client`: a connected node-redis (v4+) or ioredis client. */
  constructor(client: object, options?: RevocationFeedOptions)
  /** Applies shared revocations to `authenticator` and makes its revoke methods write through (Promise-returning). Before `start()`. */
  attach(authenticator: RevocableAuthenticator): this
  /** Loads the current set, then follows the stream in the background. */
  start(): Promise<void>
  /** Stops following, closes the feed's own connection and restores the attached methods. */
  close(): Promise<void>
  /** Revokes locally at once, then in Redis; resolves when Redis acknowledged. */
  revokeToken(jti: string | undefined, expiresAtSec: number | undefined, options?: RevokeTokenOptions | null): Promise<void>
  revokeSubject(sub: string, options?: RevokeSubjectOptions | null): Promise<void>
  /** Past `maxRevocationLagMs` without a successful read. */
  readonly stale: boolean
  stats(): RevocationFeedStats
}
