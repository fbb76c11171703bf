'use strict'

// The all-pairs generator the combination suite runs on (__test__/support/pairwise.js): every
// pair of values of every two factors is in some row, rows respect the constraint, the same
// input gives the same rows, and the set is far smaller than the product.

const { it } = require('node:test')
const assert = require('node:assert/strict')
const { allPairs, pairCoverage } = require('../support/pairwise')

const f = (name, n) => ({ name, values: Array.from({ length: n }, (_, i) => `${name}${i}`) })

it('covers every pair of three binary factors in 4 rows (the optimum)', () => {
  const factors = [f('a', 2), f('b', 2), f('c', 2)]
  const { rows } = allPairs(factors)
  assert.deepEqual(pairCoverage(factors, rows).missing, [])
  assert.equal(rows.length, 4)
})

it('covers every pair of mixed factors, far fewer rows than the product, deterministically', () => {
  // The shape of the combination suite: 5 × 3 × 4 × 3 × 4 × 2 × 6 × 2 = 17,280 combinations.
  const factors = [f('source', 5), f('sender', 3), f('route', 4), f('state', 3), f('observe', 4), f('shadow', 2), f('adapter', 6), f('engine', 2)]
  const { rows } = allPairs(factors)
  const coverage = pairCoverage(factors, rows)
  assert.deepEqual(coverage.missing, [])
  assert.equal(coverage.covered, coverage.total)
  // At least the largest two factors' product (30), and within a few rows of it.
  assert.ok(rows.length >= 30 && rows.length <= 40, `${rows.length} rows`)
  assert.deepEqual(allPairs(factors).rows, rows)
  for (const row of rows) assert.deepEqual(Object.keys(row).sort(), factors.map((x) => x.name).sort())
})

it('keeps rows inside the constraint and reports the pairs it excludes', () => {
  const factors = [f('state', 3), f('shadow', 2), f('adapter', 4)]
  const allowed = (row) => !(row.shadow === 'shadow1' && row.state !== undefined && row.state !== 'state0')
  const { rows, excluded } = allPairs(factors, { allowed })
  assert.deepEqual(excluded, [
    { state: 'state1', shadow: 'shadow1' },
    { state: 'state2', shadow: 'shadow1' },
  ])
  for (const row of rows) assert.ok(allowed(row), JSON.stringify(row))
  assert.deepEqual(pairCoverage(factors, rows, { allowed }).missing, [])
})

it('pairCoverage finds a missing pair (the check is not vacuous)', () => {
  const factors = [f('a', 2), f('b', 2)]
  const rows = [
    { a: 'a0', b: 'b0' },
    { a: 'a1', b: 'b1' },
    { a: 'a0', b: 'b1' },
  ]
  assert.deepEqual(pairCoverage(factors, rows), { total: 4, covered: 3, missing: [{ a: 'a1', b: 'b0' }] })
})

it('refuses factors it cannot cover', () => {
  assert.throws(() => allPairs([f('a', 2)]), TypeError)
  assert.throws(() => allPairs([f('a', 2), { name: 'b', values: [] }]), TypeError)
  assert.throws(() => allPairs([f('a', 2), { name: 'a', values: [1] }]), TypeError)
  // a1 goes with no value of c: a row seeded by (a1, b0) cannot be completed.
  assert.throws(() => allPairs([f('a', 2), f('b', 2), f('c', 2)], { allowed: (row) => !(row.a === 'a1' && row.c !== undefined) }), /no value of c/)
})
