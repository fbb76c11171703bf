'use strict'

// The Rust core is a house with floors (issue 35 §4): a module of src/ may use the modules
// below it, never one that uses it back. These tests read every `crate::` / `super::` / `self::`
// path in src/**/*.rs and hold the graph between modules to three rules: it has no cycle (between
// the crate root's children, each with everything under it, and at every depth below), the
// bottom floor (FLOOR) reaches nothing above it, and the napi binding is the top (nothing in the
// core uses it). A failure names the files and lines of the offending edges.
//
// Exempt, and why:
// - src/lib.rs, the crate root: it declares every module and re-exports the test seam
//   (`internals`), so it stands above all of them by construction; it is no module's dependency.
// - `#[cfg(test)]` code (inline `mod tests`, `#[cfg(test)] mod tests;` files, any cfg(test)
//   item): a test may drive its module through a higher one (an issuer test through the
//   Authenticator) without the library depending on it; it is not compiled into the addon.
// Nothing else is: the napi binding (src/binding/) is a module like the others, at the top.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const SRC = path.join(__dirname, '../../src')

// The bottom floor (docs/development.md): what any module may use and what uses nothing above
// it: auth failures and caller errors, the clock, the contract and the option schema, secret
// bytes, raw option values, and key normalisation (algorithms, base64url, HMAC-secret and
// public-key checks, key sets). A module path names the module with everything under it.
const FLOOR = [
  'call_error',
  'clock',
  'contract',
  'error',
  'schema',
  'secret',
  'raw_value',
  'jwt/alg',
  'jwt/base64url',
  'jwt/hmac_secret',
  'jwt/public_key',
  'jwt/key_set',
]

/** Every .rs file under `dir`, as paths relative to src/. */
function rustFiles(dir = SRC) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) return rustFiles(full)
    return entry.name.endsWith('.rs') ? [path.relative(SRC, full).split(path.sep).join('/')] : []
  })
}

/** `config/tests.rs` → ['config', 'tests']; `jwt/mod.rs` → ['jwt']; `lib.rs` → []. */
function modulePath(file) {
  const parts = file.replace(/\.rs$/, '').split('/')
  const last = parts[parts.length - 1]
  if (last === 'mod' || (parts.length === 1 && last === 'lib')) parts.pop()
  return parts
}

/**
 * The text with comments, string and char literals blanked (newlines kept, so offsets still give
 * line numbers): a path in a doc comment or a message is not a dependency.
 */
function stripNonCode(text) {
  const out = text.split('')
  const blank = (from, to) => {
    for (let k = from; k < to && k < out.length; k++) if (out[k] !== '\n') out[k] = ' '
  }
  let i = 0
  while (i < text.length) {
    const c = text[i]
    const next = text[i + 1]
    if (c === '/' && next === '/') {
      const end = text.indexOf('\n', i)
      const stop = end === -1 ? text.length : end
      blank(i, stop)
      i = stop
    } else if (c === '/' && next === '*') {
      let depth = 1
      let j = i + 2
      while (j < text.length && depth > 0) {
        if (text[j] === '/' && text[j + 1] === '*') (depth++, (j += 2))
        else if (text[j] === '*' && text[j + 1] === '/') (depth--, (j += 2))
        else j++
      }
      blank(i, j)
      i = j
    } else if (/[rb]/.test(c) && !/[\w]/.test(text[i - 1] ?? '') && /^(?:b?r#*")/.test(text.slice(i, i + 40))) {
      // raw string r"..", r#".."#, br".."
      const m = /^b?r(#*)"/.exec(text.slice(i))
      const close = '"' + m[1]
      const end = text.indexOf(close, i + m[0].length)
      const stop = end === -1 ? text.length : end + close.length
      blank(i, stop)
      i = stop
    } else if (c === '"') {
      let j = i + 1
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1
      blank(i, j + 1)
      i = j + 1
    } else if (c === "'") {
      // a char literal ('x', '\n', '\u{1F600}', '"'); otherwise a lifetime ('a)
      const m = /^'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'/u.exec(text.slice(i, i + 12))
      if (m) {
        blank(i, i + m[0].length)
        i += m[0].length
      } else i++
    } else i++
  }
  return out.join('')
}

/**
 * The end (exclusive) of the item starting at `from`, never past the block that holds it: an item
 * with a body (`fn`, `mod`, `impl`, …) ends at its closing brace or `;`, a `use` / `const` /
 * `let` at its `;`, anything else (a struct field, an enum variant) at its `,` or `;`.
 */
function itemEnd(code, from) {
  const head = /^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?(\w+)/.exec(code.slice(from))
  const kind = head?.[1]
  const block = ['fn', 'mod', 'impl', 'struct', 'enum', 'trait', 'union', 'macro_rules', 'async', 'unsafe', 'extern'].includes(kind)
  const statement = ['use', 'const', 'static', 'type', 'let'].includes(kind)
  let depth = 0
  for (let j = from; j < code.length; j++) {
    const c = code[j]
    if (code.startsWith('->', j) || code.startsWith('=>', j)) j++
    else if (c === '(' || c === '[' || c === '{' || (c === '<' && !block && !statement)) depth++
    else if (c === ')' || c === ']' || c === '}' || (c === '>' && !block && !statement)) {
      if (--depth < 0) return j
      if (depth === 0 && c === '}' && block) return j + 1
    } else if (depth === 0 && (c === ';' || (c === ',' && !block && !statement))) return j + 1
  }
  return code.length
}

/** Blanks every `#[cfg(test)]` item; returns the code and the names of `#[cfg(test)] mod x;` files. */
function stripTestItems(code) {
  const testModules = []
  const re = /#\[cfg\(test\)\]/g
  let m
  while ((m = re.exec(code))) {
    const from = m.index + m[0].length
    const end = itemEnd(code, from)
    const item = code.slice(from, end)
    const decl = /^\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/.exec(item)
    if (decl) testModules.push(decl[1])
    code = code.slice(0, m.index) + code.slice(m.index, end).replace(/[^\n]/g, ' ') + code.slice(end)
    re.lastIndex = end
  }
  return { code, testModules }
}

/**
 * The paths of a use tree or path starting at `at` (just past `crate::`, `super::` or `self::`),
 * as segment lists: `{a, b::{c, d}}` gives [['a'], ['b', 'c'], ['b', 'd']], `x::y::Z` gives
 * [['x', 'y', 'Z']].
 */
function usePaths(code, at) {
  let j = at
  const skipSpace = () => {
    while (/\s/.test(code[j] ?? '')) j++
  }
  const tree = (prefix) => {
    const segments = [...prefix]
    for (;;) {
      skipSpace()
      if (code[j] === '{') {
        j++
        const paths = []
        for (;;) {
          skipSpace()
          if (code[j] === '}' || j >= code.length) break
          paths.push(...tree(segments))
          skipSpace()
          if (code[j] === ',') j++
        }
        j++
        return paths
      }
      const ident = /^\w+/.exec(code.slice(j, j + 100))
      if (!ident) return [segments]
      segments.push(ident[0])
      j += ident[0].length
      skipSpace()
      if (code.startsWith('::', j)) j += 2
      else {
        // `as name`, `;`, `,`, `}`, `(`, `<`: the path ends here
        if (code.startsWith('as ', j)) j = /^as\s+\w+/.exec(code.slice(j)) ? j + /^as\s+\w+/.exec(code.slice(j))[0].length : j
        return [segments]
      }
    }
  }
  return tree([])
}

/**
 * Every reference from library code to another module: `{ from, to, at }`, `from` and `to`
 * module paths (`jwt/key_set`; `to` the longest prefix of the path that is a module of src/),
 * `at` the file and line.
 */
function references() {
  const files = rustFiles()
  const testFiles = new Set()
  const stripped = new Map()
  for (const file of files) {
    const { code, testModules } = stripTestItems(stripNonCode(fs.readFileSync(path.join(SRC, file), 'utf8')))
    stripped.set(file, code)
    const dir = modulePath(file).join('/')
    for (const name of testModules) testFiles.add(dir ? `${dir}/${name}` : name)
  }
  // a file is test code when it, or a module it sits in, is declared `#[cfg(test)] mod name;`
  const isTest = (file) => {
    const mod = modulePath(file)
    return mod.some((_, k) => testFiles.has(mod.slice(0, k + 1).join('/')))
  }
  const modules = new Set(files.map((f) => modulePath(f).join('/')))
  const found = []
  for (const file of files) {
    if (file === 'lib.rs' || isTest(file)) continue
    const code = stripped.get(file)
    const self = modulePath(file)
    const re = /(?<![\w:])(\$?crate|(?:super::)*super|self)::/g
    let m
    while ((m = re.exec(code))) {
      let base
      if (m[1].endsWith('crate')) base = []
      else if (m[1] === 'self') base = self
      else base = self.slice(0, self.length - m[1].split('::').length)
      const line = code.slice(0, m.index).split('\n').length
      for (const rest of usePaths(code, m.index + m[0].length)) {
        const full = [...base, ...rest]
        let k = full.length
        while (k > 0 && !modules.has(full.slice(0, k).join('/'))) k--
        if (k === 0) continue // the crate root itself (`crate::internals`) or a macro
        found.push({ from: self.join('/'), to: full.slice(0, k).join('/'), at: `src/${file}:${line}` })
      }
    }
  }
  return found
}

/**
 * The graph between modules at `depth` (1: the crate root's children, each with everything
 * under it; 2: their children; …): Map(module → Map(target → ['file:line', …])). A module's
 * use of its own ancestor or descendant is no edge: a parent declares its children, and a child
 * is part of its parent.
 */
function graphAt(refs, depth) {
  const edges = new Map()
  const node = (m) => edges.get(m) ?? edges.set(m, new Map()).get(m)
  const within = (a, b) => a === b || a.startsWith(`${b}/`)
  for (const { from, to, at } of refs) {
    const [a, b] = [from, to].map((m) => m.split('/').slice(0, depth).join('/'))
    node(a)
    node(b)
    if (within(a, b) || within(b, a)) continue
    const where = node(a)
    if (!where.has(b)) where.set(b, [])
    where.get(b).push(at)
  }
  return edges
}

/** Strongly connected components of more than one module (Tarjan): each is a cycle. */
function cycles(edges) {
  let index = 0
  const idx = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const found = []
  const visit = (v) => {
    idx.set(v, index)
    low.set(v, index++)
    stack.push(v)
    onStack.add(v)
    for (const w of edges.get(v).keys()) {
      if (!idx.has(w)) {
        visit(w)
        low.set(v, Math.min(low.get(v), low.get(w)))
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)))
    }
    if (low.get(v) === idx.get(v)) {
      const scc = []
      let w
      do {
        w = stack.pop()
        onStack.delete(w)
        scc.push(w)
      } while (w !== v)
      if (scc.length > 1) found.push(scc.sort())
    }
  }
  for (const v of [...edges.keys()].sort()) if (!idx.has(v)) visit(v)
  return found
}

/** The edges inside one cycle, with where each is written. */
function describe(edges, scc) {
  const members = new Set(scc)
  return scc
    .flatMap((from) =>
      [...edges.get(from)]
        .filter(([to]) => members.has(to))
        .map(([to, at]) => `  ${from} -> ${to}  (${[...new Set(at)].join(', ')})`),
    )
    .join('\n')
}

const refs = references()
const graph = graphAt(refs, 1)
const DEPTH = Math.max(...refs.flatMap((r) => [r.from, r.to]).map((m) => m.split('/').length))
const inFloor = (m) => FLOOR.some((f) => m === f || m.startsWith(`${f}/`))

test('the reader sees the modules and the edges it should', () => {
  for (const m of ['authenticator', 'binding', 'config', 'error', 'jwt', 'settings', 'tenant']) {
    assert.ok(graph.has(m), `module ${m} found`)
  }
  const has = (from, to) => refs.some((r) => r.from === from && r.to === to)
  // `use crate::x::{..}`, a path inside code (`crate::x::f(..)`), `super::` from a sub-module,
  // `use super::*` inside a #[cfg(test)] module (not library code, so not read)
  assert.ok(has('binding/authenticator', 'authenticator'), 'use crate::authenticator::Authenticator as Core')
  assert.ok(has('authenticator', 'config'), 'crate::config::check_signing_kid(..)')
  assert.ok(has('jwt/key_set', 'jwt/alg'), 'use super::alg::{Alg, Family}')
  assert.ok(!refs.some((r) => r.at.startsWith('src/issuers/tests.rs')), 'issuers/tests.rs is test code')
  assert.ok(!refs.some((r) => r.at === 'src/settings.rs:1'), 'a doc comment naming [`crate::config`] is no use')
  // the use-tree reader
  assert.deepEqual(usePaths('{a, b::{c, d as e}, f::G};', 0), [['a'], ['b', 'c'], ['b', 'd'], ['f', 'G']])
  assert.deepEqual(usePaths('x::y::Z;', 0), [['x', 'y', 'Z']])
  assert.equal(stripNonCode('a // crate::x\n"crate::y" \'"\' crate::z').includes('crate::x'), false)
  // a #[cfg(test)] field ends at its comma, a #[cfg(test)] module at its brace; what follows is read
  const stripped = stripTestItems('struct A {\n  #[cfg(test)]\n  v: Option<M<K, V>>,\n  w: u8,\n}\nfn f() { crate::x::y() }\n#[cfg(test)]\nmod tests { use crate::t; }\nuse crate::z;').code
  assert.deepEqual([stripped.includes('crate::x'), stripped.includes('w: u8'), stripped.includes('crate::z')], [true, true, true])
  assert.deepEqual([stripped.includes('v: Option'), stripped.includes('crate::t')], [false, false])
})

test('the modules of src/ form no cycle, at any depth', () => {
  // the shallowest depth with a cycle is reported (deeper ones repeat it, module by module)
  for (let depth = 1; depth <= DEPTH; depth++) {
    const g = graphAt(refs, depth)
    const found = cycles(g)
    assert.deepEqual(
      found.map((scc) => scc.join(' <-> ')),
      [],
      `module cycles at depth ${depth}:\n${found.map((scc) => describe(g, scc)).join('\n\n')}`,
    )
  }
})

test('the bottom floor uses nothing above it', () => {
  const modules = new Set(rustFiles().map((f) => modulePath(f).join('/')))
  for (const f of FLOOR) assert.ok(modules.has(f), `floor module ${f} exists`)
  const up = refs.filter((r) => inFloor(r.from) && !inFloor(r.to)).map((r) => `${r.from} -> ${r.to} (${r.at})`)
  assert.deepEqual(up, [], `floor modules reaching up:\n${up.join('\n')}`)
})

test('nothing but the crate root uses the napi binding', () => {
  const users = refs.filter((r) => r.to.split('/')[0] === 'binding' && r.from.split('/')[0] !== 'binding')
  assert.deepEqual(users.map((r) => `${r.from} (${r.at})`), [])
})

// RUST_LAYERS_PRINT=1 prints the graph between the crate root's children.
if (process.env.RUST_LAYERS_PRINT) {
  for (const [from, to] of [...graph].sort()) console.log(`${from} -> ${[...to.keys()].sort().join(', ')}`)
}
