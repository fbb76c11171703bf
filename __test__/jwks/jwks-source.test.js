'use strict'

// auth-shield/jwks on its own, against a real JWKS server on loopback: what it reads from a
// document, what it refuses (the key set in force stays), how often it fetches (one fetch per
// cooldown whatever the number of callers, who share the fetch in flight), its schedule, and
// that nothing it does ends in an unhandled rejection.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const jose = require('jose')
const native = require('../..')
const js = require('../../js')
const { createRemoteJwks, isJwksSource, SUPPORTED_ALGORITHMS } = require('../../lib/jwks/index')
const { generateKeyPairSync } = require('node:crypto')
const { startJwksServer, keyPair } = require('../support/jwks-server')

const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

const rsa = keyPair('RS256', 'rsa-1')
const ec = keyPair('ES256', 'ec-1')
const ed = keyPair('EdDSA', 'ed-1')
const GOOD = { keys: [rsa.jwk, ec.jwk, ed.jwk] }

/** Resolves once `predicate()` holds, checking every few ms (no timing is asserted). */
async function until(predicate) {
  while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 5))
}

describe('auth-shield/jwks source', () => {
  let server
  const sources = []
  const source = (options) => {
    const s = createRemoteJwks(server.url, options)
    sources.push(s)
    return s
  }
  before(async () => {
    server = await startJwksServer()
  })
  after(async () => {
    for (const s of sources) s.close()
    await server.close()
    assert.deepEqual(unhandled, [])
  })

  it('reads every key of a document with its kid and algorithm', async () => {
    server.serve(GOOD)
    const s = source()
    await s.ready()
    assert.ok(isJwksSource(s))
    assert.deepEqual(
      s.keys.map((k) => [k.kid, k.alg, k.publicKey.asymmetricKeyType]),
      [
        ['rsa-1', 'RS256', 'rsa'],
        ['ec-1', 'ES256', 'ec'],
        ['ed-1', 'EdDSA', 'ed25519'],
      ],
    )
    assert.ok(Object.isFrozen(s.keys))
    assert.equal(s.generation, 1)
    assert.equal(s.lastError, null)
    assert.equal(typeof s.updatedAtMs, 'number')
  })

  it('binds a key without alg to the one algorithm its type and curve imply', async () => {
    const keys = [
      keyPair('RS256', 'r', { omitAlg: true }).jwk,
      keyPair('ES256', 'e256', { omitAlg: true }).jwk,
      keyPair('ES384', 'e384', { omitAlg: true }).jwk,
      keyPair('EdDSA', 'ed', { omitAlg: true }).jwk,
    ]
    server.serve({ keys })
    const s = source()
    await s.ready()
    assert.deepEqual(
      s.keys.map((k) => k.alg),
      ['RS256', 'ES256', 'ES384', 'EdDSA'],
    )
  })

  it('skips keys that are not for signing or not for us, and keeps the others', async () => {
    const enc = { ...keyPair('RS256', 'enc').jwk, use: 'enc', alg: 'RSA-OAEP' }
    const p521 = keyPair('ES512', 'p521').jwk
    const wrapOnly = { ...keyPair('ES256', 'wrap').jwk, key_ops: ['wrapKey'] }
    server.serve({ keys: [enc, p521, wrapOnly, ec.jwk, keyPair('PS256', 'ps').jwk] })
    const s = source({ algorithms: ['ES256'] })
    await s.ready()
    assert.deepEqual(
      s.keys.map((k) => k.kid),
      ['ec-1'],
    )
  })

  it('skips curves it does not verify with (Ed448, X25519, P-521) under the default algorithms', async () => {
    const jwkOf = (type, options = {}) => generateKeyPairSync(type, options).publicKey.export({ format: 'jwk' })
    const others = [
      { ...jwkOf('ed448'), kid: 'ed448', alg: 'EdDSA' },
      { ...jwkOf('ed448'), kid: 'ed448-bare' },
      { ...jwkOf('x25519'), kid: 'x25519' },
      { ...jwkOf('ec', { namedCurve: 'P-521' }), kid: 'p521' },
    ]
    server.serve({ keys: [...others, ed.jwk] })
    const s = source()
    await s.ready()
    assert.deepEqual(
      s.keys.map((k) => [k.kid, k.alg]),
      [['ed-1', 'EdDSA']],
    )
  })

  describe('a refused or unreachable document leaves the key set in force', () => {
    const weak = keyPair('RS256', 'weak', { modulusLength: 1024 }).jwk
    const cases = [
      ['not JSON', (req, res) => res.end('<html>maintenance</html>'), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['not UTF-8', (req, res) => res.end(Buffer.from([0x7b, 0xff, 0x7d])), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['JSON without a keys array', json({ keys: {} }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['several megabytes, streamed', streamed(4 * 1024 * 1024), 'ERR_AUTH_SHIELD_JWKS_TOO_LARGE'],
      ['several megabytes, declared', declared(4 * 1024 * 1024), 'ERR_AUTH_SHIELD_JWKS_TOO_LARGE'],
      ['an RSA 1024 key', json({ keys: [ec.jwk, weak] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['an RSA exponent of 1', json({ keys: [ec.jwk, { ...rsa.jwk, kid: 'e1', e: 'AQ' }] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['an unknown kty', json({ keys: [ec.jwk, { kty: 'XYZ', kid: 'x' }] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['a symmetric (oct) key', json({ keys: [ec.jwk, { kty: 'oct', kid: 'h', k: 'c2VjcmV0' }] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['a duplicate kid', json({ keys: [ec.jwk, { ...ed.jwk, kid: 'ec-1' }] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['a use that is neither sig nor enc', json({ keys: [ec.jwk, { ...ed.jwk, kid: 'u', use: 'signing' }] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['a kid that is not a string', json({ keys: [ec.jwk, { ...ed.jwk, kid: 7 }] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['alg none', json({ keys: [ec.jwk, { ...ed.jwk, kid: 'n', alg: 'none' }] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['a private member', json({ keys: [{ ...ec.privateKey.export({ format: 'jwk' }), kid: 'p', alg: 'ES256' }] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['a curve that contradicts alg', json({ keys: [{ ...keyPair('ES384', 'c').jwk, alg: 'ES256' }] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['an RSA key claiming an EC algorithm', json({ keys: [{ ...rsa.jwk, alg: 'ES256' }] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['an HMAC algorithm', json({ keys: [{ ...rsa.jwk, alg: 'HS256' }] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['a point off the curve', json({ keys: [{ ...ec.jwk, y: ec.jwk.x }] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['a short coordinate', json({ keys: [{ ...ed.jwk, x: 'AAAA' }] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['no usable key', json({ keys: [] }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['more keys than maxDocumentKeys', json({ keys: Array.from({ length: 5 }, (_, i) => ({ ...ec.jwk, kid: `k${i}` })) }), 'ERR_AUTH_SHIELD_JWKS_INVALID'],
      ['an HTTP 500', (req, res) => res.writeHead(500).end('{"keys":[]}'), 'ERR_AUTH_SHIELD_JWKS_FETCH'],
      ['a redirect loop', (req, res) => res.writeHead(302, { location: req.url }).end(), 'ERR_AUTH_SHIELD_JWKS_FETCH'],
      ['a server that never answers', () => {}, 'ERR_AUTH_SHIELD_JWKS_TIMEOUT'],
      ['a body that stalls', (req, res) => res.writeHead(200).write('{"keys":['), 'ERR_AUTH_SHIELD_JWKS_TIMEOUT'],
      ['a connection reset', (req) => req.socket.destroy(), 'ERR_AUTH_SHIELD_JWKS_FETCH'],
    ]
    for (const [what, answer, code] of cases) {
      it(`${what}: ${code}`, async () => {
        server.serve(GOOD)
        const s = source({ cooldownMs: 0, timeoutMs: 300, maxDocumentKeys: 4 })
        await s.ready()
        const before = s.keys
        server.answer(answer)
        assert.equal(await s.refresh(), false)
        assert.equal(s.keys, before)
        assert.equal(s.generation, 1)
        assert.equal(s.lastError.code, code, s.lastError.message)
        // The good document comes back: nothing changed, so nothing is installed, and the error clears.
        server.serve(GOOD)
        assert.equal(await s.refresh(), false)
        assert.equal(s.keys, before)
        assert.equal(s.lastError, null)
      })
    }
  })

  it('stops reading a streamed body at the first chunk past maxBytes', async () => {
    let written = 0
    let finished = null
    server.answer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      const chunk = Buffer.alloc(16 * 1024, 0x20)
      // Writes until the client stops reading; the server side never gets further than the socket buffers.
      const pump = () => {
        while (written < 64 * 1024 * 1024) {
          written += chunk.length
          if (!res.write(chunk)) return res.once('drain', pump)
        }
        res.end()
      }
      res.on('close', () => (finished = written))
      pump()
    })
    const s = source({ maxBytes: 64 * 1024 })
    await assert.rejects(s.ready(), { code: 'ERR_AUTH_SHIELD_JWKS_TOO_LARGE' })
    await until(() => finished !== null)
    assert.ok(finished < 64 * 1024 * 1024, `the server wrote ${finished} bytes`)
  })

  it('rejects ready() with the error when the first fetch fails, and retries later', async () => {
    server.answer((req, res) => res.writeHead(503).end())
    const s = source({ cooldownMs: 0 })
    await assert.rejects(s.ready(), { code: 'ERR_AUTH_SHIELD_JWKS_FETCH', message: /HTTP 503/ })
    assert.equal(s.keys, null)
    server.serve(GOOD)
    assert.equal(await s.refresh(), true)
    await s.ready()
    assert.equal(s.keys.length, 3)
  })

  it('installs a rotated set and reports the change once', async () => {
    server.serve(GOOD)
    const s = source({ cooldownMs: 0 })
    await s.ready()
    const next = keyPair('ES256', 'ec-2')
    server.serve({ keys: [next.jwk, ed.jwk] })
    assert.equal(await s.refresh(), true)
    assert.deepEqual(
      s.keys.map((k) => k.kid),
      ['ec-2', 'ed-1'],
    )
    assert.equal(s.generation, 2)
    assert.equal(await s.refresh(), false)
    assert.equal(s.generation, 2)
  })

  it('fetches at most once per cooldown however many callers ask', async () => {
    server.serve(GOOD)
    const s = source({ cooldownMs: 60_000 })
    await s.ready()
    const start = server.fetches
    const answers = await Promise.all(Array.from({ length: 500 }, () => s.refresh()))
    assert.ok(answers.every((a) => a === false))
    assert.equal(server.fetches, start)
  })

  it('shares one fetch in flight among all concurrent callers', async () => {
    server.serve(GOOD)
    const s = source({ cooldownMs: 0 })
    await s.ready()
    const start = server.fetches
    server.serve({ keys: [keyPair('EdDSA', 'ed-2').jwk] })
    const release = server.hold()
    const pending = Array.from({ length: 200 }, () => s.refresh())
    await until(() => server.fetches === start + 1)
    release()
    const answers = await Promise.all(pending)
    assert.ok(answers.every((a) => a === true))
    assert.equal(server.fetches, start + 1)
    assert.equal(s.generation, 2)
  })

  it('refreshes on its schedule, every cacheMaxAgeMs', async () => {
    server.serve(GOOD)
    const s = source({ cacheMaxAgeMs: 20 })
    await s.ready()
    const start = server.fetches
    await until(() => server.fetches >= start + 3)
    s.close()
  })

  it('a scheduled refresh rotates attached authenticators of both engines without any unknown kid; a broken document on the schedule changes nothing', { timeout: 20_000 }, async () => {
    server.serve(GOOD)
    const s = source({ cacheMaxAgeMs: 30 })
    await s.ready()
    const auths = [native, js].map((engine) => new engine.Authenticator({ keys: s.keys, rateLimitMax: 0 }))
    for (const auth of auths) s.attach(auth)
    const sign = (pair) => new jose.SignJWT({ sub: 'u' }).setProtectedHeader({ alg: pair.alg, kid: pair.kid }).setExpirationTime('10m').sign(pair.privateKey)
    const retired = await sign(ec)
    // Verified once, so the retired key's token sits in the verified-token cache too.
    for (const auth of auths) assert.equal(auth.authenticate(`Bearer ${retired}`).authenticated, true)
    const next = keyPair('ES256', 'ec-2')
    const current = await sign(next)
    server.serve({ keys: [rsa.jwk, next.jwk] })
    // No request asks for a refresh: the schedule alone installs the rotated set.
    await until(() => s.generation === 2)
    for (const auth of auths) {
      assert.equal(auth.keySetGeneration, 2)
      assert.equal(auth.authenticate(`Bearer ${retired}`).errorCode, 'unknown_key')
      assert.equal(auth.authenticate(`Bearer ${current}`).authenticated, true)
    }
    server.answer((req, res) => res.end('not json'))
    const start = server.fetches
    await until(() => server.fetches >= start + 2 && s.lastError !== null)
    assert.equal(s.lastError.code, 'ERR_AUTH_SHIELD_JWKS_INVALID')
    for (const auth of auths) {
      assert.equal(auth.keySetGeneration, 2)
      assert.equal(auth.authenticate(`Bearer ${current}`).authenticated, true)
    }
    s.close()
  })

  it('close() stops the schedule and aborts a fetch in flight', async () => {
    server.answer(() => {})
    const s = source({ cacheMaxAgeMs: 20, timeoutMs: 60_000 })
    const start = server.fetches
    await until(() => server.fetches === start + 1)
    s.close()
    await assert.rejects(s.ready(), { code: 'ERR_AUTH_SHIELD_JWKS_CLOSED' })
    assert.equal(await s.refresh(), false)
    await new Promise((resolve) => setTimeout(resolve, 100))
    assert.equal(server.fetches, start + 1)
  })

  it('refuses bad options and URLs with typed errors', () => {
    assert.throws(() => createRemoteJwks('file:///etc/passwd'), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })
    assert.throws(() => createRemoteJwks('not a url'), { name: 'TypeError' })
    assert.throws(() => createRemoteJwks(42), { name: 'TypeError' })
    assert.throws(() => createRemoteJwks(server.url, { cooldown: 5 }), { name: 'TypeError', message: /options.cooldown is not a known option/ })
    assert.throws(() => createRemoteJwks(server.url, { timeoutMs: 0 }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' })
    assert.throws(() => createRemoteJwks(server.url, { maxBytes: 1.5 }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' })
    assert.throws(() => createRemoteJwks(server.url, { maxDocumentKeys: 1e9 }), { name: 'RangeError' })
    assert.throws(() => createRemoteJwks(server.url, { algorithms: ['HS256'] }), { name: 'RangeError', message: /HS256/ })
    assert.throws(() => createRemoteJwks(server.url, { algorithms: [] }), { name: 'TypeError' })
    assert.deepEqual(SUPPORTED_ALGORITHMS, ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'EdDSA', 'Ed25519'])
  })

  it('attach() needs an object with setKeys', async () => {
    server.serve(GOOD)
    const s = source()
    assert.throws(() => s.attach({}), { name: 'TypeError' })
    assert.throws(() => s.attach(null), { name: 'TypeError' })
    await s.ready()
  })
})

function json(doc) {
  return (req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc))
}

/** A body of `bytes` spaces and a tiny document, without a Content-Length. */
function streamed(bytes) {
  return (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write(Buffer.alloc(bytes, 0x20))
    res.end(JSON.stringify(GOOD))
  }
}

/** The same, with its Content-Length declared (refused before reading). */
function declared(bytes) {
  return (req, res) => {
    const body = Buffer.concat([Buffer.alloc(bytes, 0x20), Buffer.from(JSON.stringify(GOOD))])
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length })
    res.end(body)
  }
}

