'use strict'

function formatTime(ns) {
  if (ns < 1e3) return `${ns.toFixed(0)} ns`
  if (ns < 1e6) return `${(ns / 1e3).toFixed(ns < 1e4 ? 2 : 1)} µs`
  return `${(ns / 1e6).toFixed(ns < 1e7 ? 2 : 1)} ms`
}

// Axis ticks: 1 µs, 10 µs, 250 ms… without trailing zeros.
function formatTick(ns) {
  const [value, unit] = ns === 0 ? [0, ''] : ns < 1e3 ? [ns, ' ns'] : ns < 1e6 ? [ns / 1e3, ' µs'] : ns < 1e9 ? [ns / 1e6, ' ms'] : [ns / 1e9, ' s']
  return `${Number(value.toPrecision(3))}${unit}`
}

function formatRatio(x) {
  return `${x < 10 ? x.toFixed(2) : x.toFixed(1)}×`
}

function formatPercent(x) {
  return `${(x * 100).toFixed(0)} %`
}

function formatRps(x) {
  return Math.round(x).toLocaleString('en-US')
}

module.exports = { formatTick, formatTime, formatRatio, formatPercent, formatRps }
