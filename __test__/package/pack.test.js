'use strict'

// What a user gets from the registry: the main package and this platform's package,
// packed with `npm pack` as the release packs them, installed into a fresh project
// with `npm install --offline` and an empty npm cache (so nothing can come from the
// network or from an earlier install) and with no Rust on the PATH, then used from
// CommonJS, ESM and TypeScript. The frameworks and types a consumer brings along
// (express, fastify, @types/*) are the repository's own devDependencies, reached the
// way Node and tsc find any package: a node_modules folder above the project.
//
// Needs the addon built for this machine (`npm run build`), which
// stands in for the binary the release job moves into npm/<platform>/.

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const root = path.join(__dirname, '..', '..')
const pkg = require('../../package.json')
const { platformSuffixOfTriple, currentPlatformSuffix } = require('../../load-error.js')

const platform = currentPlatformSuffix()
const platformPackage = `${pkg.napi.binaryName}-${platform}`
const binaryFile = `${pkg.napi.binaryName}.${platform}.node`

// npm itself, run by this node (so the Rust-free PATH below need not contain it), and the
// `npm pack --json` report of one package (--ignore-scripts: `prepare` is a release build): the
// same helpers `npm run pack:local` uses.
const { run, npm, pack } = require('../../scripts/pack-local.js')

// The environment of a machine without Rust: no directory holding cargo or rustc,
// no Rust variables, nothing inherited from a surrounding `npm test` run.
function rustFreeEnv() {
  const tools = process.platform === 'win32' ? ['cargo.exe', 'rustc.exe'] : ['cargo', 'rustc']
  const env = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(CARGO|RUSTUP|RUSTC|NAPI_RS_)/i.test(name)) continue
    if (/^npm_(lifecycle|package)_/i.test(name)) continue
    env[name] = value
  }
  const pathKey = Object.keys(env).find((name) => name.toUpperCase() === 'PATH') || 'PATH'
  env[pathKey] = (env[pathKey] || '')
    .split(path.delimiter)
    .filter((dir) => dir && !tools.some((tool) => fs.existsSync(path.join(dir, tool))))
    .join(path.delimiter)
  return env
}

const packJson = (dir, destination) => pack(dir, '--pack-destination', destination)

// Every file path an `exports` map can resolve to.
function exportTargets(exportsField) {
  if (typeof exportsField === 'string') return [exportsField]
  return Object.values(exportsField).flatMap(exportTargets)
}

/**
 * The folder Node would load `name` from when required by the package in `fromDir`: its own
 * node_modules, then each one above it.
 */
function dependencyDir(name, fromDir) {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name)
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate
    if (path.dirname(dir) === dir) throw new Error(`${name} (needed by ${fromDir}) is not installed`)
  }
}

/**
 * The main package's runtime dependencies and theirs, packed from the repository's
 * node_modules (the goal is none at all: a user's install then needs nothing but the two
 * tarballs), so the offline install never asks the registry or the cache.
 */
function packRuntimeDependencies(manifest, destination) {
  const dirs = new Set()
  const visit = (dependencies, fromDir) => {
    for (const name of Object.keys(dependencies || {})) {
      const dir = dependencyDir(name, fromDir)
      if (dirs.has(dir)) continue
      dirs.add(dir)
      visit(require(path.join(dir, 'package.json')).dependencies, dir)
    }
  }
  visit(manifest.dependencies, root)
  if (dirs.size === 0) return []
  const out = npm(['pack', '--json', '--ignore-scripts', '--pack-destination', destination, ...dirs], { cwd: destination })
  return JSON.parse(out.slice(out.indexOf('[')))
}

describe('packed packages, installed offline without Rust', () => {
  let work
  let mainPack
  let platformPack
  let app
  let env

  before(() => {
    const builtBinary = path.join(root, binaryFile)
    assert.ok(fs.existsSync(builtBinary), `${binaryFile} is missing: build it first with \`npm run build\``)
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-shield-pack-'))

    // The release, staged: the files `npm pack` would publish, plus the
    // optionalDependencies `napi pre-publish` writes (one per target, same version).
    const listed = pack(root, '--dry-run').files
    const stage = path.join(work, 'release')
    for (const { path: file } of listed) {
      fs.mkdirSync(path.dirname(path.join(stage, file)), { recursive: true })
      fs.copyFileSync(path.join(root, file), path.join(stage, file))
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(stage, 'package.json'), 'utf8'))
    manifest.optionalDependencies = Object.fromEntries(
      pkg.napi.targets.map((triple) => [`${pkg.napi.binaryName}-${platformSuffixOfTriple(triple)}`, pkg.version]),
    )
    fs.writeFileSync(path.join(stage, 'package.json'), JSON.stringify(manifest, null, 2))
    mainPack = packJson(stage, work)

    // This platform's package with the binary in it, as `napi artifacts` leaves it.
    const platformStage = path.join(work, 'platform')
    fs.cpSync(path.join(root, 'npm', platform), platformStage, { recursive: true })
    fs.copyFileSync(builtBinary, path.join(platformStage, binaryFile))
    platformPack = packJson(platformStage, work)

    // <work>/node_modules is the repository's: above the consumer project, so it serves
    // require/import/tsc lookups without npm ever installing from it.
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(work, 'node_modules'), 'junction')
    app = path.join(work, 'app')
    fs.mkdirSync(app)
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }))
    env = { ...rustFreeEnv(), npm_config_cache: path.join(work, 'npm-cache') }
    const tarballs = [platformPack, mainPack, ...packRuntimeDependencies(manifest, work)].map((p) => path.join(work, p.filename))
    npm(['install', '--offline', '--no-audit', '--no-fund', '--no-package-lock', ...tarballs], { cwd: app, env })
  })

  after(() => {
    if (work) fs.rmSync(work, { recursive: true, force: true })
  })

  test('publishes only what users need: no sources, tests, binaries or build leftovers', () => {
    const files = mainPack.files.map((f) => f.path.replace(/\\/g, '/'))
    const allowed =
      /^(README\.md|CHANGELOG\.md|LICENSE[^/]*|package\.json|index\.(js|mjs|d\.ts|d\.mts)|binding\.(js|d\.ts)|native\.js|load-error\.js|adapters\/[\w-]+\.(js|mjs|d\.ts)|lib\/[\w-]+\/[\w-]+\.(js|mjs|d\.ts)|base\/(?:[\w-]+\/)?[\w-]+\.(js|mjs)|contract\/[\w-]+\.(js|json)|js\/(?:[\w-]+\/)?[\w-]+\.(js|mjs|d\.ts|d\.mts|json))$/
    assert.deepEqual(
      files.filter((file) => !allowed.test(file)),
      [],
      'files outside the allow-list',
    )
    for (const file of files) {
      assert.doesNotMatch(file, /^(src|__test__|target|npm|bench|examples|fuzz|docs|types|\.github|\.ci)\/|\.node$|^Cargo\./)
    }
    for (const target of [...exportTargets(pkg.exports), pkg.main, pkg.types, pkg.module]) {
      assert.ok(files.includes(target.replace(/^\.\//, '')), `${target} is exported but not published`)
    }
  })

  test('the published manifests run nothing at install time and name the repository and licence', () => {
    const installScripts = ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare']
    for (const dir of [path.join(app, 'node_modules', pkg.name), path.join(app, 'node_modules', platformPackage)]) {
      const manifest = require(path.join(dir, 'package.json'))
      assert.deepEqual(
        installScripts.filter((name) => manifest.scripts && name in manifest.scripts),
        [],
        `${manifest.name} carries an install-time script`,
      )
    }
    const main = require(path.join(app, 'node_modules', pkg.name, 'package.json'))
    assert.match(main.repository.url, /^git\+https:\/\/github\.com\/[\w.-]+\/[\w.-]+\.git$/)
    assert.equal(typeof main.homepage, 'string')
    assert.equal(typeof main.bugs.url, 'string')
    assert.equal(main.license, 'MIT')
    assert.match(fs.readFileSync(path.join(app, 'node_modules', pkg.name, 'LICENSE'), 'utf8'), /^MIT License/)
  })

  test('every relative link in the published README points at a published file', () => {
    const dir = path.join(app, 'node_modules', pkg.name)
    const readme = fs.readFileSync(path.join(dir, 'README.md'), 'utf8')
    const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1])
    assert.ok(links.length > 0, 'no links found')
    const targets = links.filter((href) => !/^([a-z]+:|#)/i.test(href)).map((href) => href.split('#')[0])
    assert.deepEqual(
      targets.filter((file) => !fs.existsSync(path.join(dir, file))),
      [],
      'README links to files the package does not contain (link to the repository instead)',
    )
  })

  test('the platform package holds only its binary and package.json', () => {
    const files = platformPack.files.map((f) => f.path).sort()
    assert.deepEqual(files, ['README.md', binaryFile, 'package.json'].sort())
    assert.equal(platformPack.name, platformPackage)
    assert.equal(platformPack.version, pkg.version)
  })

  test('the install ran without Rust and fetched the binary through the platform package only', () => {
    const which = spawnSync(process.platform === 'win32' ? 'rustc.exe' : 'rustc', ['--version'], { env })
    assert.ok(which.error && which.error.code === 'ENOENT', 'rustc must not be on the consumer PATH')
    const installed = path.join(app, 'node_modules')
    const mainDir = path.join(installed, pkg.name)
    assert.deepEqual(
      fs.readdirSync(mainDir).filter((file) => file.endsWith('.node')),
      [],
      'the main package carries no binary',
    )
    assert.ok(fs.existsSync(path.join(installed, platformPackage, binaryFile)))
    const manifest = require(path.join(mainDir, 'package.json'))
    assert.equal(manifest.optionalDependencies[platformPackage], pkg.version)
  })

  // The scripts run from inside the project, so `auth-shield` resolves to node_modules.
  function runConsumer(script) {
    fs.copyFileSync(path.join(__dirname, '..', 'consumer', script), path.join(app, script))
    return run(process.execPath, [script, platformPackage], { cwd: app, env })
  }

  test('require() of the package and its subpaths authenticates a token', () => {
    assert.match(runConsumer('require.cjs'), /^consumer\.cjs ok$/m)
  })

  test('import() of the package and its subpaths authenticates a token', () => {
    assert.match(runConsumer('import.mjs'), /^consumer\.mjs ok$/m)
  })

  test('TypeScript consumers, CommonJS and ESM, compile under strict against the packed types', () => {
    const types = path.join(app, 'types')
    fs.cpSync(path.join(__dirname, '..', 'types'), types, { recursive: true })
    const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc')
    run(process.execPath, [tsc, '-p', path.join(types, 'tsconfig.json')], { cwd: app, env })
  })
})
