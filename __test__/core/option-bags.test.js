'use strict'

// Every JS options bag is read by the one option reader (lib/options/reader.js) from its entries in
// contract/options.json: a misspelt name is a TypeError ERR_INVALID_ARG_TYPE naming it, a value of the
// wrong kind a TypeError, a value past a bound a RangeError ERR_OUT_OF_RANGE, the same words in
// every bag. The cases below are drawn from the schema itself, so a new option is tested the day
// it is described. The renamed options (`renamed`) work under their old name in both engines,
// warn once, and refuse both names together.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { createClient } = require('redis')
const native = require('../..')
const js = require('../../js')
const SCHEMA = require('../../contract/options.json')
const express = require('../../adapters/express')
const fastify = require('../../adapters/fastify')
const { createRedisStore, RevocationFeed } = require('../../lib/store/index')
const { createRemoteJwks } = require('../../lib/jwks/index')

const root = path.join(__dirname, '../..')
const SECRET = 'option-bags-test-access-secret-0123456789'
const CONFIG = { accessSecret: SECRET }
// A loopback port nothing listens on: a JWKS source built in a test fetches nothing.
const NOWHERE = 'http://127.0.0.1:9/jwks.json'

/** Builds with `options` and releases what was built; throws what the constructor throws. */
const BAGS = {
  middlewareOptions: {
    'express, native engine': (o) => express.authShield(CONFIG, { engine: 'native', ...o }),
    'express, JS engine': (o) => express.authShield(CONFIG, { engine: 'js', ...o }),
    'fastify plugin options': (o) => fastifyDecision(o),
  },
  storeOptions: {
    createRedisStore: (o) => void createRedisStore(createClient(), o).close(),
  },
  feedOptions: {
    'new RevocationFeed': (o) => new RevocationFeed(createClient(), o),
  },
  jwksOptions: {
    createRemoteJwks: (o) => createRemoteJwks(NOWHERE, o).close(),
  },
  introspectionOptions: {
    "a trusted issuer's introspection": (o) => readIntrospection({ clientId: 'rs', clientSecret: 'rs-secret', ...o }, 'https://idp.example/', new URL('https://idp.example/')),
  },
}
// The name a bag's messages give its options (`options.x` unless said here).
const WHERE = { introspectionOptions: 'introspection' }
const whereOf = (bag) => WHERE[bag] ?? 'options'
const { readIntrospection } = require('../../lib/introspection/options')
const ASSERTION_KEY = require('node:crypto').generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey

// The Fastify plugin reads its options when registered: the same reader, through its decision.
function fastifyDecision(o) {
  const { AuthDecision } = require('../../lib/http/decision')
  return new AuthDecision(CONFIG, { engine: 'js', ...o }, new Set(['config', 'authenticator', 'hook', 'formatUser']))
}

/** The misspellings tried for a name: the last letter dropped, and all lower case. */
function misspellings(name) {
  const out = new Set([name.slice(0, -1), name.toLowerCase(), `${name}s`])
  out.delete(name)
  return [...out]
}

function* everyBuild() {
  for (const [bag, builds] of Object.entries(BAGS)) {
    for (const [label, build] of Object.entries(builds)) yield { bag, label, build }
  }
}

test('every bag of the schema with full entries is read here (and a bag without one fails)', () => {
  const bags = Object.keys(SCHEMA).filter((k) => k.endsWith('Options') && k !== 'callOptions' && k !== 'entryOptions' && k !== 'options')
  assert.deepEqual(Object.keys(BAGS).sort(), bags.sort())
})

test('a misspelt option is a TypeError ERR_INVALID_ARG_TYPE naming it, in every bag and engine', () => {
  let checked = 0
  for (const { bag, label, build } of everyBuild()) {
    for (const { name } of SCHEMA[bag]) {
      for (const typo of misspellings(name)) {
        if (SCHEMA[bag].some((o) => o.name === typo) || SCHEMA.renamed.some((r) => r.bag === bag && r.name === typo)) continue
        assert.throws(() => build({ [typo]: 1 }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: `${whereOf(bag)}.${typo} is not a known option` }, `${label}: ${typo}`)
        checked++
      }
    }
  }
  assert.ok(checked > 100, `${checked} misspellings`)
})

/** A value of the wrong kind for an option the schema types, or undefined. */
function wrongKind(option) {
  switch (option.kind) {
    case 'boolean':
      return 'yes'
    case 'integer':
    case 'number':
      return String(option.min + 1)
    case 'function':
      return 'not a function'
    case 'string':
      return 42
    case 'enum':
      return 'none of them'
    default:
      return undefined
  }
}

test('a value of the wrong kind is a TypeError, one past a bound a RangeError, in the same words everywhere', () => {
  let checked = 0
  for (const { bag, label, build } of everyBuild()) {
    for (const option of SCHEMA[bag]) {
      const wrong = wrongKind(option)
      if (wrong === undefined) continue
      const words = { boolean: 'a boolean', integer: 'a number', number: 'a number', function: 'a function' }[option.kind]
      const where = whereOf(bag)
      const message = words === undefined ? new RegExp(`^${where}\\.${option.name} must be `) : `${where}.${option.name} must be ${words}`
      assert.throws(() => build({ [option.name]: wrong }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message }, `${label}: ${option.name}`)
      checked++
      if (option.kind === 'integer' || option.kind === 'number') {
        for (const past of [option.exclusiveMin ? option.min : option.min - 1, option.max + 1, ...(option.kind === 'integer' ? [option.min + 0.5] : [])]) {
          assert.throws(() => build({ [option.name]: past }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: new RegExp(`^${where}\\.${option.name} must be .*, got ${past}$`) }, `${label}: ${option.name} ${past}`)
          checked++
        }
      }
    }
  }
  assert.ok(checked > 50, `${checked} values`)
})

test('each bound and each enum value of the schema is accepted', () => {
  for (const { bag, label, build } of everyBuild()) {
    for (const option of SCHEMA[bag]) {
      const values = option.kind === 'enum' ? option.values : option.kind === 'integer' || option.kind === 'number' ? [option.exclusiveMin ? option.max : option.min, option.max] : []
      for (const value of values) {
        // The one rule between two options: retryMinMs may not exceed retryMaxMs.
        // And a DPoP mode that reads proofs needs the origin clients address.
        const with_ =
          option.name === 'retryMinMs'
            ? { retryMaxMs: Math.max(value, 30_000) }
            : option.name === 'retryMaxMs'
              ? { retryMinMs: Math.min(value, 1_000) }
              : option.name === 'dpopMode' && value !== 'disabled'
                ? { dpopOrigin: 'https://api.example' }
                : option.name === 'authMethod' && value === 'private_key_jwt'
                  ? { clientSecret: undefined, privateKey: ASSERTION_KEY }
                  : {}
        assert.doesNotThrow(() => build({ ...with_, [option.name]: value }), `${label}: ${option.name} ${value}`)
      }
    }
  }
})

test('the attach options of a store are its subset, refused outside it, with either engine', () => {
  const store = createRedisStore(createClient())
  try {
    for (const engine of [native, js]) {
      const auth = new engine.Authenticator(CONFIG)
      assert.throws(() => store.attach(auth, { prefix: 'x' }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'attach options.prefix is not a known option' })
      assert.throws(() => store.attach(auth, { leas: 2 }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'attach options.leas is not a known option' })
      assert.throws(() => store.attach(auth, { lease: 0 }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' })
    }
  } finally {
    void store.close()
  }
})

/** The member names (with `?` when optional) of `export interface name` in `file`. */
function members(file, name) {
  const dts = fs.readFileSync(path.join(root, file), 'utf8')
  const start = dts.indexOf(`export interface ${name}`)
  assert.notEqual(start, -1, `${file}: ${name}`)
  const body = dts.slice(start, dts.indexOf('\n}\n', start))
  return [...body.matchAll(/^ {2}(\w+)(\??):/gm)].map((m) => m[1] + m[2])
}

test('the declared types of every bag name exactly its options (and their deprecated names), all optional', () => {
  const expected = (bag) =>
    [...SCHEMA[bag].map((o) => o.name), ...SCHEMA.renamed.filter((r) => r.bag === bag).map((r) => r.name)].map((n) => `${n}?`).sort()
  assert.deepEqual(members('lib/store/index.d.ts', 'RedisStoreOptions').sort(), expected('storeOptions'))
  assert.deepEqual(members('lib/jwks/index.d.ts', 'RemoteJwksOptions').sort(), expected('jwksOptions'))
  assert.deepEqual(members('lib/store/revocations.d.ts', 'RevocationFeedOptions').sort(), expected('feedOptions'))
  // onError's parameters are each framework's own: it is declared per adapter.
  const middleware = [...members('lib/http/middleware.d.ts', 'CommonOptions'), 'onError?'].sort()
  assert.deepEqual(middleware, expected('middlewareOptions'))
  for (const file of ['adapters/express.d.ts', 'adapters/fastify.d.ts', 'adapters/koa.d.ts']) assert.match(fs.readFileSync(path.join(root, file), 'utf8'), /^\s+onError\?[:(]/m, file)
  const attach = members('lib/store/index.d.ts', 'AttachOptions').filter((n) => n !== 'name?')
  assert.deepEqual(attach.sort(), ['lease?', 'strict?', 'maxKeys?', 'outageShare?'].sort())
})

/** Runs `fn` and returns the DeprecationWarnings it emitted (they are emitted on the next tick). */
async function warningsOf(fn) {
  const seen = []
  const listener = (w) => {
    if (w.name === 'DeprecationWarning') seen.push(w)
  }
  process.on('warning', listener)
  try {
    await fn()
    await new Promise((resolve) => setImmediate(resolve))
  } finally {
    process.off('warning', listener)
  }
  return seen
}

// How each renamed option is used under a name, in each engine that has it.
const NOW = Math.floor(Date.now() / 1000)
const RENAMED_USES = {
  'options:rateLimitRefill': {
    engines: [native, js],
    use: (lib, name, value) => new lib.Authenticator({ ...CONFIG, [name]: value }).rateLimitRefillPerSec,
    value: 7,
  },
  'options:verifiedTokenCacheSize': {
    engines: [native, js],
    use: (lib, name, value) => {
      const auth = new lib.Authenticator({ ...CONFIG, [name]: value })
      // A cache of one entry: the second verified token replaces the first.
      auth.verifyAccessToken(auth.signAccessToken({ sub: 'a' }))
      auth.verifyAccessToken(auth.signAccessToken({ sub: 'b' }))
      return auth.verifiedTokenCacheEntries
    },
    value: 1,
  },
  'Authenticator:rateLimitRefill': {
    engines: [native, js],
    use: (lib, name) => new lib.Authenticator({ ...CONFIG, rateLimitRefillPerSec: 7 })[name],
    value: 7,
    getter: true,
  },
  'RevokeSubjectOptions:before': {
    engines: [native, js],
    use: (lib, name, value) => {
      const auth = new lib.Authenticator(CONFIG)
      const token = auth.signAccessToken({ sub: 'u' })
      auth.revokeSubject('u', { [name]: value })
      return auth.authenticate(`Bearer ${token}`, null, null).errorCode
    },
    value: NOW + 10,
    expected: 'token_revoked',
  },
  'storeOptions:timeoutMs': {
    engines: [js],
    use: (_lib, name, value) => {
      const store = createRedisStore(createClient(), { [name]: value })
      void store.close()
      return store.options.commandTimeoutMs
    },
    value: 321,
  },
  'jwksOptions:maxKeys': {
    engines: [js],
    use: (_lib, name, value) => {
      createRemoteJwks(NOWHERE, { [name]: value }).close()
      return value
    },
    value: 3,
  },
  'middlewareOptions:dpopRequired': {
    engines: [native, js],
    use: (lib, name, value) => {
      const { AuthDecision } = require('../../lib/http/decision')
      return new AuthDecision(CONFIG, { engine: lib === native ? 'native' : 'js', dpopOrigin: 'https://api.example', [name]: value }).dpopMode
    },
    value: true,
    expected: 'required',
  },
  'UnauthorizedError:authCode': {
    engines: [js],
    use: (_lib, name) => {
      const { errorForNext } = require('../../lib/http/unauthorized-error')
      const result = new js.Authenticator(CONFIG).authenticate('Bearer x', null, null)
      return errorForNext(result, 'Bearer x', [])[name]
    },
    value: 'malformed_token',
    getter: true,
  },
}

test('every renamed option is read under its old name in each engine, with one DeprecationWarning per code and process', async () => {
  assert.deepEqual(Object.keys(RENAMED_USES).sort(), SCHEMA.renamed.map((r) => `${r.bag}:${r.name}`).sort())
  const warned = new Set()
  for (const r of SCHEMA.renamed) {
    const { engines, use, value, expected = value, getter } = RENAMED_USES[`${r.bag}:${r.name}`]
    for (const lib of engines) {
      const warnings = await warningsOf(() => {
        assert.equal(use(lib, r.name, value), expected, `${r.bag}.${r.name}`)
        assert.equal(use(lib, r.name, value), expected, `${r.bag}.${r.name}, again`)
      })
      const ours = warnings.filter((w) => w.code === r.code)
      // Once per process, whichever engine: the first use of a code warns, every later one (this
      // name again, in the other engine, or another use sharing the code) does not.
      const key = r.code
      assert.equal(ours.length, warned.has(key) ? 0 : 1, `${key}: ${ours.length} warnings`)
      warned.add(key)
      // A value renamed too (`values`) is named with the new one.
      const newValue = r.values === undefined ? value : r.values[JSON.stringify(value)]
      const named = r.values === undefined ? ' \\(the same option\\)' : `: '${newValue}'`
      for (const w of ours) assert.match(w.message, new RegExp(`\\.${r.name} is deprecated: use .*\\.${r.use}${named}$`))
      // The new name never warns.
      if (!getter) {
        const none = await warningsOf(() => assert.equal(use(lib, r.use, newValue), expected))
        assert.deepEqual(none.filter((w) => w.code === r.code), [], r.use)
      }
    }
  }
})

test('the old and the new name together are a TypeError, in both engines', () => {
  const both = (label, name, use) => ({
    name: 'TypeError',
    code: 'ERR_INVALID_ARG_TYPE',
    message: `${label}.${name} and ${label}.${use} are the same option (${name} is its deprecated name): give only ${use}`,
  })
  for (const lib of [native, js]) {
    assert.throws(() => new lib.Authenticator({ ...CONFIG, rateLimitRefill: 5, rateLimitRefillPerSec: 5 }), both('config', 'rateLimitRefill', 'rateLimitRefillPerSec'))
    assert.throws(() => lib.Authenticator.shared({ ...CONFIG, rateLimitRefill: 5, rateLimitRefillPerSec: 6 }), both('config', 'rateLimitRefill', 'rateLimitRefillPerSec'))
    assert.throws(() => new lib.Authenticator(CONFIG).revokeSubject('u', { before: NOW, issuedBeforeSec: NOW }), both('options', 'before', 'issuedBeforeSec'))
    // An old name left undefined or null is no value: the new one is read.
    assert.equal(new lib.Authenticator({ ...CONFIG, rateLimitRefill: undefined, rateLimitRefillPerSec: 4 }).rateLimitRefillPerSec, 4)
    assert.equal(new lib.Authenticator({ ...CONFIG, rateLimitRefill: null, rateLimitRefillPerSec: 4 }).rateLimitRefillPerSec, 4)
  }
  assert.throws(() => createRedisStore(createClient(), { timeoutMs: 5, commandTimeoutMs: 5 }), both('options', 'timeoutMs', 'commandTimeoutMs'))
  assert.throws(() => createRemoteJwks(NOWHERE, { maxKeys: 5, maxDocumentKeys: 5 }), both('options', 'maxKeys', 'maxDocumentKeys'))
})

test('an old value renamed to a value of the new option (dpopRequired): each one mapped, any other refused, both names a TypeError, in both engines', () => {
  const { AuthDecision } = require('../../lib/http/decision')
  const ORIGIN = 'https://api.example'
  for (const engine of ['native', 'js']) {
    const mode = (options) => new AuthDecision(CONFIG, { engine, dpopOrigin: ORIGIN, ...options }).dpopMode
    assert.equal(mode({ dpopRequired: true }), 'required')
    // false is no mode: as if neither name were given (no dpopOrigin needed either).
    assert.equal(mode({ dpopRequired: false }), undefined)
    assert.equal(new AuthDecision(CONFIG, { engine, dpopRequired: false }).dpopMode, undefined)
    assert.equal(mode({ dpopRequired: undefined, dpopMode: 'disabled' }), 'disabled')
    for (const bad of [null, 'yes', 1, 0, 'true', 1n, Symbol('s'), { toJSON: () => true }, [true]]) {
      assert.throws(() => mode({ dpopRequired: bad }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'options.dpopRequired must be a boolean' }, String(bad))
    }
    for (const [old, use] of [[true, 'required'], [false, 'allowed'], [true, 'disabled']]) {
      assert.throws(() => mode({ dpopRequired: old, dpopMode: use }), {
        name: 'TypeError',
        code: 'ERR_INVALID_ARG_TYPE',
        message: 'options.dpopRequired and options.dpopMode say the same thing (dpopRequired is deprecated): give only dpopMode',
      })
    }
  }
})

test('an old name is checked as the new one: a bad value names the option it was read as', () => {
  for (const lib of [native, js]) {
    assert.throws(() => new lib.Authenticator({ ...CONFIG, rateLimitRefill: 0 }), { name: 'RangeError', message: /^config\.rateLimitRefillPerSec must be greater than 0/ })
    assert.throws(() => new lib.Authenticator(CONFIG).revokeSubject('u', { before: 'now' }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })
  }
})

test('the Authenticator config (its own reader, mirroring the native core) refuses a misspelt option the same way, in both engines', () => {
  let checked = 0
  for (const lib of [native, js]) {
    for (const { name } of [...SCHEMA.options, ...SCHEMA.entryOptions]) {
      for (const typo of misspellings(name)) {
        if (SCHEMA.options.some((o) => o.name === typo) || SCHEMA.renamed.some((r) => r.bag === 'options' && r.name === typo)) continue
        for (const build of [(c) => new lib.Authenticator(c), (c) => lib.Authenticator.shared(c)]) {
          assert.throws(() => build({ ...CONFIG, [typo]: 1 }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: `config.${typo} is not a known option` }, typo)
          checked++
        }
      }
    }
  }
  assert.ok(checked > 100, `${checked} misspellings`)
})

test("an enum's values per adapter (valuesFor) are the ones that adapter takes, and only those", () => {
  let checked = 0
  for (const option of SCHEMA.middlewareOptions.filter((o) => o.valuesFor !== undefined)) {
    for (const [adapter, values] of Object.entries(option.valuesFor)) {
      const make = adapter === 'fetch' ? require('../../adapters/fetch').createVerifier : require(`../../adapters/${adapter}`).authShield
      for (const value of new Set([...option.values, ...values])) {
        const build = () => make(CONFIG, { [option.name]: value })
        if (values.includes(value)) assert.doesNotThrow(build, `${adapter} ${value}`)
        else assert.throws(build, { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: new RegExp(`^options\\.${option.name} must be `) }, `${adapter} ${value}`)
        checked++
      }
    }
  }
  assert.ok(checked >= 5, `${checked} cases`)
})
