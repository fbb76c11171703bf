// auth-shield/events (docs/observability.md): hooks that cannot flood, fed from metrics().
import type { MetricsSources } from './otel'

export type { MetricsSources }

export interface MetricsHooks {
  /** Refusals other than rate limiting since the last call, by `errorCode`. */
  onAuthFailure?: ((event: { authenticator: string; failed: number; failures: Record<string, number> }) => unknown) | undefined
  /** `rate_limited` and `rate_limit_pending` refusals since the last call. */
  onRateLimited?: ((event: { authenticator: string; limited: number; pending: number }) => unknown) | undefined
  /** A store went on its local fallback. */
  onStoreOutage?: ((event: { store: string }) => unknown) | undefined
  /** A store is back; `fallbackSeconds` is its total time on the fallback. */
  onStoreRecovery?: ((event: { store: string; fallbackSeconds: number }) => unknown) | undefined
  /** A key set became older than `staleKeysAfterSeconds`, or none is in force (once per episode). */
  onStaleKeys?: ((event: { jwks: string; issuer?: string | undefined; keyAgeSeconds: number | null; keysAvailable: boolean; failures: number }) => unknown) | undefined
  /** What a hook threw or rejected with. */
  onError?: ((err: Error) => unknown) | undefined
}

export interface WatchMetricsOptions {
  /** How often the snapshots are read, and so the most often each hook is called per source: 100 to 3600000 ms, default 1000. */
  intervalMs?: number | undefined
  /** Default 3600. */
  staleKeysAfterSeconds?: number | undefined
  /** How long a hook's Promise may stay pending before it counts as failed; default 10000. */
  callbackTimeoutMs?: number | undefined
}

export interface MetricsWatch {
  /** Runs a round now. */
  check(): void
  /** Stops the timer. */
  close(): void
}

export declare function watchMetrics(sources: MetricsSources, hooks: MetricsHooks, options?: WatchMetricsOptions): MetricsWatch
export declare const MIN_INTERVAL_MS: number
export declare const DEFAULT_INTERVAL_MS: number
