'use strict'

// auth-shield/prometheus: the instruments of docs/observability.md as Prometheus text
// exposition (format 0.0.4), for applications without OpenTelemetry. Names follow Prometheus
// conventions: the OpenTelemetry name with `_` for `.`, base units in the name (`_seconds`),
// `_total` on counters, and the call duration as a real histogram (`_bucket` with `le`, `_sum`,
// `_count`). Reading is one metrics() snapshot per source per scrape.

const { INSTRUMENTS, readAllSources, observe } = require('./instruments')

const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8'
const DURATION_KEYS = new Set(['durationCount', 'durationSum', 'durationBucket'])
const DURATION = 'auth_shield_authentication_duration_seconds'

/** The Prometheus name of an instrument (without `_total`). */
function baseName({ name, unit }) {
  const base = name.replace(/\./g, '_')
  return unit === 's' && !base.endsWith('_seconds') ? `${base}_seconds` : base
}

function labels(attributes) {
  const parts = Object.entries(attributes).map(([k, v]) => `${k.replace(/\./g, '_')}="${String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`)
  return parts.length === 0 ? '' : `{${parts.join(',')}}`
}

function number(v) {
  if (Number.isNaN(v)) return 'NaN'
  if (v === Infinity) return '+Inf'
  if (v === -Infinity) return '-Inf'
  return String(v)
}

// The family of each instrument key, named once.
const FAMILY_OF = new Map(
  Object.entries(INSTRUMENTS).map(([key, spec]) => [key, DURATION_KEYS.has(key) ? DURATION : `${baseName(spec)}${spec.kind === 'counter' ? '_total' : ''}`]),
)
const SUFFIX_OF = { durationBucket: '_bucket', durationSum: '_sum', durationCount: '_count' }

/**
 * The text exposition of `{ authenticators, stores, jwks, feeds }` (each `{ name: source }`,
 * as for registerMetrics), read now.
 */
function toPrometheus(sources = {}) {
  return render(readAllSources(sources))
}

/** The exposition of sources checked by readAllSources; label texts are kept on `lists` for the next scrape. */
function render(lists) {
  if (lists.labels === undefined) lists.labels = new WeakMap()
  const labelCache = lists.labels
  // Family name -> { help, type, lines }, in the order of INSTRUMENTS.
  const families = new Map()
  for (const [key, spec] of Object.entries(INSTRUMENTS)) {
    const name = FAMILY_OF.get(key)
    if (!families.has(name)) families.set(name, DURATION_KEYS.has(key) ? { type: 'histogram', help: 'Duration of authenticate calls', lines: [] } : { type: spec.kind, help: spec.description, lines: [] })
  }
  observe(lists, (key, value, attributes) => {
    const name = FAMILY_OF.get(key)
    let text = labelCache.get(attributes)
    if (text === undefined) labelCache.set(attributes, (text = labels(attributes)))
    families.get(name).lines.push(`${name}${SUFFIX_OF[key] || ''}${text} ${number(value)}`)
  })
  let out = ''
  for (const [name, { type, help, lines }] of families) {
    if (lines.length === 0) continue
    out += `# HELP ${name} ${help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n')}\n# TYPE ${name} ${type}\n${lines.join('\n')}\n`
  }
  return out
}

/** A Node `(req, res)` handler answering every request with `toPrometheus(sources)`. */
function prometheusHandler(sources) {
  // Checked once; the sources are the same for every scrape (as registerMetrics reads them).
  const lists = readAllSources(sources)
  return (req, res) => {
    const body = render(lists)
    res.writeHead(200, { 'content-type': CONTENT_TYPE, 'content-length': Buffer.byteLength(body) })
    res.end(body)
  }
}

module.exports = { toPrometheus, prometheusHandler, CONTENT_TYPE }
