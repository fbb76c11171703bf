'use strict'

// Child process for no-panic.test.js: calls every export of the addon with the worst values we
// could think of, in every argument position, on every prototype method with foreign `this`.
// A Rust panic that reached Node would abort this process; the parent checks that it exits
// normally and that each call either returned or threw a real Error.

const native = require('../..')
const jsEngine = require('../../js')

const SECRET = 'hostile-access-secret-0123456789abcdef'

function detachedBuffer() {
  const ab = new ArrayBuffer(16)
  const view = new Uint8Array(ab)
  structuredClone(ab, { transfer: [ab] })
  return view
}

let cached
function hostileValues() {
  cached = cached || makeHostileValues()
  return cached
}

function makeHostileValues() {
  const cyclic = { sub: 'x' }
  cyclic.self = cyclic
  const throwingGetter = {}
  for (const k of ['accessSecret', 'sub', 'replacement', 'prefix', 'secret', 'memoryCost', 'digits', 'issuer']) {
    Object.defineProperty(throwingGetter, k, { enumerable: true, get: () => { throw new Error('getter trap') } })
  }
  const manyKeys = {}
  for (let i = 0; i < 20_000; i++) manyKeys[`k${i}`] = i
  let deep = {}
  for (let i = 0; i < 50_000; i++) deep = { a: deep }
  return [
    undefined, null, true, false,
    0, -0, -1, 1.5, NaN, Infinity, -Infinity, 2 ** 53, 2 ** 64, -(2 ** 63), 1e308, 4294967296,
    '', '\u0000', '\ud800', '\udfff\ud800', 'é\u202e\u200b', 'Bearer ', 'Bearer \u0000', '$argon2id$', '$argon2id$v=19$m=4294967295,t=4294967295,p=255$AAAA$AAAA',
    'a'.repeat(16 * 1024 * 1024), '\uffff'.repeat(300_000), '<'.repeat(100_000), '['.repeat(200_000),
    Symbol('hostile'), 10n, -(2n ** 128n),
    {}, [], [[[]]], [1, 'a', null], Object.create(null), () => {}, class {}, new Date(NaN), /x/g, new Map([[1, 2]]), Promise.resolve(),
    new Proxy({}, { get() { throw new Error('proxy trap') }, ownKeys() { throw new Error('proxy trap') }, has() { throw new Error('proxy trap') } }),
    new Proxy([], { get() { throw new Error('proxy trap') } }),
    throwingGetter,
    { toString() { throw new Error('toString trap') }, valueOf() { throw new Error('valueOf trap') } },
    cyclic, manyKeys, deep,
    Buffer.alloc(0), Buffer.alloc(1024 * 1024, 0xff), new Uint8Array(3), new Float64Array(4), new ArrayBuffer(8), new DataView(new ArrayBuffer(4)), detachedBuffer(),
    new SharedArrayBuffer(8), new Uint8Array(new SharedArrayBuffer(64)),
    ['a'.repeat(1 << 20)], Array.from({ length: 10_000 }, () => 'x'),
    { sub: 'user', exp: 1e400 }, { sub: 'user', tenant_id: 'a:b' }, { sub: 10n }, { sub: 'u', iat: 1 },
    { accessSecret: SECRET, rateLimitMax: 1e308 }, { accessSecret: SECRET, maxTokenBytes: -1 }, { accessSecret: SECRET, clockTimestamp: NaN },
    { accessSecret: Buffer.alloc(0) }, { accessSecret: detachedBuffer() }, { accessSecret: SECRET, issuer: [] }, { accessSecret: SECRET, baseDomain: '.' },
    { memoryCost: 2 ** 32, timeCost: 0, parallelism: 1e9 }, { digits: 1e9, period: 0, algorithm: 'md5' }, { replacement: '/', maxBytes: 1e9 },
    { allowedTags: ['script'], allowedAttributes: { '*': ['onerror'] }, allowedSchemes: ['javascript'] },
    { prefix: 'A B', secret: '' }, { key: '\u0000', bytes: -1 },
  ]
}

const outcomes = { returned: 0, threwError: 0, threwOther: [], promiseThrew: [], uncoded: [] }

// HOSTILE_SHARD=i/n: no-panic.test.js runs n of these children at once, and this one makes the
// calls of every n-th group from the i-th. A group (one export or method in every position, one
// method's foreign receivers, the header cross product) runs whole, in its usual order, in one
// child; together the children make every call.
const [SHARD, SHARDS] = (process.env.HOSTILE_SHARD || '0/1').split('/').map(Number)
let groups = 0
const ours = () => groups++ % SHARDS === SHARD

// Every error an export throws or rejects with has an ERR_* code (never napi-rs'
// `GenericFailure`), and the functions that return a Promise report every failure by
// rejecting, never by throwing. Calls on a foreign `this` are napi-rs' own receiver check.
const PROMISE_FN = /^(hashPassword|verifyPassword)[[(]/

function checkCode(label, err) {
  // The hostile values' own exceptions (a throwing getter, proxy trap or toString) reach the
  // caller as they are, as in Node's own APIs: they are the caller's code failing, not ours.
  const ownTrap = err instanceof Error && / trap$/.test(err.message)
  if (!ownTrap && !/foreign this/.test(label) && !/^ERR_[A-Z0-9_]+$/.test(String(err && err.code))) {
    outcomes.uncoded.push(`${label}: ${err && err.code} ${String(err && err.message).slice(0, 80)}`)
  }
}

function record(label, fn) {
  try {
    const value = fn()
    if (value && typeof value.then === 'function') {
      pending.push(
        value.then(
          () => outcomes.returned++,
          (err) => {
            checkCode(`${label} (async)`, err)
            return err instanceof Error ? outcomes.threwError++ : outcomes.threwOther.push(`${label} (async): ${typeof err}`)
          },
        ),
      )
    } else {
      outcomes.returned++
    }
  } catch (err) {
    if (PROMISE_FN.test(label)) outcomes.promiseThrew.push(label)
    checkCode(label, err)
    if (err instanceof Error) outcomes.threwError++
    else outcomes.threwOther.push(`${label}: ${typeof err}`)
  }
}
const pending = []

/** Calls `fn` with each hostile value in each of `arity` positions, the others set to `fill`. */
function each(label, arity, fill, fn) {
  if (!ours()) return
  const values = hostileValues()
  for (let pos = 0; pos < arity; pos++) {
    for (const [i, v] of values.entries()) {
      const args = fill.slice(0, arity)
      args[pos] = v
      record(`${label}[${pos}]#${i}`, () => fn(...args))
    }
  }
  record(`${label}()`, () => fn())
}

const validAuth = new native.Authenticator({ accessSecret: SECRET, refreshSecret: SECRET + 'r', rateLimitMax: 5 })
const validToken = validAuth.signAccessToken({ sub: 'u' })
const goodHash = native.hashPasswordSync('password', { memoryCost: 64, timeCost: 1, parallelism: 1 })
const totpSecret = native.generateTotpSecret()
const apiKey = native.generateApiKey({ prefix: 'sk', secret: 'api-key-secret-0123456789' })

// Functions: hostile values in each position, the others plausible so deeper code runs.
const FUNCTIONS = {
  resolveTenant: [3, ['acme', 'acme.example.com', { baseDomain: 'example.com' }]],
  authenticateRequest: [4, [`Bearer ${validToken}`, 'acme', 'acme.example.com', { accessSecret: SECRET }]],
  timingSafeEqual: [2, ['a', 'a']],
  buildProfile: [1, [undefined]],
  needsRehash: [2, [goodHash, {}]],
  hashPasswordSync: [2, ['password', { memoryCost: 64, timeCost: 1, parallelism: 1 }]],
  hashPassword: [3, ['password', { memoryCost: 64, timeCost: 1, parallelism: 1 }, undefined]],
  verifyPasswordSync: [3, [goodHash, 'password', {}]],
  verifyPassword: [4, [goodHash, 'password', {}, undefined]],
  hotp: [3, [totpSecret, 1, {}]],
  totp: [2, [totpSecret, {}]],
  totpUri: [1, [{ secret: totpSecret, issuer: 'x', account: 'y' }]],
  verifyHotp: [4, [totpSecret, '123456', 1, {}]],
  verifyTotp: [3, [totpSecret, '123456', {}]],
  generateTotpSecret: [1, [20]],
  sanitizeFilename: [2, ['name.txt', {}]],
  parseApiKey: [1, [apiKey.key]],
  verifyApiKey: [3, [apiKey.hash, apiKey.key, { secret: 'api-key-secret-0123456789' }]],
  hashApiKey: [2, [apiKey.key, { secret: 'api-key-secret-0123456789' }]],
  generateApiKey: [1, [{ prefix: 'sk', secret: 'api-key-secret-0123456789' }]],
  validateSqlInterval: [1, ['7 days']],
  sanitizeHtml: [2, ['<b>x</b>', {}]],
}

function run() {
  const missing = Object.keys(native).filter((k) => typeof native[k] === 'function' && !/^[A-Z]/.test(k) && !(k in FUNCTIONS))
  for (const [name, [arity, fill]] of Object.entries(FUNCTIONS)) {
    if (typeof native[name] !== 'function') continue
    each(name, arity, fill, native[name])
  }

  // Constructors, with whole hostile configs and with one hostile field in a valid config.
  each('new Authenticator', 1, [{}], (c) => new native.Authenticator(c))
  for (const field of ['accessSecret', 'refreshSecret', 'issuer', 'audience', 'clockToleranceSec', 'rateLimitMax', 'rateLimitRefillPerSec', 'rateLimitMaxKeys', 'enforceTenantMatch', 'baseDomain', 'accessTtlSec', 'refreshTtlSec', 'maxTokenBytes', 'requireTokenType', 'requireExpiration', 'requireSubject', 'clockTimestamp', 'allowShortSecret']) {
    each(`new Authenticator.${field}`, 1, [undefined], (v) => new native.Authenticator({ accessSecret: SECRET, [field]: v }))
  }
  if (native.OtpStore) each('new OtpStore', 1, [{}], (o) => new native.OtpStore(o))
  if (native.CspBuilder) each('new CspBuilder', 1, [undefined], (o) => new native.CspBuilder(o))

  // Methods on real instances.
  const instances = [
    ['Authenticator', () => new native.Authenticator({ accessSecret: SECRET, refreshSecret: SECRET + 'r', rateLimitMax: 5 })],
    // Without refreshSecret the refresh methods throw ERR_AUTH_SHIELD_NO_REFRESH_SECRET.
    ['Authenticator', () => new native.Authenticator({ accessSecret: SECRET })],
    ['OtpStore', () => new native.OtpStore()],
    ['CspBuilder', () => new native.CspBuilder()],
  ].filter(([name]) => typeof native[name] === 'function')
  // The JS engine's exports throw the same coded errors.
  each('js resolveTenant', 3, FUNCTIONS.resolveTenant[1], jsEngine.resolveTenant)
  for (const config of [{ accessSecret: SECRET, refreshSecret: SECRET + 'r', rateLimitMax: 5 }, { accessSecret: SECRET }]) {
    const obj = new jsEngine.Authenticator(config)
    for (const name of ['authenticate', 'signAccessToken', 'signRefreshToken', 'verifyAccessToken', 'verifyRefreshToken']) {
      each(`js Authenticator#${name}`, 3, [`Bearer ${validToken}`, 'acme', 'acme.example.com'], (...args) => obj[name](...args))
    }
  }
  for (const [cls, make] of instances) {
    const proto = native[cls].prototype
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor') continue
      const desc = Object.getOwnPropertyDescriptor(proto, name)
      if (typeof desc.value === 'function') {
        const obj = make()
        each(`${cls}#${name}`, 3, [`Bearer ${validToken}`, 'acme', 'acme.example.com'], (...args) => obj[name](...args))
        // Foreign receivers: a plain object, null, an instance of another class.
        if (ours()) {
          for (const other of [{}, null, undefined, Object.create(proto), validAuth, new Uint8Array(8)]) {
            record(`${cls}#${name} on foreign this`, () => desc.value.call(other, 'x', 'y', 'z'))
          }
        }
      } else if (desc.get && ours()) {
        for (const other of [{}, null, Object.create(proto)]) record(`${cls}.${name} getter on foreign this`, () => desc.get.call(other))
        record(`${cls}.${name} getter`, () => desc.get.call(make()))
      }
    }
  }

  // The Authenticator's per-request entry points get the full cross product of header shapes.
  for (const auth of ours() ? [validAuth] : []) {
    const headers = hostileValues()
    for (const a of headers) for (const t of [undefined, 'acme', '\u0000', 'x'.repeat(1 << 20), {}]) record('authenticate', () => auth.authenticate(a, t, a))
  }

  Promise.all(pending).then(() => {
    process.stdout.write(JSON.stringify({ ...outcomes, missing }))
  })
}

run()
