'use strict'

// Test support: an all-pairs (pairwise) covering set, made greedily and deterministically.
// Given factors (each a name and its values), it returns rows, one value per factor, such that
// every pair of values of every two factors appears together in at least one row: the faults
// that need two features at once are met without running the full product. A `allowed(row)`
// predicate, given a partial row (factors not yet chosen are absent), excludes combinations the
// caller declares impossible; pairs it refuses on their own are reported, never covered.
//
// The greedy is the usual one (as in AETG / IPO): each new row starts from the first uncovered
// pair and fills the other factors, largest first, with the value that covers the most pairs
// still uncovered; ties go to the earlier value. Same input, same rows.

/**
 * `factors`: `[{ name, values: [...] }]`. Returns `{ rows, excluded }`: `rows` are objects
 * `{ [name]: value }`; `excluded` the pairs `allowed` refuses on their own, as
 * `[{ [nameA]: a, [nameB]: b }]`.
 */
function allPairs(factors, { allowed = () => true } = {}) {
  checkFactors(factors)
  const n = factors.length
  // Values by index; a row is an array of value indexes (-1: not chosen yet).
  const sizes = factors.map((f) => f.values.length)
  const asObject = (row) => {
    const out = {}
    for (let i = 0; i < n; i++) if (row[i] >= 0) out[factors[i].name] = factors[i].values[row[i]]
    return out
  }
  const pairKey = (i, a, j, b) => `${i}:${a}|${j}:${b}`
  const uncovered = new Set()
  const excluded = []
  // The order in which pairs seed new rows: the largest factors' pairs first, they need most rows.
  const bySize = [...factors.keys()].sort((x, y) => sizes[y] - sizes[x] || x - y)
  const seeds = []
  for (let x = 0; x < n; x++) {
    for (let y = x + 1; y < n; y++) {
      const [i, j] = [Math.min(bySize[x], bySize[y]), Math.max(bySize[x], bySize[y])]
      for (let a = 0; a < sizes[i]; a++) {
        for (let b = 0; b < sizes[j]; b++) {
          const row = new Array(n).fill(-1)
          row[i] = a
          row[j] = b
          if (!allowed(asObject(row))) {
            excluded.push(asObject(row))
            continue
          }
          uncovered.add(pairKey(i, a, j, b))
          seeds.push([i, a, j, b])
        }
      }
    }
  }
  const gain = (row, i, v) => {
    let count = 0
    for (let j = 0; j < n; j++) {
      if (j === i || row[j] < 0) continue
      if (uncovered.has(i < j ? pairKey(i, v, j, row[j]) : pairKey(j, row[j], i, v))) count++
    }
    return count
  }
  const rows = []
  let next = 0
  while (uncovered.size > 0) {
    while (!uncovered.has(pairKey(...seeds[next]))) next++
    const [i, a, j, b] = seeds[next]
    const row = new Array(n).fill(-1)
    row[i] = a
    row[j] = b
    for (const k of bySize) {
      if (row[k] >= 0) continue
      let best = -1
      let bestGain = -1
      for (let v = 0; v < sizes[k]; v++) {
        row[k] = v
        if (allowed(asObject(row))) {
          const g = gain(row, k, v)
          if (g > bestGain) {
            best = v
            bestGain = g
          }
        }
        row[k] = -1
      }
      if (best < 0) throw new Error(`no value of ${factors[k].name} is allowed with ${JSON.stringify(asObject(row))}`)
      row[k] = best
    }
    for (let x = 0; x < n; x++) for (let y = x + 1; y < n; y++) uncovered.delete(pairKey(x, row[x], y, row[y]))
    rows.push(asObject(row))
  }
  return { rows, excluded }
}

/**
 * Pair coverage of `rows` over `factors`: `{ total, covered, missing }` where `total` counts the
 * pairs not excluded by `allowed` and `missing` lists those no row holds.
 */
function pairCoverage(factors, rows, { allowed = () => true } = {}) {
  checkFactors(factors)
  let total = 0
  const missing = []
  for (let i = 0; i < factors.length; i++) {
    for (let j = i + 1; j < factors.length; j++) {
      const [f, g] = [factors[i], factors[j]]
      for (const a of f.values) {
        for (const b of g.values) {
          const pair = { [f.name]: a, [g.name]: b }
          if (!allowed(pair)) continue
          total++
          if (!rows.some((row) => Object.is(row[f.name], a) && Object.is(row[g.name], b))) missing.push(pair)
        }
      }
    }
  }
  return { total, covered: total - missing.length, missing }
}

function checkFactors(factors) {
  if (!Array.isArray(factors) || factors.length < 2) throw new TypeError('pairwise needs at least two factors')
  const names = new Set()
  for (const f of factors) {
    if (typeof f.name !== 'string' || names.has(f.name)) throw new TypeError(`factor names must be distinct strings (${f.name})`)
    names.add(f.name)
    if (!Array.isArray(f.values) || f.values.length === 0) throw new TypeError(`factor ${f.name} has no values`)
    if (new Set(f.values).size !== f.values.length) throw new TypeError(`factor ${f.name} repeats a value`)
  }
}

module.exports = { allPairs, pairCoverage }
