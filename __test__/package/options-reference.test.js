'use strict'

// docs/options.md is generated from contract/options.json (scripts/options-doc.js, `npm run
// docs:options`): every option's name, type, default, bounds and description, so the reference
// states each fact once and cannot drift from what both engines read.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { render, OUT, BAGS } = require('../../scripts/options-doc')
const SCHEMA = require('../../contract/options.json')

test('docs/options.md is what the schema generates (run `npm run docs:options` after a schema change)', () => {
  assert.equal(fs.readFileSync(OUT, 'utf8'), render())
})

/** `{ [heading]: [[cell, …], …] }`: the table rows of docs/options.md, unescaped. */
function tables(text) {
  const out = {}
  let heading = null
  for (const line of text.split('\n')) {
    if (line.startsWith('## ')) heading = line.slice(3)
    if (!line.startsWith('| `') || heading === null) continue
    const cells = line.slice(2, -2).split(/ (?<!\\)\| /).map((c) => c.replace(/\\\|/g, '|'))
    ;(out[heading] ??= []).push(cells)
  }
  return out
}

test('each option row carries the schema entry: name, type, default, bounds and description', () => {
  const read = tables(fs.readFileSync(OUT, 'utf8'))
  let rows = 0
  for (const [keys, heading] of BAGS) {
    const entries = keys.flatMap((k) => SCHEMA[k])
    assert.equal(read[heading].length, entries.length, heading)
    entries.forEach((option, i) => {
      const [name, type, def, bounds, doc] = read[heading][i]
      assert.equal(name, `\`${option.name}\``)
      assert.equal(doc, option.doc, option.name)
      if (option.kind === 'enum') for (const v of option.values) assert.ok(type.includes(typeof v === 'string' ? `'${v}'` : String(v)), option.name)
      else assert.ok(type.length > 0, option.name)
      if (option.default !== undefined && option.default !== null) {
        const shown = Array.isArray(option.default) ? option.default.join(' ') : String(option.default)
        assert.ok(def.includes(shown), `${option.name}: ${def}`)
      }
      if (option.max !== undefined) assert.ok(bounds.includes(String(option.max)), `${option.name}: ${bounds}`)
      if (option.min !== undefined) assert.ok(bounds.includes(String(option.min)), `${option.name}: ${bounds}`)
      if (option.exclusiveMin) assert.ok(bounds.startsWith('>'), option.name)
      rows++
    })
  }
  assert.ok(rows > 60, `${rows} rows`)
  // The helpers' names and the renamed options are listed too.
  assert.deepEqual(read['Options of the helpers and other calls'].map((r) => r[0]), SCHEMA.callOptions.map((c) => `\`${c.type}\``))
  assert.deepEqual(read['Renamed options'].map((r) => [r[1], r[2], r[3]]), SCHEMA.renamed.map((r) => [`\`${r.name}\``, `\`${r.use}\``, `\`${r.code}\``]))
})

test('every renamed option names a new option of its bag and a distinct AUTH_SHIELD_DEP_ code per fact', () => {
  const namesOf = (bag) => {
    if (bag === 'options') return SCHEMA.options.map((o) => o.name)
    if (bag in SCHEMA) return SCHEMA[bag].map((o) => o.name)
    const call = SCHEMA.callOptions.find((c) => c.type === bag)
    return call ? call.names : null
  }
  for (const r of SCHEMA.renamed) {
    assert.match(r.code, /^AUTH_SHIELD_DEP_[A-Z0-9_]+$/)
    const names = namesOf(r.bag)
    // Bags that are not options objects (the getter, the error property) are checked by option-bags.test.js.
    if (names === null) continue
    assert.ok(names.includes(r.use), `${r.bag}.${r.use}`)
    assert.ok(!names.includes(r.name), `${r.bag}.${r.name} is still an option`)
  }
})

test('docs/middleware.md links to the reference instead of describing the middleware options again', () => {
  const text = fs.readFileSync(require('node:path').join(__dirname, '..', '..', 'docs', 'middleware.md'), 'utf8')
  const start = text.indexOf('\n### Options\n')
  assert.notEqual(start, -1)
  const guide = text.slice(start, text.indexOf('\n### ', start + 1))
  assert.ok(guide.includes('(options.md#middleware-options)'))
  for (const { name } of require('../../contract/options.json').middlewareOptions) {
    assert.doesNotMatch(guide, new RegExp(`^\\| \`${name}[\`(]`, 'm'), `a table row for ${name}`)
  }
})
