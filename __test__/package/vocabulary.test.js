'use strict'

// docs/vocabulary.md states the naming rules; the names themselves live in the contract
// (contract/options.json, contract/error-codes.json) and the published types, described once in the option
// reference (docs/options.md, generated) and the guides. These tests check the rules against
// those sources: a name that breaks one fails unless the table "Names that break a rule" lists
// it, and a row there for a name that no longer exists fails too.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '../..')
const native = require('../..')
const SCHEMA = require('../../contract/options.json')
const SECRET = 'vocabulary-test-access-secret-0123456789'

const TYPE_FILES = ['index.d.ts', 'binding.d.ts', 'js/index.d.ts', 'lib/http/middleware.d.ts', 'adapters/express.d.ts', 'adapters/fastify.d.ts', 'adapters/koa.d.ts', 'adapters/fetch.d.ts', 'lib/store/index.d.ts', 'lib/jwks/index.d.ts', 'lib/store/revocations.d.ts']

/** `[{ names, rule }]`: the rows of the table "Names that break a rule". */
function exceptions() {
  const text = fs.readFileSync(path.join(root, 'docs', 'vocabulary.md'), 'utf8')
  const start = text.indexOf('### Names that break a rule')
  assert.notEqual(start, -1, 'docs/vocabulary.md has the table "Names that break a rule"')
  return text
    .slice(start)
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) => {
      const cells = line.split(' | ')
      return { names: [...cells[0].matchAll(/`([^`]+)`/g)].map((m) => m[1]), rule: cells[2] }
    })
}

const EXCEPTIONS = exceptions()
const allowed = (rule) => new Set(EXCEPTIONS.filter((e) => e.rule.includes(rule)).flatMap((e) => e.names))

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

/** Every option name of the contract: each bag's entries and the helpers' names. */
function optionNames() {
  const bags = Object.keys(SCHEMA).filter((k) => k.endsWith('ptions') && k !== 'callOptions')
  return [...bags.flatMap((k) => SCHEMA[k].map((o) => o.name)), ...SCHEMA.callOptions.flatMap((c) => c.names)]
}

const DECLARED = new Set(TYPE_FILES.flatMap(declaredNames))

test('the declared-name reader finds what it should (a broken reader would pass every rule)', () => {
  for (const name of ['verifyApiKey', 'expiresAtSec', 'attemptsRemaining', 'refillPerSec', 'accessSecret', 'commandTimeoutMs', 'maxDocumentKeys', 'issuedBeforeSec', 'errorCode']) {
    assert.ok(DECLARED.has(name), name)
  }
})

test('casing: every option, result field, export and declared member is camelCase (or PascalCase for a type or class)', () => {
  const exempt = allowed('casing')
  const names = [...optionNames(), ...require('../../contract/results.json').AuthResult.map((f) => f.name), ...Object.keys(native), ...DECLARED]
  const bad = [...new Set(names)].filter((n) => !/^[a-zA-Z][a-zA-Z0-9]*$/.test(n) && !exempt.has(n))
  assert.deepEqual(bad, [])
})

test('units (rule 5): a duration, size, rate or timestamp option says its unit', () => {
  const exempt = allowed('units')
  const measured = /\b(seconds?|milliseconds?|ms|bytes?|per second|since the epoch)\b/i
  const bags = Object.keys(SCHEMA).filter((k) => k.endsWith('ptions') && k !== 'callOptions')
  const bad = []
  for (const option of bags.flatMap((k) => SCHEMA[k])) {
    if (option.kind !== 'integer' && option.kind !== 'number') continue
    if (measured.test(option.doc) && !/(Ms|Sec|Bytes|PerSec)$/.test(option.name) && !exempt.has(option.name)) bad.push(option.name)
  }
  assert.deepEqual(bad, [])
  // And a name with a unit is a number in that unit.
  for (const option of bags.flatMap((k) => SCHEMA[k])) {
    if (/(Ms|Sec|Bytes|PerSec)$/.test(option.name)) assert.ok(['integer', 'number', 'custom'].includes(option.kind), option.name)
  }
})

test('one name, one meaning (rule 8): the renamed tensions stay settled', () => {
  const bagsWith = (name) => [
    ...Object.keys(SCHEMA).filter((k) => k.endsWith('ptions') && k !== 'callOptions' && SCHEMA[k].some((o) => o.name === name)),
    ...SCHEMA.callOptions.filter((c) => c.names.includes(name)).map((c) => c.type),
  ]
  // maxKeys counts rate-limit keys only.
  assert.deepEqual(bagsWith('maxKeys').sort(), ['RateLimiterOptions', 'storeOptions'])
  // A Redis round trip's time-out has one name in both Redis objects; timeoutMs is the fetch's.
  assert.deepEqual(bagsWith('commandTimeoutMs').sort(), ['feedOptions', 'storeOptions'])
  assert.deepEqual(bagsWith('timeoutMs').sort(), ['introspectionOptions', 'jwksOptions'])
  // Every renamed name is gone from its bag, and its code is a Node-style deprecation code.
  for (const r of SCHEMA.renamed) {
    assert.ok(!bagsWith(r.name).includes(r.bag), `${r.bag}.${r.name}`)
    assert.match(r.code, /^AUTH_SHIELD_DEP_[A-Z0-9_]+$/)
  }
})

test('the failure triple and the verdicts (rules 2 and 3) hold on real results of both engines', () => {
  for (const engine of [native, require('../../js')]) {
    const auth = new engine.Authenticator({ accessSecret: SECRET })
    const ok = auth.authenticate(`Bearer ${auth.signAccessToken({ sub: 'u' })}`, null, null)
    const failed = auth.authenticate('Bearer x', null, null)
    assert.deepEqual(Object.keys(ok), require('../../contract/results.json').AuthResult.map((f) => f.name))
    assert.ok(!('valid' in ok), 'a request verdict is authenticated, not valid')
    assert.deepEqual([ok.error, ok.errorCode, ok.errorStatus], [undefined, undefined, undefined])
    assert.ok(typeof failed.error === 'string' && typeof failed.errorCode === 'string' && typeof failed.errorStatus === 'number')
    const verification = auth.verifyAccessToken('a.b.c')
    assert.ok('valid' in verification && !('authenticated' in verification), 'a check of a thing says valid')
    assert.ok('errorCode' in verification && 'expiresAtSec' in verification)
  }
})

test('errors follow Node (rule 4): every code a source throws is a Node code or ERR_AUTH_SHIELD_*', () => {
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
  walk('base')
  walk('adapters')
  for (const file of ['index.js', 'native.js', 'load-error.js']) sources.push(fs.readFileSync(path.join(root, file), 'utf8'))
  const thrown = new Set(sources.flatMap((text) => [...text.matchAll(/["'](ERR_[A-Z0-9_]+|ABORT_ERR)["']/g)].map((m) => m[1])))
  assert.ok(thrown.size > 20 && thrown.has('ERR_INVALID_ARG_TYPE'), 'the reader finds the codes')
  for (const code of thrown) assert.match(code, /^(ERR_AUTH_SHIELD_[A-Z0-9_]+|ERR_INVALID_ARG_TYPE|ERR_INVALID_ARG_VALUE|ERR_OUT_OF_RANGE|ABORT_ERR|ERR_INVALID_HASH|ERR_HASH_TOO_COSTLY|ERR_INVALID_CSP|ERR_INVALID_INTERVAL)$/)
  // The failure codes of results are snake_case words.
  for (const code of Object.keys(require('../../contract/error-codes.json'))) assert.match(code, /^[a-z]+(_[a-z]+)*$/)
})

test('every name the exceptions table lists still exists', () => {
  const known = new Set([...optionNames(), ...require('../../contract/results.json').AuthResult.map((f) => f.name), ...Object.keys(native), ...DECLARED, ...Object.keys(require('../../lib/jwks/index'))])
  // The wire names of tokens and JWKs are not declared as members everywhere: the claims are.
  const wire = new Set(['tenant_id', 'sub', 'exp', 'nbf', 'iat', 'jti', 'iss', 'aud', 'kid', 'alg', 'kty', 'crv', 'use'])
  assert.ok(EXCEPTIONS.length >= 5)
  for (const { names } of EXCEPTIONS) {
    for (const name of names) assert.ok(known.has(name) || wire.has(name), `${name} is listed but exists nowhere`)
  }
})
