'use strict'
// The one set of keys, claims and tokens every contender is measured with, so that all of
// them verify the same bytes against the same rules.

const crypto = require('node:crypto')
const jsonwebtoken = require('jsonwebtoken')

const ISSUER = 'https://auth.example.com'
const AUDIENCE = 'api.example.com'
const TENANT_HEADER = 'acme'
const HOST = 'acme.example.com'
// Large enough that a multi-minute run at millions of calls never drains the bucket, so every
// contender stays on the success path (a drained bucket would measure the 429 path instead).
const RATE_LIMIT_MAX = 1e9
const RATE_LIMIT_REFILL = 1e6

function createFixtures(native) {
  const secret = crypto.randomBytes(32).toString('base64url') // 43 ASCII chars, 256 bits
  const secretBuffer = Buffer.from(secret)
  const config = {
    accessSecret: secret,
    issuer: ISSUER,
    audience: AUDIENCE,
    rateLimitMax: RATE_LIMIT_MAX,
    rateLimitRefill: RATE_LIMIT_REFILL,
    accessTtlSec: 86400,
  }
  const signer = new native.Authenticator(config)
  const claims = { sub: 'user-42', email: 'ada@example.com', role: 'admin', tenant_id: 'acme' }
  const token = signer.signAccessToken(claims)

  // Rejection probes are signed by an independent library so they do not depend on our signer.
  const now = Math.floor(Date.now() / 1000)
  const base = { ...claims, iss: ISSUER, aud: AUDIENCE, type: 'access', iat: now, exp: now + 3600 }
  const sign = (payload) => jsonwebtoken.sign(payload, secret, { algorithm: 'HS256', noTimestamp: true })
  const rejects = {
    tampered: tamperSignature(token),
    expired: sign({ ...base, iat: now - 7200, exp: now - 3600 }),
    wrongIssuer: sign({ ...base, iss: 'https://evil.example.com' }),
    wrongAudience: sign({ ...base, aud: 'other-api' }),
    refreshType: sign({ ...base, type: 'refresh' }),
    wrongSecret: jsonwebtoken.sign(base, crypto.randomBytes(32).toString('base64url'), {
      algorithm: 'HS256',
      noTimestamp: true,
    }),
  }

  return {
    secret,
    secretBuffer,
    secretKeyObject: crypto.createSecretKey(secretBuffer),
    config,
    token,
    authorization: `Bearer ${token}`,
    tenantHeader: TENANT_HEADER,
    host: HOST,
    rejects,
    expected: { userId: claims.sub, tenantId: claims.tenant_id },
  }
}

// Changes one character in the middle of the signature: still canonical base64url, so the
// failure comes from the HMAC comparison and not from a decoding shortcut.
function tamperSignature(token) {
  const dot = token.lastIndexOf('.')
  const at = dot + 10
  const replacement = token[at] === 'A' ? 'B' : 'A'
  return token.slice(0, at) + replacement + token.slice(at + 1)
}

module.exports = { createFixtures, ISSUER, AUDIENCE, RATE_LIMIT_MAX, RATE_LIMIT_REFILL }
