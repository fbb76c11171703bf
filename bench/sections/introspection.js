'use strict'
// Token introspection (issue 36 §4), two rows:
//
// 1. A cached introspected (opaque) token against a JWT of the same claims, on ONE Authenticator
//    (a trusted issuer with RS256 keys, its introspection cache on): the JWT is served by the
//    verified-token cache (on by default for asymmetric keys), the opaque token by the
//    introspection cache; both then run the same checks (claims, tenant, rate limit, request
//    id, result). Goal: the opaque token at most 1.5× the JWT. Native and JS engine.
// 2. The cost a cache miss adds over the introspection round trip itself: the whole middleware
//    decision for a token never seen (engine miss, the stage's coalescing, client request,
//    answer mapping, admission, the engine run again) against a bare `fetch` POST of the same
//    form, read as JSON. Measured twice: with `fetch` answering at once (the endpoint's answer
//    without the network: the difference is auth-shield's own work, the goal's figure, ≤ 0.2
//    ms per request), and against a real loopback endpoint (the round trip's noise on a shared
//    machine is larger than the difference). Sequential calls, interleaved rounds.

const crypto = require('node:crypto')
const http = require('node:http')
const jsonwebtoken = require('jsonwebtoken')
const { measureInterleaved } = require('../lib/measure')
const { summarize, pairedRatio, median } = require('../lib/stats')

const ISSUER = 'http://127.0.0.1:1/'
const AUDIENCE = 'https://api.example.com/'

function claimsOf(fx) {
  const now = Math.floor(Date.now() / 1000)
  return { sub: fx.expected.userId, tenant_id: fx.expected.tenantId, iss: ISSUER, aud: AUDIENCE, scope: 'read write', client_id: 'app', jti: 'j-1', iat: now, exp: now + 86400 }
}

function buildCached(ours, fx) {
  const { tenantHeader, host } = fx
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 })
  const claims = claimsOf(fx)
  const jwt = `Bearer ${jsonwebtoken.sign(claims, privateKey, { algorithm: 'RS256', keyid: 'rs-1', noTimestamp: true })}`
  const opaque = crypto.randomBytes(32).toString('base64url')
  const config = {
    issuers: [{ issuer: ISSUER, keys: [{ kid: 'rs-1', alg: 'RS256', publicKey }] }],
    audience: AUDIENCE,
    rateLimitMax: fx.config.rateLimitMax,
    rateLimitRefillPerSec: 1e6,
    introspectionCacheMaxEntries: 1000,
  }
  const contenders = []
  const makers = [['native', (c) => new ours.native.Authenticator(c)]]
  if (ours.jsEngine.available) makers.push(['js', ours.jsEngine.create])
  for (const [engine, make] of makers) {
    const authenticator = make(config)
    authenticator.admitIntrospection(opaque, JSON.stringify(claims), claims.exp)
    const accept = (r) => r !== null && typeof r === 'object' && r.authenticated === true && r.userId === fx.expected.userId
    contenders.push({ id: `${engine}-jwt`, label: `${engine}: authenticate, RS256 JWT (verified-token cache)`, run: () => authenticator.authenticate(jwt, tenantHeader, host), accept })
    contenders.push({ id: `${engine}-opaque`, label: `${engine}: authenticate, opaque token (introspection cache)`, run: () => authenticator.authenticate(`Bearer ${opaque}`, tenantHeader, host), accept })
  }
  return contenders
}

/** A loopback introspection endpoint answering every token active, with the bench's claims. */
function startEndpoint(claims) {
  const answer = JSON.stringify({ active: true, ...claims, iss: undefined })
  const server = http.createServer((req, res) => {
    if (req.url.startsWith('/.well-known/')) {
      const base = `http://127.0.0.1:${server.address().port}`
      return res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ issuer: `${base}/`, jwks_uri: `${base}/jwks`, introspection_endpoint: `${base}/introspect` }))
    }
    if (req.url === '/jwks') return res.writeHead(200, { 'content-type': 'application/json' }).end('{"keys":[]}')
    req.resume()
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer))
  })
  server.keepAliveTimeout = 60_000
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

async function buildMiss(ours, fx) {
  const { createTrustedIssuers } = require('../../lib/jwks/index')
  const { AuthDecision } = require('../../lib/http/decision')
  const claims = claimsOf(fx)
  const server = await startEndpoint(claims)
  const base = `http://127.0.0.1:${server.address().port}`
  claims.iss = `${base}/`
  const introspection = { clientId: 'rs', clientSecret: 'rs-secret-0123456789', endpoint: `${base}/introspect`, maxConcurrent: 64 }
  const registry = createTrustedIssuers([{ issuer: `${base}/`, jwksUri: `${base}/jwks`, audience: AUDIENCE, introspection }])
  const decision = new AuthDecision({ rateLimitMax: 0, introspectionCacheMaxEntries: 1_000_000 }, { jwks: registry, engine: 'native' })
  const basic = `Basic ${Buffer.from('rs:rs-secret-0123456789').toString('base64')}`
  let n = 0
  const fresh = () => `t${++n}-${crypto.randomBytes(24).toString('base64url')}`
  const roundTrip = async () => {
    const res = await fetch(`${base}/introspect`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', authorization: basic },
      body: new URLSearchParams({ token: fresh(), token_type_hint: 'access_token' }).toString(),
    })
    return JSON.parse(await res.text())
  }
  const miss = () => decision.decide({ method: 'GET', url: '/', headers: { authorization: `Bearer ${fresh()}`, host: 'api.example.com' } })
  // The same two with a fetch that answers at once (the endpoint's answer, no network): the
  // difference is the work of auth-shield alone, without the loopback round trip's noise.
  const realFetch = globalThis.fetch
  const answer = JSON.stringify({ active: true, ...claims, iss: undefined })
  const instant = async () => new Response(answer, { status: 200, headers: { 'content-type': 'application/json' } })
  const withInstant = (fn) => async () => {
    globalThis.fetch = instant
    try {
      return await fn()
    } finally {
      globalThis.fetch = realFetch
    }
  }
  const isPass = (d) => d.action === 'pass'
  const isActive = (r) => r !== null && r.active === true
  const contenders = [
    { id: 'round-trip', label: 'introspection round trip alone (fetch POST + JSON, loopback)', async: true, run: roundTrip, accept: isActive },
    { id: 'miss', label: 'middleware decision, cache miss (loopback endpoint)', async: true, run: miss, accept: isPass },
    { id: 'instant-round-trip', label: 'the round trip, fetch answering at once', async: true, run: withInstant(roundTrip), accept: isActive },
    { id: 'instant-miss', label: 'cache miss, fetch answering at once (introspect, admit, run again)', async: true, run: withInstant(miss), accept: isPass },
  ]
  return { contenders, close: () => (registry.close(), new Promise((resolve) => server.close(resolve))) }
}

async function runIntrospection(ours, fx, opts) {
  const cached = buildCached(ours, fx)
  for (const c of cached) if (!c.accept(c.run())) throw new Error(`${c.label}: refused`)
  const raw = await measureInterleaved('introspection (cached)', cached, opts)
  const miss = await buildMiss(ours, fx)
  let rawMiss
  try {
    for (const c of miss.contenders) if (!c.accept(await c.run())) throw new Error(`${c.label}: refused`)
    rawMiss = await measureInterleaved('introspection (miss)', miss.contenders, { ...opts, sampleMs: Math.max(opts.sampleMs, 100) })
  } finally {
    await miss.close()
  }
  const ratio = (engine) => pairedRatio(raw[`${engine}-opaque`].nsPerOp, raw[`${engine}-jwt`].nsPerOp)
  const overheadNs = rawMiss['instant-miss'].nsPerOp.map((v, i) => v - rawMiss['instant-round-trip'].nsPerOp[i])
  const loopbackOverheadNs = rawMiss.miss.nsPerOp.map((v, i) => v - rawMiss['round-trip'].nsPerOp[i])
  const rows = [...cached, ...miss.contenders].map((c) => {
    const r = raw[c.id] ?? rawMiss[c.id]
    const baselineId = c.id.endsWith('miss') ? c.id.replace(/miss$/, 'round-trip') : c.id.replace(/-opaque$/, '-jwt')
    const baseline = raw[baselineId] ?? rawMiss[baselineId]
    return { id: `introspection-${c.id}`, label: c.label, nsPerOp: summarize(r.nsPerOp), vsBaseline: pairedRatio(r.nsPerOp, baseline.nsPerOp), callsPerSample: r.callsPerSample, samples: r.nsPerOp }
  })
  return {
    title: 'Introspection: a cached opaque token vs a JWT of the same claims; a cache miss vs the round trip alone',
    unit: 'ns/op',
    baseline: 'introspection-native-jwt',
    rows,
    unavailable: [],
    opaqueVsJwt: Object.fromEntries(['native', 'js'].filter((e) => raw[`${e}-jwt`]).map((e) => [e, ratio(e)])),
    missOverheadNs: { median: median(overheadNs), min: Math.min(...overheadNs), max: Math.max(...overheadNs) },
    loopbackMissOverheadNs: { median: median(loopbackOverheadNs), min: Math.min(...loopbackOverheadNs), max: Math.max(...loopbackOverheadNs) },
  }
}

module.exports = { runIntrospection }
