'use strict'

// The package entry (index.js over the generated loader binding.js), its ESM twin, the platform packages in npm/,
// and the error a user gets when no binary fits.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const root = path.join(__dirname, '..', '..')
const pkg = require('../../package.json')
const { platformSuffixOfTriple, currentPlatformSuffix } = require('../../load-error.js')

test('the package entry is the hand-written index.js, over the binding the generated loader loads', () => {
  assert.equal(require('../..'), require('../../index.js'))
  assert.equal(pkg.main, './index.js')
  assert.equal(pkg.exports['.'].require.default, './index.js')
  const { binding } = require('../../native.js')
  assert.equal(binding, require('../../binding.js'))
  // The entry's Authenticator is a subclass of the binding's, not the binding's class itself.
  assert.equal(Object.getPrototypeOf(require('../..').Authenticator), binding.Authenticator)
})

test('the ESM entry exports every CommonJS export by name, and the entry as default', async () => {
  const esm = await import('../../index.mjs')
  const cjs = require('../../index.js')
  // Node 23+ adds a 'module.exports' name to a CommonJS module's namespace, and `export *` passes it on.
  const names = Object.keys(esm).filter((name) => name !== 'default' && name !== 'module.exports')
  assert.deepEqual(names.sort(), Object.keys(cjs).sort())
  assert.equal(esm.default, cjs)
  assert.equal(esm.Authenticator, cjs.Authenticator)
})

test('names a missing binary: platform, each attempt, and how to build from source', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-shield-nobinary-'))
  try {
    // The loader files alone, as an install where npm skipped the platform package.
    for (const file of ['index.js', 'index.mjs', 'native.js', 'binding.js', 'load-error.js', 'package.json']) {
      fs.copyFileSync(path.join(root, file), path.join(dir, file))
    }
    const env = { ...process.env }
    delete env.NAPI_RS_NATIVE_LIBRARY_PATH
    delete env.NAPI_RS_FORCE_WASI
    const probe = `try { require('./index.js'); console.log('{}') } catch (e) {
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

// The generated loader (binding.js) decides between the glibc and the musl binary at run time:
// /usr/bin/ldd's text first (Alpine's is a script that runs ld-musl), then the process report
// (`header.glibcVersionRuntime` only on glibc; musl shows in `sharedObjects`), then `ldd --version`.
// Each case runs the real binding.js source against a faked Linux host, records every module it
// tries to load, and checks the order of attempts for that libc.
function loaderAttempts({ arch = 'x64', ldd, report, lddVersion }) {
  const source = fs.readFileSync(path.join(root, 'binding.js'), 'utf8')
  const attempts = []
  const notFound = (id) => Object.assign(new Error(`Cannot find module '${id}' (faked host)`), { code: 'MODULE_NOT_FOUND' })
  const fakeFs = {
    ...fs,
    readFileSync(file, ...rest) {
      if (file === '/usr/bin/ldd') {
        if (ldd === undefined) throw Object.assign(new Error('ENOENT: /usr/bin/ldd'), { code: 'ENOENT' })
        return ldd
      }
      return fs.readFileSync(file, ...rest)
    },
  }
  const fakeChildProcess = {
    execSync(command) {
      attempts.push(`exec:${command}`)
      if (lddVersion === undefined) throw new Error('ldd: not found')
      return lddVersion
    },
  }
  const fakeRequire = (id) => {
    if (id === 'fs' || id === 'node:fs') return fakeFs
    if (id === 'child_process' || id === 'node:child_process') return fakeChildProcess
    attempts.push(id)
    throw notFound(id)
  }
  const fakeProcess = {
    platform: 'linux',
    arch,
    env: {},
    versions: { ...process.versions },
    version: process.version,
    config: { variables: {} },
    report: { excludeNetwork: false, getReport: () => report },
  }
  const module = { exports: {} }
  let error = null
  try {
    new Function('require', 'module', 'exports', 'process', '__dirname', '__filename', source)(
      fakeRequire, module, module.exports, fakeProcess, root, path.join(root, 'binding.js'))
  } catch (e) {
    error = e
  }
  return { attempts: attempts.filter((id) => /auth-shield/.test(id) || id.startsWith('exec:')), error }
}

const GLIBC_REPORT = { header: { glibcVersionRuntime: '2.36' }, sharedObjects: ['/lib/x86_64-linux-gnu/libc.so.6'] }
const MUSL_REPORT = { header: {}, sharedObjects: ['/lib/ld-musl-x86_64.so.1', '/usr/lib/libstdc++.so.6'] }
const ALPINE_LDD = '#!/bin/sh\nexec /lib/ld-musl-x86_64.so.1 --list "$@"\n'
const GLIBC_LDD = '#! /bin/bash\n# This is the `ldd` command, which lists what shared libraries are\n# used by given dynamically-linked executables.  (GNU libc)\n'

test('on a musl host whose /usr/bin/ldd runs ld-musl, the loader tries the x64 musl binary, then its package', () => {
  const { attempts, error } = loaderAttempts({ ldd: ALPINE_LDD, report: GLIBC_REPORT })
  assert.match(String(error && error.message), /Cannot find native binding/)
  assert.deepEqual(attempts.slice(0, 2), ['./auth-shield.linux-x64-musl.node', 'auth-shield-linux-x64-musl'])
  assert.ok(!attempts.some((id) => id.includes('-gnu')), attempts.join(', '))
})

test('without /usr/bin/ldd, a process report with no glibc version and ld-musl loaded means musl', () => {
  const { attempts } = loaderAttempts({ report: MUSL_REPORT })
  assert.deepEqual(attempts.slice(0, 2), ['./auth-shield.linux-x64-musl.node', 'auth-shield-linux-x64-musl'])
  assert.ok(!attempts.some((id) => id.includes('-gnu')), attempts.join(', '))
})

test('a process report naming a glibc runtime means the gnu binary, never the musl one', () => {
  const { attempts } = loaderAttempts({ report: GLIBC_REPORT })
  assert.deepEqual(attempts.slice(0, 2), ['./auth-shield.linux-x64-gnu.node', 'auth-shield-linux-x64-gnu'])
  assert.ok(!attempts.some((id) => id.includes('musl')), attempts.join(', '))
})

test("glibc's /usr/bin/ldd script means the gnu binary without asking for a report", () => {
  const { attempts } = loaderAttempts({ ldd: GLIBC_LDD, report: MUSL_REPORT })
  assert.deepEqual(attempts.slice(0, 2), ['./auth-shield.linux-x64-gnu.node', 'auth-shield-linux-x64-gnu'])
})

test('with neither ldd nor a report, `ldd --version` output decides', () => {
  const musl = loaderAttempts({ report: null, lddVersion: 'musl libc (x86_64)\nVersion 1.2.5\n' })
  assert.deepEqual(musl.attempts.slice(0, 3), ['exec:ldd --version', './auth-shield.linux-x64-musl.node', 'auth-shield-linux-x64-musl'])
  const glibc = loaderAttempts({ report: null, lddVersion: 'ldd (Debian GLIBC 2.36-9) 2.36\n' })
  assert.deepEqual(glibc.attempts.slice(0, 3), ['exec:ldd --version', './auth-shield.linux-x64-gnu.node', 'auth-shield-linux-x64-gnu'])
})

test('on an arm64 musl host the loader tries the arm64 musl binary and package', () => {
  const { attempts } = loaderAttempts({ arch: 'arm64', report: MUSL_REPORT })
  assert.deepEqual(attempts.slice(0, 2), ['./auth-shield.linux-arm64-musl.node', 'auth-shield-linux-arm64-musl'])
})
