'use strict'
// HS256 verification through each library, configured for equal validation: algorithm pinned
// to HS256, signature, exp/nbf with zero leeway, issuer and audience, keys prepared once where
// the library lets us. `checkAppClaims` adds what every library leaves to the app (exp present,
// sub present, token type), the same checks the native core makes.

const jsonwebtoken = require('jsonwebtoken')
const { createVerifier } = require('fast-jwt')
const jose = require('jose')
const nodeRsJwt = require('@node-rs/jsonwebtoken')
const { checkAppClaims } = require('./chain')
const { ISSUER, AUDIENCE } = require('./fixtures')

class AppClaimError extends Error {
  constructor(code) {
    super(code)
    this.code = code
  }
}

function withAppClaims(payload) {
  const code = checkAppClaims(payload)
  if (code) throw new AppClaimError(code)
  return payload
}

// Coarse mapping of each library's errors to our codes: the benchmark only times the success
// path; rejections matter for the sanity check, where any code but success is a rejection.
function codeOf(error) {
  if (error instanceof AppClaimError) return error.code
  const text = `${error && error.name} ${error && error.code} ${error && error.message}`.toLowerCase()
  if (text.includes('expired') || text.includes('"exp"') || text.includes('exp claim')) return 'token_expired'
  if (text.includes('audience') || text.includes('"aud"') || text.includes(' aud')) return 'invalid_audience'
  if (text.includes('issuer') || text.includes('"iss"') || text.includes(' iss')) return 'invalid_issuer'
  if (text.includes('signature')) return 'invalid_signature'
  return 'malformed_token'
}

function createSyncVerifiers(fx) {
  const jwtOptions = { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE }
  const fastJwtOptions = { algorithms: ['HS256'], allowedIss: ISSUER, allowedAud: AUDIENCE }
  const fastNoCache = createVerifier({ key: fx.secret, ...fastJwtOptions, cache: false })
  const fastCached = createVerifier({ key: fx.secret, ...fastJwtOptions, cache: true })
  const nodeRsValidation = {
    algorithms: ['HS256'],
    iss: [ISSUER],
    aud: [AUDIENCE],
    leeway: 0, // its default is 60 s; the others use none
    validateExp: true,
    validateNbf: true,
  }
  return {
    jsonwebtokenString: (token) => withAppClaims(jsonwebtoken.verify(token, fx.secret, jwtOptions)),
    jsonwebtokenKeyObject: (token) => withAppClaims(jsonwebtoken.verify(token, fx.secretKeyObject, jwtOptions)),
    fastJwt: (token) => withAppClaims(fastNoCache(token)),
    fastJwtCached: (token) => withAppClaims(fastCached(token)),
    nodeRsJsonwebtoken: (token) => withAppClaims(nodeRsJwt.verifySync(token, fx.secretBuffer, nodeRsValidation)),
  }
}

async function createAsyncVerifiers(fx) {
  const options = { algorithms: ['HS256'], issuer: ISSUER, audience: AUDIENCE }
  const cryptoKey = await globalThis.crypto.subtle.importKey(
    'raw',
    fx.secretBuffer,
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['verify'],
  )
  const bytes = new Uint8Array(fx.secretBuffer)
  return {
    joseCryptoKey: async (token) => withAppClaims((await jose.jwtVerify(token, cryptoKey, options)).payload),
    joseUint8Array: async (token) => withAppClaims((await jose.jwtVerify(token, bytes, options)).payload),
  }
}

module.exports = { createSyncVerifiers, createAsyncVerifiers, codeOf }
