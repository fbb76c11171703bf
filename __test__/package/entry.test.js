'use strict'

// The package entry's contract (issue 24, "a small, explicit entry"): an explicit export list,
// a plain Authenticator class (no Proxy) whose instances, shared ones and subclasses behave as
// classes do, each config read once, the store plumbing off the public surface, and the
// signing-kid rule with one error in both engines.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { types } = require('node:util')
const native = require('../..')
const js = require('../../js')
const { keyPair, keyEntry } = require('../support/keys')
const { plumbing } = require('../support/store-seam')
const { token } = require('../support/tokens')

const SECRET = 'entry-test-secret-0123456789abcdef'
const ENGINES = [
  ['native', native],
  ['js', js],
]
const PLUMBING = ['enableSharedLimit', 'takeLeaseRequests', 'grantLease', 'sharedLimitKeys', 'setRevocationUnavailable']

test('the entry exports exactly the names users need, and no store plumbing', () => {
  assert.deepEqual(Object.keys(native).sort(), [
    'Authenticator', 'CspBuilder', 'OtpStore', 'RateLimiter', 'authenticateRequest', 'buildProfile',
    'generateApiKey', 'generateTotpSecret', 'hashApiKey', 'hashPassword', 'hashPasswordSync', 'hotp',
    'needsRehash', 'parseApiKey', 'resolveTenant', 'sanitizeFilename', 'sanitizeHtml', 'timingSafeEqual',
    'totp', 'totpUri', 'validateSqlInterval', 'verifyApiKey', 'verifyHotp', 'verifyPassword',
    'verifyPasswordSync', 'verifyTotp',
  ])
  for (const name of PLUMBING) assert.equal(name in js, false, name)
})

test('Authenticator is a plain class: no Proxy, instances and shared ones have its prototype', () => {
  for (const [engine, { Authenticator }] of ENGINES) {
    assert.equal(types.isProxy(Authenticator), false, engine)
    const own = new Authenticator({ accessSecret: SECRET })
    const shared = Authenticator.shared({ accessSecret: SECRET })
    for (const auth of [own, shared]) {
      assert.equal(Object.getPrototypeOf(auth), Authenticator.prototype, engine)
      assert.ok(auth instanceof Authenticator, engine)
      assert.equal(auth.authenticate(`Bearer ${token({ sub: 'u', exp: Math.floor(Date.now() / 1000) + 60 }, SECRET)}`).authenticated, true, engine)
    }
    assert.throws(() => Authenticator({ accessSecret: SECRET }), TypeError, engine)
  }
})

test('a subclass keeps its own methods, the keys in every form and setKeys', () => {
  for (const [engine, { Authenticator }] of ENGINES) {
    class Tenanted extends Authenticator {
      constructor(config) {
        super(config)
        this.label = 'tenanted'
      }
      whoAmI(header) {
        const r = this.authenticate(header)
        return r.authenticated ? `${this.label}:${r.userId}` : r.errorCode
      }
    }
    const { privateKey } = keyPair('ES256')
    const auth = new Tenanted({ keys: [keyEntry('ES256', 'a', 'pem')] })
    assert.equal(Object.getPrototypeOf(auth), Tenanted.prototype, engine)
    assert.ok(auth instanceof Tenanted && auth instanceof Authenticator, engine)
    const { createSign } = require('node:crypto')
    const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url')
    const input = `${b64({ alg: 'ES256', kid: 'a' })}.${b64({ sub: 'ada', exp: Math.floor(Date.now() / 1000) + 60 })}`
    const signature = createSign('sha256').update(input).sign({ key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')
    assert.equal(auth.whoAmI(`Bearer ${input}.${signature}`), 'tenanted:ada', engine)
    assert.equal(auth.setKeys([keyEntry('ES256', 'b', 'jwk')]), 1, engine)
    assert.equal(auth.whoAmI(`Bearer ${input}.${signature}`), 'unknown_key', engine)
  }
})

test('the store plumbing is neither a member of Authenticator nor enumerable, yet reachable by the stores', () => {
  for (const [engine, { Authenticator }] of ENGINES) {
    const auth = new Authenticator({ accessSecret: SECRET, rateLimitMax: 10 })
    for (const name of PLUMBING) {
      assert.equal(name in auth, false, `${engine} ${name}`)
      assert.equal(name in Authenticator, false, `${engine} static ${name}`)
    }
    assert.deepEqual(Object.keys(auth), [], engine)
    const seam = plumbing(auth)
    seam.enableSharedLimit(5, false, 100)
    assert.equal(seam.sharedLimitKeys, 0, engine)
    assert.equal(auth.revocationUnavailable, false, engine)
    seam.setRevocationUnavailable(true)
    assert.equal(auth.revocationUnavailable, true, engine)
  }
})

test('a config is read once: each option a getter counts is read one time, keys included', () => {
  const { privateKey } = keyPair('ES256')
  for (const [engine, { Authenticator }] of ENGINES) {
    for (const make of [(c) => new Authenticator(c), (c) => Authenticator.shared(c)]) {
      const reads = {}
      const values = {
        keys: [keyEntry('EdDSA', 'verify', 'pem')],
        signingKey: { kid: `sign-${engine}-${make.length}`, alg: 'ES256', privateKey },
        rateLimitMax: 7,
      }
      const config = {}
      for (const [name, value] of Object.entries(values)) {
        Object.defineProperty(config, name, {
          enumerable: true,
          get() {
            reads[name] = (reads[name] || 0) + 1
            return value
          },
        })
      }
      const auth = make(config)
      assert.equal(auth.rateLimitMax, 7, engine)
      assert.deepEqual(reads, { keys: 1, signingKey: 1, rateLimitMax: 1 }, engine)
    }
  }
})

test('a key refused in JS does not hide an option the core reads first, in both engines alike', () => {
  const bad = [{ kid: 'x', alg: 'ES256', publicKey: 'not a PEM' }]
  for (const config of [
    { keys: bad, acessSecret: SECRET },
    { allowShortSecret: 'yes', keys: bad },
    { accessSecret: 5, keys: bad },
    { keys: bad, rateLimitMax: -1 },
    { keys: [keyEntry('ES256', 'a')], signingKey: { kid: 'a', alg: 'ES256', privateKey: 'nope' }, rateLimitMax: -1 },
  ]) {
    const errors = ENGINES.map(([, { Authenticator }]) => {
      try {
        new Authenticator(config)
      } catch (e) {
        return { name: e.name, code: e.code, message: e.message }
      }
      return null
    })
    assert.ok(errors[0] !== null, JSON.stringify(Object.keys(config)))
    assert.deepEqual(errors[0], errors[1], JSON.stringify(Object.keys(config)))
  }
})

test('the signingKey kid taken by another key: one error, one code, in both engines', () => {
  const { privateKey } = keyPair('ES256')
  const signingKey = { kid: 'own', alg: 'ES256', privateKey }
  const caught = (fn) => {
    try {
      fn()
    } catch (e) {
      return { name: e.name, code: e.code, message: e.message }
    }
    return null
  }
  const atConstruction = ENGINES.map(([, { Authenticator }]) => caught(() => new Authenticator({ keys: [keyEntry('EdDSA', 'own')], signingKey })))
  assert.deepEqual(atConstruction[0], { name: 'RangeError', code: 'ERR_AUTH_SHIELD_DUPLICATE_KID', message: `config.keys: kid "own" is the signingKey's kid` })
  assert.deepEqual(atConstruction[1], atConstruction[0])
  const inSetKeys = ENGINES.map(([, { Authenticator }]) => {
    const auth = new Authenticator({ keys: [keyEntry('EdDSA', 'other')], signingKey })
    return caught(() => auth.setKeys([keyEntry('ES256', 'own')]))
  })
  assert.deepEqual(inSetKeys[0], { name: 'RangeError', code: 'ERR_AUTH_SHIELD_DUPLICATE_KID', message: `keys: kid "own" is the signingKey's kid` })
  assert.deepEqual(inSetKeys[1], inSetKeys[0])
  // The raw binding, without the entry's key normalisation, refuses with the same code.
  const { binding } = require('../../native.js')
  const rawSigningKey = [{ kid: 'own', alg: 'ES256', key: privateKey.export({ type: 'pkcs8', format: 'der' }) }]
  const rawKey = (kid, byte) => ({ kid, alg: 'HS256', key: Buffer.alloc(32, byte) })
  assert.throws(() => new binding.Authenticator({ keys: [rawKey('own', 1)], signingKey: rawSigningKey }), atConstruction[0])
  const raw = new binding.Authenticator({ keys: [rawKey('other', 1)], signingKey: rawSigningKey })
  assert.throws(() => raw.setKeys([rawKey('own', 2)]), inSetKeys[0])
  // Two keys with one kid, the same code as the JS normalisation's.
  assert.throws(() => raw.setKeys([rawKey('a', 2), rawKey('a', 3)]), { name: 'RangeError', code: 'ERR_AUTH_SHIELD_DUPLICATE_KID' })
})

test('index.d.ts declares exactly the entry: its values are the exports, its types the binding\'s', () => {
  const fs = require('node:fs')
  const path = require('node:path')
  const read = (file) => fs.readFileSync(path.join(__dirname, '..', '..', file), 'utf8')
  const block = (text, head) => {
    const start = text.indexOf(head)
    assert.notEqual(start, -1, head)
    return text.slice(start + head.length, text.indexOf('}', start)).match(/\w+/g)
  }
  const entry = read('index.d.ts')
  const values = [...block(entry, 'export {'), 'authenticateRequest']
  assert.match(entry, /^export declare function authenticateRequest\(/m)
  assert.deepEqual(values.sort(), Object.keys(native).sort())
  // Every other name the binding's types declare, but the loader's marker and the seam's type.
  const declared = [...read('binding.d.ts').matchAll(/^export (?:declare )?(?:interface|type|class|const|function|enum) (\w+)/gm)].map((m) => m[1])
  const expected = declared.filter((n) => !values.includes(n) && n !== '__napiBindingTarget' && n !== 'LeaseRequest')
  assert.deepEqual(block(entry, 'export type {').sort(), [...new Set(expected)].sort())
})
