'use strict'
// Per-call, equal work: the six steps (bearer, HS256 + claims, tenant, rate limit, request id,
// result object) through the fused native call and through JS chains on each JWT library.

const { createChain } = require('../lib/chain')
const { createSyncVerifiers, codeOf } = require('../lib/verifiers')
const { sanityCheck } = require('../lib/sanity')
const { measureInterleaved } = require('../lib/measure')
const { summarize, pairedRatio } = require('../lib/stats')
const { AuthDecision } = require('../../lib/http/decision')

const BASELINE = 'native-authenticate'
const BEARER = 'Bearer '

function buildContenders({ native, jsEngine }, fx) {
  const { config, tenantHeader, host } = fx
  const accept = (r) => r !== null && typeof r === 'object' && r.authenticated === true && r.userId === fx.expected.userId
  const chainOn = (verify) =>
    createChain({ verify, codeOf, rateLimitMax: config.rateLimitMax, rateLimitRefill: config.rateLimitRefill })
  const verifiers = createSyncVerifiers(fx)

  const authenticator = new native.Authenticator(config)
  const contenders = [
    {
      id: BASELINE,
      label: 'auth-shield Authenticator#authenticate',
      call: (authorization) => authenticator.authenticate(authorization, tenantHeader, host),
    },
    {
      // The same config object every call: native.js's per-object cache skips re-validation.
      id: 'native-one-shot',
      label: 'auth-shield authenticateRequest (reused config)',
      call: (authorization) => native.authenticateRequest(authorization, tenantHeader, host, config),
    },
    {
      // The token step alone (no tenant, limiter or request id), for the same token.
      id: 'native-verify-access',
      label: 'auth-shield verifyAccessToken',
      call: (authorization) => authenticator.verifyAccessToken(authorization.slice(BEARER.length)),
      accept: (r) => r !== null && typeof r === 'object' && r.valid === true && r.userId === fx.expected.userId,
    },
  ]
  // The decision behind both adapters (lib/http/decision.js) on the same Authenticator, without and with
  // reading the verified payload: what `req.auth` costs when a route reads it, and that it
  // costs nothing when no route does.
  const decision = new AuthDecision(authenticator)
  const request = (authorization) => ({ method: 'GET', headers: { authorization, 'x-tenant-id': tenantHeader, host } })
  const passes = (d) => d.action === 'pass' && d.identity.user.userId === fx.expected.userId
  contenders.push(
    {
      id: 'ours-adapter-decision',
      label: 'auth-shield adapter decision (claims unread)',
      call: (authorization) => decision.decide(request(authorization), '/api'),
      accept: passes,
    },
    {
      id: 'ours-adapter-claims',
      label: 'auth-shield adapter decision + reading claims',
      call: (authorization) => {
        const d = decision.decide(request(authorization), '/api')
        return d.action === 'pass' && d.claims.sub === fx.expected.userId ? d : null
      },
      accept: (d) => d !== null && passes(d),
    },
  )
  const unavailable = []
  if (jsEngine.available) {
    const engine = jsEngine.create(config)
    contenders.push({
      id: 'js-engine',
      label: 'auth-shield JS engine (auth-shield/js)',
      call: (authorization) => engine.authenticate(authorization, tenantHeader, host),
    })
  } else {
    unavailable.push({ id: 'js-engine', label: 'auth-shield JS engine (auth-shield/js)', reason: jsEngine.reason })
  }
  const chains = [
    ['chain-fast-jwt', 'JS chain + fast-jwt (no cache)', verifiers.fastJwt],
    ['chain-jsonwebtoken-keyobject', 'JS chain + jsonwebtoken (KeyObject)', verifiers.jsonwebtokenKeyObject],
    ['chain-jsonwebtoken-string', 'JS chain + jsonwebtoken (string secret)', verifiers.jsonwebtokenString],
  ]
  for (const [id, label, verify] of chains) {
    const chain = chainOn(verify)
    contenders.push({ id, label, call: (authorization) => chain(authorization, tenantHeader, host) })
  }
  for (const c of contenders) {
    c.accept ??= accept
    c.run = () => c.call(fx.authorization)
  }
  return { contenders, unavailable }
}

async function runPerCall(ours, fx, opts) {
  const { contenders, unavailable } = buildContenders(ours, fx)
  const rejects = Object.fromEntries(Object.entries(fx.rejects).map(([k, t]) => [k, `Bearer ${t}`]))
  await sanityCheck(contenders, fx.authorization, rejects)
  const raw = await measureInterleaved('per-call', contenders, opts)
  const base = raw[BASELINE].nsPerOp
  return {
    title: 'Per call, equal work (6 steps, valid token)',
    unit: 'ns/op',
    baseline: BASELINE,
    rows: contenders.map((c) => ({
      id: c.id,
      label: c.label,
      nsPerOp: summarize(raw[c.id].nsPerOp),
      // > 1: the contender takes that many times as long as the fused native call
      vsBaseline: pairedRatio(raw[c.id].nsPerOp, base),
      callsPerSample: raw[c.id].callsPerSample,
      samples: raw[c.id].nsPerOp,
    })),
    unavailable,
    // The "42×" story: jsonwebtoken against itself, string secret ÷ KeyObject, per round.
    stringSecretVsKeyObject: pairedRatio(
      raw['chain-jsonwebtoken-string'].nsPerOp,
      raw['chain-jsonwebtoken-keyobject'].nsPerOp,
    ),
    // The JS engine is the fallback without a binary: its time ÷ the fast-jwt chain's, per round.
    jsEngineVsFastJwtChain: raw['js-engine'] ? pairedRatio(raw['js-engine'].nsPerOp, raw['chain-fast-jwt'].nsPerOp) : null,
  }
}

module.exports = { runPerCall }
