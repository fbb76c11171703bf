'use strict'

// docs/packaging.md's entry-point table is generated from package.json `exports`
// (scripts/entry-points-doc.js): an export added without the table, or a row for a path that is
// gone, fails here. `node scripts/entry-points-doc.js` rewrites it.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { render, withTable, OUT } = require('../../scripts/entry-points-doc')
const pkg = require('../../package.json')

test("docs/packaging.md lists every export of package.json with its files, as the script writes it", () => {
  const text = fs.readFileSync(OUT, 'utf8')
  assert.equal(text, withTable(text, render()), 'run: node scripts/entry-points-doc.js')
  for (const key of Object.keys(pkg.exports)) {
    const name = key === '.' ? pkg.name : `${pkg.name}/${key.slice(2)}`
    assert.ok(text.includes(`| \`${name}\` |`), name)
  }
})

test('a new export without its row fails the comparison', () => {
  const text = fs.readFileSync(OUT, 'utf8')
  const more = { ...pkg, exports: { ...pkg.exports, './extra': { import: { types: './x.d.ts', default: './x.mjs' }, require: { types: './x.d.ts', default: './x.js' } } } }
  assert.notEqual(withTable(text, render(more)), text)
})
