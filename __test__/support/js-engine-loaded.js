'use strict'

// Test support: which files of the package (js/, lib/, adapters/) a fresh process has loaded
// after running a script, to prove an adapter on the native engine leaves the JS engine alone.

const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..') + path.sep
// The JS engine proper: what only `engine: 'js'` (or a missing binary) may load.
const ENGINE_FILES = ['authenticator.js', 'jwt.js', 'jwt/key.js', 'jwt/json-scan.js', 'jwt/claims.js', 'config.js', 'issue.js', 'rate-limit.js'].map((f) => `js/${f}`)

/**
 * Runs `script` (which must end by calling `report(value)`) in a child with USE_RUST_AUTH unset;
 * returns `{ value, loaded }`, `loaded` being the package's files in its require cache, relative to the
 * package root with `/` separators (`js/jwt.js`, `lib/http/engine.js`).
 */
function runAndListJsFiles(script) {
  const prelude = `
    const report = (value) => {
      const loaded = Object.keys(require.cache).filter((f) => f.startsWith(${JSON.stringify(ROOT)}) && !f.includes('node_modules'))
      console.log(JSON.stringify({ value, loaded: loaded.map((f) => f.slice(${JSON.stringify(ROOT)}.length).split(require('node:path').sep).join('/')) }))
    }`
  const child = spawnSync(process.execPath, ['-e', prelude + script], {
    cwd: __dirname,
    env: { ...process.env, USE_RUST_AUTH: '' },
    encoding: 'utf8',
  })
  assert.equal(child.status, 0, child.stderr)
  return JSON.parse(child.stdout)
}

/** Asserts that none of the JS engine's own files is in `loaded`. */
function assertEngineNotLoaded(loaded) {
  for (const file of ENGINE_FILES) assert.ok(!loaded.includes(file), `${file} was loaded: ${loaded.join()}`)
}

module.exports = { runAndListJsFiles, assertEngineNotLoaded }
