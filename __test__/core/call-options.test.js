'use strict'

// Options objects of the helpers and the other calls (issue 22 §4): a misspelt name is a
// TypeError, as a misspelt config or middleware option is, never a silent default
// (`totp(s, { digit: 8 })` made 6-digit codes, `generateApiKey({ secret, prefx })` an
// `auth1_pk_` key). contract/options.json's callOptions lists the names each object accepts; both
// engines refuse any other, and every name it lists (the .d.ts interfaces, checked below) is
// still accepted.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const native = require('../..')
const js = require('../../js')
const { SCHEMA } = require('../../base/schema')
const { createRedisStore } = require('../../lib/store/index')
const { createClient } = require('redis')

const NOW = 1_700_000_000
const SECRET = 'call-options-access-secret-0123456789'
const API_SECRET = 'api-key-server-secret-0123456789'
const OTP_SECRET = native.generateTotpSecret()
// Cheap Argon2 costs: the test is about option names, not hashing.
const PASSWORD = { memoryCost: 64, timeCost: 1, parallelism: 1, secret: 'pepper' }
const HASH = native.hashPasswordSync('pw', PASSWORD)
const API = native.generateApiKey({ secret: API_SECRET })

const authFor = (lib) => new lib.Authenticator({ accessSecret: SECRET, clockTimestamp: NOW })

/**
 * Per callOptions type: every name it accepts with a valid value, and each call that takes it
 * (by the usedBy name), as `(lib, options) => result`; `engines` lists where the call exists.
 */
const CALLS = {
  PasswordOptions: {
    full: PASSWORD,
    engines: ['native'],
    calls: {
      hashPassword: (lib, o) => lib.hashPassword('pw', o),
      hashPasswordSync: (lib, o) => lib.hashPasswordSync('pw', o),
      needsRehash: (lib, o) => lib.needsRehash(HASH, o),
    },
  },
  VerifyPasswordOptions: {
    full: { secret: 'pepper' },
    engines: ['native'],
    calls: {
      verifyPassword: (lib, o) => lib.verifyPassword(HASH, 'pw', o),
      verifyPasswordSync: (lib, o) => lib.verifyPasswordSync(HASH, 'pw', o),
    },
  },
  OtpOptions: {
    full: { algorithm: 'SHA256', digits: 8, period: 60, time: NOW, window: 2 },
    engines: ['native'],
    calls: {
      hotp: (lib, o) => lib.hotp(OTP_SECRET, 7, o),
      totp: (lib, o) => lib.totp(OTP_SECRET, o),
      verifyHotp: (lib, o) => lib.verifyHotp(OTP_SECRET, '12345678', 7, o),
      verifyTotp: (lib, o) => lib.verifyTotp(OTP_SECRET, '12345678', o),
    },
  },
  TotpUriInput: {
    full: { secret: OTP_SECRET, account: 'ada@example.com', issuer: 'Acme', algorithm: 'SHA1', digits: 6, period: 30 },
    engines: ['native'],
    calls: { totpUri: (lib, o) => lib.totpUri(o) },
  },
  OtpStoreOptions: {
    full: { digits: 6, ttlSec: 60, maxAttempts: 3, maxEntries: 10 },
    engines: ['native'],
    calls: { 'new OtpStore': (lib, o) => new lib.OtpStore(o) },
  },
  GenerateApiKeyOptions: {
    full: { prefix: 'acme_pk', secret: API_SECRET },
    engines: ['native'],
    calls: { generateApiKey: (lib, o) => lib.generateApiKey(o) },
  },
  ApiKeySecretOptions: {
    full: { secret: API_SECRET },
    engines: ['native'],
    calls: {
      verifyApiKey: (lib, o) => lib.verifyApiKey(API.hash, API.key, o),
      hashApiKey: (lib, o) => lib.hashApiKey(API.key, o),
    },
  },
  SanitizeHtmlOptions: {
    full: { allowedTags: ['b'], allowedAttributes: { b: [] }, allowedSchemes: ['https'], stripComments: true },
    engines: ['native'],
    calls: { sanitizeHtml: (lib, o) => lib.sanitizeHtml('<b>x</b>', o) },
  },
  SanitizeFilenameOptions: {
    full: { replacement: '-', maxBytes: 100 },
    engines: ['native'],
    calls: { sanitizeFilename: (lib, o) => lib.sanitizeFilename('a b.txt', o) },
  },
  RateLimiterOptions: {
    full: { capacity: 3, refillPerSec: 1, maxKeys: 10 },
    engines: ['native', 'js'],
    calls: { 'new RateLimiter': (lib, o) => new lib.RateLimiter(o) },
  },
  ResolveTenantOptions: {
    full: { baseDomain: 'example.com' },
    engines: ['native', 'js'],
    calls: { resolveTenant: (lib, o) => lib.resolveTenant(null, 'acme.example.com', o) },
  },
  RevokeTokenOptions: {
    full: { iss: 'https://issuer.example' },
    engines: ['native', 'js'],
    calls: { revokeToken: (lib, o) => authFor(lib).revokeToken('jti-1', NOW + 60, o) },
  },
  RevokeSubjectOptions: {
    full: { issuedBeforeSec: NOW, iss: 'https://issuer.example' },
    engines: ['native', 'js'],
    calls: { revokeSubject: (lib, o) => authFor(lib).revokeSubject('user-1', o) },
  },
  // setKeys's options: the trusted issuer whose key set is replaced.
  SetKeysOptions: {
    full: { issuer: 'https://issuer.example' },
    engines: ['native', 'js'],
    calls: {
      setKeys: (lib, o) =>
        new lib.Authenticator({ issuers: [{ issuer: 'https://issuer.example', keys: [{ alg: 'HS256', secret: 'call-options-issuer-secret-0123456789' }] }] }).setKeys(
          [{ alg: 'HS256', secret: 'call-options-issuer-secret-9876543210' }],
          o,
        ),
    },
  },
  // auth-shield/redis (JS only, either engine's authenticator): the bucket of store.consume and
  // of the store option `limit`. A node-redis client that is never connected: a bad limit is
  // refused before any command, and a store does no I/O until it is used.
  SharedLimit: {
    full: { capacity: 10, refillPerSec: 1 },
    engines: ['js'],
    labels: { createRedisStore: 'options.limit', 'store.consume': 'limit' },
    calls: {
      createRedisStore: (_lib, o) => void createRedisStore(createClient(), { limit: o }).close(),
      'store.consume': async (_lib, o) => {
        const store = createRedisStore(createClient(), { limit: { capacity: 1, refillPerSec: 1 } })
        try {
          // An accepted limit goes on to Redis, which this client cannot reach: only an
          // argument error is the verdict on the options.
          const { error } = await outcome(() => store.consume('k', 1, o))
          if (error && /^ERR_(INVALID_ARG|OUT_OF_RANGE)/.test(error.code)) throw error
        } finally {
          await store.close()
        }
      },
    },
  },
}
const LIBS = { native, js }

/** The call's outcome: `{ value }` or `{ error }`, awaiting a Promise. */
async function outcome(fn) {
  try {
    return { value: await fn() }
  } catch (error) {
    return { error }
  }
}

function* everyCall() {
  for (const [type, { full, engines, calls, labels = {} }] of Object.entries(CALLS)) {
    for (const [name, call] of Object.entries(calls)) {
      // How the call names its options object in messages.
      const label = labels[name] ?? (type === 'TotpUriInput' ? 'input' : 'options')
      for (const engine of engines) yield { type, full, name, label, engine, call: (o) => call(LIBS[engine], o) }
    }
  }
}

/** The misspellings tried for a name: the last letter dropped, and all lower case. */
function misspellings(name) {
  const out = new Set([name.slice(0, -1) || `${name}x`, name.toLowerCase()])
  out.delete(name)
  return [...out]
}

test('callOptions lists the fields of each .d.ts interface, and each call that takes it is tested', () => {
  const dts = ['binding.d.ts', 'lib/store/index.d.ts'].map((f) => fs.readFileSync(path.join(__dirname, '..', '..', f), 'utf8')).join('\n')
  for (const { type, usedBy, names } of SCHEMA.callOptions) {
    const body = new RegExp(`export interface ${type} \\{\\n([\\s\\S]*?)\\n\\}`).exec(dts)
    assert.ok(body, `binding.d.ts / lib/store/index.d.ts have no interface ${type}`)
    const fields = [...body[1].matchAll(/^ {2}(\w+)\??:/gm)].map((m) => m[1])
    // A renamed option's old name stays declared (@deprecated) beside its new one.
    const deprecated = SCHEMA.renamed.filter((r) => r.bag === type).map((r) => r.name)
    assert.deepEqual([...fields].sort(), [...names, ...deprecated].sort(), type)
    assert.deepEqual(Object.keys(CALLS[type].calls).sort(), [...usedBy].sort(), type)
    assert.deepEqual(Object.keys(CALLS[type].full).sort(), [...names].sort(), `${type}: test values`)
  }
  assert.deepEqual(Object.keys(CALLS).sort(), SCHEMA.callOptions.map((c) => c.type).sort())
})

test('every documented option is accepted, all at once and one by one, in every engine', async () => {
  for (const { type, full, name, engine, call } of everyCall()) {
    const all = await outcome(() => call({ ...full }))
    assert.equal(all.error, undefined, `${engine} ${name}(${type}): ${all.error}`)
    for (const option of Object.keys(full)) {
      // Options some calls require come along (totpUri's account, the API-key secret, ...).
      const required = type === 'TotpUriInput' ? { secret: full.secret, account: full.account } : {}
      const needsSecret = type === 'GenerateApiKeyOptions' || type === 'ApiKeySecretOptions'
      const limiter = type === 'RateLimiterOptions' || type === 'SharedLimit' ? { capacity: 3, refillPerSec: 1 } : {}
      const o = { ...required, ...limiter, ...(needsSecret ? { secret: API_SECRET } : {}), [option]: full[option] }
      const one = await outcome(() => call(o))
      assert.equal(one.error, undefined, `${engine} ${name}({ ${option} }): ${one.error}`)
    }
  }
})

test('a misspelt option is a TypeError naming it, in every call and engine', async () => {
  let checked = 0
  for (const { full, name, label, engine, call } of everyCall()) {
    for (const option of Object.keys(full)) {
      for (const typo of misspellings(option)) {
        if (Object.hasOwn(full, typo)) continue
        const { value, error } = await outcome(() => call({ ...full, [typo]: full[option] }))
        assert.ok(error, `${engine} ${name}: ${label}.${typo} was accepted (${JSON.stringify(value)})`)
        assert.ok(error instanceof TypeError, `${engine} ${name}: ${error}`)
        assert.equal(error.code, 'ERR_INVALID_ARG_TYPE', `${engine} ${name}`)
        assert.equal(error.message, `${label}.${typo} is not a known option`, `${engine} ${name}`)
        checked++
      }
    }
  }
  assert.ok(checked > 60, `only ${checked} misspellings checked`)
})

test('the misspellings of the issue throw, in both engines where the call exists', async () => {
  const refused = async (fn, message) => {
    const { error } = await outcome(fn)
    assert.ok(error instanceof TypeError, message)
    assert.equal(error.code, 'ERR_INVALID_ARG_TYPE')
    assert.equal(error.message, message)
  }
  await refused(() => native.hashPassword('pw', { memorycost: 64 }), 'options.memorycost is not a known option')
  await refused(() => native.totp(OTP_SECRET, { digit: 8 }), 'options.digit is not a known option')
  await refused(() => native.verifyTotp(OTP_SECRET, '123456', { windw: 3 }), 'options.windw is not a known option')
  await refused(() => native.generateApiKey({ secret: API_SECRET, prefx: 'acme_pk' }), 'options.prefx is not a known option')
  await refused(() => native.sanitizeHtml('<b>x</b>', { allowTags: [] }), 'options.allowTags is not a known option')
  for (const lib of [native, js]) {
    await refused(() => new lib.RateLimiter({ capacity: 3, refillPerSec: 1, maxkeys: 9 }), 'options.maxkeys is not a known option')
    await refused(() => lib.resolveTenant(null, 'a.example.com', { basedomain: 'example.com' }), 'options.basedomain is not a known option')
    await refused(() => authFor(lib).revokeSubject('u', { befor: NOW }), 'options.befor is not a known option')
    await refused(() => authFor(lib).revokeToken('j', NOW + 60, { issuer: 'x' }), 'options.issuer is not a known option')
  }
})

test('an inherited enumerable name counts as given, as for a config (both engines)', () => {
  const inherited = Object.create({ digit: 8 })
  assert.throws(() => native.totp(OTP_SECRET, inherited), { name: 'TypeError', message: 'options.digit is not a known option' })
  for (const lib of [native, js]) {
    const options = Object.create({ maxkeys: 9 })
    options.capacity = 3
    options.refillPerSec = 1
    assert.throws(() => new lib.RateLimiter(options), { name: 'TypeError', message: 'options.maxkeys is not a known option' })
  }
})
