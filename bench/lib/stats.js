'use strict'

function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

function summarize(values) {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values), n: values.length }
}

// Ratios are taken within each round (both sides measured back to back, under the same
// machine load) and only then summarised: a noisy neighbour slows both, not one.
function pairedRatio(numerator, denominator) {
  const ratios = numerator.map((value, round) => value / denominator[round])
  return summarize(ratios)
}

module.exports = { median, summarize, pairedRatio }
