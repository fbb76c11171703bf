'use strict'

// The package entry (native.js), its ESM twin, the platform packages in npm/,
// and the error a user gets when no binary fits.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const root = path.join(__dirname, '..')
const pkg = require('../package.json')
const { platformSuffixOfTriple, currentPlatformSuffix } = require('../load-error.js')

test('the package entry is the binding the generated loader loads', () => {
  assert.equal(require('../native.js'), require('../index.js'))
  assert.equal(typeof require('../native.js').Authenticator, 'function')
})

test('the ESM entry exports every CommonJS export by name, and the binding as default', async () => {
  const esm = await import('../index.mjs')
  const cjs = require('../native.js')
  const defined = (names) => names.filter((name) => cjs[name] !== undefined).sort()
  assert.deepEqual(defined(Object.keys(esm).filter((name) => name !== 'default')), defined(Object.keys(cjs)))
  assert.equal(esm.default, cjs)
  assert.equal(esm.Authenticator, cjs.Authenticator)
})

test('names a missing binary: platform, each attempt, and how to build from source', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-shield-nobinary-'))
  try {
    // The loader files alone, as an install where npm skipped the platform package.
    for (const file of ['index.js', 'index.mjs', 'native.js', 'load-error.js', 'package.json']) {
      fs.copyFileSync(path.join(root, file), path.join(dir, file))
    }
    const env = { ...process.env }
    delete env.NAPI_RS_NATIVE_LIBRARY_PATH
    delete env.NAPI_RS_FORCE_WASI
    const probe = `try { require('./native.js'); console.log('{}') } catch (e) {
      console.log(JSON.stringify({ code: e.code, platform: e.platform, tried: e.tried, message: e.message, cause: e.cause && e.cause.message }))
    }`
    const run = spawnSync(process.execPath, ['-e', probe], { cwd: dir, env, encoding: 'utf8' })
    assert.equal(run.status, 0, run.stderr)
    const error = JSON.parse(run.stdout)
    const platform = currentPlatformSuffix()
    assert.equal(error.code, 'ERR_AUTH_SHIELD_NO_BINARY')
    assert.equal(error.platform, platform)
    assert.match(error.message, new RegExp(`native binary for ${platform} \\(Node\\.js ${process.version.replace(/\./g, '\\.')}\\)`))
    assert.ok(error.tried.some((t) => t.includes(`./auth-shield.${platform}.node`)), error.message)
    assert.ok(error.tried.some((t) => t.includes(`'auth-shield-${platform}'`)), error.message)
    assert.match(error.message, /\(binary built from source\)/)
    assert.match(error.message, /\(prebuilt platform package\)/)
    assert.match(error.message, /build from source \(needs Rust/)
    assert.match(error.message, /NAPI_RS_NATIVE_LIBRARY_PATH/)
    assert.match(error.message, /auth-shield\/js/)
    assert.match(error.cause, /Cannot find native binding/, 'the generated loader error stays reachable as cause')

    // ESM users get the same error, not a bare "Cannot find native binding".
    const esm = spawnSync(
      process.execPath,
      ['--input-type=module', '-e', "import('./index.mjs').then(() => console.log('loaded'), (e) => console.log(e.code))"],
      { cwd: dir, env, encoding: 'utf8' },
    )
    assert.equal(esm.stdout.trim(), 'ERR_AUTH_SHIELD_NO_BINARY', esm.stderr)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('maps each napi target triple to the napi-rs platform suffix', () => {
  const expected = {
    'x86_64-unknown-linux-gnu': 'linux-x64-gnu',
    'x86_64-unknown-linux-musl': 'linux-x64-musl',
    'aarch64-unknown-linux-gnu': 'linux-arm64-gnu',
    'aarch64-unknown-linux-musl': 'linux-arm64-musl',
    'x86_64-apple-darwin': 'darwin-x64',
    'aarch64-apple-darwin': 'darwin-arm64',
    'x86_64-pc-windows-msvc': 'win32-x64-msvc',
  }
  for (const [triple, suffix] of Object.entries(expected)) assert.equal(platformSuffixOfTriple(triple), suffix)
  assert.deepEqual([...pkg.napi.targets].sort(), Object.keys(expected).sort())
})

test('npm/ holds one package per target, same version, restricted to its os, cpu and libc', () => {
  const dirs = fs.readdirSync(path.join(root, 'npm')).sort()
  assert.deepEqual(dirs, pkg.napi.targets.map(platformSuffixOfTriple).sort())
  for (const suffix of dirs) {
    const platformPkg = require(path.join(root, 'npm', suffix, 'package.json'))
    const [osName, cpu, abi] = suffix.split('-')
    assert.equal(platformPkg.name, `${pkg.napi.binaryName}-${suffix}`)
    assert.equal(platformPkg.version, pkg.version, `${suffix} version follows the main package`)
    assert.equal(platformPkg.main, `${pkg.napi.binaryName}.${suffix}.node`)
    assert.deepEqual(platformPkg.files, [platformPkg.main])
    assert.deepEqual(platformPkg.os, [osName])
    assert.deepEqual(platformPkg.cpu, [cpu])
    if (osName === 'linux') assert.deepEqual(platformPkg.libc, [abi === 'musl' ? 'musl' : 'glibc'])
    assert.equal(platformPkg.scripts, undefined, 'platform packages run nothing at install')
  }
})
