'use strict'

// `npm run pack:local` (scripts/pack-local.js, issue 22 §4): a checkout packs into one tarball
// that installs and runs with an empty npm cache and no registry (`--offline`), because it
// carries this platform's binary and lists no optionalDependencies. A plain `npm pack` of the
// checkout (no binary, no optionalDependencies) still cannot run, but its error now points at
// pack:local instead of a reinstall that cannot fetch anything.
//
// Needs the addon built for this machine (`npm run build`).

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { packLocal, npmCli, run } = require('../../scripts/pack-local.js')
const { currentPlatformSuffix } = require('../../load-error.js')

const root = path.join(__dirname, '..', '..')
const pkg = require('../../package.json')
const platform = currentPlatformSuffix()
const binaryFile = `${pkg.napi.binaryName}.${platform}.node`

// What a consumer runs: the package as installed, signing and authenticating a token, and
// reporting which binary was loaded (a native addon is in require.cache like any module).
const CONSUMER = `
const { Authenticator } = require('auth-shield')
const auth = new Authenticator({ accessSecret: 'pack-local-secret-of-at-least-32-bytes' })
const token = auth.signAccessToken({ sub: 'user-1' })
const result = auth.authenticate('Bearer ' + token, null, null)
const binaries = Object.keys(require.cache).filter((file) => file.endsWith('.node'))
console.log(JSON.stringify({ authenticated: result.authenticated, userId: result.userId, binaries }))
`
const PROBE = `
try { require('auth-shield'); console.log('{}') } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }
`

describe('npm run pack:local: one tarball that installs offline with an empty cache', () => {
  let work
  let tarball
  let env

  /** A fresh project with `tarballs` installed offline, with its own empty npm cache. */
  function install(name, tarballs) {
    const app = path.join(work, name)
    fs.mkdirSync(app)
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true }))
    const cache = path.join(work, `${name}-npm-cache`)
    const installEnv = { ...env, npm_config_cache: cache }
    run(process.execPath, [npmCli(), 'install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', ...tarballs], {
      cwd: app,
      env: installEnv,
    })
    return app
  }

  before(() => {
    assert.ok(fs.existsSync(path.join(root, binaryFile)), `${binaryFile} is missing: build it first with \`npm run build\``)
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-shield-pack-local-test-'))
    env = {}
    for (const [name, value] of Object.entries(process.env)) {
      // Nothing inherited from a surrounding `npm test` or a pinned binary path.
      if (/^NAPI_RS_/i.test(name) || /^npm_(lifecycle|package|config)_/i.test(name)) continue
      env[name] = value
    }
    tarball = packLocal({ outDir: work, build: false }).file
  })

  after(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true })
  })

  test('the tarball is named for its platform and carries the binary beside the loader, without optionalDependencies', () => {
    assert.equal(path.basename(tarball), `${pkg.name}-${pkg.version}-${platform}.tgz`)
    const list = run('tar', ['-tzf', tarball]).split('\n')
    assert.ok(list.includes(`package/${binaryFile}`), list.join('\n'))
    for (const file of ['index.js', 'index.d.ts', 'native.js', 'binding.js', 'binding.d.ts']) assert.ok(list.includes(`package/${file}`), file)
    const manifest = JSON.parse(run('tar', ['-xzOf', tarball, 'package/package.json']))
    assert.equal(manifest.optionalDependencies, undefined)
    assert.equal(manifest.dependencies, undefined)
    assert.equal(manifest.devDependencies, undefined)
  })

  test('installed offline with an empty cache, it loads its own binary and authenticates a token', () => {
    const app = install('consumer', [tarball])
    const out = JSON.parse(run(process.execPath, ['-e', CONSUMER], { cwd: app, env }))
    assert.equal(out.authenticated, true)
    assert.equal(out.userId, 'user-1')
    assert.deepEqual(out.binaries, [path.join(fs.realpathSync(app), 'node_modules', pkg.name, binaryFile)])
  })

  test('a plain npm pack of the checkout still has no binary, and its error names pack:local, not a reinstall', () => {
    const out = run(process.execPath, [npmCli(), 'pack', '--json', '--ignore-scripts', '--pack-destination', work], { cwd: root, env })
    const plain = path.join(work, JSON.parse(out.slice(out.indexOf('[')))[0].filename)
    const app = install('plain', [plain])
    const error = JSON.parse(run(process.execPath, ['-e', PROBE], { cwd: app, env }))
    assert.equal(error.code, 'ERR_AUTH_SHIELD_NO_BINARY')
    assert.match(error.message, /npm run pack:local/)
    assert.match(error.message, new RegExp(`npm install \\./${pkg.name}-${pkg.version.replace(/\./g, '\\.')}-${platform}\\.tgz`))
    assert.doesNotMatch(error.message, /reinstall so npm fetches the optional dependency/)
  })
})
