// Types of `auth-shield/redis` (hand-written). docs/scale-out.md is the reference.

import type { EventEmitter } from 'node:events'

/** A connected node-redis (v4+) or ioredis client; the store only sends commands through it. */
export type RedisClientLike = object

/** A shared bucket for `store.consume`. */
export interface SharedLimit {
  /** Tokens a key can spend at once, an integer from 1 to 1e9. */
  capacity: number
  /** Tokens returned per second, greater than 0 and at most 1e9. */
  refillPerSec: number
}

export interface RedisStoreOptions {
  /** Prefix of every Redis key the store writes. Default `'auth-shield:'`. */
  prefix?: string | undefined
  /**
   * Most tokens a process holds of one identity's shared bucket. Default
   * `max(1, min(100, floor(rateLimitMax / 10)))`, at most `rateLimitMax`.
   */
  lease?: number | undefined
  /** Lease 1 fetched by the request that needs it: one round trip per request (requests arriving together share one). Default false. */
  strict?: boolean | undefined
  /** Most identities whose leases a process holds (memory bound), and most requests waiting in the store's recovery at once (past that: 503 with Retry-After). Default 100000. */
  maxKeys?: number | undefined
  /** Each Redis round trip fails after this many ms. Default 500. */
  commandTimeoutMs?: number | undefined
  /** @deprecated The old name of `commandTimeoutMs` (a one-time DeprecationWarning `AUTH_SHIELD_DEP_STORE_TIMEOUT_MS`; not with it). */
  timeoutMs?: number | undefined
  /** Shortest pause of the background loop that renews low leases, ms (it backs off up to 8× while renewals have slack to spare). Default 10. */
  renewIntervalMs?: number | undefined
  /** While Redis is down, how often it is probed, ms. Default 1000. */
  retryIntervalMs?: number | undefined
  /** Share of the limit each process allows on its own while Redis is down, (0, 1]. Default 1. */
  outageShare?: number | undefined
  /** The bucket `consume` uses when it is not given one. */
  limit?: SharedLimit | undefined
  /** The DPoP replay store (`store.dpopReplay()`) only: WAIT for this many replicas after each write batch; fewer refuse (503). Default 0 (off). */
  dpopWaitReplicas?: number | undefined
  /** The DPoP replay store only: the WAIT timeout of `dpopWaitReplicas`, ms. Default 100. */
  dpopWaitTimeoutMs?: number | undefined
}

export interface AttachOptions {
  lease?: number | undefined
  strict?: boolean | undefined
  maxKeys?: number | undefined
  outageShare?: number | undefined
  /** Redis key space of this limit; default `<rateLimitMax>/<rateLimitRefillPerSec>`. */
  name?: string | undefined
}

export interface SharedLimitDecision {
  allowed: boolean
  remaining: number
  /** 0 when allowed, else the wait until this cost fits. */
  retryAfterMs: number
}

export interface RedisStoreStats {
  roundTrips: number
  failedRoundTrips: number
  /** Identities asked for (several per round trip). */
  leaseRequests: number
  /** Waits of requests for a lease (the middleware's recovery; at most 3 per request). */
  recoveries: number
  fallbackGrants: number
  outages: number
}

/**
 * Anything `attach` accepts: an Authenticator of `auth-shield` or `auth-shield/js`. The store
 * drives its limit through their private store seam (base/store-seam.js), not public methods.
 */
export type SharedLimitAuthenticator = import('../../index').Authenticator | import('../../js/index').Authenticator

/** What `RedisStore#metrics()` returns (docs/observability.md). */
export interface RedisStoreMetrics {
  roundTrips: number
  failedRoundTrips: number
  /** Outages begun (Redis unreachable). */
  outages: number
  /** True while Redis is unreachable and limits are local (`!available`). */
  fallback: boolean
  /** Seconds spent on the local fallback, the outage under way included. */
  fallbackSeconds: number
}

export declare class RedisStore extends EventEmitter {
  readonly options: Readonly<Required<Omit<RedisStoreOptions, 'lease' | 'limit'>>> & Pick<RedisStoreOptions, 'lease' | 'limit'>
  readonly stats: RedisStoreStats
  /** `'node-redis'` or `'ioredis'`. */
  readonly clientKind: 'node-redis' | 'ioredis'
  /** `'single'`, `'sentinel'` or `'cluster'`: the client's topology, which decides where the keys go. */
  readonly topology: 'single' | 'sentinel' | 'cluster'
  /** False while Redis is unreachable and limits are local. */
  readonly available: boolean
  /** Counters read now (docs/observability.md); `stats` is deprecated in favour of this. */
  metrics(): RedisStoreMetrics
  /** `'rate_limit_pending'`: what `authenticate()` returns for an identity without a lease yet. */
  readonly pendingCode: 'rate_limit_pending'
  /** The middleware's recovery: fetches the waiting leases, then resolves to true. */
  readonly recover: () => Promise<boolean>
  /** Shares this authenticator's rate limit through Redis from now on. */
  attach(authenticator: SharedLimitAuthenticator, options?: AttachOptions): this
  /** Fetches every waiting lease; resolves when each is answered (never rejects). */
  flush(): Promise<void>
  /** Takes `cost` tokens of `key`'s shared bucket (one round trip). */
  consume(key: string, cost?: number, limit?: SharedLimit): Promise<SharedLimitDecision>
  /**
   * The shared DPoP replay store over this store's client, for the middleware option
   * `dpopReplayStore`: this store's `prefix`, `commandTimeoutMs`, `dpopWaitReplicas` and
   * `dpopWaitTimeoutMs`, each overridden by `options`.
   */
  dpopReplay(options?: DpopReplayStoreOptions): DpopReplayStore
  /** Stops the background loop; the client stays open. */
  close(): Promise<void>
  on(event: 'outage', listener: (err: unknown) => void): this
  on(event: 'recovered', listener: () => void): this
  /**
   * The cluster client's own API failed while asked to refresh its slot map
   * (`ERR_AUTH_SHIELD_STORE_CLIENT`, the client's error in `cause`): a failover may not heal.
   * Without a listener, a process warning once.
   */
  on(event: 'clientError', listener: (err: Error & { code: 'ERR_AUTH_SHIELD_STORE_CLIENT' }) => void): this
}

export declare function createRedisStore(client: RedisClientLike, options?: RedisStoreOptions): RedisStore

/** Options of `createDpopReplayStore`. */
export interface DpopReplayStoreOptions {
  /** Prefix of the keys (`<prefix>dpop:<sha256 hex>`). Default `'auth-shield:'`. */
  prefix?: string | undefined
  /** Each write fails after this long; the request is then refused (503). Default 500. */
  commandTimeoutMs?: number | undefined
  /** After each write batch, WAIT for this many replicas to acknowledge it; fewer refuse the batch's requests (503 `dpop_replay_unavailable`). Default 0 (off). */
  dpopWaitReplicas?: number | undefined
  /** The WAIT timeout, ms (the round trip may take `commandTimeoutMs` more). Default 100. */
  dpopWaitTimeoutMs?: number | undefined
}

/**
 * DPoP proofs shared by every process through Redis (the middleware option `dpopReplayStore`):
 * `SET NX PX` of each DPoP request the engine accepted, the requests of one event-loop turn in
 * one script (docs/sender-constrained.md).
 */
export declare class DpopReplayStore {
  readonly options: Required<DpopReplayStoreOptions>
  /** `roundTrips`: commands sent (scripts, SETs, WAITs); `batches`: event-loop turns that sent any. */
  readonly stats: { admitted: number; replayed: number; failed: number; roundTrips: number; batches: number }
  /** `'fresh'` the first time, `'replayed'` while held; rejects when Redis fails or is late. */
  admit(replayKey: string, ttlMs: number): Promise<'fresh' | 'replayed'>
  /** Forgets a key this store admitted for a request a later check refused (best effort, DEL). */
  release(replayKey: string): void
}

export declare function createDpopReplayStore(client: RedisClientLike, options?: DpopReplayStoreOptions): DpopReplayStore

export { RevocationFeed } from './revocations'
export type { RevocationFeedOptions, RevocableAuthenticator, RevocationDelivery } from './revocations'
