'use strict'

// The package is a house with floors (docs/development.md, "Layout"): each folder imports only
// from the floors below it, so a change to a layer cannot reach down and break an engine, and
// the two engines cannot lean on each other.
//
//   contract/        the facts both engines read (JSON and its reader)
//   base/            the floor: errors, the contract's options and results, keys, deprecation
//                    warnings, the clock and store seams, #node/*
//   js/              the JS engine            native.js, index.js, binding.js, load-error.js:
//                                             the native engine's JavaScript side and entry
//   lib/             the layers both engines serve (HTTP decision, store, JWKS, metrics)
//   adapters/        the framework adapters
//
// The layers reach the JS engine through one module, js/seam.js, never its other files; they
// reach the native engine through the package entry (index.js). Every import is read from the
// source (require, import, import(), export ... from), lazy ones inside functions included: a
// require deferred to run time is still a dependency, and a cycle through it is still a cycle.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')
const PKG = require('../../package.json')

// The native engine's files at the package root, and the package entry.
const NATIVE_FILES = new Set(['native.js', 'binding.js', 'load-error.js', 'index.js', 'index.mjs'])
// The one module of js/ the layers may import.
const JS_SEAM = 'js/seam.js'

/** The floor a package file stands on: contract, base, js, native, lib or adapters; null for others. */
function floorOf(file) {
  if (NATIVE_FILES.has(file)) return 'native'
  const top = file.split('/')[0]
  return ['contract', 'base', 'js', 'lib', 'adapters'].includes(top) && file.includes('/') ? top : null
}

// What each floor may import. lib/ and adapters/ see the JS engine only through JS_SEAM.
const MAY_IMPORT = {
  contract: ['contract'],
  base: ['base', 'contract'],
  js: ['js', 'base', 'contract'],
  native: ['native', 'base', 'contract'],
  lib: ['lib', 'native', 'base', 'contract'],
  adapters: ['adapters', 'lib', 'native', 'base', 'contract'],
}

/** Every JS module of the package, relative to the root with forward slashes. */
function packageFiles() {
  const found = [...NATIVE_FILES].filter((f) => fs.existsSync(path.join(ROOT, f)))
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const file = `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(file)
      else if (/\.(c|m)?js$/.test(entry.name)) found.push(file)
    }
  }
  for (const dir of ['contract', 'base', 'js', 'lib', 'adapters']) walk(dir)
  return found
}

/**
 * The module specifiers of `source`: require('x'), require.resolve('x'), import ... from 'x',
 * import 'x', import('x'), export ... from 'x'. Comment lines (// and the lines of a /* block
 * that start with *) are skipped, so a comment citing a require is not an import.
 */
function specifiersOf(source) {
  const code = source
    .split('\n')
    .filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line))
    .join('\n')
  const pattern = /\brequire(?:\.resolve)?\s*\(\s*(['"])([^'"]+)\1\s*\)|\bimport\s*\(\s*(['"])([^'"]+)\3\s*\)|\b(?:import|export)\s[^'";]*?\bfrom\s*(['"])([^'"]+)\5|\bimport\s*(['"])([^'"]+)\7/g
  return [...code.matchAll(pattern)].map((m) => m[2] ?? m[4] ?? m[6] ?? m[8])
}

/** The package file(s) `specifier` in `from` names; [] for a built-in or another package. */
function resolve(from, specifier) {
  if (specifier.startsWith('#')) {
    const entry = PKG.imports[specifier]
    assert.ok(entry !== undefined, `${from}: ${specifier} is not in package.json "imports"`)
    const targets = typeof entry === 'string' ? [entry] : Object.values(entry)
    return [...new Set(targets.map((t) => path.posix.normalize(t)))]
  }
  if (!specifier.startsWith('.')) return []
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier))
  for (const candidate of [base, `${base}.js`, `${base}.json`, `${base}/index.js`, base === '.' ? 'index.js' : null]) {
    if (candidate !== null && candidate !== '.' && fs.existsSync(path.join(ROOT, candidate)) && fs.statSync(path.join(ROOT, candidate)).isFile()) {
      return [candidate]
    }
  }
  assert.fail(`${from}: ${specifier} does not resolve to a file`)
}

/** `{ from, to, specifier }` for every import between two package files. */
function importGraph() {
  const edges = []
  for (const from of packageFiles()) {
    // The loader `napi build` generates: it requires the platform binaries, nothing of ours.
    if (from === 'binding.js') continue
    for (const specifier of specifiersOf(fs.readFileSync(path.join(ROOT, from), 'utf8'))) {
      for (const to of resolve(from, specifier)) edges.push({ from, to, specifier })
    }
  }
  return edges
}

/** The imports that break the floors, each as a sentence. */
function floorViolations(edges) {
  const problems = []
  for (const { from, to } of edges) {
    const below = floorOf(from)
    const above = floorOf(to)
    if (below === null || above === null) continue
    if (MAY_IMPORT[below].includes(above)) continue
    if ((below === 'lib' || below === 'adapters') && to === JS_SEAM) continue
    problems.push(`${from} imports ${to} (${below === 'native' ? 'the native engine' : `${below}/`} may import ${MAY_IMPORT[below].join(', ')}${below === 'lib' || below === 'adapters' ? `, and ${JS_SEAM}` : ''})`)
  }
  return problems
}

/** Every cycle of the graph, as a list of files (one per strongly connected component). */
function cycles(edges) {
  const next = new Map()
  for (const { from, to } of edges) {
    if (!next.has(from)) next.set(from, new Set())
    next.get(from).add(to)
  }
  // Tarjan's strongly connected components; a component of more than one file, or a file that
  // imports itself, is a cycle.
  let index = 0
  const indices = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const found = []
  const visit = (v) => {
    indices.set(v, index)
    low.set(v, index)
    index++
    stack.push(v)
    onStack.add(v)
    for (const w of next.get(v) ?? []) {
      if (!indices.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), indices.get(w)))
    }
    if (low.get(v) === indices.get(v)) {
      const component = []
      let w
      do {
        w = stack.pop()
        onStack.delete(w)
        component.push(w)
      } while (w !== v)
      if (component.length > 1 || next.get(v)?.has(v)) found.push(component.sort())
    }
  }
  for (const v of next.keys()) if (!indices.has(v)) visit(v)
  return found
}

test('the reader finds the imports, lazy ones included', () => {
  assert.deepEqual(specifiersOf("const a = require('./a')\n// require('./comment')\n  function f() { return require(\"../b\").x }\nimport c from './c.js'\nexport * from './d.js'\nimport './e.js'\nconst g = await import('./g.mjs')"), [
    './a',
    '../b',
    './c.js',
    './d.js',
    './e.js',
    './g.mjs',
  ])
  const edges = importGraph()
  const has = (from, to) => edges.some((e) => e.from === from && e.to === to)
  assert.ok(has('index.js', 'native.js'), 'index.js -> native.js')
  assert.ok(has('adapters/express.mjs', 'adapters/express.js'), 'an ES module wrapper')
  assert.ok(has('base/keys/normalize.js', 'base/node/crypto.js') && has('base/keys/normalize.js', 'base/node/crypto.mjs'), '#node/crypto, every condition')
  assert.ok(edges.length > 300, `${edges.length} imports`)
})

test('the floors: nothing imports upward, and the layers reach the JS engine only through js/seam.js', () => {
  assert.deepEqual(floorViolations(importGraph()), [])
})

test('the check refuses each kind of upward import', () => {
  assert.deepEqual(
    floorViolations([
      { from: 'js/jwt.js', to: 'lib/store/options.js' },
      { from: 'lib/http/engine.js', to: 'js/authenticator.js' },
      { from: 'adapters/express.js', to: 'js/config.js' },
      { from: 'native.js', to: 'js/seam.js' },
      { from: 'base/error.js', to: 'js/jwt.js' },
      { from: 'base/error.js', to: 'lib/http/decision.js' },
      { from: 'lib/http/decision.js', to: 'adapters/express.js' },
    ]).length,
    7,
  )
  assert.deepEqual(floorViolations([{ from: 'lib/http/engine.js', to: 'js/seam.js' }, { from: 'lib/http/engine.js', to: 'index.js' }, { from: 'js/jwt.js', to: 'base/error.js' }]), [])
})

test('no module of the package requires itself through others (no require cycle)', () => {
  assert.deepEqual(cycles(importGraph()), [])
  assert.deepEqual(cycles([{ from: 'a', to: 'b' }, { from: 'b', to: 'c' }, { from: 'c', to: 'a' }, { from: 'c', to: 'd' }]), [['a', 'b', 'c']])
})
