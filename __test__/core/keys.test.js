'use strict'

// `keys`, `setKeys` and `jwks()` in both engines, against material no one here wrote: the
// RFC 7515 / RFC 8037 examples (contract/vectors/jwt_rfc_examples.json) and tokens signed by jose; and
// the attacks on key selection (algorithm confusion, a kid of the wrong key, DER and zero ECDSA
// signatures, hostile kids, none).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { createHmac, createPrivateKey, generateKeyPairSync, sign: cryptoSign, constants } = require('node:crypto')
const native = require('../..')
const js = require('../../js')
const { b64url } = require('../support/tokens')
const { ALL_ALGS, ASYMMETRIC, keyPair, keyEntry, joseToken } = require('../support/keys')
const { vectors } = require('../../contract/vectors/jwt_rfc_examples.json')

const ENGINES = [
  ['native', native],
  ['js', js],
]
const NOW = 1_800_000_000
const CLAIMS = { sub: 'user-1', exp: NOW + 600 }
const vector = (name) => vectors.find((v) => v.name === name)

function both(config) {
  return ENGINES.map(([name, engine]) => [name, new engine.Authenticator({ clockTimestamp: NOW, rateLimitMax: 0, ...config })])
}

/** The errorCode (undefined on success) of `token` in both engines, asserted equal. */
function verdict(config, token) {
  const codes = both(config).map(([, auth]) => auth.authenticate(`Bearer ${token}`).errorCode)
  assert.equal(codes[0], codes[1], `engines disagree on ${token.slice(0, 40)}…`)
  return codes[0]
}

function thrown(fn) {
  try {
    fn()
  } catch (err) {
    return { type: err.constructor.name, code: err.code, message: err.message }
  }
  return null
}

/** What `config` throws in both engines, asserted equal. */
function refusal(config) {
  const [a, b] = ENGINES.map(([, engine]) => thrown(() => new engine.Authenticator(config)))
  assert.deepEqual(a, b)
  return a
}

/** A compact token over `header` and `payload` (objects) with `signature` (bytes). */
function compact(header, payload, signature) {
  return `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(payload))}.${Buffer.from(signature).toString('base64url')}`
}

function signingInput(token) {
  return token.slice(0, token.lastIndexOf('.'))
}

test('verifies the RFC 7515 A.2 RS256 example with its key as a JWK, an SPKI PEM and a PKCS#1 PEM', () => {
  const v = vector('rfc7515-a2-rs256')
  const rfc = { clockTimestamp: v.verify_options.clock_timestamp, requireSubject: false }
  for (const publicKey of [v.key.jwk_public, v.key.spki_pem, v.key.pkcs1_pem]) {
    for (const [, auth] of both({ ...rfc, keys: [{ alg: 'RS256', publicKey }] })) {
      const result = auth.verifyAccessToken(v.token)
      assert.equal(result.valid, true, result.errorCode)
      assert.equal(result.expiresAtSec, 1300819380)
    }
  }
  // The same key bound to PS256 refuses the RS256 token: the algorithm is part of the key.
  assert.equal(verdict({ ...rfc, keys: [{ alg: 'PS256', publicKey: v.key.jwk_public }] }, v.token), 'unsupported_algorithm')
  // Past its exp on the real clock.
  for (const [, auth] of both({ requireSubject: false, keys: [{ alg: 'RS256', publicKey: v.key.spki_pem }] })) {
    assert.equal(auth.verifyAccessToken(v.token).errorCode, 'token_expired')
  }
})

test('verifies the RFC 7515 A.3 ES256 example; a flipped signature bit is invalid_signature', () => {
  const v = vector('rfc7515-a3-es256')
  const config = { clockTimestamp: 1300819000, requireSubject: false, keys: [{ alg: 'ES256', publicKey: v.key.jwk_public }] }
  for (const [, auth] of both(config)) assert.equal(auth.verifyAccessToken(v.token).valid, true)
  const sig = Buffer.from(v.token.split('.')[2], 'base64url')
  sig[10] ^= 1
  assert.equal(verdict(config, `${signingInput(v.token)}.${sig.toString('base64url')}`), 'invalid_signature')
})

test('RFC 8037 A.4: a good Ed25519 signature over a payload that is not a claims set is malformed_token', () => {
  const v = vector('rfc8037-a4-ed25519-jws')
  const keys = [{ alg: 'EdDSA', publicKey: v.key.jwk_public }]
  assert.equal(verdict({ keys }, v.token), 'malformed_token')
  // The same key's derived JWTs (EdDSA and the RFC 9864 name Ed25519) and the RFC RSA key's.
  const claimsOptions = { issuer: 'https://issuer.example', audience: 'api://default', clockTimestamp: 1_700_000_100 }
  assert.equal(verdict({ ...claimsOptions, keys }, vector('derived-eddsa-json').token), undefined)
  const ed25519 = [{ alg: 'Ed25519', publicKey: v.key.spki_pem }]
  assert.equal(verdict({ ...claimsOptions, keys: ed25519 }, vector('derived-ed25519-algname-json').token), undefined)
  assert.equal(verdict({ ...claimsOptions, keys }, vector('derived-ed25519-algname-json').token), 'unsupported_algorithm')
  const rsa = [{ alg: 'RS256', publicKey: vector('rfc7515-a2-rs256').key.jwk_public }]
  assert.equal(verdict({ ...claimsOptions, keys: rsa }, vector('derived-rs256-json').token), undefined)
})

test('verifies the RFC 7515 A.1 HS256 example through keys as through accessSecret', () => {
  const v = vector('rfc7515-a1-hs256')
  const secret = Buffer.from(v.key.raw_hex, 'hex')
  const rfc = { clockTimestamp: 1300819000, requireSubject: false }
  for (const keys of [[{ alg: 'HS256', secret }], [{ kid: 'a', alg: 'HS256', secret }]]) {
    for (const [, auth] of both({ ...rfc, keys })) assert.equal(auth.verifyAccessToken(v.token).valid, true)
  }
})

test('tokens jose signs with every supported alg authenticate in both engines, with and without kid', async () => {
  for (const alg of ALL_ALGS) {
    const forms = alg in ASYMMETRIC ? ['keyObject', 'pem', 'jwk'] : ['keyObject']
    for (const form of forms) {
      const withKid = await joseToken(alg, CLAIMS, { kid: `k-${alg}` })
      const bare = await joseToken(alg, CLAIMS)
      const config = { keys: [keyEntry(alg, `k-${alg}`, form)] }
      for (const [engine, auth] of both(config)) {
        for (const t of [withKid, bare]) {
          const r = auth.authenticate(`Bearer ${t}`)
          assert.equal(r.authenticated, true, `${engine} ${alg} ${form}: ${r.errorCode}`)
          assert.equal(r.userId, 'user-1')
        }
      }
      // A tampered payload is refused by the signature check.
      const [h, , s] = withKid.split('.')
      const forged = `${h}.${b64url(JSON.stringify({ ...CLAIMS, sub: 'admin' }))}.${s}`
      assert.equal(verdict(config, forged), 'invalid_signature', `${alg} ${form}`)
    }
  }
})

test('HS256 tokens we sign with accessSecret verify in jose with the same secret (both engines)', async () => {
  const jose = await import('jose')
  const secret = Buffer.from(keyPair('HS256').secret)
  for (const [engine, auth] of both({ accessSecret: secret, issuer: 'auth.example' })) {
    const token = auth.signAccessToken({ sub: 'user-1' })
    const { payload, protectedHeader } = await jose.jwtVerify(token, secret, { algorithms: ['HS256'], issuer: 'auth.example', currentDate: new Date(NOW * 1000) })
    assert.equal(protectedHeader.alg, 'HS256', engine)
    assert.deepEqual([payload.sub, payload.type], ['user-1', 'access'])
    // And a keys entry of that secret verifies it, as it verifies jose's HS256 tokens.
    assert.equal(verdict({ keys: [{ alg: 'HS256', secret }], issuer: 'auth.example' }, token), undefined)
    await assert.rejects(jose.jwtVerify(token, Buffer.alloc(32, 1), { currentDate: new Date(NOW * 1000) }), { code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' })
  }
})

test('a token signed with one alg never verifies under a key of another alg', async () => {
  const keys = ALL_ALGS.map((alg) => keyEntry(alg, alg))
  for (const alg of ALL_ALGS) {
    const t = await joseToken(alg, CLAIMS, { kid: alg })
    assert.equal(verdict({ keys }, t), undefined, alg)
    for (const other of ALL_ALGS.filter((a) => a !== alg)) {
      // The header names another key: refused before any signature check.
      const renamed = `${b64url(JSON.stringify({ alg, kid: other }))}.${t.split('.').slice(1).join('.')}`
      assert.equal(verdict({ keys }, renamed), 'unsupported_algorithm', `${alg} as ${other}`)
    }
  }
})

test('RS256-to-HS256 confusion: an HS256 token MACed with the RSA public key (PEM or DER) is refused', async () => {
  const rsa = keyEntry('RS256', 'rsa', 'pem')
  const der = keyPair('RS256').publicKey.export({ type: 'spki', format: 'der' })
  for (const secret of [rsa.publicKey, der, keyPair('RS256').publicKey.export({ type: 'pkcs1', format: 'pem' })]) {
    for (const header of [{ alg: 'HS256' }, { alg: 'HS256', kid: 'rsa' }, { alg: 'HS256', typ: 'JWT' }]) {
      const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(CLAIMS))}`
      const t = `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
      assert.equal(verdict({ keys: [rsa] }, t), 'unsupported_algorithm', JSON.stringify(header))
    }
  }
})

test("a kid naming an HMAC key on an RS256 token is refused, whatever the signature", async () => {
  const hmac = keyEntry('HS256', 'hmac')
  const keys = [hmac, keyEntry('RS256', 'rsa')]
  const rs = await joseToken('RS256', CLAIMS, { kid: 'hmac' })
  assert.equal(verdict({ keys }, rs), 'unsupported_algorithm')
  // MACed with the HMAC key itself but labelled RS256.
  const input = `${b64url(JSON.stringify({ alg: 'RS256', kid: 'hmac' }))}.${b64url(JSON.stringify(CLAIMS))}`
  const mac = createHmac('sha256', hmac.secret).update(input).digest('base64url')
  assert.equal(verdict({ keys }, `${input}.${mac}`), 'unsupported_algorithm')
  assert.equal(verdict({ keys }, await joseToken('RS256', CLAIMS, { kid: 'rsa' })), undefined)
})

test('ECDSA: DER signatures, r = s = 0 ("psychic signatures") and out-of-range r or s are invalid_signature', async () => {
  // The group orders n of P-256 and P-384 (SEC 2): r and s must lie in [1, n - 1].
  const ORDER = {
    ES256: 'ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551',
    ES384: 'ffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973',
  }
  for (const [alg, size, hash] of [
    ['ES256', 32, 'sha256'],
    ['ES384', 48, 'sha384'],
  ]) {
    const keys = [keyEntry(alg, 'ec')]
    const good = await joseToken(alg, CLAIMS, { kid: 'ec' })
    assert.equal(verdict({ keys }, good), undefined)
    const input = signingInput(good)
    // The same input signed by node:crypto in its default DER form.
    const der = cryptoSign(hash, Buffer.from(input), keyPair(alg).privateKey)
    assert.notEqual(der.length, 2 * size)
    assert.equal(verdict({ keys }, `${input}.${der.toString('base64url')}`), 'invalid_signature', `${alg} DER`)
    // A DER signature cut or padded to the fixed width is still not a signature.
    const padded = Buffer.concat([der, Buffer.alloc(2 * size)]).subarray(0, 2 * size)
    assert.equal(verdict({ keys }, `${input}.${padded.toString('base64url')}`), 'invalid_signature')
    assert.equal(verdict({ keys }, `${input}.${Buffer.alloc(2 * size).toString('base64url')}`), 'invalid_signature', 'r = s = 0')
    assert.equal(verdict({ keys }, `${input}.${Buffer.alloc(2 * size, 0xff).toString('base64url')}`), 'invalid_signature', 'r, s > n')
    // A good s with r = 0, and a good r with s = 0.
    const sig = Buffer.from(good.split('.')[2], 'base64url')
    for (const half of [0, 1]) {
      const broken = Buffer.from(sig)
      broken.fill(0, half * size, (half + 1) * size)
      assert.equal(verdict({ keys }, `${input}.${broken.toString('base64url')}`), 'invalid_signature')
      // Exactly n: zero modulo n, just written another way.
      const atOrder = Buffer.from(sig)
      Buffer.from(ORDER[alg], 'hex').copy(atOrder, half * size)
      assert.equal(verdict({ keys }, `${input}.${atOrder.toString('base64url')}`), 'invalid_signature', `${alg} ${half ? 's' : 'r'} = n`)
    }
  }
})

test('PS256 takes a salt as long as the hash and nothing else', () => {
  const keys = [keyEntry('PS256', undefined)]
  const input = `${b64url('{"alg":"PS256"}')}.${b64url(JSON.stringify(CLAIMS))}`
  const pss = (saltLength) =>
    cryptoSign('sha256', Buffer.from(input), {
      key: keyPair('PS256').privateKey,
      padding: constants.RSA_PKCS1_PSS_PADDING,
      saltLength,
    }).toString('base64url')
  assert.equal(verdict({ keys }, `${input}.${pss(32)}`), undefined)
  for (const saltLength of [0, 20, 64]) assert.equal(verdict({ keys }, `${input}.${pss(saltLength)}`), 'invalid_signature', `salt ${saltLength}`)
})

test('a kid must name a key: path and SQL injection attempts are just unknown_key', async () => {
  const keys = [keyEntry('HS256', 'a'), keyEntry('ES256', 'b')]
  for (const kid of ['../../etc/passwd', "' OR 1=1 --", 'A', 'a ', '', 'x'.repeat(5000), '\u0000', '__proto__', 'constructor']) {
    const t = await joseToken('ES256', { ...CLAIMS }, { kid })
    assert.equal(verdict({ keys, maxTokenBytes: 1 << 20 }, t), 'unknown_key', JSON.stringify(kid.slice(0, 20)))
  }
  // A non-string kid is not a header we can read.
  const input = `${b64url('{"alg":"HS256","kid":1}')}.${b64url(JSON.stringify(CLAIMS))}`
  assert.equal(verdict({ keys }, `${input}.${createHmac('sha256', keys[0].secret).update(input).digest('base64url')}`), 'malformed_token')
})

test('without kid a token is accepted only when exactly one key has its alg', async () => {
  const t = await joseToken('ES256', CLAIMS)
  assert.equal(verdict({ keys: [keyEntry('ES256', 'b'), keyEntry('HS256', 'a')] }, t), undefined)
  // Two ES256 keys and no kid to choose: never tried in turn.
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey
  assert.equal(verdict({ keys: [keyEntry('ES256', 'b'), { kid: 'c', alg: 'ES256', publicKey: other }] }, t), 'unknown_key')
  assert.equal(verdict({ keys: [keyEntry('EdDSA', 'e')] }, t), 'unsupported_algorithm')
})

test('none, ES512 and unknown algs are unsupported_algorithm', () => {
  const keys = [keyEntry('HS256', 'a'), keyEntry('ES256', 'b')]
  for (const alg of ['none', 'None', 'ES512', 'HS1', 'es256', 'RSA-OAEP']) {
    for (const signature of [Buffer.alloc(0), Buffer.alloc(64)]) {
      assert.equal(verdict({ keys }, compact({ alg }, CLAIMS, signature)), 'unsupported_algorithm', alg)
      assert.equal(verdict({ keys }, compact({ alg, kid: 'b' }, CLAIMS, signature)), 'unsupported_algorithm', alg)
    }
  }
})

/** Key lists the constructor refuses: [keys, error class, code, message pattern]. */
function refusedKeyLists() {
  const weakRsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey
  return [
    [[{ kid: 'x', alg: 'ES512', publicKey: p384 }], 'RangeError', 'ERR_AUTH_SHIELD_UNSUPPORTED_ALGORITHM', /^config\.keys\[0\] \(kid "x"\): unsupported algorithm "ES512"/],
    [[keyEntry('HS256', 'a'), { alg: 'none', secret: 'x' }], 'RangeError', 'ERR_AUTH_SHIELD_UNSUPPORTED_ALGORITHM', /^config\.keys\[1\]: unsupported algorithm "none"/],
    [[{ kid: 'r', alg: 'RS256', publicKey: weakRsa }], 'RangeError', 'ERR_AUTH_SHIELD_WEAK_KEY', /keys\[0\] \(kid "r"\): an RSA key must have 2048 to 8192 bits, got 1024/],
    [[{ alg: 'HS384', secret: 'x'.repeat(47) }], 'RangeError', 'ERR_AUTH_SHIELD_WEAK_KEY', /an HS384 secret must be at least 48 bytes/],
    [[{ kid: 'e', alg: 'ES256', publicKey: p384 }], 'RangeError', 'ERR_AUTH_SHIELD_INVALID_KEY', /ES256 needs a P-256 key, got curve secp384r1/],
    [[keyEntry('HS256', 'd'), keyEntry('ES256', 'd')], 'RangeError', 'ERR_AUTH_SHIELD_DUPLICATE_KID', /keys\[1\] \(kid "d"\): duplicate kid/],
    [[{ alg: 'RS256', secret: 'x'.repeat(32) }], 'TypeError', 'ERR_AUTH_SHIELD_INVALID_KEY', /takes a publicKey, not a secret/],
    [[{ alg: 'HS256', publicKey: keyPair('RS256').publicKey }], 'TypeError', 'ERR_AUTH_SHIELD_INVALID_KEY', /takes a secret, not a publicKey/],
    [[{ alg: 'EdDSA', publicKey: keyPair('RS256').publicKey }], 'TypeError', 'ERR_AUTH_SHIELD_INVALID_KEY', /EdDSA needs an Ed25519 key, got a rsa key/],
    [[{ alg: 'RS256', publicKey: 'not a pem' }], 'TypeError', 'ERR_AUTH_SHIELD_INVALID_KEY', /publicKey is not a PEM key/],
    [[{ alg: 'ES256', publicKey: { kty: 'EC', crv: 'P-256', x: 'AA', y: 'AA' } }], 'TypeError', 'ERR_AUTH_SHIELD_INVALID_KEY', /is not a JWK/],
    [[{ alg: 'RS256', publicKey: { ...keyPair('RS256').publicKey.export({ format: 'jwk' }), alg: 'PS256' } }], 'TypeError', 'ERR_AUTH_SHIELD_INVALID_KEY', /is a JWK for "PS256", not RS256/],
    [[{ kid: 5, alg: 'HS256', secret: 'x'.repeat(32) }], 'TypeError', 'ERR_AUTH_SHIELD_INVALID_KEY', /kid must be a string/],
    [['HS256'], 'TypeError', 'ERR_AUTH_SHIELD_INVALID_KEY', /config\.keys\[0\] must be an object/],
    [[], 'RangeError', 'ERR_AUTH_SHIELD_INVALID_KEY', /config\.keys must not be empty/],
    [Array.from({ length: 101 }, () => keyEntry('HS256')), 'RangeError', 'ERR_AUTH_SHIELD_INVALID_KEY', /at most 100/],
  ]
}

test('config errors name the key by index and kid, with the same class, code and message in both engines', () => {
  for (const [keys, type, code, message] of refusedKeyLists()) {
    const err = refusal({ keys })
    assert.ok(err, `accepted ${message}`)
    assert.equal(err.type, type, err.message)
    assert.equal(err.code, code, err.message)
    assert.match(err.message, message)
  }
  // allowShortSecret lets a legacy HMAC secret through, as for accessSecret.
  assert.equal(refusal({ keys: [{ alg: 'HS384', secret: 'x'.repeat(20) }], allowShortSecret: true }), null)
  // One source of access keys: accessSecret is the shorthand for one HS256 key.
  const both = refusal({ accessSecret: 'x'.repeat(32), keys: [keyEntry('ES256')] })
  assert.deepEqual([both.type, both.code], ['TypeError', 'ERR_INVALID_ARG_TYPE'])
  assert.match(both.message, /cannot be used together/)
  assert.match(refusal({ rateLimitMax: 0 }).message, /accessSecret is required/)
  // Checks run in option order in both engines: an unknown option is named before a bad key.
  assert.match(refusal({ keys: [{ alg: 'ES512' }], acessSecret: 'x' }).message, /acessSecret is not a known option/)
})

test('a private key, a KeyObject, a CryptoKey and a private JWK all give the public key, never keep the private parts', async () => {
  const { privateKey } = keyPair('ES256')
  const jose = await import('jose')
  const cryptoKey = await jose.importJWK({ ...privateKey.export({ format: 'jwk' }), alg: 'ES256' }, 'ES256', { extractable: true })
  const t = await joseToken('ES256', CLAIMS)
  for (const publicKey of [privateKey, privateKey.export({ format: 'pem', type: 'pkcs8' }), privateKey.export({ format: 'jwk' }), cryptoKey]) {
    const keys = [{ kid: 'p', alg: 'ES256', publicKey }]
    assert.equal(verdict({ keys }, t), undefined)
    for (const [, auth] of both({ keys })) assert.equal(JSON.stringify(auth.jwks()).includes('"d"'), false)
  }
})

test('jwks() publishes the asymmetric keys (never an HMAC secret), equal in both engines, and jose verifies with it', async () => {
  const keys = ALL_ALGS.map((alg) => keyEntry(alg, `k-${alg}`))
  const [[, n], [, j]] = both({ keys })
  const jwks = n.jwks()
  assert.deepEqual(jwks, j.jwks())
  assert.deepEqual(
    jwks.keys.map((k) => k.kid),
    keys.filter((k) => k.alg in ASYMMETRIC).map((k) => k.kid),
  )
  for (const k of jwks.keys) {
    assert.equal(k.use, 'sig')
    assert.ok(['RSA', 'EC', 'OKP'].includes(k.kty))
    for (const secretMember of ['d', 'p', 'q', 'k']) assert.equal(k[secretMember], undefined)
  }
  const jose = await import('jose')
  const keySet = jose.createLocalJWKSet(jwks)
  for (const alg of Object.keys(ASYMMETRIC)) {
    const t = await joseToken(alg, CLAIMS, { kid: `k-${alg}` })
    const { payload } = await jose.jwtVerify(t, keySet, { currentDate: new Date(NOW * 1000) })
    assert.equal(payload.sub, 'user-1', alg)
  }
  // An HMAC-only set publishes nothing.
  for (const [, auth] of both({ keys: [keyEntry('HS512', 'h')] })) assert.deepEqual(auth.jwks(), { keys: [] })
  for (const [, auth] of both({ accessSecret: 'x'.repeat(32) })) assert.deepEqual(auth.jwks(), { keys: [] })
})

test('setKeys swaps the key set at once, counts generations, and a refused set leaves the old keys in force', async () => {
  const oldToken = await joseToken('ES256', CLAIMS, { kid: 'old' })
  const newToken = await joseToken('EdDSA', CLAIMS, { kid: 'new' })
  for (const [engine, auth] of both({ keys: [keyEntry('ES256', 'old')] })) {
    assert.equal(auth.keySetGeneration, 0)
    assert.equal(auth.authenticate(`Bearer ${oldToken}`).authenticated, true)
    assert.equal(auth.authenticate(`Bearer ${newToken}`).errorCode, 'unknown_key')
    assert.equal(auth.setKeys([keyEntry('ES256', 'old'), keyEntry('EdDSA', 'new')]), 1)
    assert.equal(auth.authenticate(`Bearer ${newToken}`).authenticated, true)
    assert.equal(auth.setKeys([keyEntry('EdDSA', 'new', 'jwk')]), 2)
    assert.equal(auth.keySetGeneration, 2)
    assert.equal(auth.authenticate(`Bearer ${oldToken}`).errorCode, 'unknown_key', engine)
    assert.equal(auth.verifyAccessToken(newToken).valid, true)
    assert.deepEqual(auth.jwks().keys.map((k) => k.kid), ['new'])
    // Refused: the same checks as the constructor, named `keys[i]`; nothing changes.
    for (const bad of [[], [{ alg: 'ES512', publicKey: keyPair('ES384').publicKey }], [keyEntry('HS256', 'x'), keyEntry('HS384', 'x')], 'keys']) {
      const err = thrown(() => auth.setKeys(bad))
      assert.ok(err && /^keys/.test(err.message), `${engine}: ${JSON.stringify(err)}`)
    }
    assert.equal(auth.keySetGeneration, 2)
    assert.equal(auth.authenticate(`Bearer ${newToken}`).authenticated, true)
    // accessSecret authenticators take keys too.
  }
  for (const [, auth] of both({ accessSecret: 'a'.repeat(32) })) {
    assert.equal(auth.setKeys([keyEntry('ES256', 'old')]), 1)
    assert.equal(auth.authenticate(`Bearer ${oldToken}`).authenticated, true)
  }
})

test('setKeys refuses every key list the constructor refuses, with its class, code and message, and keeps the keys in force', async () => {
  const t = await joseToken('EdDSA', CLAIMS, { kid: 'ed' })
  for (const [keys] of refusedKeyLists()) {
    const built = refusal({ keys })
    for (const [engine, auth] of both({ keys: [keyEntry('EdDSA', 'ed')] })) {
      const swapped = thrown(() => auth.setKeys(keys))
      assert.ok(swapped, `${engine} setKeys accepted what the constructor refuses: ${built.message}`)
      // The same check, named for where the keys came from: `keys` instead of `config.keys`.
      assert.deepEqual(swapped, { ...built, message: built.message.replace(/^config\./, '') }, engine)
      assert.equal(auth.keySetGeneration, 0)
      assert.equal(auth.authenticate(`Bearer ${t}`).authenticated, true, engine)
    }
  }
})

test('setKeys errors are the same in both engines; allowShortSecret carries over from the config', () => {
  const bad = [{ alg: 'HS256', secret: 'short' }]
  const errs = both({ keys: [keyEntry('HS256', 'a')] }).map(([, auth]) => thrown(() => auth.setKeys(bad)))
  assert.deepEqual(errs[0], errs[1])
  assert.deepEqual([errs[0].type, errs[0].code], ['RangeError', 'ERR_AUTH_SHIELD_WEAK_KEY'])
  for (const [, auth] of both({ keys: [keyEntry('HS256', 'a')], allowShortSecret: true })) assert.equal(auth.setKeys(bad), 1)
})

test('a shared native authenticator refuses setKeys; new and shared ones with keys are still instances', () => {
  const config = { keys: [keyEntry('ES256', 'k')], rateLimitMax: 0 }
  const shared = native.Authenticator.shared(config)
  assert.ok(shared instanceof native.Authenticator)
  assert.ok(new native.Authenticator(config) instanceof native.Authenticator)
  const err = thrown(() => shared.setKeys([keyEntry('ES256', 'k')]))
  assert.equal(err.code, 'ERR_AUTH_SHIELD_SHARED_KEYS')
  assert.deepEqual(shared.jwks(), new native.Authenticator(config).jwks())
  assert.throws(() => native.Authenticator(config), TypeError)
})

test('an authenticator built with keys only verifies: signAccessToken says why it cannot sign', () => {
  for (const [, auth] of both({ keys: [keyEntry('HS256', 'a')] })) {
    const err = thrown(() => auth.signAccessToken({ sub: 'u' }))
    assert.deepEqual([err.type, err.code], ['Error', 'ERR_AUTH_SHIELD_NO_SIGNING_KEY'])
  }
})

test('keys are copied at construction: changing the caller\'s objects later changes nothing', async () => {
  const secret = Buffer.from(keyPair('HS384').secret)
  const keys = [{ kid: 'h', alg: 'HS384', secret }]
  const t = await joseToken('HS384', CLAIMS, { kid: 'h' })
  const pairs = both({ keys })
  secret.fill(0)
  keys[0].kid = 'other'
  for (const [, auth] of pairs) assert.equal(auth.authenticate(`Bearer ${t}`).authenticated, true)
})

test('an RSA key must be 2048 to 8192 bits; a PEM private key of another type is refused by its alg', () => {
  const pem = createPrivateKey(keyPair('ES384').privateKey.export({ format: 'pem', type: 'pkcs8' }))
  assert.equal(refusal({ keys: [{ alg: 'RS256', publicKey: pem }] }).code, 'ERR_AUTH_SHIELD_INVALID_KEY')
  assert.equal(refusal({ keys: [{ alg: 'RS512', publicKey: keyPair('RS512').publicKey }] }), null)
})
