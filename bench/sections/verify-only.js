'use strict'
// Verify only: HS256 signature + exp/nbf + iss + aud + sub/type, no tenant, limiter or id.
// The full native chain is included as a reference, so "the whole fused call vs fast-jwt's
// cached verify alone" is a ratio measured within one run.

const { createSyncVerifiers, createAsyncVerifiers } = require('../lib/verifiers')
const { sanityCheck } = require('../lib/sanity')
const { measureInterleaved } = require('../lib/measure')
const { summarize, pairedRatio } = require('../lib/stats')

const BASELINE = 'native-verify'

async function buildContenders({ native }, fx) {
  const authenticator = new native.Authenticator(fx.config)
  const sync = createSyncVerifiers(fx)
  const asyncs = await createAsyncVerifiers(fx)
  const payloadOk = (p) => p !== null && typeof p === 'object' && p.sub === fx.expected.userId
  const contenders = [
    {
      id: BASELINE,
      label: 'auth-shield verifyAccessToken',
      call: (token) => authenticator.verifyAccessToken(token),
      accept: (r) => r.valid === true && r.userId === fx.expected.userId,
    },
    {
      id: 'native-authenticate',
      label: 'auth-shield authenticate (full 6 steps, reference)',
      call: (token) => authenticator.authenticate(`Bearer ${token}`, fx.tenantHeader, fx.host),
      accept: (r) => r.authenticated === true && r.userId === fx.expected.userId,
    },
    { id: 'fast-jwt', label: 'fast-jwt (no cache)', call: sync.fastJwt },
    { id: 'fast-jwt-cached', label: 'fast-jwt (cache: true, same token)', call: sync.fastJwtCached },
    { id: 'node-rs', label: '@node-rs/jsonwebtoken verifySync', call: sync.nodeRsJsonwebtoken },
    { id: 'jsonwebtoken-keyobject', label: 'jsonwebtoken (KeyObject)', call: sync.jsonwebtokenKeyObject },
    { id: 'jsonwebtoken-string', label: 'jsonwebtoken (string secret)', call: sync.jsonwebtokenString },
    { id: 'jose-cryptokey', label: 'jose jwtVerify (CryptoKey, async)', call: asyncs.joseCryptoKey, async: true },
    { id: 'jose-uint8array', label: 'jose jwtVerify (Uint8Array, async)', call: asyncs.joseUint8Array, async: true },
  ]
  for (const c of contenders) {
    c.accept = c.accept || payloadOk
    // The reference chain gets the prebuilt header, not one concatenated per call.
    c.run =
      c.id === 'native-authenticate'
        ? () => authenticator.authenticate(fx.authorization, fx.tenantHeader, fx.host)
        : () => c.call(fx.token)
  }
  return contenders
}

async function runVerifyOnly(ours, fx, opts) {
  const contenders = await buildContenders(ours, fx)
  await sanityCheck(contenders, fx.token, fx.rejects)
  const raw = await measureInterleaved('verify-only', contenders, opts)
  const base = raw[BASELINE].nsPerOp
  return {
    title: 'Verify only (HS256 + exp/iss/aud/sub/type, valid token)',
    unit: 'ns/op',
    baseline: BASELINE,
    rows: contenders.map((c) => ({
      id: c.id,
      label: c.label,
      async: Boolean(c.async),
      nsPerOp: summarize(raw[c.id].nsPerOp),
      vsBaseline: pairedRatio(raw[c.id].nsPerOp, base),
      callsPerSample: raw[c.id].callsPerSample,
      samples: raw[c.id].nsPerOp,
    })),
    // The speed target: the whole fused call against fast-jwt's cached verification alone.
    cachedVerifyVsFusedCall: pairedRatio(raw['fast-jwt-cached'].nsPerOp, raw['native-authenticate'].nsPerOp),
  }
}

module.exports = { runVerifyOnly }
