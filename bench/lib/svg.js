'use strict'
// A dependency-free horizontal bar chart: one panel per section, medians as bars, min–max
// as a whisker, auth-shield's bars in a second colour. Per-call panels use a log scale
// because the contenders span three orders of magnitude.

const { formatTick, formatTime, formatRps } = require('./format')

const WIDTH = 960
const LABEL_W = 360
const BAR_AREA = 440
const ROW_H = 24
const PANEL_TOP = 46
const COLORS = { ours: '#d9480f', other: '#4c6ef5', grid: '#dee2e6', text: '#212529', muted: '#868e96' }

function escapeXml(text) {
  return String(text).replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&#39;' })[c])
}

function logScale(values) {
  const lo = 10 ** Math.floor(Math.log10(Math.min(...values)))
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...values)))
  const x = (v) => ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * BAR_AREA
  const ticks = []
  for (let t = lo; t <= hi * 1.0001; t *= 10) ticks.push(t)
  return { x, ticks, floor: lo }
}

function linearScale(values) {
  const max = Math.max(...values)
  const step = 10 ** Math.floor(Math.log10(max / 4 || 1))
  const niceStep = [1, 2, 5, 10].map((m) => m * step).find((s) => max / s <= 6)
  const hi = Math.ceil(max / niceStep) * niceStep
  const ticks = []
  for (let t = 0; t <= hi; t += niceStep) ticks.push(t)
  return { x: (v) => (v / hi) * BAR_AREA, ticks, floor: 0 }
}

function panel(p, top) {
  const values = p.bars.flatMap((b) => [b.value, b.min, b.max]).filter((v) => v > 0)
  const scale = p.log ? logScale(values) : linearScale(values)
  const height = PANEL_TOP + p.bars.length * ROW_H + 28
  const out = [`<g transform="translate(0,${top})">`]
  out.push(`<text x="16" y="22" font-size="15" font-weight="600" fill="${COLORS.text}">${escapeXml(p.title)}</text>`)
  out.push(`<text x="16" y="38" font-size="11" fill="${COLORS.muted}">${escapeXml(p.note)}</text>`)
  const chartBottom = PANEL_TOP + p.bars.length * ROW_H
  for (const t of scale.ticks) {
    const x = LABEL_W + scale.x(t)
    out.push(`<line x1="${x}" y1="${PANEL_TOP - 4}" x2="${x}" y2="${chartBottom}" stroke="${COLORS.grid}"/>`)
    out.push(`<text x="${x}" y="${chartBottom + 14}" font-size="10" text-anchor="middle" fill="${COLORS.muted}">${escapeXml(p.format(t))}</text>`)
  }
  p.bars.forEach((b, i) => {
    const y = PANEL_TOP + i * ROW_H
    const w = Math.max(1, scale.x(b.value))
    const color = b.ours ? COLORS.ours : COLORS.other
    out.push(`<text x="${LABEL_W - 8}" y="${y + 15}" font-size="12" text-anchor="end" fill="${COLORS.text}">${escapeXml(b.label)}</text>`)
    out.push(`<rect x="${LABEL_W}" y="${y + 4}" width="${w.toFixed(1)}" height="${ROW_H - 8}" fill="${color}" rx="2"/>`)
    if (b.min > 0 && b.max > b.min) {
      const x1 = LABEL_W + scale.x(b.min)
      const x2 = LABEL_W + scale.x(b.max)
      out.push(`<line x1="${x1.toFixed(1)}" y1="${y + 12}" x2="${x2.toFixed(1)}" y2="${y + 12}" stroke="${COLORS.text}" stroke-width="1.2"/>`)
    }
    out.push(`<text x="${LABEL_W + BAR_AREA + 10}" y="${y + 15}" font-size="12" fill="${COLORS.text}">${escapeXml(b.text)}</text>`)
  })
  out.push('</g>')
  return { svg: out.join('\n'), height }
}

function timedPanel(section, note) {
  return {
    title: section.title,
    note,
    log: true,
    format: formatTick,
    bars: section.rows.map((r) => ({
      label: r.label,
      value: r.nsPerOp.median,
      min: r.nsPerOp.min,
      max: r.nsPerOp.max,
      ours: r.id.startsWith('native') || r.id.startsWith('ours') || r.id === 'js-engine',
      text: formatTime(r.nsPerOp.median),
    })),
  }
}

function renderChart(results) {
  const { env } = results
  const panels = []
  const s = results.sections
  if (s.perCall) panels.push(timedPanel(s.perCall, 'time per call, log scale, shorter is faster; whisker = min–max of rounds'))
  if (s.verifyOnly) panels.push(timedPanel(s.verifyOnly, 'time per verification, log scale, shorter is faster; jose is async (awaited in a loop)'))
  if (s.http) {
    panels.push({
      title: s.http.title,
      note: 'requests per second, longer is better; the load generator shares the machine with the server',
      log: false,
      format: (v) => formatRps(v),
      bars: s.http.rows.map((r) => ({
        label: r.label,
        value: r.rps.median,
        min: r.rps.min,
        max: r.rps.max,
        ours: r.auth.startsWith('auth-shield'),
        text: `${formatRps(r.rps.median)} req/s${r.auth === 'none' ? '' : ` (${Math.round(r.ofNoAuth.median * 100)} %)`}`,
      })),
    })
  }
  if (s.argon2) {
    panels.push({ ...timedPanel(s.argon2, 'time per hash / verify, shorter is faster'), log: false })
  }
  if (s.uuid && s.uuid.rows) panels.push(timedPanel(s.uuid, 'time per id'))

  const header = `auth-shield benchmark — ${env.date.slice(0, 10)} — Node ${env.node}, ${env.cpu} (${env.cores} cores), addon build: ${env.authShield.build}, mode: ${env.mode}`
  let top = 34
  const bodies = []
  for (const p of panels) {
    const { svg, height } = panel(p, top)
    bodies.push(svg)
    top += height + 10
  }
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${top}" viewBox="0 0 ${WIDTH} ${top}" font-family="system-ui, -apple-system, Segoe UI, Helvetica, Arial, sans-serif">`,
    `<rect width="100%" height="100%" fill="#ffffff"/>`,
    `<text x="16" y="22" font-size="12" fill="${COLORS.muted}">${escapeXml(header)}</text>`,
    ...bodies,
    '</svg>',
    '',
  ].join('\n')
}

module.exports = { renderChart }
