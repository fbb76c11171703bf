// auth-shield/otel (docs/observability.md): observable instruments on the application's Meter.
// Structural types: @opentelemetry/api stays the application's dependency.

/** The part of an @opentelemetry/api `Meter` this module uses. */
export interface MeterLike {
  createObservableCounter(name: string, options?: { description?: string; unit?: string }): object
  createObservableGauge(name: string, options?: { description?: string; unit?: string }): object
  addBatchObservableCallback(callback: (observer: any) => void, observables: object[]): void
  removeBatchObservableCallback(callback: (observer: any) => void, observables: object[]): void
}

/** Anything with a `metrics()` snapshot: an Authenticator (either engine), a RedisStore, a RemoteJwks. */
export interface MetricsSource {
  metrics(): object
}

/** `{ name: source }` per kind; names (1 to 64 characters, at most 256 per kind) become attribute values. */
export interface MetricsSources {
  authenticators?: Record<string, MetricsSource> | undefined
  stores?: Record<string, MetricsSource> | undefined
  jwks?: Record<string, MetricsSource> | undefined
  /** RevocationFeeds (auth-shield/redis). */
  feeds?: Record<string, MetricsSource> | undefined
}

export interface MetricsRegistration {
  /** Removes the callback: the instruments report nothing more. */
  unregister(): void
}

/** Registers the instruments of docs/observability.md on `meter`, read at each collection. */
export declare function registerMetrics(meter: MeterLike, sources: MetricsSources): MetricsRegistration

/** The attribute names used. */
export declare const ATTRIBUTES: Readonly<Record<string, string>>
