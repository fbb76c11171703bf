'use strict'

// Test support: which files of the JS engine (js/) a fresh process has loaded after running a
// script, to prove an adapter on the native engine leaves them alone.

const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const path = require('node:path')

const JS_DIR = path.join(__dirname, '..', '..', 'js') + path.sep
// The JS engine proper: what only `engine: 'js'` (or a missing binary) may load.
const ENGINE_FILES = ['authenticator.js', 'jwt.js', 'hs256.js', 'json-reader.js', 'jwt-json.js', 'config.js', 'sign.js', 'rate-limit.js']

/**
 * Runs `script` (which must end by calling `report(value)`) in a child with USE_RUST_AUTH unset;
 * returns `{ value, loaded }`, `loaded` being the js/ files in its require cache.
 */
function runAndListJsFiles(script) {
  const prelude = `
    const report = (value) => {
      const loaded = Object.keys(require.cache).filter((f) => f.startsWith(${JSON.stringify(JS_DIR)}))
      console.log(JSON.stringify({ value, loaded: loaded.map((f) => f.slice(${JSON.stringify(JS_DIR)}.length)) }))
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
