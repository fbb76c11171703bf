// auth-shield/prometheus (docs/observability.md): Prometheus text exposition of the metrics.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { MetricsSources } from './otel'

export type { MetricsSources }

/** `text/plain; version=0.0.4; charset=utf-8`. */
export declare const CONTENT_TYPE: string

/** The text exposition of the sources' `metrics()`, read now. */
export declare function toPrometheus(sources: MetricsSources): string

/** A Node `(req, res)` handler answering with `toPrometheus(sources)`. */
export declare function prometheusHandler(sources: MetricsSources): (req: IncomingMessage, res: ServerResponse) => void
