'use strict'

// The `algorithms` allow-list with every key source (issue 34 §1, issue 35 §1): express-jwt makes
// it required, so every app migrated from jwks-rsa passes it. It is applied to the keys whatever
// their source (a remote JWKS, trusted issuers discovered from a real oidc-provider, static
// keys): a token whose `alg` is not listed is refused in both engines and every adapter form; a
// list no static key meets is refused at construction; a secret getter's conflict names the fix.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const jose = require('jose')
const { get } = require('../support/http')
const { ADAPTER_STARTS, expressServer } = require('../support/adapter-servers')
const { startJwksServer, keyPair } = require('../support/jwks-server')
const { startProvider } = require('../support/oidc-provider')
const { createRemoteJwks, createTrustedIssuers } = require('../../lib/jwks/index')
const authShield = require('../../adapters/express')

const ISSUER = 'https://idp.test/'
const SECRET = 'allow-list-test-secret-0123456789abcdef'

const unhandled = []
process.on('unhandledRejection', (reason) => unhandled.push(reason))

const ADAPTERS = [
  ...ADAPTER_STARTS,
  // express-jwt's one options object (algorithms is required there).
  ['expressjwt', (config, options) => expressServer(authShield.expressjwt({ ...config, ...options }))],
]

const rs = keyPair('RS256', 'kid-rs')
const es = keyPair('ES256', 'kid-es')

/** A token signed with `pair` (its alg and kid) for `iss`. */
function signed(pair, iss = ISSUER, kid = pair.kid) {
  return new jose.SignJWT({}).setProtectedHeader({ alg: pair.alg, kid, typ: 'JWT' }).setSubject('alice').setIssuer(iss).setIssuedAt().setExpirationTime('10m').sign(pair.privateKey)
}

let jwksServer
let provider
let tokens

before(async () => {
  jwksServer = await startJwksServer()
  jwksServer.serve({ keys: [rs.jwk, es.jwk] })
  provider = await startProvider()
  const opPair = { alg: 'RS256', kid: provider.signingJwk.kid, privateKey: await jose.importJWK(provider.signingJwk, 'RS256') }
  tokens = { rs: await signed(rs), es: await signed(es), op: await signed(opPair, provider.issuer) }
})

after(async () => {
  await jwksServer.close()
  await provider.close()
  assert.deepEqual(unhandled, [])
})

const status = async (server, token) => (await get(`${server.base}/orders`, { authorization: `Bearer ${token}` })).status

for (const engine of ['native', 'js']) {
  for (const [adapter, start] of ADAPTERS) {
    describe(`${adapter} (${engine}): algorithms with a key source`, () => {
      const opened = []
      const open = async (config, options) => {
        const server = await start({ rateLimitMax: 0, ...config }, { engine, ...options })
        opened.push(server)
        return server
      }
      const sources = []
      const source = (make) => {
        const s = make()
        sources.push(s)
        return s
      }
      after(async () => {
        for (const s of sources) s.close()
        for (const server of opened) await server.close()
      })

      it("a remote JWKS with algorithms ['RS256'] builds, admits RS256 and refuses the set's ES256 key", async () => {
        const jwks = source(() => createRemoteJwks(jwksServer.url))
        await jwks.ready()
        const server = await open({ issuer: ISSUER }, { jwks, algorithms: ['RS256'] })
        assert.equal(await status(server, tokens.rs), 200)
        assert.equal(await status(server, tokens.es), 401)
      })

      it("a remote JWKS with algorithms ['HS256'] refuses the set's RS256 and ES256 tokens (was: silently ignored)", async () => {
        const jwks = source(() => createRemoteJwks(jwksServer.url))
        await jwks.ready()
        const server = await open({ issuer: ISSUER }, { jwks, algorithms: ['HS256'] })
        assert.equal(await status(server, tokens.rs), 401)
        assert.equal(await status(server, tokens.es), 401)
      })

      it('a list given before the source has keys filters the set it installs later', async () => {
        const jwks = source(() => createRemoteJwks(jwksServer.url))
        const server = await open({ issuer: ISSUER }, { jwks, algorithms: ['ES256'] })
        await jwks.ready()
        assert.equal(await status(server, tokens.es), 200)
        assert.equal(await status(server, tokens.rs), 401)
      })

      it('trusted issuers (oidc-provider discovery): the listed algorithm passes, another is refused', async () => {
        const allowed = source(() => createTrustedIssuers([provider.issuer]))
        await allowed.ready()
        assert.equal(await status(await open({}, { jwks: allowed, algorithms: ['RS256'] }), tokens.op), 200)
        const other = source(() => createTrustedIssuers([provider.issuer]))
        await other.ready()
        assert.equal(await status(await open({}, { jwks: other, algorithms: ['ES256'] }), tokens.op), 401)
      })

      it('static keys: keys of other algorithms are left out; a list no key meets is refused at construction', async () => {
        const keys = [
          { kid: rs.kid, alg: 'RS256', publicKey: rs.publicKey },
          { kid: es.kid, alg: 'ES256', publicKey: es.publicKey },
        ]
        const server = await open({ issuer: ISSUER, keys }, { algorithms: ['ES256'] })
        assert.equal(await status(server, tokens.es), 200)
        assert.equal(await status(server, tokens.rs), 401)
        await assert.rejects(async () => open({ issuer: ISSUER, keys }, { algorithms: ['PS256'] }), (err) => err instanceof TypeError && /algorithms \["PS256"\] allows none/.test(err.message))
      })
    })
  }
}

describe('algorithms conflicts are refused with the fix named', () => {
  it('an HMAC secret with a public-key list names jwks: createRemoteJwks(url)', () => {
    for (const make of [() => authShield({ accessSecret: SECRET }, { algorithms: ['RS256'] }), () => authShield.expressjwt({ secret: SECRET, algorithms: ['RS256'] })]) {
      assert.throws(make, (err) => err instanceof TypeError && /createRemoteJwks\(url\)/.test(err.message) && /jwks-rsa/.test(err.message))
    }
  })

  it("a jwks-rsa style secret getter with algorithms ['RS256'] names jwks: createRemoteJwks(url)", () => {
    const expressJwtSecret = () => (req, token) => 'a public key PEM a getter would fetch'
    assert.throws(
      () => authShield.expressjwt({ secret: expressJwtSecret(), algorithms: ['RS256'] }),
      (err) => err instanceof TypeError && /createRemoteJwks\(url\)/.test(err.message),
    )
  })

  it('a name no key can have is refused (a typo would allow nothing it names)', () => {
    for (const algorithms of [['RS265'], ['HS512'], ['none']]) {
      assert.throws(() => authShield({ accessSecret: SECRET }, { algorithms: ['HS256', ...algorithms] }), (err) => err instanceof TypeError && /is not one of HS256, RS256/.test(err.message))
    }
  })

  it("a signing key whose algorithm the list leaves out is refused (its public half verifies)", () => {
    const { privateKey } = require('node:crypto').generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const keys = [{ kid: rs.kid, alg: 'RS256', publicKey: rs.publicKey }]
    assert.throws(() => authShield({ keys, signingKey: { kid: 's', alg: 'ES256', privateKey } }, { algorithms: ['RS256'] }), (err) => err instanceof TypeError && /signingKey's ES256/.test(err.message))
    assert.doesNotThrow(() => authShield({ keys, signingKey: { kid: 's', alg: 'ES256', privateKey } }, { algorithms: ['RS256', 'ES256'] }))
  })

  it('an issuer whose own algorithms the list excludes is refused at construction', () => {
    const issuers = createTrustedIssuers([{ issuer: provider.issuer, algorithms: ['RS256'] }])
    try {
      assert.throws(() => authShield({}, { jwks: issuers, algorithms: ['ES256'] }), (err) => err instanceof TypeError && /allows none of the algorithms of the issuer/.test(err.message))
    } finally {
      issuers.close()
    }
  })
})
