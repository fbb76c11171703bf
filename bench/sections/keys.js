'use strict'
// Asymmetric keys (issue 13), per algorithm (RS256, PS256, ES256, EdDSA): the six-step
// `authenticate` with the verified-token cache off (every call checks the signature) and on
// (the same token every call: a hit), against the JS chain on fast-jwt (no cache) and on jose
// (async); then verification alone. The HS256 `authenticate` of the main fixture is a reference
// row, for the target "a cache hit within 1.5x of HS256 authenticate".
//
// Every contender gets its key prepared once: our `keys` entry (a KeyObject), fast-jwt's
// verifier built once from the PEM, jose's KeyObject. Tokens are signed by jose; the claims
// are the HS256 fixture's (iss, aud, sub, type, tenant_id, exp).

const crypto = require('node:crypto')
const { createVerifier } = require('fast-jwt')
const { createChain, createChainTail, extractBearer, failure } = require('../lib/chain')
const { codeOf } = require('../lib/verifiers')
const { sanityCheck } = require('../lib/sanity')
const { measureInterleaved } = require('../lib/measure')
const { summarize, pairedRatio } = require('../lib/stats')
const { ISSUER, AUDIENCE } = require('../lib/fixtures')

const ALGS = {
  RS256: ['rsa', { modulusLength: 2048 }],
  PS256: ['rsa', { modulusLength: 2048 }],
  ES256: ['ec', { namedCurve: 'P-256' }],
  EdDSA: ['ed25519', {}],
}
const BASELINE = 'native-uncached'

async function keyFixtures(alg, fx) {
  const jose = await import('jose')
  const [type, options] = ALGS[alg]
  const pair = crypto.generateKeyPairSync(type, options)
  const other = crypto.generateKeyPairSync(type, options)
  const kid = `bench-${alg}`
  const now = Math.floor(Date.now() / 1000)
  const claims = { sub: fx.expected.userId, email: 'ada@example.com', role: 'admin', tenant_id: 'acme', type: 'access' }
  const sign = (extra = {}, key = pair.privateKey) =>
    new jose.SignJWT({ ...claims, iss: ISSUER, aud: AUDIENCE, iat: now, exp: now + 86400, ...extra })
      .setProtectedHeader({ alg, kid })
      .sign(key)
  const token = await sign()
  const dot = token.lastIndexOf('.')
  const flipped = token[dot + 10] === 'A' ? 'B' : 'A'
  return {
    alg,
    kid,
    publicKey: pair.publicKey,
    pem: pair.publicKey.export({ type: 'spki', format: 'pem' }),
    token,
    authorization: `Bearer ${token}`,
    rejects: {
      tampered: token.slice(0, dot + 10) + flipped + token.slice(dot + 11),
      expired: await sign({ iat: now - 7200, exp: now - 3600 }),
      wrongIssuer: await sign({ iss: 'https://evil.example.com' }),
      wrongAudience: await sign({ aud: 'other-api' }),
      otherKey: await sign({}, other.privateKey),
    },
  }
}

function configFor(fx, kf, cacheSize) {
  const { accessSecret, ...rest } = fx.config
  return { ...rest, keys: [{ kid: kf.kid, alg: kf.alg, publicKey: kf.publicKey }], verifiedTokenCacheSize: cacheSize }
}

async function authenticateContenders({ native, jsEngine }, fx, kf) {
  const jose = await import('jose')
  const { tenantHeader, host } = fx
  const uncached = new native.Authenticator(configFor(fx, kf, 0))
  const cached = new native.Authenticator(configFor(fx, kf, 1000))
  const hs256 = new native.Authenticator(fx.config)
  const fastJwt = createVerifier({ key: kf.pem, algorithms: [kf.alg], allowedIss: ISSUER, allowedAud: AUDIENCE, cache: false })
  const chainOptions = { rateLimitMax: fx.config.rateLimitMax, rateLimitRefill: fx.config.rateLimitRefill }
  const fastChain = createChain({ verify: (t) => fastJwt(t), codeOf, ...chainOptions })
  // The same chain around jose's async jwtVerify.
  const tail = createChainTail(chainOptions)
  const joseOptions = { algorithms: [kf.alg], issuer: ISSUER, audience: AUDIENCE }
  const joseChain = async (authorization, t, h) => {
    const bearer = extractBearer(authorization)
    if (bearer.code) return failure(bearer.code, chainOptions.rateLimitMax)
    let payload
    try {
      payload = (await jose.jwtVerify(bearer.token, kf.publicKey, joseOptions)).payload
    } catch (error) {
      return failure(codeOf(error), chainOptions.rateLimitMax)
    }
    return tail(payload, t, h)
  }
  const contenders = [
    { id: BASELINE, label: `auth-shield authenticate, ${kf.alg}, cache off`, call: (a) => uncached.authenticate(a, tenantHeader, host) },
    { id: 'native-cached', label: `auth-shield authenticate, ${kf.alg}, cache hit`, call: (a) => cached.authenticate(a, tenantHeader, host) },
    { id: 'chain-fast-jwt', label: `JS chain + fast-jwt ${kf.alg} (no cache)`, call: (a) => fastChain(a, tenantHeader, host) },
    { id: 'chain-jose', label: `JS chain + jose ${kf.alg} (async)`, call: (a) => joseChain(a, tenantHeader, host), async: true },
  ]
  if (jsEngine.available) {
    const engine = jsEngine.create(configFor(fx, kf, 0))
    contenders.push({ id: 'js-engine', label: `auth-shield JS engine, ${kf.alg}, cache off`, call: (a) => engine.authenticate(a, tenantHeader, host) })
  }
  contenders.push({
    id: 'native-hs256',
    label: 'auth-shield authenticate, HS256 (reference)',
    call: () => hs256.authenticate(fx.authorization, tenantHeader, host),
    reference: true,
  })
  const accept = (r) => r !== null && typeof r === 'object' && r.authenticated === true && r.userId === fx.expected.userId
  for (const c of contenders) {
    c.accept = accept
    c.run = () => c.call(kf.authorization)
  }
  return contenders
}

async function verifyContenders({ native }, fx, kf) {
  const jose = await import('jose')
  const uncached = new native.Authenticator(configFor(fx, kf, 0))
  const cached = new native.Authenticator(configFor(fx, kf, 1000))
  const common = { key: kf.pem, algorithms: [kf.alg], allowedIss: ISSUER, allowedAud: AUDIENCE }
  const fastNoCache = createVerifier({ ...common, cache: false })
  const fastCached = createVerifier({ ...common, cache: true })
  const joseOptions = { algorithms: [kf.alg], issuer: ISSUER, audience: AUDIENCE }
  const ours = (r) => r.valid === true && r.userId === fx.expected.userId
  const payloadOk = (p) => p !== null && typeof p === 'object' && p.sub === fx.expected.userId
  const contenders = [
    { id: 'native-verify', label: `auth-shield verifyAccessToken, ${kf.alg}, cache off`, call: (t) => uncached.verifyAccessToken(t), accept: ours },
    { id: 'native-verify-cached', label: `auth-shield verifyAccessToken, ${kf.alg}, cache hit`, call: (t) => cached.verifyAccessToken(t), accept: ours },
    { id: 'fast-jwt', label: `fast-jwt ${kf.alg} (no cache)`, call: (t) => fastNoCache(t) },
    { id: 'fast-jwt-cached', label: `fast-jwt ${kf.alg} (cache: true, same token)`, call: (t) => fastCached(t) },
    {
      id: 'jose',
      label: `jose jwtVerify ${kf.alg} (KeyObject, async)`,
      call: async (t) => (await jose.jwtVerify(t, kf.publicKey, joseOptions)).payload,
      async: true,
    },
  ]
  for (const c of contenders) {
    c.accept ??= payloadOk
    c.run = () => c.call(kf.token)
  }
  return contenders
}

function rowsOf(contenders, raw, baseline) {
  return contenders.map((c) => ({
    id: c.id,
    label: c.label,
    async: Boolean(c.async),
    nsPerOp: summarize(raw[c.id].nsPerOp),
    vsBaseline: pairedRatio(raw[c.id].nsPerOp, raw[baseline].nsPerOp),
    callsPerSample: raw[c.id].callsPerSample,
    samples: raw[c.id].nsPerOp,
  }))
}

async function runKeys(ours, fx, opts) {
  const sections = []
  for (const alg of Object.keys(ALGS)) {
    const kf = await keyFixtures(alg, fx)
    const auth = await authenticateContenders(ours, fx, kf)
    const authRejects = Object.fromEntries(Object.entries(kf.rejects).map(([k, t]) => [k, `Bearer ${t}`]))
    await sanityCheck(auth.filter((c) => !c.reference), kf.authorization, authRejects)
    const rawAuth = await measureInterleaved(`keys ${alg} authenticate`, auth, opts)
    const verify = await verifyContenders(ours, fx, kf)
    await sanityCheck(verify, kf.token, kf.rejects)
    const rawVerify = await measureInterleaved(`keys ${alg} verify`, verify, opts)
    const fastestJs = ['chain-fast-jwt', 'chain-jose'].reduce((best, id) =>
      best === null || summarize(rawAuth[id].nsPerOp).median < summarize(rawAuth[best].nsPerOp).median ? id : best, null)
    sections.push({
      alg,
      authenticate: {
        title: `${alg}: authenticate, 6 steps (valid token)`,
        unit: 'ns/op',
        baseline: BASELINE,
        rows: rowsOf(auth, rawAuth, BASELINE),
        fastestJs,
        // > 1: the fastest JS chain takes that many times as long as our uncached call.
        fastestJsVsUncached: pairedRatio(rawAuth[fastestJs].nsPerOp, rawAuth[BASELINE].nsPerOp),
        // A cache hit's time ÷ the HS256 authenticate time, per round.
        cachedVsHs256: pairedRatio(rawAuth['native-cached'].nsPerOp, rawAuth['native-hs256'].nsPerOp),
      },
      verify: {
        title: `${alg}: verify only (signature + exp/iss/aud/sub/type)`,
        unit: 'ns/op',
        baseline: 'native-verify',
        rows: rowsOf(verify, rawVerify, 'native-verify'),
      },
    })
  }
  return sections
}

module.exports = { runKeys, KEY_ALGS: Object.keys(ALGS) }
