'use strict'

// A contract no engine can half-follow (issue 35 §3). For every option of contract/options.json
// an engine reads (the Authenticator's `options`, its `entryOptions`, the `callOptions` of the
// calls both engines have), values other than the default are derived from the schema entry
// (schema-configs.js `nonDefaultValues`: its kind, bounds, default), and a probe of PROBES below
// runs requests whose results depend on that option. Per value, both engines must give the same
// observation (every AuthResult field but requestId, every call's outcome, metrics() and the
// getters), and the observation must differ from the default's: an option read by one engine
// only fails the first, an option read by neither (or a probe that does not look) the second,
// and an option without a probe fails by name. PROBES is checked against the schema both ways.

const { test, before } = require('node:test')
const assert = require('node:assert/strict')
const { generateKeyPairSync } = require('node:crypto')
const native = require('../..')
const js = require('../../js')
const { token, withoutRequestId } = require('../support/tokens')
const { plumbing } = require('../support/store-seam')
const { clientKey, craftedProof } = require('../support/dpop')
const { SCHEMA, OPTION_BAGS, nonDefaultValues } = require('../support/schema-configs')

const NOW = 1_700_000_000
const SECRET = 'options-contract-secret-0123456789abcdef'
const OTHER = 'options-contract-other-secret-0123456789'
const THUMB = 'Avv2uRvXGkvZRXCpVXMt6eDJ3AaIw7qOlRkE5wAmZZs'
const URL = 'https://api.example.com/orders'
// Rate limiting stays on: its counters are part of every observation. The limiter refills on the
// real clock, so at one token per 1000 s a slow machine (or a proof made between two requests)
// cannot refill one inside a probe.
const BASE = { accessSecret: SECRET, clockTimestamp: NOW, rateLimitRefillPerSec: 0.001 }
const TABLE = 'PROBES in __test__/parity/options-contract.test.js'

// Where the bags of options.json that no engine reads are read: one reader both engines share,
// so there is no second half to follow. A new bag must be placed here or among the engines'.
const SHARED_READERS = {
  storeOptions: 'lib/options/reader.js (createRedisStore; the engine side, enableSharedLimit, is the store probe)',
  middlewareOptions: 'lib/options/reader.js (the adapters)',
  feedOptions: 'lib/options/reader.js (createRevocationFeed)',
  jwksOptions: 'lib/options/reader.js (createRemoteJwks)',
  introspectionOptions: "lib/options/reader.js (a trusted issuer's introspection option, lib/introspection/options.js)",
}
const ENGINE_BAGS = ['options', 'entryOptions']

const claims = (extra = {}) => ({ sub: 'u', exp: NOW + 600, ...extra })
const bearer = (c, secret = SECRET, header) => `Bearer ${token(c, secret, header)}`
const decode = (t, part) => JSON.parse(Buffer.from(t.split('.')[part], 'base64url'))

/** `{ type, code, message }` of what `fn` threw, or `{ returned }`. */
function outcome(fn) {
  try {
    const returned = fn()
    return { returned: returned && typeof returned === 'object' && 'requestId' in returned ? withoutRequestId(returned) : returned }
  } catch (err) {
    return { threw: { type: err.constructor.name, code: err.code, message: err.message } }
  }
}

let keys
before(async () => {
  keys = { ES256: await clientKey('ES256'), Ed25519: await clientKey('Ed25519') }
})

/** A DPoP request: a token bound to `key` (cnf.jkt) and its proof, iat `iat`, nonce `nonce`. */
async function dpopRequest(auth, { key = keys.ES256, iat = NOW, jti, nonce } = {}) {
  const t = token(claims({ cnf: { jkt: key.jkt } }), SECRET)
  const payload = { iat, jti, ...(nonce === undefined ? {} : { nonce }) }
  const dpop = await craftedProof(key, { token: t, payload })
  return auth.authenticate(`DPoP ${t}`, undefined, undefined, { dpop, method: 'GET', url: URL })
}

/** A token of `bytes` characters or a little more (base64url grows by 1 or 2 per payload byte). */
function tokenOfLength(bytes) {
  const bare = token(claims({ pad: '' }), SECRET).length
  for (let pad = Math.max(0, Math.floor(((bytes - bare) * 3) / 4) - 2); ; pad++) {
    const t = token(claims({ pad: 'x'.repeat(pad) }), SECRET)
    if (t.length >= bytes) return t
  }
}

/** A store as far as the engines see one: attach enables leases, nothing is ever granted. */
function fakeStore() {
  return {
    attach(auth) {
      plumbing(auth).enableSharedLimit(5, false, 100)
    },
    recover() {},
  }
}

const ecPem = (namedCurve) => generateKeyPairSync('ec', { namedCurve }).privateKey.export({ type: 'pkcs8', format: 'pem' })
const SIGNING = { kid: 'sk-1', alg: 'ES256', privateKey: ecPem('P-256') }
const ED_SIGNING = { kid: 'sk-2', alg: 'EdDSA', privateKey: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) }

/**
 * The probes, by option name (`Type.name` for a call option). Each:
 * - `values`: the values the probe is built to see, each of which must change what it sees
 *   (default: the values derived from the schema entry); derived values are run and compared
 *   between the engines either way;
 * - `context`: other options both the default and the probed configs hold (undefined: left out);
 * - `config(config, value)`: how the value enters the config (default: `config[name] = value`);
 * - `run(auth, value)`: the requests and calls whose outcomes depend on the option (async allowed).
 * A call option's probe has `call(engine, options)` instead, `base` (the options every call
 * gets) and `values` (the schema gives call options no kinds).
 */
const PROBES = {
  accessSecret: {
    run: (auth, value) => [auth.authenticate(bearer(claims(), SECRET)), auth.authenticate(bearer(claims(), typeof value === 'string' || Buffer.isBuffer(value) ? value : OTHER))],
  },
  keys: {
    values: [[{ kid: 'k1', alg: 'HS256', secret: OTHER }], [{ kid: 'k2', alg: 'HS512', secret: OTHER }, { kid: 'k1', alg: 'HS256', secret: SECRET }]],
    config: (config, value) => ({ ...config, accessSecret: undefined, keys: value }),
    run: (auth) => [
      auth.authenticate(bearer(claims(), OTHER, { alg: 'HS256', kid: 'k1' })),
      auth.authenticate(bearer(claims(), SECRET, { alg: 'HS256', kid: 'k1' })),
      auth.authenticate(bearer(claims(), SECRET)),
    ],
  },
  signingKey: {
    values: [SIGNING, ED_SIGNING],
    run: (auth) => {
      const signed = outcome(() => auth.signAccessToken({ sub: 'u' }))
      const t = signed.returned
      return [decode(t, 0), auth.authenticate(`Bearer ${t}`), outcome(() => auth.jwks())]
    },
  },
  verifiedTokenCacheMaxEntries: {
    // HMAC keys: the cache is off by default; A B C A B C A A shows its size. What is not even
    // a b64token is a format error, never a lookup (metrics().verifiedTokenCache.misses).
    values: [1, 2, 1000],
    run: (auth) => {
      const [a, b, c] = ['a', 'b', 'c'].map((sub) => bearer(claims({ sub })))
      const junk = ['Bearer ===', 'Bearer a=b', 'Bearer é', `${a.slice(0, 40)}~!${a.slice(42)}`, 'Bearer abc.def']
      return [a, b, c, a, b, c, a, a, ...junk].map((t) => auth.authenticate(t)).concat([auth.verifiedTokenCacheEntries, auth.verifyAccessToken('a=b')])
    },
  },
  introspectionCacheMaxEntries: {
    // Off by default (an opaque token is malformed_token); on, a token is held until its end,
    // an inactive one refused, and the size bounds what is held (js/introspection.js).
    values: [1, 3],
    run: (auth) => {
      const admit = (t, c, until) => outcome(() => auth.admitIntrospection(t, c === null ? null : JSON.stringify(c), until))
      const until = claims().exp
      const out = [auth.authenticate('Bearer opaque-a')]
      out.push(admit('opaque-a', claims({ sub: 'a' }), until), admit('opaque-b', null, until), admit('opaque-c', claims({ sub: 'c' }), until))
      for (const t of ['opaque-a', 'opaque-b', 'opaque-c', 'a=b', 'x.y.z']) out.push(auth.authenticate(`Bearer ${t}`))
      return out.concat([auth.introspectionCacheEntries, admit('opaque-d', '[1]', until), admit('', null, until), admit('opaque-d', null, NaN)])
    },
  },
  introspectionCacheMaxBytes: {
    context: { introspectionCacheMaxEntries: 100 },
    values: [65536],
    run: (auth) => {
      const pad = 'p'.repeat(8000)
      const out = []
      for (let i = 0; i < 12; i++) out.push(auth.admitIntrospection(`opaque-${i}`, JSON.stringify(claims({ sub: `s${i}`, pad })), claims().exp))
      for (let i = 0; i < 12; i++) out.push(auth.authenticate(`Bearer opaque-${i}`).errorCode)
      return out.concat([auth.introspectionCacheEntries])
    },
  },
  introspectJwts: {
    // A JWT is verified locally unless every token is introspected: then it is looked up too.
    context: { introspectionCacheMaxEntries: 10 },
    run: (auth) => {
      const t = bearer(claims({ sub: 'from-jwt' }))
      const out = [auth.authenticate(t)]
      out.push(auth.admitIntrospection(t.slice(7), JSON.stringify(claims({ sub: 'from-introspection' })), claims().exp))
      return out.concat([auth.authenticate(t), auth.authenticate('Bearer opaque-x')])
    },
  },
  refreshSecret: {
    run: (auth, value) => {
      const refresh = token(claims({ type: 'refresh' }), value ?? OTHER)
      const signed = outcome(() => {
        const { jti, ...payload } = decode(auth.signRefreshToken({ sub: 'u' }), 1)
        return payload
      })
      return [outcome(() => auth.verifyRefreshToken(refresh)), signed]
    },
  },
  issuer: {
    run: (auth) => [
      ...['probe-a', 'probe-b', 'other', undefined].map((iss) => auth.authenticate(bearer(claims({ iss })))),
      outcome(() => decode(auth.signAccessToken({ sub: 'u' }), 1).iss),
    ],
  },
  audience: {
    run: (auth) => ['probe-a', 'probe-b', ['x', 'probe-b'], 'other', undefined].map((aud) => auth.authenticate(bearer(claims({ aud })))),
  },
  clockToleranceSec: {
    run: (auth) => [-0.5, -1.5, -30, -3600, -86399, -86401].flatMap((d) => [
      auth.authenticate(bearer({ sub: 'u', exp: NOW + d })),
      auth.authenticate(bearer({ sub: 'u', exp: NOW + 600, nbf: NOW - d })),
    ]),
  },
  rateLimitMax: {
    run: (auth) => [auth.authenticate(bearer(claims())), auth.authenticate(bearer(claims()))],
  },
  rateLimitClientCredentials: {
    // Client-credentials tokens (client_id, sub absent or the client's): unlimited by default, one bucket per client with it.
    context: { rateLimitMax: 1 },
    run: (auth) => {
      const service = (c) => bearer({ exp: NOW + 600, client_id: 'svc', ...c })
      return [auth.authenticate(service({})), auth.authenticate(service({ sub: 'svc' })), auth.authenticate(service({ sub: '' }))]
    },
  },
  rateLimitRefillPerSec: {
    context: { rateLimitMax: 1, rateLimitRefillPerSec: undefined },
    // 100 s, refilled at once, 1 s to wait (10/s, the default: 100 ms).
    values: [0.01, 1e9, 1],
    run: (auth) => [auth.authenticate(bearer(claims())), auth.authenticate(bearer(claims())), auth.authenticate(bearer(claims()))],
  },
  rateLimitMaxKeys: {
    values: [1, 2],
    run: (auth) => ['a', 'b', 'c', 'a'].map((sub) => auth.authenticate(bearer(claims({ sub })))).concat([auth.rateLimitBuckets]),
  },
  enforceTenantMatch: {
    run: (auth) => [
      auth.authenticate(bearer(claims({ tenant_id: 'acme' })), 'globex'),
      auth.authenticate(bearer(claims({ tenant_id: 'acme' })), undefined, 'globex.example.com'),
      auth.authenticate(bearer(claims({ tenant_id: 'acme' })), 'acme'),
    ],
  },
  baseDomain: {
    run: (auth) =>
      ['acme.probe.example', 'acme.probe.example.', 'a.b.probe.example', 'acme.other.org', 'probe.example', 'localhost'].map((host) =>
        auth.authenticate(bearer(claims()), undefined, host),
      ),
  },
  accessTtlSec: {
    run: (auth) => {
      const t = auth.signAccessToken({ sub: 'u' })
      const { jti, ...payload } = decode(t, 1)
      return [payload, auth.verifyAccessToken(t).expiresAtSec]
    },
  },
  refreshTtlSec: {
    context: { refreshSecret: OTHER },
    run: (auth) => {
      const { jti, ...payload } = decode(auth.signRefreshToken({ sub: 'u' }), 1)
      return [payload]
    },
  },
  maxTokenBytes: {
    run: (auth) => [100, 8191, 8192, 8193, 8194, 9000].map((n) => auth.authenticate(`Bearer ${tokenOfLength(n)}`)),
  },
  requireTokenType: {
    run: (auth) => [undefined, 'access', 'refresh'].map((type) => auth.authenticate(bearer(claims({ type })))),
  },
  requireExpiration: {
    run: (auth) => [auth.authenticate(bearer({ sub: 'u' })), auth.authenticate(bearer(claims()))],
  },
  requireSubject: {
    run: (auth) => [auth.authenticate(bearer({ exp: NOW + 600 })), auth.authenticate(bearer({ sub: '', exp: NOW + 600 })), auth.authenticate(bearer(claims()))],
  },
  clockTimestamp: {
    // The default is the system clock: tokens far on either side of now, and of the probed times.
    context: { clockTimestamp: undefined },
    run: (auth) => [1, 1e10, 2e13].map((exp) => auth.authenticate(bearer({ sub: 'u', exp }))),
  },
  allowShortSecret: {
    context: { accessSecret: 'short-secret' },
    run: (auth) => [auth.authenticate(bearer(claims(), 'short-secret')), outcome(() => auth.setKeys([{ alg: 'HS256', secret: 'tiny' }]))],
  },
  maxRevocations: {
    values: [1, 2],
    run: (auth) => [
      ...['j1', 'j2', 'j3'].map((jti) => outcome(() => auth.revokeToken(jti, NOW + 600))),
      outcome(() => auth.revokeSubject('s')),
      ...['j1', 'j2', 'j3'].map((jti) => auth.authenticate(bearer(claims({ jti })))),
      auth.revocationCount,
    ],
  },
  certificateBoundTokens: {
    run: (auth) => {
      const bound = bearer(claims({ cnf: { 'x5t#S256': THUMB } }))
      return [undefined, { clientCertThumbprint: THUMB }, { clientCertThumbprint: THUMB.replace(/^./, 'B') }].map((sender) => auth.authenticate(bound, undefined, undefined, sender))
    },
  },
  requireCertificateBoundTokens: {
    run: (auth) => [bearer(claims()), bearer(claims({ cnf: { 'x5t#S256': THUMB } }))].map((t) => auth.authenticate(t, undefined, undefined, { clientCertThumbprint: THUMB })),
  },
  dpop: {
    run: async (auth) => [await dpopRequest(auth, { jti: 'p1' }), auth.authenticate(`DPoP ${token(claims(), SECRET)}`)],
  },
  dpopIatWindowSec: {
    context: { dpop: true },
    run: async (auth) => {
      const out = []
      for (const [i, d] of [0, -10, -45, -75, -1000, -3599, -4000, 45].entries()) out.push(await dpopRequest(auth, { iat: NOW + d, jti: `w${i}` }))
      return out
    },
  },
  dpopAlgorithms: {
    context: { dpop: true },
    values: [['ES256'], ['Ed25519']],
    run: async (auth) => [await dpopRequest(auth, { key: keys.ES256, jti: 'a1' }), await dpopRequest(auth, { key: keys.Ed25519, jti: 'a2' })],
  },
  dpopMaxReplayEntries: {
    context: { dpop: true },
    values: [1, 2],
    run: async (auth) => {
      const out = []
      for (const jti of ['r1', 'r2', 'r3', 'r1']) out.push(await dpopRequest(auth, { jti }))
      return [...out, auth.dpopReplayEntries]
    },
  },
  dpopNonceSecret: {
    context: { dpop: true },
    run: async (auth) => [await dpopRequest(auth, { jti: 'n1' }), await dpopRequest(auth, { jti: 'n2', nonce: auth.dpopNonce() ?? 'none' })],
  },
  dpopNonceLifetimeSec: {
    context: { dpop: true, dpopNonceSecret: OTHER },
    run: async (auth) => {
      const nonce = auth.dpopNonce()
      return [nonce, await dpopRequest(auth, { jti: 'l1', nonce })]
    },
  },
  requireAccessTokenProfile: {
    context: { issuer: 'https://i.example', audience: 'api' },
    run: (auth) => {
      const full = { sub: 'u', exp: NOW + 600, iss: 'https://i.example', aud: 'api', client_id: 'c', iat: NOW, jti: 'j' }
      return [
        auth.authenticate(bearer(full)),
        auth.authenticate(bearer(full, SECRET, { alg: 'HS256', typ: 'at+jwt' })),
        auth.authenticate(bearer({ ...full, jti: undefined }, SECRET, { alg: 'HS256', typ: 'at+jwt' })),
      ]
    },
  },
  requiredAcr: {
    run: (auth) => ['probe-a', 'probe-b', 'pwd', undefined].map((acr) => auth.authenticate(bearer(claims({ acr })))),
  },
  maxAuthAgeSec: {
    run: (auth) => [NOW, NOW - 1, NOW - 2e9, undefined].map((t) => auth.authenticate(bearer(claims({ auth_time: t })))),
  },
  requiredScope: {
    run: (auth) => ['probe-a', 'probe-a probe-b', 'read', undefined].map((scope) => auth.authenticate(bearer(claims({ scope })))),
  },
  issuers: {
    values: [
      [{ issuer: 'https://i.example', keys: [{ kid: 'i1', alg: 'HS256', secret: OTHER }] }],
      [{ issuer: 'https://i.example', keys: [{ kid: 'i1', alg: 'HS256', secret: OTHER }], audience: 'api', tenant: 'globex' }],
    ],
    config: (config, value) => ({ ...config, accessSecret: undefined, issuers: value }),
    run: (auth) => [
      auth.authenticate(bearer(claims({ iss: 'https://i.example', aud: 'api' }), OTHER, { alg: 'HS256', kid: 'i1' })),
      auth.authenticate(bearer(claims({ iss: 'https://i.example' }), OTHER, { alg: 'HS256', kid: 'i1' })),
      auth.authenticate(bearer(claims({ iss: 'https://other.example' }), OTHER, { alg: 'HS256', kid: 'i1' })),
      auth.authenticate(bearer(claims())),
    ],
  },

  // entryOptions
  store: {
    values: ['a store'],
    config: (config) => ({ ...config, store: fakeStore() }),
    run: (auth) => {
      const r = [auth.authenticate(bearer(claims())), auth.authenticate(bearer(claims({ sub: 'v' })))]
      return [...r, plumbing(auth).takeLeaseRequests(), plumbing(auth).sharedLimitKeys]
    },
  },

  // callOptions: the calls both engines have.
  'RateLimiterOptions.capacity': {
    base: { capacity: 2, refillPerSec: 1 },
    values: [1, 5],
    call: (engine, options) => rateLimiterRun(engine, options),
  },
  'RateLimiterOptions.refillPerSec': {
    base: { capacity: 2, refillPerSec: 1 },
    values: [0.001, 1e9],
    call: (engine, options) => rateLimiterRun(engine, options),
  },
  'RateLimiterOptions.maxKeys': {
    base: { capacity: 2, refillPerSec: 1 },
    values: [1, 2],
    call: (engine, options) => rateLimiterRun(engine, options),
  },
  'ResolveTenantOptions.baseDomain': {
    base: {},
    values: ['probe.example', 'Probe.Example.'],
    call: (engine, options) =>
      ['acme.probe.example', 'a.b.probe.example', 'acme.other.org', 'probe.example'].map((host) => outcome(() => engine.resolveTenant(undefined, host, options))),
  },
  'RevokeTokenOptions.iss': {
    base: {},
    values: ['https://b.example'],
    call: (engine, options) => {
      const auth = new engine.Authenticator({ ...BASE, issuer: ['https://a.example', 'https://b.example'] })
      const revoked = outcome(() => auth.revokeToken('j1', NOW + 600, options))
      return [revoked, ...['https://a.example', 'https://b.example'].map((iss) => withoutRequestId(auth.authenticate(bearer(claims({ iss, jti: 'j1' })))))]
    },
  },
  'RevokeSubjectOptions.issuedBeforeSec': {
    base: {},
    // Cut-offs in the past: a future iat is refused on its own (token_not_yet_valid), whatever the cut-off.
    values: [NOW - 50, NOW - 200],
    call: (engine, options) => revokeSubjectRun(engine, options),
  },
  'RevokeSubjectOptions.iss': {
    base: {},
    values: ['https://b.example'],
    call: (engine, options) => revokeSubjectRun(engine, options),
  },
  'SetKeysOptions.issuer': {
    base: {},
    values: ['https://b.example'],
    call: (engine, options) => {
      const issuers = [{ issuer: 'https://a.example', keys: [{ kid: 'a', alg: 'HS256', secret: SECRET }] }, { issuer: 'https://b.example' }]
      const auth = new engine.Authenticator({ clockTimestamp: NOW, issuers })
      const generation = outcome(() => auth.setKeys([{ kid: 'n', alg: 'HS256', secret: OTHER }], options))
      const tokens = ['https://a.example', 'https://b.example'].map((iss) => bearer(claims({ iss }), OTHER, { alg: 'HS256', kid: 'n' }))
      return [generation, ...tokens.map((t) => withoutRequestId(auth.authenticate(t)))]
    },
  },
}

/** A limiter of `options`: keys a, a, a, b, c, a, then its size. */
function rateLimiterRun(engine, options) {
  const limiter = new engine.RateLimiter(options)
  const out = ['a', 'a', 'a', 'b', 'c', 'a'].map((key) => {
    const { allowed, remaining, retryAfterMs } = limiter.consume(key)
    return resultOf({ allowed, remaining, retryAfterMs })
  })
  return [...out, limiter.size]
}

function revokeSubjectRun(engine, options) {
  const auth = new engine.Authenticator({ ...BASE, issuer: ['https://a.example', 'https://b.example'] })
  const revoked = outcome(() => auth.revokeSubject('u', options))
  const tokens = ['https://a.example', 'https://b.example'].flatMap((iss) => [NOW - 100, NOW - 10, NOW + 30, NOW + 60].map((iat) => bearer(claims({ iss, iat }))))
  return [revoked, ...tokens.map((t) => withoutRequestId(auth.authenticate(t)))]
}

/** The call options an engine reads: those of a call the JS engine has (and so both must). */
function engineCallOptions() {
  const has = (name) => {
    const ctor = name.startsWith('new ') ? name.slice(4) : null
    if (ctor !== null) return typeof js[ctor] === 'function'
    return typeof js[name] === 'function' || typeof js.Authenticator.prototype[name] === 'function'
  }
  return SCHEMA.callOptions.filter((c) => c.usedBy.some(has)).flatMap((c) => c.names.map((name) => `${c.type}.${name}`))
}

/** Every option an engine reads, by the name its probe has. */
function engineOptionNames() {
  return [...ENGINE_BAGS.flatMap((bag) => SCHEMA[bag].map((o) => o.name)), ...engineCallOptions()]
}

const optionEntry = (name) => ENGINE_BAGS.map((bag) => SCHEMA[bag].find((o) => o.name === name)).find(Boolean)

// The getters of the Authenticator (both engines have the same) but the renamed ones: compared,
// never counted as the option's effect (most repeat an option back).
const RENAMED_GETTERS = SCHEMA.renamed.filter((r) => r.bag === 'Authenticator').map((r) => r.name)
const GETTERS = Object.entries(Object.getOwnPropertyDescriptors(js.Authenticator.prototype))
  .filter(([name, d]) => typeof d.get === 'function' && !RENAMED_GETTERS.includes(name))
  .map(([name]) => name)

/** The counters of metrics() without what depends on each engine's speed (durations). */
function countsOf(m) {
  const { buckets, sumSeconds, ...duration } = m.duration
  return { ...m, duration }
}

/**
 * An AuthResult without its request id, and its retryAfterMs as its order of magnitude: the
 * limiter refills on the real clock (not clockTimestamp), so a loaded machine moves it by a few
 * milliseconds between two calls; a decade apart is what a refill rate changes.
 */
function resultOf(result) {
  const r = withoutRequestId(result)
  if (r.retryAfterMs > 0) r.retryAfterMs = `1e${Math.ceil(Math.log10(r.retryAfterMs))}`
  return r
}

/** What `engine` shows for `config` under `probe`: `{ effect, getters }`, or the refusal. */
async function observe(engine, probe, config, value) {
  let auth
  try {
    auth = new engine.Authenticator(config)
  } catch (err) {
    return { effect: { refused: { type: err.constructor.name, code: err.code, message: err.message } }, getters: null }
  }
  const steps = (await probe.run(auth, value)).map((s) => (s && typeof s === 'object' && 'requestId' in s ? resultOf(s) : s))
  const getters = Object.fromEntries(GETTERS.map((g) => [g, outcome(() => auth[g])]))
  return { effect: { steps, metrics: countsOf(auth.metrics()) }, getters }
}

const show = (v) => (Buffer.isBuffer(v) ? `<Buffer ${v.toString()}>` : JSON.stringify(v)?.slice(0, 80))

/** Both engines on `name`'s default and on each value; returns the failures, in words. */
async function checkOption(name, probe, engines = { native, js }) {
  const entry = optionEntry(name)
  const derived = entry === undefined ? [] : nonDefaultValues(entry)
  const observable = probe.values ?? derived
  if (observable.length === 0) return [`no non-default value for option ${name} (kind ${entry?.kind}): give values in ${TABLE}`]
  const failures = []
  const compare = async (value) => {
    if (probe.call !== undefined) {
      const options = value === undefined ? probe.base : { ...probe.base, [name.split('.')[1]]: value }
      const [n, j] = [engines.native, engines.js].map((engine) => ({ effect: outcome(() => probe.call(engine, options)), getters: null }))
      return [n, j]
    }
    let config = { ...BASE, ...probe.context }
    if (value !== undefined) config = probe.config ? probe.config(config, value) : { ...config, [name]: value }
    return [await observe(engines.native, probe, config, value), await observe(engines.js, probe, config, value)]
  }
  const [defaultN, defaultJ] = await compare(undefined)
  try {
    assert.deepStrictEqual(defaultJ, defaultN)
  } catch {
    failures.push(`option ${name} at its default: the engines differ`)
  }
  for (const value of [...observable, ...derived.filter((v) => !observable.includes(v))]) {
    const [n, j] = await compare(value)
    try {
      assert.deepStrictEqual(j, n)
    } catch (err) {
      failures.push(`option ${name} = ${show(value)}: native and JS engines differ (+ JS, - native)\n${err.message.split('\n').slice(0, 40).join('\n')}`)
      continue
    }
    if (observable.includes(value)) {
      for (const [engine, obs, def] of [['native', n, defaultN], ['js', j, defaultJ]]) {
        if (!isDeepStrictEqual(obs.effect, def.effect)) continue
        failures.push(`option ${name} = ${show(value)} changes nothing the probe sees in the ${engine} engine: the engine ignores it, or the probe in ${TABLE} does not observe it`)
      }
    }
  }
  return failures
}

const { isDeepStrictEqual } = require('node:util')

test('every option an engine reads has a probe, and every probe an option', () => {
  const names = engineOptionNames()
  const missing = names.filter((n) => !Object.hasOwn(PROBES, n)).map((n) => `no observable probe for option ${n}: add one to ${TABLE}`)
  const stale = Object.keys(PROBES).filter((n) => !names.includes(n)).map((n) => `${TABLE} has a probe for ${n}, which no engine reads in contract/options.json`)
  assert.ok(missing.length + stale.length === 0, [...missing, ...stale].join('\n'))
  // A bag with option entries is read by the engines or by one shared reader, never unplaced.
  const bags = Object.keys(SCHEMA).filter((k) => Array.isArray(SCHEMA[k]) && SCHEMA[k].some((o) => o.kind !== undefined))
  assert.deepEqual(bags.sort(), [...ENGINE_BAGS, ...Object.keys(SHARED_READERS)].sort())
  assert.deepEqual(OPTION_BAGS.slice().sort(), bags.slice().sort())
})

// The check itself (issue 35 asks to see it fail): an engine that drops one option from its
// config, as an engine that never learnt it would, is caught; so are two that both drop it.
test('an option one engine ignores, or both, fails the check with its name', async () => {
  const ignoring = (engine, name) => ({
    ...engine,
    Authenticator: class extends engine.Authenticator {
      constructor(config) {
        super({ ...config, [name]: undefined })
      }
    },
  })
  for (const name of ['requireTokenType', 'maxTokenBytes', 'requiredScope', 'dpopIatWindowSec']) {
    const one = await checkOption(name, PROBES[name], { native, js: ignoring(js, name) })
    assert.ok(one.length > 0 && one.every((f) => f.startsWith(`option ${name} = `) && f.includes('native and JS engines differ')), one.join('\n'))
    const neither = await checkOption(name, PROBES[name], { native: ignoring(native, name), js: ignoring(js, name) })
    assert.ok(neither.length > 0 && neither.every((f) => f.includes('changes nothing the probe sees')), neither.join('\n'))
  }
})

test('every option with a non-default value changes what a request sees, the same way in both engines', async () => {
  const failures = []
  for (const name of engineOptionNames()) {
    const probe = PROBES[name]
    if (probe === undefined) failures.push(`no observable probe for option ${name}: add one to ${TABLE}`)
    else failures.push(...(await checkOption(name, probe)))
  }
  assert.ok(failures.length === 0, `${failures.length} failures:\n${failures.join('\n\n')}`)
})

// callOptions says "any other name is a TypeError in both engines": a misspelt option must not
// fall back to its default (setKeys(keys, { isuer }) replaced the config's keys, issue 35).
test('a misspelt name in the options of a call both engines have is a TypeError naming it, in both', () => {
  const { message } = require('../../contract')
  const types = new Map(engineCallOptions().map((n) => [n.split('.')[0], n]))
  assert.ok(types.has('SetKeysOptions'), 'callOptions lists SetKeysOptions')
  for (const [type, name] of types) {
    const probe = PROBES[name]
    const bad = `${name.split('.')[1]}x`
    const options = { ...probe.base, [bad]: probe.values[0] }
    const [n, j] = [native, js].map((engine) => JSON.stringify(outcome(() => probe.call(engine, options))))
    assert.equal(j, n, type)
    // The outcome holds the refusal: thrown by the call, or by the step that passed the options.
    const text = JSON.stringify(message('unknownOption', { name: `options.${bad}` }))
    assert.ok(n.includes('"type":"TypeError"') && n.includes(text), `${type}: ${n.slice(0, 300)}`)
  }
})
