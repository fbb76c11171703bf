'use strict'

// The README's examples are real code: the Express example is the file the strict TypeScript
// check compiles (__test__/types/readme-express.mts), and the helper example runs.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const root = path.join(__dirname, '..', '..')
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8')
const blocks = (lang) => [...readme.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```$', 'gm'))].map((m) => m[1])

test('the README Express example is the TypeScript file the strict type check compiles', () => {
  const file = fs.readFileSync(path.join(__dirname, '..', 'types', 'readme-express.mts'), 'utf8')
  const code = file.slice(file.indexOf('import '))
  assert.deepEqual(blocks('ts'), [code])
})

test('the README helper example runs and prints what its comments say', () => {
  const [example] = blocks('js')
  assert.ok(example, 'no js block in the README')
  // Run from the repository root, where `auth-shield` resolves to this checkout.
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', example], { cwd: root, encoding: 'utf8' })
  assert.equal(run.status, 0, run.stderr)
  assert.equal(run.stdout, 'true\n')
})

test('links from the README and docs/ into the repository name files that exist', () => {
  const repository = require('../../package.json').homepage.replace(/#.*$/, '')
  const missing = []
  for (const file of ['README.md', ...fs.readdirSync(path.join(root, 'docs')).map((f) => `docs/${f}`)]) {
    const text = fs.readFileSync(path.join(root, file), 'utf8')
    for (const [, href] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = href.startsWith(`${repository}/blob/main/`)
        ? href.slice(`${repository}/blob/main/`.length)
        : /^([a-z]+:|#)/i.test(href)
          ? null
          : path.posix.join(path.posix.dirname(file), href)
      if (target !== null && !fs.existsSync(path.join(root, target.split('#')[0]))) missing.push(`${file}: ${href}`)
    }
  }
  assert.deepEqual(missing, [])
})
