'use strict'

// Every TypeScript snippet of the README and docs/ (a ```ts block) is code a user copies into a
// strict project: each is written out as its own ES module and type-checked with the same
// compiler options as __test__/types (strict, exactOptionalPropertyTypes), `auth-shield`
// resolving to this checkout through package.json "exports". A snippet that is a fragment
// fails here: write it whole (its imports, its declarations).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const root = path.join(__dirname, '..', '..')
// Inside the package, so that `auth-shield` self-resolves; ignored by git (see .gitignore).
const out = path.join(root, '__test__', 'types', 'snippets')

/** `{ file, line, code }` for every ```ts / ```typescript block of the README and docs/. */
function snippets() {
  const files = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)]
  const found = []
  for (const file of files) {
    const text = fs.readFileSync(path.join(root, file), 'utf8')
    for (const m of text.matchAll(/^```(?:ts|typescript)\n([\s\S]*?)^```$/gm)) {
      found.push({ file, line: text.slice(0, m.index).split('\n').length, code: m[1] })
    }
  }
  return found
}

test('every TypeScript snippet of the README and docs/ compiles under strict and exactOptionalPropertyTypes', () => {
  const all = snippets()
  // The README's Express example, docs/middleware.md's Fetch handler, docs/api.md's two.
  assert.ok(all.length >= 4, `expected the documented TypeScript snippets, found ${all.length}`)
  fs.rmSync(out, { recursive: true, force: true })
  fs.mkdirSync(out, { recursive: true })
  const names = new Map()
  for (const s of all) {
    const name = `${s.file.replace(/[/.]/g, '_')}_${s.line}.mts`
    names.set(name, `${s.file}:${s.line}`)
    // `export {}` makes a snippet without imports a module too (its names stay its own).
    fs.writeFileSync(path.join(out, name), `${s.code}\nexport {}\n`)
  }
  fs.writeFileSync(
    path.join(out, 'tsconfig.json'),
    JSON.stringify({ extends: '../tsconfig.json', compilerOptions: { noUnusedLocals: false }, files: [...names.keys()] }, null, 2),
  )
  const tsc = path.join(path.dirname(require.resolve('typescript/package.json', { paths: [root] })), 'bin', 'tsc')
  const run = spawnSync(process.execPath, [tsc, '-p', path.join(out, 'tsconfig.json'), '--pretty', 'false'], { cwd: root, encoding: 'utf8' })
  // Name each error by the document line it comes from.
  const report = `${run.stdout}${run.stderr}`.replace(/__test__\/types\/snippets\/(\S+?\.mts)\((\d+),(\d+)\)/g, (_, f, l) => {
    const [doc, line] = names.get(f).split(':')
    return `${doc}:${Number(line) + Number(l)}`
  })
  assert.equal(run.status, 0, report)
  fs.rmSync(out, { recursive: true, force: true })
})
