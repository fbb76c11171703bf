'use strict'

// What an operator reads when a key source misbehaves: a fetch failure says why (the cause
// undici keeps under "fetch failed"), TrustedIssuers#status() describes each key in force (a
// KeyObject printed as `{}`), and an `iss` that differs from a trusted issuer only by a trailing
// slash is refused as before and logged once, with the fix.

const { it } = require('node:test')
const assert = require('node:assert/strict')
const net = require('node:net')
const { generateKeyPairSync } = require('node:crypto')
const jose = require('jose')
const { createRemoteJwks, createTrustedIssuers } = require('../../lib/jwks')
const { createVerifier } = require('../../adapters/fetch')
const { startJwksServer } = require('../support/jwks-server')

async function closedPort() {
  const server = net.createServer()
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address()
  await new Promise((resolve) => server.close(resolve))
  return port
}

it('a JWKS fetch that cannot connect says why (ECONNREFUSED), not only "fetch failed", and keeps the cause', async () => {
  const port = await closedPort()
  const source = createRemoteJwks(`http://127.0.0.1:${port}/jwks.json`, { retryMinMs: 60_000, retryMaxMs: 60_000 })
  try {
    const err = await source.ready().then(
      () => assert.fail('ready() resolved'),
      (e) => e,
    )
    assert.equal(err.code, 'ERR_AUTH_SHIELD_JWKS_FETCH')
    assert.match(err.message, /ECONNREFUSED/)
    assert.ok(err.cause instanceof Error)
  } finally {
    source.close()
  }
})

it('TrustedIssuers#status() describes each key: kid, alg, type, size or curve, RFC 7638 thumbprint', async () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const rsaJwk = { ...rsa.publicKey.export({ format: 'jwk' }), kid: 'r1', alg: 'RS256', use: 'sig' }
  const ecJwk = { ...ec.publicKey.export({ format: 'jwk' }), kid: 'e1', alg: 'ES256', use: 'sig' }
  const host = await startJwksServer()
  host.serve({ keys: [rsaJwk, ecJwk] })
  // A loopback issuer may name an http: jwksUri.
  const issuer = `${new URL(host.url).origin}/op/`
  let registry
  try {
    registry = createTrustedIssuers([{ issuer, jwksUri: host.url }])
    await registry.ready()
    const [status] = registry.status()
    const thumbprint = (jwk) => jose.calculateJwkThumbprint(jwk, 'sha256')
    assert.deepEqual(status.keys, [
      { kid: 'r1', alg: 'RS256', type: 'rsa', bits: 2048, thumbprint: await thumbprint(rsaJwk) },
      { kid: 'e1', alg: 'ES256', type: 'ec', curve: 'prime256v1', thumbprint: await thumbprint(ecJwk) },
    ])
    // Printable: nothing in it serialises as {}.
    assert.doesNotMatch(JSON.stringify(registry.status()), /\{\}/)
  } finally {
    if (registry !== undefined) registry.close()
    await host.close()
  }
})

it('an iss one trailing slash away from a trusted issuer is refused (untrusted_issuer) and logged once with the fix', async () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const host = await startJwksServer()
  host.serve({ keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256' }] })
  const trusted = `${new URL(host.url).origin}/op/`
  const untrusted = trusted.slice(0, -1)
  const registry = createTrustedIssuers([{ issuer: trusted, jwksUri: host.url }])
  const warnings = []
  const onWarning = (w) => {
    if (w.code === 'AUTH_SHIELD_ISSUER_TRAILING_SLASH') warnings.push(w.message)
  }
  process.on('warning', onWarning)
  try {
    await registry.ready()
    const mint = (iss) =>
      new jose.SignJWT({ sub: 'u' }).setProtectedHeader({ alg: 'RS256', kid: 'k1' }).setIssuer(iss).setExpirationTime('5m').sign(privateKey)
    for (const engine of ['native', 'js']) {
      const verifyRequest = createVerifier({ rateLimitMax: 0 }, { engine, jwks: registry })
      const ask = async (iss) => verifyRequest(new Request('http://api.example/x', { headers: { authorization: `Bearer ${await mint(iss)}` } }))
      assert.equal((await ask(trusted)).ok, true, engine)
      for (let i = 0; i < 3; i++) {
        const refused = await ask(untrusted)
        assert.deepEqual([refused.ok, refused.code], [false, 'untrusted_issuer'], engine)
      }
      // Another issuer altogether: refused, no hint.
      assert.equal((await ask('https://elsewhere.example/')).code, 'untrusted_issuer')
      await new Promise((resolve) => setTimeout(resolve, 1100))
      assert.equal((await ask(untrusted)).code, 'untrusted_issuer')
    }
    await new Promise((resolve) => setImmediate(resolve))
    // Once per middleware (each keeps its own), never per request.
    assert.equal(warnings.length, 2, warnings.join('\n'))
    assert.ok(warnings[0].includes(`${JSON.stringify(untrusted)} differs from the trusted issuer ${JSON.stringify(trusted)} only by a trailing slash`), warnings[0])
  } finally {
    process.off('warning', onWarning)
    registry.close()
    await host.close()
  }
})
