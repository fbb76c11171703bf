#!/usr/bin/env node
'use strict'

// `npm run pack:local [-- --platform <suffix>] [--out <dir>]`: one installable tarball from a
// checkout, for contributors and for platforms without a prebuilt package (docs/packaging.md,
// "Installing from a checkout").
//
// A plain `npm pack` of the checkout cannot run: the binary is published apart, in one package
// per platform that only a release lists in optionalDependencies (napi pre-publish). This packs
// the files `npm pack` would publish plus this platform's built `.node` next to binding.js, where
// the generated loader looks first: one file, no optionalDependencies, so installing it asks no
// registry (`npm install --offline ./auth-shield-<version>-<platform>.tgz` works with an empty
// cache). It builds the release binary first when there is none (needs Rust).

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { currentPlatformSuffix } = require('../load-error.js')

const root = path.join(__dirname, '..')

/** npm's CLI script, run with this node: the npm running us, or the one beside this node / on the PATH. */
function npmCli() {
  const onPath = (process.env.PATH || '').split(path.delimiter).map((dir) => path.join(dir, 'npm'))
  const candidates = [
    process.env.npm_execpath,
    path.join(path.dirname(process.execPath), '..', 'lib', 'node_modules', 'npm', 'bin', 'npm-cli.js'),
    path.join(path.dirname(process.execPath), 'node_modules', 'npm', 'bin', 'npm-cli.js'),
    ...onPath.filter((file) => fs.existsSync(file)).map((file) => fs.realpathSync(file)),
  ]
  const found = candidates.find((file) => file && /npm-cli\.js$/.test(file) && fs.existsSync(file))
  if (!found) throw new Error(`npm-cli.js not found next to ${process.execPath} or on the PATH`)
  return found
}

function run(file, args, options) {
  const result = spawnSync(file, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options })
  if (result.error) throw result.error
  if (result.status !== 0) {
    throw new Error(`${path.basename(file)} ${args.join(' ')} exited ${result.status}\n${result.stdout}\n${result.stderr}`)
  }
  return result.stdout
}

const npm = (args, options) => run(process.execPath, [npmCli(), ...args], options)

/** `npm pack --json` of `dir` (no lifecycle scripts); the report of the one package. */
function pack(dir, ...args) {
  const out = npm(['pack', '--json', '--ignore-scripts', ...args], { cwd: dir })
  return JSON.parse(out.slice(out.indexOf('[')))[0]
}

/**
 * The built binary for `platform`: next to binding.js (`npm run build`), else in npm/<platform>/
 * (`npm run build:cross`); `null` when neither exists.
 */
function findBinary(platform, binaryFile) {
  const candidates = [path.join(root, binaryFile), path.join(root, 'npm', platform, binaryFile)]
  return candidates.find((file) => fs.existsSync(file)) || null
}

/**
 * Packs the tarball; returns `{ file, platform, binary }` (`file` is its absolute path).
 * `platform` defaults to this machine's (`linux-x64-gnu`, ...); `build: false` refuses to build a
 * missing binary instead of running `npm run build`'s `napi build`.
 */
function packLocal({ platform = currentPlatformSuffix(), outDir = root, build = true, log = () => {} } = {}) {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
  const binaryFile = `${pkg.napi.binaryName}.${platform}.node`
  let binary = findBinary(platform, binaryFile)
  if (binary === null) {
    if (!build || platform !== currentPlatformSuffix()) {
      throw new Error(
        `${binaryFile} not found next to binding.js or in npm/${platform}/: build it first ` +
          (platform === currentPlatformSuffix() ? '(npm run build)' : '(npm run build:cross, docs/packaging.md)'),
      )
    }
    log(`${binaryFile} not built yet: napi build --platform --release --js binding.js --dts binding.d.ts (needs Rust)`)
    const cliManifest = require.resolve('@napi-rs/cli/package.json', { paths: [root] })
    const napiCli = path.join(path.dirname(cliManifest), require(cliManifest).bin.napi)
    // The loader's own names (package.json `build`): a bare `--platform` build would write index.js.
    run(process.execPath, [napiCli, 'build', '--platform', '--release', '--js', 'binding.js', '--dts', 'binding.d.ts'], { cwd: root, stdio: 'inherit' })
    binary = findBinary(platform, binaryFile)
    if (binary === null) throw new Error(`napi build did not write ${binaryFile}`)
  }

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-shield-pack-local-'))
  try {
    // The files a release publishes, staged with the binary beside binding.js.
    const stage = path.join(work, 'package')
    for (const { path: file } of pack(root, '--dry-run').files) {
      fs.mkdirSync(path.dirname(path.join(stage, file)), { recursive: true })
      fs.copyFileSync(path.join(root, file), path.join(stage, file))
    }
    fs.copyFileSync(binary, path.join(stage, binaryFile))
    const manifest = { ...pkg, files: [...pkg.files, binaryFile] }
    // Nothing to resolve at install time: no platform packages, no workspaces, no dev tools.
    delete manifest.optionalDependencies
    delete manifest.devDependencies
    delete manifest.workspaces
    fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
    const packed = pack(stage, '--pack-destination', work)
    if (!packed.files.some((f) => f.path === binaryFile)) throw new Error(`${binaryFile} did not make it into the tarball`)
    fs.mkdirSync(outDir, { recursive: true })
    const file = path.join(path.resolve(outDir), `${pkg.name}-${pkg.version}-${platform}.tgz`)
    fs.copyFileSync(path.join(work, packed.filename), file)
    return { file, platform, binary }
  } finally {
    fs.rmSync(work, { recursive: true, force: true })
  }
}

function main(argv) {
  const options = { log: (line) => console.error(line) }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--platform') options.platform = argv[++i]
    else if (arg === '--out') options.outDir = argv[++i]
    else if (arg === '--no-build') options.build = false
    else throw new Error(`unknown argument ${arg} (usage: npm run pack:local [-- --platform <suffix>] [--out <dir>] [--no-build])`)
  }
  const { file, platform, binary } = packLocal(options)
  console.log(file)
  console.error(`packed ${path.relative(root, binary)} for ${platform}; install it with:\n  npm install ${file}`)
}

if (require.main === module) {
  try {
    main(process.argv.slice(2))
  } catch (error) {
    console.error(`pack:local: ${error.message}`)
    process.exitCode = 1
  }
}

module.exports = { packLocal, npmCli, run, npm, pack }
