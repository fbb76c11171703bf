'use strict'
// Plain-text tables for stdout.

const { formatTime, formatRatio, formatPercent, formatRps } = require('./format')

function renderTable(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)))
  const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ')
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n')
}

function renderTimed(section) {
  const rows = section.rows.map((r) => [
    r.label,
    formatTime(r.nsPerOp.median),
    `${formatTime(r.nsPerOp.min)} – ${formatTime(r.nsPerOp.max)}`,
    r.id === (r.baselineId || section.baseline)
      ? '1 (baseline)'
      : `${formatRatio(r.vsBaseline.median)} (${formatRatio(r.vsBaseline.min)}–${formatRatio(r.vsBaseline.max)})`,
  ])
  const out = [
    `${section.title}`,
    renderTable(['contender', 'median', 'min – max', 'time ÷ baseline, per round'], rows),
  ]
  const baseline = section.rows.find((r) => r.id === section.baseline)
  out.push(`  baseline: ${baseline.label}${section.rows.some((r) => r.baselineId && r.baselineId !== section.baseline) ? ' (verify rows: auth-shield verifyPassword)' : ''}; a ratio above 1 means the contender is slower than the baseline`)
  for (const u of section.unavailable || []) out.push(`  not available: ${u.label} — ${u.reason}`)
  return out.join('\n')
}

// autocannon's histogram has 1 ms resolution.
function formatLatency(ms) {
  return ms < 1 ? '< 1 ms' : `${ms} ms`
}

function renderHttp(section) {
  const rows = section.rows.map((r) => [
    r.label,
    formatRps(r.rps.median),
    `${formatRps(r.rps.min)} – ${formatRps(r.rps.max)}`,
    r.auth === 'none' ? '100 %' : formatPercent(r.ofNoAuth.median),
    r.cpuUsPerRequest === undefined ? '–' : `${r.cpuUsPerRequest.median.toFixed(1)} µs`,
    r.cpuShareOfNoAuth === undefined ? '–' : r.auth === 'none' ? '100 %' : formatPercent(r.cpuShareOfNoAuth.median),
    formatLatency(r.p50Ms.median),
    formatLatency(r.p99Ms.median),
  ])
  const headers = ['server', 'req/s', 'min – max', 'of no-auth', 'server CPU/req', 'CPU share', 'p50', 'p99']
  return [section.title, renderTable(headers, rows), "(CPU share: no-auth CPU per request ÷ this one's, the req/s share a CPU-bound server keeps)"].join('\n')
}

function renderScaleOut(section) {
  if (section.skipped) return `Scale-out: skipped — ${section.skipped}`
  const rows = section.rows.map((r) => [
    r.label,
    formatRps(r.rps.median),
    `${formatRps(r.rps.min)} – ${formatRps(r.rps.max)}`,
    r.store ? formatPercent(r.ofMemory.median) : '100 %',
    r.store ? `${(r.waitedShare.median * 100).toFixed(3)} %` : '–',
    r.store && r.roundTripsPerThousand ? r.roundTripsPerThousand.median.toFixed(1) : '–',
    `${r.cpuUsPerRequest.median.toFixed(1)} µs`,
    r.store ? formatPercent(r.cpuShareOfMemory.median) : '100 %',
    formatLatency(r.p50Ms.median),
    formatLatency(r.p99Ms.median),
  ])
  const headers = ['server', 'req/s', 'min – max', 'of in-memory', 'waited for Redis', 'Redis trips / 1k req', 'server CPU/req', 'CPU share', 'p50', 'p99']
  return [section.title, renderTable(headers, rows), '(CPU share: in-memory CPU per request ÷ this one\'s, the req/s share a CPU-bound server keeps)'].join('\n')
}

function renderTargets(targets, quick) {
  if (!targets.length) return ''
  const rows = targets.map((t) => [t.name, t.measured, t.goal, t.met ? 'met' : 'NOT met'])
  const title = quick
    ? 'Speed targets (issue 5) — quick mode: too few, too short samples to judge them; use a full run'
    : 'Speed targets (issue 5)'
  return [title, renderTable(['target', 'measured', 'goal', ''], rows)].join('\n')
}

module.exports = { renderTimed, renderHttp, renderScaleOut, renderTargets }
