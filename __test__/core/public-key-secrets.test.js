'use strict'

// Issue 34: public key material never becomes an HMAC secret. Before, an operator who wrote
// `accessSecret: process.env.JWT_PUBLIC_KEY` got an authenticator that accepted HS256 tokens
// MAC'd with the public PEM's bytes: anyone holding the public key forged tokens (fast-jwt
// CVE-2026-34950, hono CVE-2026-22817). The rule (src/jwt/hmac_secret.rs, its twin
// base/keys/hmac-secret.js, docs/keys.md) is run here on the shared vectors, then every form of
// key material in every place an HMAC secret enters, in both engines: a TypeError that names the
// fix, the same in both.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const { createHmac, createSecretKey, generateKeyPairSync } = require('node:crypto')
const express = require('express')
const native = require('../..')
const js = require('../../js')
const authShieldExpress = require('../../adapters/express')
const { message } = require('../../contract')
const { keyMaterial } = require('../../base/keys/hmac-secret')
const { listen, request } = require('../support/http')
const { cases } = require('../../contract/vectors/hmac_secret_key_material.json')

const ENGINES = [
  ['native', native],
  ['js', js],
]
const GOOD = 'a-legitimate-hmac-secret-0123456789abcdef'
const NOW = 1_800_000_000
const bytesOf = (c) => (c.utf8 !== undefined ? Buffer.from(c.utf8, 'utf8') : Buffer.from(c.hex, 'hex'))
const MATERIAL = cases.filter((c) => c.material !== null)
const SECRETS = cases.filter((c) => c.material === null)
const PEM = MATERIAL.find((c) => c.name.startsWith('RSA public key, SPKI PEM')).utf8

/** Each refused case as the forms a user passes it: its text when it is UTF-8, and its bytes. */
function forms(c) {
  const bytes = bytesOf(c)
  const out = [[`${c.name} (Buffer)`, bytes]]
  if (c.utf8 !== undefined) out.push([`${c.name} (string)`, c.utf8])
  return out
}

// Every place an HMAC secret enters, and the name the error gives it.
const PLACES = [
  ['accessSecret', 'config.accessSecret', (E, v) => new E.Authenticator({ accessSecret: v, allowShortSecret: true })],
  ['refreshSecret', 'config.refreshSecret', (E, v) => new E.Authenticator({ accessSecret: GOOD, refreshSecret: v, allowShortSecret: true })],
  ['dpopNonceSecret', 'config.dpopNonceSecret', (E, v) => new E.Authenticator({ accessSecret: GOOD, dpopNonceSecret: v, allowShortSecret: true })],
  ['keys HS256', 'config.keys[0]', (E, v) => new E.Authenticator({ keys: [{ alg: 'HS256', secret: v }], allowShortSecret: true })],
  [
    'keys HS512 with a kid, after a good key',
    'config.keys[1] (kid "b")',
    (E, v) => new E.Authenticator({ keys: [{ kid: 'a', alg: 'HS256', secret: GOOD }, { kid: 'b', alg: 'HS512', secret: v }], allowShortSecret: true }),
  ],
  ['keys HS384, a secret KeyObject', 'config.keys[0]', (E, v) => new E.Authenticator({ keys: [{ alg: 'HS384', secret: createSecretKey(Buffer.from(v)) }], allowShortSecret: true })],
  [
    'setKeys',
    'keys[0]',
    (E, v) => new E.Authenticator({ accessSecret: GOOD, allowShortSecret: true }).setKeys([{ alg: 'HS256', secret: v }]),
  ],
  [
    "a trusted issuer's keys",
    'config.issuers[0].keys[0]',
    (E, v) => new E.Authenticator({ issuers: [{ issuer: 'https://idp.example', keys: [{ alg: 'HS256', secret: v }] }], audience: 'api', allowShortSecret: true }),
  ],
  [
    "setKeys of a trusted issuer",
    'keys[0]',
    (E, v) =>
      new E.Authenticator({ issuers: [{ issuer: 'https://idp.example' }], audience: 'api', allowShortSecret: true }).setKeys([{ alg: 'HS256', secret: v }], {
        issuer: 'https://idp.example',
      }),
  ],
  ['authenticateRequest', 'config.accessSecret', (E, v) => E.authenticateRequest('Bearer x', undefined, undefined, { accessSecret: v, allowShortSecret: true })],
  ["expressjwt's secret", 'config.accessSecret', (E, v, engine) => authShieldExpress.expressjwt({ secret: v, algorithms: ['HS256'], allowShortSecret: true, engine })],
]

function thrown(fn) {
  try {
    fn()
  } catch (err) {
    return { type: err.constructor.name, code: err.code, message: err.message }
  }
  return null
}

/** An HS256 token over `claims`, MAC'd with `key`'s bytes. */
function hs256(key, claims) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url')
  const input = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`
  return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`
}

describe('the rule (base/keys/hmac-secret.js) on the shared vectors', () => {
  it('decides every case of contract/vectors/hmac_secret_key_material.json as the vector says (the Rust unit test runs the same file)', () => {
    assert.ok(MATERIAL.length > 20 && SECRETS.length > 10)
    for (const c of cases) assert.equal(keyMaterial(bytesOf(c)), c.material, c.name)
  })
})

for (const [engine, E] of ENGINES) {
  describe(`public key material as an HMAC secret (${engine} engine)`, () => {
    for (const [place, name, make] of PLACES) {
      it(`refuses every form of key material as ${place}, with a TypeError that names the fix`, () => {
        for (const c of MATERIAL) {
          for (const [form, value] of forms(c)) {
            assert.deepEqual(
              thrown(() => make(E, value, engine)),
              { type: 'TypeError', code: 'ERR_INVALID_ARG_VALUE', message: message(c.material === 'pem' ? 'secretIsPem' : 'secretIsJwk', { name }) },
              `${place}: ${form}`,
            )
          }
        }
      })
    }

    it('refuses the forger: an HS256 token MAC\'d with the public PEM never meets an authenticator that would take it', () => {
      const forged = hs256(PEM, { sub: 'admin', exp: NOW + 600 })
      // Before the fix this authenticator was built and answered the forged token as valid.
      const err = thrown(() => new E.Authenticator({ accessSecret: PEM, clockTimestamp: NOW }))
      assert.equal(err && err.type, 'TypeError')
      assert.match(err.message, /keys: \[\{ alg: 'RS256', publicKey \}\]/)
      assert.match(err.message, /createRemoteJwks/)
      // The key where it belongs verifies RS256 only: the forged HS256 token selects no key.
      const auth = new E.Authenticator({ keys: [{ alg: 'RS256', publicKey: PEM }], clockTimestamp: NOW, rateLimitMax: 0 })
      assert.equal(auth.authenticate(`Bearer ${forged}`).errorCode, 'unsupported_algorithm')
    })

    it('keeps legitimate secrets: random bytes, hex, base64, dashes and look-alikes, in every place', () => {
      for (const c of SECRETS) {
        for (const value of [bytesOf(c), ...(c.utf8 !== undefined ? [c.utf8] : [])]) {
          for (const [place, , make] of PLACES) {
            assert.equal(thrown(() => make(E, value, engine)), null, `${place}: ${c.name}`)
          }
          const auth = new E.Authenticator({ accessSecret: value, clockTimestamp: NOW, rateLimitMax: 0 })
          const token = hs256(value, { sub: 'u1', exp: NOW + 600 })
          assert.equal(auth.authenticate(`Bearer ${token}`).authenticated, true, c.name)
        }
      }
    })

    it('checks the length first, as before: a short JWK without allowShortSecret is too short', () => {
      const err = thrown(() => new E.Authenticator({ accessSecret: '{"kty":"oct"}' }))
      assert.equal(err.type, 'RangeError')
    })
  })
}

it('both engines refuse each place with the same message', () => {
  for (const [place, , make] of PLACES) {
    for (const c of MATERIAL) {
      const [n, j] = ENGINES.map(([engine, E]) => thrown(() => make(E, bytesOf(c), engine)))
      assert.deepEqual(n, j, `${place}: ${c.name}`)
    }
  }
})

// A secret getter (express-jwt's GetVerificationKey) answers per request. jwks-rsa's
// expressJwtSecret answers a public key's PEM: migrating apps must be told to use a key source.
describe('a secret getter that answers key material', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const ANSWERS = [
    ['a PEM string (jwks-rsa)', () => PEM, 'a PEM block (-----BEGIN)'],
    ['a PEM Buffer', () => Buffer.from(PEM), 'a PEM block (-----BEGIN)'],
    ['an async PEM', async () => PEM, 'a PEM block (-----BEGIN)'],
    ['a JWK string', () => JSON.stringify(publicKey.export({ format: 'jwk' })), 'a JWK or JWK Set'],
    ['a public KeyObject', () => publicKey, 'a public key object'],
    ['a private KeyObject', () => privateKey, 'a private key object'],
  ]

  async function once(middleware) {
    let routeRan = false
    const app = express()
    app.use(middleware)
    app.get('/', (req, res) => {
      routeRan = true
      res.json({ ok: true })
    })
    app.use((err, req, res, next) => res.status(500).json({ name: err.name, code: err.code, message: err.message }))
    const server = await listen(http.createServer(app))
    try {
      const token = hs256(PEM, { sub: 'admin', exp: Math.floor(Date.now() / 1000) + 600 })
      const { status, json } = await request(`${server.base}/`, { headers: { authorization: `Bearer ${token}` } })
      return { status, json, routeRan }
    } finally {
      await server.close()
    }
  }

  for (const [engine] of ENGINES) {
    for (const [what, secret, named] of ANSWERS) {
      it(`refuses ${what} with an error that names createRemoteJwks (${engine} engine)`, async () => {
        const r = await once(authShieldExpress.expressjwt({ secret, algorithms: ['HS256'], engine }))
        assert.equal(r.routeRan, false)
        assert.equal(r.status, 500)
        assert.deepEqual(r.json.name, 'TypeError')
        assert.deepEqual(r.json.code, 'ERR_INVALID_ARG_VALUE')
        assert.ok(r.json.message.startsWith(`options.secret: the secret getter returned ${named};`), r.json.message)
        assert.match(r.json.message, /jwks: createRemoteJwks\(url\)/)
      })
    }
  }
})
