'use strict'

// Issuing with an asymmetric key (`signingKey`), in both engines: for RS256, PS256, ES256 and
// EdDSA, tokens we sign carry the kid, verify in jose against our own `jwks()` (material no one
// here wrote verifying our bytes), authenticate in both engines (signatures are randomized for
// PS256 and ES256, so the engines are compared on verdicts, not bytes), refresh tokens are signed
// by refreshSecret when given, else by the signing key (checked against it alone), and bad keys
// are refused with the same error in both engines.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { generateKeyPairSync } = require('node:crypto')
const jose = require('jose')
const native = require('../..')
const js = require('../../js')

const ENGINES = { native: native.Authenticator, js: js.Authenticator }
const ALGS = {
  RS256: () => generateKeyPairSync('rsa', { modulusLength: 2048 }),
  PS256: () => generateKeyPairSync('rsa', { modulusLength: 2048 }),
  ES256: () => generateKeyPairSync('ec', { namedCurve: 'P-256' }),
  EdDSA: () => generateKeyPairSync('ed25519'),
}
const ISSUER = 'https://issuer.test/'
const REFRESH = 'refresh-secret-0123456789abcdef0123456789'

function header(token) {
  return JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString())
}

for (const [alg, generate] of Object.entries(ALGS)) {
  describe(`signingKey ${alg}`, () => {
    const { privateKey } = generate()
    // The same key in each form the option takes.
    const forms = {
      KeyObject: privateKey,
      PEM: privateKey.export({ type: 'pkcs8', format: 'pem' }),
      JWK: privateKey.export({ format: 'jwk' }),
    }
    const config = (form = 'KeyObject') => ({
      signingKey: { kid: `${alg}-1`, alg, privateKey: forms[form] },
      refreshSecret: REFRESH,
      issuer: ISSUER,
    })

    for (const [engine, Authenticator] of Object.entries(ENGINES)) {
      for (const form of Object.keys(forms)) {
        it(`${engine}: signs with a ${form} key; jose verifies it against our jwks()`, async () => {
          const auth = new Authenticator(config(form))
          const token = auth.signAccessToken({ sub: 'user-1', email: 'a@example.com' })
          assert.deepEqual(header(token), { alg, kid: `${alg}-1`, typ: 'JWT' })
          const jwks = auth.jwks()
          assert.equal(jwks.keys.length, 1)
          for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi']) assert.equal(jwks.keys[0][member], undefined)
          const { payload, protectedHeader } = await jose.jwtVerify(token, jose.createLocalJWKSet(jwks), {
            issuer: ISSUER,
            algorithms: [alg],
          })
          assert.equal(protectedHeader.kid, `${alg}-1`)
          assert.equal(payload.sub, 'user-1')
          assert.equal(payload.type, 'access')
        })
      }

      it(`${engine}: its tokens authenticate in both engines`, () => {
        const token = new Authenticator(config()).signAccessToken({ sub: 'user-2', tenant_id: 'acme' })
        for (const [other, Other] of Object.entries(ENGINES)) {
          const result = new Other(config('PEM')).authenticate(`Bearer ${token}`)
          assert.equal(result.authenticated, true, `${engine} -> ${other}: ${result.error}`)
          assert.equal(result.userId, 'user-2')
          assert.equal(result.tenantId, 'acme')
        }
      })

      it(`${engine}: with refreshSecret, refresh tokens are HMAC and each kind is wrong_token_type as the other`, () => {
        const auth = new Authenticator(config())
        const refresh = auth.signRefreshToken({ sub: 'user-3' })
        assert.deepEqual(header(refresh), { alg: 'HS256', typ: 'JWT' })
        assert.equal(auth.verifyRefreshToken(refresh).valid, true)
        assert.equal(auth.authenticate(`Bearer ${refresh}`).errorCode, 'wrong_token_type')
        assert.equal(auth.verifyAccessToken(refresh).errorCode, 'wrong_token_type')
        assert.equal(auth.verifyRefreshToken(auth.signAccessToken({ sub: 'user-3' })).errorCode, 'wrong_token_type')
      })

      it(`${engine}: without refreshSecret, the signing key signs refresh tokens too, told apart by type`, async () => {
        const { refreshSecret, ...signingOnly } = config()
        const auth = new Authenticator(signingOnly)
        const refresh = auth.signRefreshToken({ sub: 'user-5' })
        const access = auth.signAccessToken({ sub: 'user-5' })
        assert.deepEqual(header(refresh), { alg, kid: `${alg}-1`, typ: 'JWT' })
        for (const [other, Other] of Object.entries(ENGINES)) {
          const verifier = new Other({ ...signingOnly, signingKey: { ...signingOnly.signingKey, privateKey: forms.PEM } })
          const verdict = verifier.verifyRefreshToken(refresh)
          assert.equal(verdict.valid, true, `${engine} -> ${other}: ${verdict.error}`)
          assert.equal(verdict.userId, 'user-5')
          assert.equal(verifier.verifyRefreshToken(access).errorCode, 'wrong_token_type')
          assert.equal(verifier.verifyAccessToken(refresh).errorCode, 'wrong_token_type')
          const result = verifier.authenticate(`Bearer ${refresh}`)
          assert.equal(result.errorCode, 'wrong_token_type')
          assert.equal(result.errorStatus, 401)
        }
        // The trade-off docs/keys.md states: anyone with the public JWKS can verify it, and only
        // the `type` claim says it is not an access token.
        const { payload } = await jose.jwtVerify(refresh, jose.createLocalJWKSet(auth.jwks()), { algorithms: [alg] })
        assert.equal(payload.type, 'refresh')
        // A tampered refresh token is a forgery, and a revoked one is refused.
        const tampered = refresh.slice(0, -4) + (refresh.at(-4) === 'A' ? 'B' : 'A') + refresh.slice(-3)
        assert.equal(auth.verifyRefreshToken(tampered).errorCode, 'invalid_signature')
        const { jti, expiresAtSec } = auth.verifyRefreshToken(refresh)
        auth.revokeToken(jti, expiresAtSec)
        assert.equal(auth.verifyRefreshToken(refresh).errorCode, 'token_revoked')
      })

      it(`${engine}: without refreshSecret, refresh tokens verify against the signing key alone, not an identity provider's`, async () => {
        const { refreshSecret, ...signingOnly } = config()
        const idp = generateKeyPairSync('ed25519')
        const auth = new Authenticator({ ...signingOnly, keys: [{ kid: 'idp-1', alg: 'EdDSA', publicKey: idp.publicKey }] })
        const claims = { sub: 'user-6', type: 'refresh', iss: ISSUER }
        const outside = await new jose.SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: 'idp-1' }).setExpirationTime('1h').sign(idp.privateKey)
        // A valid token of the access keys that claims to be a refresh token is never one.
        assert.equal(auth.verifyRefreshToken(outside).errorCode, 'wrong_token_type')
        const underOurKid = await new jose.SignJWT(claims).setProtectedHeader({ alg: 'EdDSA', kid: `${alg}-1` }).setExpirationTime('1h').sign(idp.privateKey)
        const code = auth.verifyRefreshToken(underOurKid).errorCode
        assert.equal(code, alg === 'EdDSA' ? 'invalid_signature' : 'unsupported_algorithm')
        assert.equal(auth.verifyRefreshToken(auth.signRefreshToken({ sub: 'user-6' })).valid, true)
      })

      it(`${engine}: setKeys keeps the signing key's public half`, () => {
        const auth = new Authenticator(config())
        const other = generateKeyPairSync('ed25519')
        auth.setKeys([{ kid: 'idp-1', alg: 'EdDSA', publicKey: other.publicKey }])
        const token = auth.signAccessToken({ sub: 'user-4' })
        assert.equal(auth.authenticate(`Bearer ${token}`).authenticated, true)
        assert.deepEqual(
          auth.jwks().keys.map((k) => k.kid),
          ['idp-1', `${alg}-1`],
        )
      })
    }
  })
}

describe('signingKey refusals (the same error in both engines)', () => {
  const ed = generateKeyPairSync('ed25519')
  it('refuses a key under its kid, in the config and in setKeys, with the same class, code and message', () => {
    const impostor = { kid: 'own', alg: 'EdDSA', publicKey: generateKeyPairSync('ed25519').publicKey }
    const signingKey = { kid: 'own', alg: 'EdDSA', privateKey: ed.privateKey }
    const describeError = (fn) => {
      try {
        fn()
      } catch (err) {
        return [err.constructor.name, err.code, err.message]
      }
      return null
    }
    for (const Authenticator of Object.values(ENGINES)) {
      assert.deepEqual(describeError(() => new Authenticator({ signingKey, keys: [impostor] })), [
        'RangeError',
        'ERR_AUTH_SHIELD_DUPLICATE_KID',
        'config.keys: kid "own" is the signingKey\'s kid',
      ])
      const auth = new Authenticator({ signingKey })
      assert.deepEqual(describeError(() => auth.setKeys([impostor])), ['RangeError', 'ERR_AUTH_SHIELD_DUPLICATE_KID', 'keys: kid "own" is the signingKey\'s kid'])
      assert.equal(auth.keySetGeneration, 0)
      assert.equal(auth.authenticate(`Bearer ${auth.signAccessToken({ sub: 'u' })}`).authenticated, true)
    }
  })

  const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 })
  const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' })
  const cases = [
    ['an unsupported alg', { kid: 'k', alg: 'ES384', privateKey: p384.privateKey }, RangeError],
    ['an HMAC alg', { kid: 'k', alg: 'HS256', privateKey: ed.privateKey }, RangeError],
    ['a key of another type', { kid: 'k', alg: 'ES256', privateKey: ed.privateKey }, RangeError],
    ['a P-384 key for ES256', { kid: 'k', alg: 'ES256', privateKey: p384.privateKey }, RangeError],
    ['RSA under 2048 bits', { kid: 'k', alg: 'RS256', privateKey: rsa1024.privateKey }, RangeError],
    ['a public key', { kid: 'k', alg: 'EdDSA', privateKey: ed.publicKey }, TypeError],
    ['a PEM that is not a key', { kid: 'k', alg: 'EdDSA', privateKey: 'not a pem' }, TypeError],
    ['no kid', { alg: 'EdDSA', privateKey: ed.privateKey }, TypeError],
    ['a kid with a quote', { kid: 'a"b', alg: 'EdDSA', privateKey: ed.privateKey }, TypeError],
    ['not an object', 'EdDSA', TypeError],
  ]
  for (const [what, signingKey, Class] of cases) {
    it(`refuses ${what}`, () => {
      const errors = Object.values(ENGINES).map((Authenticator) => {
        try {
          new Authenticator({ signingKey })
        } catch (err) {
          return err
        }
        return null
      })
      for (const err of errors) {
        assert.ok(err instanceof Class, `${what}: ${err}`)
        assert.match(err.code, /^ERR_/)
        assert.match(err.message, /signingKey/)
      }
      assert.equal(errors[0].message, errors[1].message)
      assert.equal(errors[0].code, errors[1].code)
    })
  }
})
