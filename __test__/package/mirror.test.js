'use strict'

// The two engines mirror each other by name (issue 24 §2): every core module of src/ has its JS
// twin under js/ at the same path, snake_case -> kebab-case (src/rate_limit/lease.rs <->
// js/rate-limit/lease.js, src/jwt/mod.rs <-> js/jwt.js), unless the table below says where its
// rules live in JS or why it has none; and every file of the JS engine has a Rust twin unless
// it is listed as JS-only with a reason. The napi binding (src/binding/) is not core, and
// #[cfg(test)] modules (tests.rs, extreme_tests.rs) are not modules of the library.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')

// Core modules whose rules live in another JS file (a JS twin under another name): the file
// must exist. Kept short: a new module gets its own twin.
const TWIN_ELSEWHERE = {
  call_error: ['base/error.js', 'bad caller input is a TypeError / RangeError made by typeError / rangeError'],
  contract: ['contract/index.js', 'both engines read the contract: Rust through build.rs, JS through contract/index.js'],
  settings: ['js/config.js', 'readSettings returns the validated settings object'],
  refresh_key: ['js/authenticator.js', 'the refresh keys are chosen in the Core constructor'],
  request_id: ['js/authenticator.js', 'node:crypto randomUUID, one call'],
  'jwt/alg': ['base/keys/normalize.js', 'ALGS, shared by both engines (keys are normalised once in JS)'],
  'jwt/public_key': ['base/keys/normalize.js', 'public keys are read with node:crypto for both engines'],
  'jwt/hmac_secret': ['base/keys/hmac-secret.js', 'the HMAC-secret rule, called by the key normalisation both engines share (base/keys/normalize.js)'],
  'jwt/base64url': ['js/jwt.js', 'strict base64url decoding, beside the structural checks'],
  'jwt/header': ['js/jwt/claims.js', 'parseHeader reads the header with the payload reader'],
  'jwt/kind': ['js/jwt.js', 'the token type is a string checked by ClaimRules'],
  'jwt/validate': ['js/jwt.js', 'ClaimRules'],
  'jwt/verify': ['js/jwt.js', 'signedWith'],
  'jwt/sign': ['js/issue.js', 'HS256 signing is part of issuance in JS'],
  error: ['base/error.js', 'the failure table and its one shared Failure per code, used by the engine and the layers alike'],
  schema: ['base/schema.js', 'the contract read once, on the floor both engines and the layers stand on (docs/development.md)'],
  'issue/signing_key': ['base/keys/signing-key.js', 'read with node:crypto for both engines: native.js hands the core its PKCS#8'],
}

// Core modules with no JS twin at all, and why.
const NATIVE_ONLY = {
  clock: 'the JS engine reads Date.now() and process.hrtime where it needs them; nothing to share',
  secret: 'wiping key bytes on drop: JS strings and Buffers cannot be wiped reliably',
  raw_value: 'a JS value copied into Rust by the binding for the option readers; the JS engine reads the JS value itself',
  'helpers/*': 'the security helpers are native-only: auth-shield/js exports the auth API only',
}

// Files of the JS engine with no core twin, and why.
const JS_ONLY = {
  'index.js': 'the entry of auth-shield/js (the native package entry is index.js at the root)',
  'one-shot.js': 'authenticateRequest: its twin is the binding (src/binding/one_shot.rs); the table it shares with Authenticator.shared is in authenticator.js',
  'seam.js': "what the layers (lib/) take from the JS engine, its one module they import: the native engine's counterpart is the binding's surface",
  'resolve-tenant.js': 'the resolveTenant export: its twin is the binding (src/binding/tenant.rs over src/tenant.rs, whose twin is js/tenant.js)',
}

/** Rust module path (`jwt/key_set`) of a src/ file, or null for lib.rs. */
function modulePath(relative) {
  const parts = relative.replace(/\.rs$/, '').split('/')
  if (parts[parts.length - 1] === 'mod') parts.pop()
  if (parts.length === 1 && parts[0] === 'lib') return null
  return parts.join('/')
}

/** The names declared `#[cfg(test)] mod name;` in a Rust source. */
function testModules(source) {
  return [...source.matchAll(/#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;/g)].map((m) => m[1])
}

/** Every core module of src/: `{ module, file }`, without the binding and test-only modules. */
function coreModules() {
  const found = []
  const testOnly = new Set()
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const file = path.posix.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (file !== 'src/binding') walk(file)
      } else if (entry.name.endsWith('.rs')) {
        const source = fs.readFileSync(path.join(ROOT, file), 'utf8')
        const module = modulePath(file.slice('src/'.length))
        // A child `mod name;` lives in <dir>/name.rs, where <dir> is the module's own folder.
        const childDir = module === null ? '' : `${module}/`
        for (const name of testModules(source)) testOnly.add(childDir + name)
        if (module !== null) found.push({ module, file })
      }
    }
  }
  walk('src')
  return found.filter(({ module }) => !testOnly.has(module))
}

/** The JS twin a module path names: `rate_limit/debt_sketch` -> `js/rate-limit/debt-sketch.js`. */
const jsTwinOf = (module) => `js/${module.replace(/_/g, '-')}.js`

/** Every file of the JS engine, relative to js/ (`jwt/key-set.js`). */
function engineFiles() {
  const found = []
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(ROOT, 'js', dir), { withFileTypes: true })) {
      const file = dir === '' ? entry.name : `${dir}/${entry.name}`
      if (entry.isDirectory()) walk(file)
      else if (/\.js$/.test(entry.name)) found.push(file)
    }
  }
  walk('')
  return found
}

const nativeOnlyReason = (module) =>
  NATIVE_ONLY[module] ?? NATIVE_ONLY[`${module.split('/')[0]}/*`]

test('the core modules are found, without the binding and the #[cfg(test)] modules', () => {
  const modules = coreModules().map((m) => m.module)
  for (const expected of ['authenticator', 'jwt', 'jwt/key_set', 'rate_limit', 'rate_limit/lease', 'issue/signing_key', 'helpers/totp']) {
    assert.ok(modules.includes(expected), expected)
  }
  for (const excluded of ['lib', 'config/tests', 'rate_limit/tests', 'rate_limit/extreme_tests', 'issue/tests', 'jwt/key_set/tests']) {
    assert.ok(!modules.includes(excluded), excluded)
  }
  assert.ok(!modules.some((m) => m.startsWith('binding')), 'src/binding is the napi binding, not core')
  assert.deepEqual(testModules('#[cfg(test)]\nmod tests;\n#[cfg(test)]\n#[path = "x.rs"]\nmod extreme_tests;\nmod lease;'), ['tests', 'extreme_tests'])
})

test('every core module has its JS twin under the same name, or a listed reason', () => {
  const problems = []
  for (const { module, file } of coreModules()) {
    const twin = jsTwinOf(module)
    const hasTwin = fs.existsSync(path.join(ROOT, twin))
    const elsewhere = TWIN_ELSEWHERE[module]
    const reason = nativeOnlyReason(module)
    if (hasTwin && (elsewhere || reason)) problems.push(`${file} has its twin ${twin}: drop it from the tables`)
    else if (!hasTwin && elsewhere) {
      if (!fs.existsSync(path.join(ROOT, elsewhere[0]))) problems.push(`${file}: its rules are said to live in ${elsewhere[0]}, which is missing`)
    } else if (!hasTwin && !reason) problems.push(`${file} has no JS twin ${twin} and is not listed as native-only`)
  }
  assert.deepEqual(problems, [])
})

test('every entry of the tables names a core module that still exists', () => {
  const modules = new Set(coreModules().map((m) => m.module))
  const folders = new Set([...modules].map((m) => m.split('/')[0]))
  for (const module of Object.keys(TWIN_ELSEWHERE)) assert.ok(modules.has(module), `TWIN_ELSEWHERE.${module}`)
  for (const module of Object.keys(NATIVE_ONLY)) {
    if (module.endsWith('/*')) assert.ok(folders.has(module.slice(0, -2)), `NATIVE_ONLY.${module}`)
    else assert.ok(modules.has(module), `NATIVE_ONLY.${module}`)
  }
  for (const file of Object.keys(JS_ONLY)) assert.ok(fs.existsSync(path.join(ROOT, 'js', file)), `JS_ONLY.${file}`)
})

test('every file of the JS engine has a core twin under the same name, or a listed reason', () => {
  const modules = new Set(coreModules().map((m) => m.module))
  const problems = []
  for (const file of engineFiles()) {
    const module = file.replace(/\.js$/, '').replace(/-/g, '_')
    const twin = modules.has(module)
    if (twin && JS_ONLY[file]) problems.push(`js/${file} mirrors src/${module}: drop it from JS_ONLY`)
    else if (!twin && !JS_ONLY[file]) problems.push(`js/${file} has no core twin (src/${module}.rs or src/${module}/mod.rs) and is not listed as JS-only`)
  }
  assert.deepEqual(problems, [])
})

test('the runtime glue and the floor stay out of the engine folder', () => {
  // js/ is the pure-JS engine. What the engines and the layers all use (errors, the contract's
  // options and results, keys, deprecation warnings, the clock and store seams, #node/*) is the
  // floor, base/; the runtime glue above both engines (HTTP decision, store, JWKS, the option
  // reader, metrics) is lib/ (__test__/package/layers.test.js holds the imports to that order).
  for (const file of engineFiles()) {
    assert.doesNotMatch(file, /^(store|http|jwks|keys|options|node)\b|^jwks-|^option-reader|^deprecation|^error\.js$|^schema\.js$/, `js/${file} is runtime glue (lib/) or floor (base/)`)
  }
  for (const folder of ['http', 'store', 'jwks', 'options', 'metrics']) {
    assert.ok(fs.statSync(path.join(ROOT, 'lib', folder)).isDirectory(), `lib/${folder}`)
  }
  for (const folder of ['keys', 'node']) {
    assert.ok(fs.statSync(path.join(ROOT, 'base', folder)).isDirectory(), `base/${folder}`)
  }
})
