// Types of lib/store/revocations.js (docs/revocation.md): revocations shared through Redis.

import type { RevokeTokenOptions, RevokeSubjectOptions } from '../../index'

/** What a feed needs of an Authenticator (native or auth-shield/js). */
/**
 * What a write-through revoke resolves to: `'delivered'` once Redis acknowledged it,
 * `'queued'` when it had not within `commandTimeoutMs` (Redis away or slow). Either way it is
 * enforced locally already; a queued one is delivered, in order, once Redis answers.
 */
export type RevocationDelivery = 'delivered' | 'queued'

/**
 * Anything `attach` accepts: an Authenticator of `auth-shield` or `auth-shield/js` (the feed sets
 * `revocationUnavailable` through their private store seam, base/store-seam.js).
 */
export type RevocableAuthenticator = import('../../index').Authenticator | import('../../js/index').Authenticator

export interface RevocationFeedOptions {
  /** Key prefix of the sets and the stream. Default `'auth-shield:revocations'`. */
  prefix?: string | undefined
  /** Approximate bound of the stream (`XADD MAXLEN ~`), 100..1e8. Default 100000. */
  maxLen?: number | undefined
  /** Milliseconds without a successful stream read before the feed is stale, 100..86400000. Default 5000. */
  maxRevocationLagMs?: number | undefined
  /** While stale: `'open'` (default) admits tokens not known to be revoked; `'closed'` refuses them with `revocation_unavailable` (503). */
  onStale?: 'open' | 'closed' | undefined
  /** Milliseconds before a Redis command is given up (`ERR_AUTH_SHIELD_STORE_TIMEOUT`), 10..600000. Default 2000. */
  commandTimeoutMs?: number | undefined
  /** How long a subject revocation is kept in Redis after its cut-off. Default: the attached authenticators' longest TTL plus one day. */
  subjectRetentionSec?: number | undefined
  /**
   * Most revocations waiting for Redis (one per token or subject), 1..10000000. Default 10000.
   * At the bound a new one is refused: `revokeToken` / `revokeSubject` throw an `Error` with code
   * `ERR_AUTH_SHIELD_REVOCATION_QUEUE_FULL`, and nothing is revoked.
   */
  maxQueued?: number | undefined
  /**
   * Most live revocations the feed keeps to re-publish when Redis lost its data, 1..100000000.
   * Default 1000000. At the bound a new one is refused (`RangeError`, `ERR_AUTH_SHIELD_REVOCATION_LIMIT`).
   */
  maxKnown?: number | undefined
  /** Failed reads and writes, and entries an authenticator refused (at `maxRevocations`); never thrown. */
  onError?: ((err: Error) => void) | undefined
  /** Called with the number of stream entries just applied (metrics, tests). */
  onApplied?: ((count: number) => void) | undefined
}

export interface RevocationFeedStats {
  applied: number
  reloads: number
  readErrors: number
  refused: number
  written: number
  /** Write attempts that failed or timed out (the revocations stay queued). */
  writeErrors: number
  /** Times Redis was found without the data this feed loaded, and what it knew was re-published. */
  rebuilds: number
  /** Revocations re-published by those rebuilds. */
  republished: number
  /** Revocations waiting for Redis now (at most `maxQueued`). */
  queued: number
  /** Live revocations kept for re-publishing (at most `maxKnown`). */
  known: number
  /** Queued revocations `close()` gave up on (not delivered). */
  undelivered: number
  stale: boolean
  lastId: string | null
}

/** Follows the shared revocations of one Redis and applies them to the attached authenticators. */
/** What `RevocationFeed#metrics()` returns (docs/observability.md). */
export interface RevocationFeedMetrics {
  applied: number
  refused: number
  readErrors: number
  writeErrors: number
  queued: number
  /** Seconds since the last successful read of the stream; null before the first. */
  lagSeconds: number | null
  stale: boolean
}

export declare class RevocationFeed {
  /** `client`: a connected node-redis (4, 5 or 6) or ioredis (5 or 6) client. */
  constructor(client: object, options?: RevocationFeedOptions)
  /** Applies shared revocations to `authenticator` and makes its revoke methods write through (Promise-returning). Before `start()`. */
  attach(authenticator: RevocableAuthenticator): this
  /** Loads the current set, then follows the stream in the background. */
  start(): Promise<void>
  /**
   * Stops following, closes the feed's own connection and ends the attached methods' write-through. What
   * is still queued gets one more `commandTimeoutMs`, then is dropped (`stats().undelivered`).
   */
  close(): Promise<void>
  /**
   * Revokes locally at once, then in Redis. Throws at once (never rejects) on a bad argument,
   * `maxRevocations`, `maxQueued` or `maxKnown`; the Promise never rejects.
   */
  revokeToken(jti: string | undefined, expiresAtSec: number | undefined, options?: RevokeTokenOptions | null): Promise<RevocationDelivery>
  revokeSubject(sub: string, options?: RevokeSubjectOptions | null): Promise<RevocationDelivery>
  /** Past `maxRevocationLagMs` without a successful read. */
  readonly stale: boolean
  /** Counters read now (docs/observability.md); `stats()` is deprecated in favour of this. */
  metrics(): RevocationFeedMetrics
  stats(): RevocationFeedStats
}
