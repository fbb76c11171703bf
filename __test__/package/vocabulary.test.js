'use strict'

// docs/vocabulary.md lists every public name. These tests read its tables and compare them with
// the package itself (exports, contract/options.json, the results both engines return, the declared
// types, the failure codes, the `code` of thrown errors), so the table cannot drift: a new name
// without a row, or a row for a name that is gone, fails here.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')

const root = path.join(__dirname, '../..')
const native = require('../..')
const js = require('../../js')
const SCHEMA = require('../../contract/options.json')
const RESULTS = require('../../contract/results.json')
const ERROR_CODES = require('../../contract/error-codes.json')
const SECRET = 'vocabulary-test-access-secret-0123456789'

/** `{ [section heading]: [{ names, where }] }`: the backticked names of each table row's first cell. */
function readTables() {
  const text = fs.readFileSync(path.join(root, 'docs', 'vocabulary.md'), 'utf8')
  const sections = {}
  let heading = null
  for (const line of text.split('\n')) {
    if (line.startsWith('### ')) heading = line.slice(4).trim()
    const cells = line.startsWith('| `') ? line.split(' | ') : null
    if (cells === null || heading === null) continue
    const names = [...cells[0].matchAll(/`([^`]+)`/g)].map((m) => m[1])
    ;(sections[heading] ??= []).push({ names, where: cells[1] })
  }
  return sections
}

const SECTIONS = readTables()
const COMING = Object.keys(SECTIONS).find((h) => h.startsWith('Coming in this release'))

/** Every name a row lists, outside the "coming in this release" section. */
const LISTED = new Set(
  Object.entries(SECTIONS)
    .filter(([heading]) => heading !== COMING)
    .flatMap(([, rows]) => rows.flatMap((r) => r.names)),
)

function section(prefix) {
  const heading = Object.keys(SECTIONS).find((h) => h.startsWith(prefix))
  assert.ok(heading, `docs/vocabulary.md has a section "${prefix}…"`)
  return SECTIONS[heading].flatMap((r) => r.names)
}

const missing = (names) => [...new Set(names)].filter((n) => !LISTED.has(n)).sort()
const sorted = (names) => [...new Set(names)].sort()

test('the exports of auth-shield and auth-shield/js are exactly the rows of their sections', () => {
  assert.deepEqual(sorted(section('Exports of `auth-shield`')), sorted(Object.keys(native)))
  assert.deepEqual(missing(Object.keys(js)), [])
  const entry = Object.keys(require('../../package.json').exports).map((k) => path.posix.join('auth-shield', k))
  assert.deepEqual(sorted(section('Entry points')), sorted(entry))
  for (const file of ['adapters/express', 'adapters/fastify', 'adapters/koa', 'adapters/fetch', 'lib/store']) {
    assert.deepEqual(missing(Object.keys(require(`../../${file}`)).filter((k) => k !== 'default')), [], file)
  }
})

test('the Authenticator members of both engines are the rows of their section', () => {
  // Every member up the class chain: the entry's Authenticator (native.js) is a subclass of the
  // binding's class, which holds most of them.
  const members = (cls) => {
    const names = new Set()
    for (let c = cls; typeof c === 'function' && c !== Function.prototype; c = Object.getPrototypeOf(c)) {
      for (const n of [...Object.getOwnPropertyNames(c.prototype), ...Object.getOwnPropertyNames(c)]) names.add(n)
    }
    return [...names]
  }
  const ignored = new Set(['constructor', 'length', 'name', 'prototype', 'arguments', 'caller'])
  const isPublic = (n) => !ignored.has(n) && !n.startsWith('_')
  const listed = section('Authenticator (both engines)')
  assert.deepEqual(sorted(members(native.Authenticator).filter(isPublic)), sorted(listed))
  // The JS engine's class has helpers of its own on the prototype; its public API is the declared one.
  const declared = fs.readFileSync(path.join(root, 'js', 'index.d.ts'), 'utf8')
  const jsClass = declared.slice(declared.indexOf('export declare class Authenticator'), declared.indexOf('\n}', declared.indexOf('export declare class Authenticator')))
  const jsMembers = [...jsClass.matchAll(/^\s+(?:get |static )?(\w+)\(/gm)].map((m) => m[1]).filter((n) => n !== 'constructor')
  const jsInstance = new js.Authenticator({ accessSecret: SECRET })
  for (const name of jsMembers) assert.ok(typeof jsInstance[name] !== 'undefined' || typeof js.Authenticator[name] === 'function', name)
  assert.deepEqual(missing(jsMembers), [])
})

test('the options and result fields of contract/options.json are the rows of their sections', () => {
  assert.deepEqual(section('Authenticator options'), [...SCHEMA.options, ...SCHEMA.entryOptions].map((o) => o.name))
  assert.deepEqual(section('`AuthResult`'), RESULTS.AuthResult.map((f) => f.name))
  // The options of createRedisStore (auth-shield/redis) are described there too.
  assert.ok(SCHEMA.storeOptions.length > 5)
  assert.deepEqual(missing(SCHEMA.storeOptions.map((o) => o.name)), [])
})

test('every field of every result both engines return has a row', () => {
  for (const engine of [native, js]) {
    const auth = new engine.Authenticator({ accessSecret: SECRET, refreshSecret: `${SECRET}-refresh` })
    const token = auth.signAccessToken({ sub: 'u', tenant_id: 'acme' })
    const results = [
      auth.authenticate(`Bearer ${token}`, null, null),
      auth.authenticate(undefined, null, null),
      auth.verifyAccessToken(token),
      auth.verifyRefreshToken(token),
      engine.resolveTenant('acme', null),
      engine.resolveTenant('bad:id', null),
      new engine.RateLimiter({ capacity: 1, refillPerSec: 1 }).consume('k'),
    ]
    for (const result of results) assert.deepEqual(missing(Object.keys(result)), [], JSON.stringify(result))
  }
  const key = native.generateApiKey({ secret: SECRET })
  const store = new native.OtpStore()
  const code = store.issue('k')
  const results = [
    key,
    native.parseApiKey(key.key),
    native.parseApiKey('x'),
    store.verify('k', code === '000000' ? '111111' : '000000'),
    store.verify('k', code),
    native.verifyTotp(native.generateTotpSecret(), '000000'),
  ]
  for (const result of results) assert.deepEqual(missing(Object.keys(result)), [], JSON.stringify(result))
  // The old names are gone from the results.
  for (const result of results) {
    for (const old of ['reason', 'expiresAt']) assert.ok(!(old in result), old)
  }
})

test('the TokenVerification section names the fields that differ from AuthResult', () => {
  const v = new native.Authenticator({ accessSecret: SECRET }).verifyAccessToken('a.b.c')
  const shared = new Set(RESULTS.AuthResult.map((f) => f.name))
  assert.deepEqual(sorted(Object.keys(v).filter((k) => !shared.has(k))), sorted(section('`TokenVerification`')))
})

/** Member names declared in a .d.ts: interface fields, class members, declared functions. */
function declaredNames(file) {
  const names = []
  let comment = false
  for (const line of fs.readFileSync(path.join(root, file), 'utf8').split('\n')) {
    const t = line.trim()
    if (comment) {
      comment = !t.includes('*/')
      continue
    }
    if (t.startsWith('/*')) {
      comment = !t.includes('*/')
      continue
    }
    if (t.startsWith('//') || t.startsWith('*')) continue
    const member = /^\s+(?:readonly |static |get )*([A-Za-z_$][\w$]*)\??\s*[:(]/.exec(line)
    if (member && member[1] !== 'constructor') names.push(member[1])
    const declared = /^export declare (?:function|class|const) ([\w$]+)/.exec(line)
    if (declared) names.push(declared[1])
  }
  return names
}

test('every name the published types declare has a row', () => {
  for (const file of ['index.d.ts', 'binding.d.ts', 'js/index.d.ts', 'lib/http/middleware.d.ts', 'adapters/express.d.ts', 'adapters/fastify.d.ts', 'adapters/koa.d.ts', 'adapters/fetch.d.ts', 'lib/store/index.d.ts', 'lib/store/revocations.d.ts']) {
    // binding.d.ts holds the types index.d.ts re-exports, and the loader's own marker, which the
    // entry does not export.
    assert.deepEqual(missing(declaredNames(file).filter((n) => n !== '__napiBindingTarget')), [], file)
  }
  // Sanity: the reader finds the names it should (a broken reader would pass the check above).
  const names = declaredNames('binding.d.ts')
  for (const name of ['verifyApiKey', 'expiresAtSec', 'attemptsRemaining', 'refillPerSec', 'frameAncestors', 'accessSecret']) {
    assert.ok(names.includes(name), name)
  }
  assert.ok(declaredNames('adapters/express.d.ts').includes('requestId'))
})

test('every failure code has a row: the ErrorCode table, OtpStore and parseApiKey codes', () => {
  assert.deepEqual(section('Failure codes').filter((n) => n in ERROR_CODES), Object.keys(ERROR_CODES))
  const header = fs.readFileSync(path.join(root, 'types', 'index-header.d.ts'), 'utf8')
  for (const type of ['OtpErrorCode', 'ApiKeyErrorCode']) {
    const line = header.split('\n').find((l) => l.startsWith(`export type ${type} =`))
    assert.ok(line, type)
    const codes = [...line.matchAll(/'([a-z_]+)'/g)].map((m) => m[1])
    assert.ok(codes.length > 1, type)
    assert.deepEqual(missing(codes), [], type)
  }
})

test('the code of every error the sources can throw has a row, and every row is thrown somewhere', () => {
  const sources = []
  const walk = (dir) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const file = path.posix.join(dir, entry.name)
      if (entry.isDirectory()) walk(file)
      else if (/\.(rs|js)$/.test(entry.name)) sources.push(fs.readFileSync(path.join(root, file), 'utf8'))
    }
  }
  walk('src')
  walk('js')
  walk('lib')
  walk('adapters')
  for (const file of ['native.js', 'load-error.js']) sources.push(fs.readFileSync(path.join(root, file), 'utf8'))
  const thrown = new Set(sources.flatMap((text) => [...text.matchAll(/["'](ERR_[A-Z0-9_]+|ABORT_ERR)["']/g)].map((m) => m[1])))
  const listed = section('Thrown and rejected error codes')
  assert.deepEqual(sorted(listed), sorted(thrown))
  for (const code of thrown) assert.match(code, /^(ERR_AUTH_SHIELD_[A-Z0-9_]+|ERR_INVALID_ARG_TYPE|ERR_INVALID_ARG_VALUE|ERR_OUT_OF_RANGE|ABORT_ERR|ERR_INVALID_HASH|ERR_HASH_TOO_COSTLY|ERR_INVALID_CSP|ERR_INVALID_INTERVAL)$/)
})

test('the middleware options and the request properties both adapters set have rows', async () => {
  const httpSource = fs.readFileSync(path.join(root, 'lib', 'http', 'decision.js'), 'utf8')
  const optionSet = /OPTION_NAMES = new Set\(\[([\s\S]*?)\]\)/.exec(httpSource)
  assert.ok(optionSet, 'lib/http/decision.js declares OPTION_NAMES')
  const options = [...optionSet[1].matchAll(/'(\w+)'/g)].map((m) => m[1])
  assert.ok(options.length > 5)
  assert.deepEqual(missing(options), [])

  // A real request through the Express middleware (plain Node http server on loopback): the
  // properties it adds to the request are listed.
  const authShield = require('../../adapters/express')
  const auth = new native.Authenticator({ accessSecret: SECRET })
  const mw = authShield(auth)
  let added = null
  const server = http.createServer((req, res) => {
    const before = new Set(Object.keys(req))
    mw(req, res, () => {
      added = Object.keys(req).filter((k) => !before.has(k))
      res.end('ok')
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const { port } = server.address()
    const token = auth.signAccessToken({ sub: 'u', tenant_id: 'acme' })
    const response = await fetch(`http://127.0.0.1:${port}/`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(response.status, 200)
  } finally {
    server.close()
  }
  assert.deepEqual(sorted(added), ['auth', 'id', 'requestId', 'tenantId', 'tenantSource', 'user'])
  assert.deepEqual(missing(added), [])
})

test('the "coming in this release" rows name only what is not exported yet', () => {
  // Once every branch has landed the section is removed: nothing is coming.
  if (COMING === undefined) return
  const coming = section('Coming in this release')
  assert.ok(coming.length > 0, 'an empty "Coming in this release" section is removed')
  const authenticator = new native.Authenticator({ accessSecret: SECRET })
  for (const name of coming) {
    // Once a branch lands, its row moves into the section of its kind.
    assert.ok(!(name in native) && !(name in authenticator), `${name} is exported: move its row out of "Coming in this release"`)
  }
})
