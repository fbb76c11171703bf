'use strict'

// requireAccessTokenProfile (RFC 9068, issue 25): the header typ must be at+jwt (or
// application/at+jwt), so an ID token or any other JWT signed by the same issuer is refused as
// wrong_token_type; iss, exp, aud, sub, client_id, iat and jti must be present. Tokens signed
// by jose (no code of ours) and by a real oidc-provider; both engines.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const jose = require('jose')
const native = require('../..')
const js = require('../../js')
const { token, withoutRequestId } = require('../support/tokens')
const { startProvider } = require('../support/oidc-provider')

const ENGINES = [
  ['native', native],
  ['js', js],
]
const ISSUER = 'https://as.example/'
const AUDIENCE = 'https://api.example/'
const NOW = Math.floor(Date.now() / 1000)
const { privateKey, publicKey } = require('node:crypto').generateKeyPairSync('ec', { namedCurve: 'P-256' })
const KEYS = [{ kid: 'k1', alg: 'ES256', publicKey }]

const CLAIMS = { iss: ISSUER, aud: AUDIENCE, sub: 'u1', client_id: 'c1', iat: NOW - 10, exp: NOW + 300, jti: 'j1', scope: 'read' }

function signed(claims = CLAIMS, header = { typ: 'at+jwt' }) {
  return new jose.SignJWT(claims).setProtectedHeader({ alg: 'ES256', kid: 'k1', ...header }).sign(privateKey)
}

function make(engine, extra) {
  return new engine.Authenticator({ keys: KEYS, issuer: ISSUER, audience: AUDIENCE, requireAccessTokenProfile: true, rateLimitMax: 0, ...extra })
}

const without = (name) => {
  const c = { ...CLAIMS }
  delete c[name]
  return c
}

// [label, token promise, code (null: authenticated)]
const CASES = () => [
  ['typ at+jwt', signed(), null],
  ['typ application/at+jwt', signed(CLAIMS, { typ: 'application/at+jwt' }), null],
  ['typ AT+JWT (media types are case-insensitive)', signed(CLAIMS, { typ: 'AT+JWT' }), null],
  ['aud as a list', signed({ ...CLAIMS, aud: ['x', AUDIENCE] }), null],
  ['an ID token (typ JWT)', signed({ ...CLAIMS, nonce: 'n', auth_time: NOW }, { typ: 'JWT' }), 'wrong_token_type'],
  ['no typ', signed(CLAIMS, {}), 'wrong_token_type'],
  ['typ at+jwt with a suffix', signed(CLAIMS, { typ: 'at+jwt; x' }), 'wrong_token_type'],
  ['typ application/jwt', signed(CLAIMS, { typ: 'application/jwt' }), 'wrong_token_type'],
  ['typ logout+jwt', signed(CLAIMS, { typ: 'logout+jwt' }), 'wrong_token_type'],
  // With `issuer` configured, a missing iss is invalid_issuer first (see below without it).
  ['no iss', signed(without('iss')), 'invalid_issuer'],
  ['no client_id', signed(without('client_id')), 'missing_profile_claim'],
  ['empty client_id', signed({ ...CLAIMS, client_id: '' }), 'missing_profile_claim'],
  ['no iat', signed(without('iat')), 'missing_profile_claim'],
  ['no jti', signed(without('jti')), 'missing_profile_claim'],
  ['empty jti', signed({ ...CLAIMS, jti: '' }), 'missing_profile_claim'],
  ['client_id a number', signed({ ...CLAIMS, client_id: 0 }), 'invalid_claims'],
  ['client_id false', signed({ ...CLAIMS, client_id: false }), 'invalid_claims'],
  ['client_id null', signed({ ...CLAIMS, client_id: null }), 'invalid_claims'],
  ['no exp', signed(without('exp')), 'missing_expiration'],
  ['no sub', signed(without('sub')), 'missing_subject'],
  ['expired', signed({ ...CLAIMS, exp: NOW - 100 }), 'token_expired'],
]

for (const [name, engine] of ENGINES) {
  it(`${name}: the profile refuses other JWTs (typ) and tokens without its claims, each with its code`, async () => {
    const auth = make(engine)
    for (const [label, pending, code] of CASES()) {
      const r = auth.authenticate(`Bearer ${await pending}`)
      if (code === null) assert.equal(r.authenticated, true, `${label}: ${r.errorCode}`)
      else assert.equal(r.errorCode, code, label)
    }
  })

  it(`${name}: a missing iss or aud meets the configured issuer and audience first (RFC 9068 §4 has both configured)`, async () => {
    const auth = make(engine)
    assert.equal(auth.authenticate(`Bearer ${await signed()}`).authenticated, true)
    for (const [claims, code] of [[without('iss'), 'invalid_issuer'], [{ ...CLAIMS, iss: '' }, 'invalid_issuer'], [without('aud'), 'invalid_audience'], [{ ...CLAIMS, aud: [] }, 'invalid_audience']]) {
      assert.equal(auth.authenticate(`Bearer ${await signed(claims)}`).errorCode, code, JSON.stringify(claims))
    }
  })

  it(`${name}: exp and sub are required with the profile even when requireExpiration / requireSubject are false`, async () => {
    const auth = make(engine, { requireExpiration: false, requireSubject: false })
    assert.equal(auth.authenticate(`Bearer ${await signed(without('exp'))}`).errorCode, 'missing_expiration')
    assert.equal(auth.authenticate(`Bearer ${await signed(without('sub'))}`).errorCode, 'missing_subject')
  })

  it(`${name}: without the profile, the typ and the profile claims are not read`, async () => {
    const auth = make(engine, { requireAccessTokenProfile: false })
    for (const [label, pending, code] of CASES()) {
      const r = auth.authenticate(`Bearer ${await pending}`)
      if (code === 'wrong_token_type' || code === 'missing_profile_claim' || code === 'invalid_claims' || code === null) assert.equal(r.authenticated, true, label)
    }
  })

  it(`${name}: the profile is about access tokens: refresh tokens and our own HS256 tokens`, () => {
    const secret = 'profile-access-secret-0123456789abcdef'
    const auth = new engine.Authenticator({ accessSecret: secret, refreshSecret: `${secret}-refresh`, issuer: 'i', audience: 'a', requireAccessTokenProfile: true, rateLimitMax: 0 })
    // Our own signer writes typ JWT: with the profile on, its access tokens are refused, by design.
    assert.equal(auth.authenticate(`Bearer ${auth.signAccessToken({ sub: 'u' })}`).errorCode, 'wrong_token_type')
    assert.equal(auth.verifyRefreshToken(auth.signRefreshToken({ sub: 'u' })).valid, true)
    const hs = token({ iss: 'i', aud: 'a', sub: 'u', client_id: 'c', iat: NOW, exp: NOW + 60, jti: 'j' }, secret, { alg: 'HS256', typ: 'at+jwt' })
    assert.equal(auth.authenticate(`Bearer ${hs}`).authenticated, true)
  })
}

it('both engines: the profile without issuer or audience is refused at construction (RFC 9068 §4)', () => {
  const MESSAGE = require('../../contract/messages.json').profileNeedsIssuerAndAudience.template
  const secret = 'profile-access-secret-0123456789abcdef'
  for (const [name, engine] of ENGINES) {
    for (const partial of [{}, { issuer: ISSUER }, { audience: AUDIENCE }, { issuer: null, audience: AUDIENCE }, { issuer: ISSUER, audience: undefined }]) {
      assert.throws(() => new engine.Authenticator({ accessSecret: secret, requireAccessTokenProfile: true, ...partial }), { name: 'TypeError', message: MESSAGE }, `${name} ${JSON.stringify(partial)}`)
    }
    // Off, the same configs are fine; with both, the profile is.
    assert.doesNotThrow(() => new engine.Authenticator({ accessSecret: secret, requireAccessTokenProfile: false }))
    assert.doesNotThrow(() => new engine.Authenticator({ accessSecret: secret, requireAccessTokenProfile: true, issuer: [ISSUER, 'b'], audience: [AUDIENCE] }))
  }
})

it('both engines: the same results, field for field, with and without the profile', async () => {
  for (const extra of [{}, { requireAccessTokenProfile: false }, { requiredScope: 'read' }]) {
    const n = make(native, extra)
    const j = make(js, extra)
    for (const [label, pending] of CASES()) {
      const t = `Bearer ${await pending}`
      assert.deepStrictEqual(withoutRequestId(j.authenticate(t)), withoutRequestId(n.authenticate(t)), label)
    }
  }
})

describe('a real oidc-provider', () => {
  let op
  before(async () => {
    op = await startProvider({ resource: AUDIENCE })
  })
  after(() => op.close())

  it('its client_credentials access tokens satisfy the profile in both engines; a JWT it did not type at+jwt does not', async () => {
    const { keys } = await (await fetch(op.jwksUri)).json()
    const configKeys = keys.map((jwk) => ({ kid: jwk.kid, alg: 'RS256', publicKey: jwk }))
    const accessToken = await op.token('read:orders')
    for (const [name, engine] of ENGINES) {
      const auth = new engine.Authenticator({ keys: configKeys, issuer: op.issuer, audience: AUDIENCE, requireAccessTokenProfile: true, requiredScope: 'read:orders', rateLimitMax: 0 })
      const r = auth.authenticate(`Bearer ${accessToken}`)
      assert.equal(r.authenticated, true, `${name}: ${r.errorCode}`)
      assert.equal(r.userId, op.clientId)
    }
  })
})
