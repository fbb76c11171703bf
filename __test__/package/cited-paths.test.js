'use strict'

// A comment or a doc that names a file names one that exists (issue 35 §4): a reader follows the
// citation to the rule, and a citation left behind by a move sends them nowhere. Every path-like
// citation of the repository's text files (a path from a top folder: src/jwt/mod.rs,
// __test__/package/pack.test.js, …) must resolve from the root or from the citing file's folder
// (bench/README.md cites lib/chain.js for bench/lib/chain.js). CHANGELOG.md is history: the
// files it names were there when it was written; this file cites stale paths as its examples.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')
const SELF = '__test__/package/cited-paths.test.js'
const TOP = ['js', 'lib', 'adapters', 'base', 'contract', 'src', 'docs', 'scripts', 'bench', '__test__', 'examples', 'fuzz', 'types', 'tests', 'npm', 'dev']
const EXT = ['json', 'mjs', 'cjs', 'js', 'rs', 'md', 'd\\.ts', 'd\\.mts', 'ts', 'mts', 'toml', 'sh']
// Not preceded by a path character, so `auth-shield/js/error-codes.json` (a package export) and
// a URL's path are not read as files of this repository.
const CITATION = new RegExp(`(?<![\\w./@-])((?:${TOP.join('|')})/[\\w./-]*\\.(?:${EXT.join('|')}))(?!\\w)`, 'g')

// Stale citations known and not yet fixed, as [citing file, cited path] (none today): each entry
// must still be stale, so the list only shrinks.
const PENDING = []

// Not the repository's own text: installed packages, build output, fuzzing state, generated snippets.
const SKIPPED = new Set(['node_modules', 'target', '.git', 'fuzz/target', 'fuzz/corpus', 'fuzz/artifacts', 'examples/token-api/data', '__test__/types/snippets', '__test__/types/options-undefined'])

/** The repository's text files that may cite others, relative to the root. */
function textFiles() {
  const found = []
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const file = dir === '' ? entry.name : `${dir}/${entry.name}`
      if (entry.isDirectory()) {
        if (!SKIPPED.has(file) && !SKIPPED.has(entry.name)) walk(file)
      } else if (/\.(js|mjs|cjs|ts|mts|md|json|rs|toml|yml|sh)$/.test(entry.name) && file !== 'CHANGELOG.md' && file !== SELF) found.push(file)
    }
  }
  walk('')
  return found
}

/** The paths `text` cites, each once. */
function citations(text) {
  return [...new Set([...text.matchAll(CITATION)].map((m) => m[1]))]
}

/** `[file, cited]` for every citation that resolves neither from the root nor beside `file`. */
function staleCitations() {
  const stale = []
  for (const file of textFiles()) {
    for (const cited of citations(fs.readFileSync(path.join(ROOT, file), 'utf8'))) {
      if (!fs.existsSync(path.join(ROOT, cited)) && !fs.existsSync(path.join(ROOT, path.dirname(file), cited))) stale.push([file, cited])
    }
  }
  return stale
}

test('the reader finds citations and leaves package exports and URLs alone', () => {
  assert.deepEqual(citations('see js/jwt.js and (src/jwt/mod.rs); `__test__/package/pack.test.js`, auth-shield/js/error-codes.json, https://x/blob/main/src/lib.rs, docs/api.md.'), [
    'js/jwt.js',
    'src/jwt/mod.rs',
    '__test__/package/pack.test.js',
    'docs/api.md',
  ])
})

test('every file a comment or doc names exists', () => {
  const pending = new Set(PENDING.map((p) => p.join(' -> ')))
  const stale = staleCitations().map((s) => s.join(' -> '))
  assert.deepEqual(stale.filter((s) => !pending.has(s)), [])
  assert.deepEqual([...pending].filter((p) => !stale.includes(p)), [], 'fixed: drop these from PENDING')
})
