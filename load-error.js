'use strict'

// Builds the one error a user sees when no native binary fits this machine.
// Kept apart from native.js so the message can be tested without a failing load.

const { napi, version, optionalDependencies } = require('./package.json')

const ARCHES = { x86_64: 'x64', aarch64: 'arm64', i686: 'ia32', armv7: 'arm' }

// napi-rs names a platform package `<name>-<platform>-<arch>[-<abi>]`; this maps
// the Rust target triples in package.json to those suffixes.
function platformSuffixOfTriple(triple) {
  const [arch] = triple.split('-')
  const cpu = ARCHES[arch] || arch
  if (triple.includes('-linux-')) return `linux-${cpu}-${triple.endsWith('musl') ? 'musl' : 'gnu'}`
  if (triple.includes('-darwin')) return `darwin-${cpu}`
  if (triple.includes('-windows-')) return `win32-${cpu}-${triple.endsWith('msvc') ? 'msvc' : 'gnu'}`
  return triple
}

// glibc and musl builds are separate packages; Node's report names the glibc
// it runs on, and says nothing on musl.
function isGlibc() {
  try {
    process.report.excludeNetwork = true
    return Boolean(process.report.getReport().header.glibcVersionRuntime)
  } catch {
    return true
  }
}

function currentPlatformSuffix() {
  const base = `${process.platform}-${process.arch}`
  if (process.platform === 'linux') return `${base}-${isGlibc() ? 'gnu' : 'musl'}`
  if (process.platform === 'win32') return `${base}-msvc`
  return base
}

// The generated loader chains its attempts through `cause`, newest outermost.
function attemptsOf(loaderError) {
  const attempts = []
  for (let e = loaderError && loaderError.cause; e; e = e.cause) {
    attempts.unshift(String(e.message).split('\n')[0])
  }
  if (attempts.length === 0 && loaderError) attempts.push(String(loaderError.message).split('\n')[0])
  return attempts
}

// What each kind of attempt was, so a reader knows which remedy applies.
function labelled(attempt) {
  if (/wasi|wasm/.test(attempt)) return `${attempt} (WebAssembly build, not published)`
  if (attempt.includes(`'./${napi.binaryName}.`)) return `${attempt} (binary built from source)`
  if (attempt.includes(`'${napi.binaryName}-`)) return `${attempt} (prebuilt platform package)`
  return attempt
}

function bindingLoadError(loaderError) {
  const platform = currentPlatformSuffix()
  const packageName = `${napi.binaryName}-${platform}`
  const supported = napi.targets.map(platformSuffixOfTriple)
  const tried = attemptsOf(loaderError)
  // A release lists every platform package in optionalDependencies (napi pre-publish); a copy
  // packed from a checkout (`npm pack`) or installed from git lists none, so reinstalling
  // cannot fetch one: it needs a tarball that carries the binary.
  const released = Boolean(optionalDependencies && optionalDependencies[packageName])
  const localTarball = `${napi.binaryName}-${version}-${platform}.tgz`
  let remedy
  if (!supported.includes(platform)) {
    remedy = [`  - there is no prebuilt binary for ${platform}; prebuilt ones exist for: ${supported.join(', ')};`]
  } else if (released) {
    remedy = [
      `  - reinstall so npm fetches the optional dependency ${packageName}; do not install with`,
      '    --omit=optional / --no-optional, and if npm skipped it, delete node_modules and',
      '    package-lock.json and install again (https://github.com/npm/cli/issues/4828);',
    ]
  } else {
    remedy = [
      '  - this copy was packed from a checkout (npm pack) or installed from git: it lists no',
      '    optionalDependencies, so no reinstall can fetch a binary for it. In the checkout run',
      `    \`npm run pack:local\` and install the tarball it writes (npm install ./${localTarball}),`,
      '    which carries the binary (docs/packaging.md, "Installing from a checkout");',
    ]
  }
  const message = [
    `auth-shield: could not load a native binary for ${platform} (Node.js ${process.version}).`,
    'Tried, in order:',
    ...tried.map((attempt, i) => `  ${i + 1}. ${labelled(attempt)}`),
    'To fix:',
    ...remedy,
    '  - or build from source (needs Rust, https://rustup.rs): in a checkout of the auth-shield',
    '    repository run `npm install`, then `npm run pack:local`, and install the tarball it writes',
    `    into your project; or set NAPI_RS_NATIVE_LIBRARY_PATH to the path of a built ${napi.binaryName}.${platform}.node;`,
    "  - or use the pure-JavaScript engine: require('auth-shield/js').",
  ].join('\n')
  const error = new Error(message)
  error.code = 'ERR_AUTH_SHIELD_NO_BINARY'
  error.platform = platform
  error.tried = tried
  error.cause = loaderError
  return error
}

module.exports = { bindingLoadError, platformSuffixOfTriple, currentPlatformSuffix }
