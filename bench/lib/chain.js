'use strict'
// The six-step auth chain written the way a careful Express app would, around any JWT
// verifier. It does the same work, in the same order, as the native `authenticate`, so that
// the per-call comparison is equal work: only the verifier changes between JS contenders.

const crypto = require('node:crypto')
const { performance } = require('node:perf_hooks')
const ERRORS = require('../../contract/error-codes.json')
const { resultTemplates } = require('../../base/schema')

const MAX_TOKEN_BYTES = 8192
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/
const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/

// Step 1: `Authorization: Bearer <token>` (RFC 6750 §2.1), scheme case-insensitive.
function extractBearer(authorization) {
  if (typeof authorization !== 'string' || authorization === '') return { code: 'missing_authorization' }
  if (authorization.length < 8 || authorization.slice(0, 6).toLowerCase() !== 'bearer' || authorization[6] !== ' ') {
    return { code: 'invalid_authorization_format' }
  }
  let start = 7
  while (authorization[start] === ' ') start++
  const token = authorization.slice(start)
  if (token.length > MAX_TOKEN_BYTES) return { code: 'token_too_large' }
  if (!B64TOKEN.test(token)) return { code: 'invalid_authorization_format' }
  return { token }
}

// Step 2b: the checks the JWT libraries leave to the application (and the native core does):
// `exp` must be present, `sub` non-empty, and a present `type` must say "access".
function checkAppClaims(payload) {
  if (typeof payload.exp !== 'number') return 'missing_expiration'
  if (typeof payload.sub !== 'string' || payload.sub === '') return 'missing_subject'
  if (payload.type !== undefined && payload.type !== 'access') return 'wrong_token_type'
  return undefined
}

// Step 3: tenant claim > X-Tenant-ID header > Host subdomain.
function resolveTenant(claimTenant, tenantHeader, host) {
  if (typeof claimTenant === 'string' && claimTenant !== '') {
    return TENANT_ID.test(claimTenant) ? { tenantId: claimTenant, source: 'token' } : { code: 'invalid_tenant' }
  }
  if (typeof tenantHeader === 'string' && tenantHeader !== '') {
    return TENANT_ID.test(tenantHeader) ? { tenantId: tenantHeader, source: 'header' } : { code: 'invalid_tenant' }
  }
  return tenantFromHost(host)
}

function tenantFromHost(host) {
  if (typeof host !== 'string' || host === '' || host[0] === '[') return {}
  let name = host.toLowerCase()
  const colon = name.indexOf(':')
  if (colon !== -1) name = name.slice(0, colon)
  if (name.endsWith('.')) name = name.slice(0, -1)
  const labels = name.split('.')
  if (labels.length < 3 || name.endsWith('.localhost') || /^[0-9.]+$/.test(name)) return {}
  const label = labels[0]
  if (label === 'www') return {}
  return TENANT_ID.test(label) ? { tenantId: label, source: 'host' } : { code: 'invalid_tenant' }
}

// Step 4: one token bucket per `user:tenant`, refilled continuously.
class TokenBucketLimiter {
  constructor(capacity, refillPerSec, maxKeys = 100000) {
    this.capacity = capacity
    this.refillPerMs = refillPerSec / 1000
    this.maxKeys = maxKeys
    this.buckets = new Map()
  }

  take(key) {
    const now = performance.now()
    let bucket = this.buckets.get(key)
    if (bucket === undefined) {
      if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value)
      bucket = { tokens: this.capacity, updatedAt: now }
      this.buckets.set(key, bucket)
    } else {
      bucket.tokens = Math.min(this.capacity, bucket.tokens + (now - bucket.updatedAt) * this.refillPerMs)
      bucket.updatedAt = now
    }
    if (bucket.tokens < 1) return { allowed: false, retryAfterMs: Math.ceil((1 - bucket.tokens) / this.refillPerMs) }
    bucket.tokens -= 1
    return { allowed: true, remaining: Math.floor(bucket.tokens) }
  }
}

// Steps 5 and 6: a fresh request id and the same flat result the native call returns, its
// fields and their order taken from contract/options.json.
const { success: SUCCESS, failure: FAILURE } = resultTemplates()

function success(payload, tenant, remaining, limit) {
  const result = { ...SUCCESS }
  result.userId = payload.sub
  result.email = payload.email
  result.role = payload.role
  result.tenantId = tenant.tenantId
  result.tenantSource = tenant.source
  result.requestId = crypto.randomUUID()
  result.rateLimitRemaining = remaining
  result.rateLimitLimit = limit
  result.retryAfterMs = 0
  return result
}

function failure(code, limit, retryAfterMs = 0) {
  const { status, message } = ERRORS[code]
  const result = { ...FAILURE }
  result.requestId = crypto.randomUUID()
  result.rateLimitRemaining = code === 'rate_limited' ? 0 : undefined
  result.rateLimitLimit = limit
  result.retryAfterMs = retryAfterMs
  result.error = message
  result.errorCode = code
  result.errorStatus = status
  return result
}

// Everything after signature verification; also used after express-jwt / passport-jwt.
function createChainTail({ rateLimitMax, rateLimitRefill }) {
  const limiter = new TokenBucketLimiter(rateLimitMax, rateLimitRefill)
  return function completeChain(payload, tenantHeader, host) {
    const claimsError = checkAppClaims(payload)
    if (claimsError) return failure(claimsError, rateLimitMax)
    const tenant = resolveTenant(payload.tenant_id, tenantHeader, host)
    if (tenant.code) return failure(tenant.code, rateLimitMax)
    const quota = limiter.take(`${payload.sub}:${tenant.tenantId ?? ''}`)
    if (!quota.allowed) return failure('rate_limited', rateLimitMax, quota.retryAfterMs)
    return success(payload, tenant, quota.remaining, rateLimitMax)
  }
}

// `verify(token)` returns the payload or throws; `codeOf(error)` maps its error to our code.
function createChain({ verify, codeOf, rateLimitMax, rateLimitRefill }) {
  const completeChain = createChainTail({ rateLimitMax, rateLimitRefill })
  return function authenticate(authorization, tenantHeader, host) {
    const bearer = extractBearer(authorization)
    if (bearer.code) return failure(bearer.code, rateLimitMax)
    let payload
    try {
      payload = verify(bearer.token)
    } catch (error) {
      return failure(codeOf(error), rateLimitMax)
    }
    return completeChain(payload, tenantHeader, host)
  }
}

module.exports = { createChain, createChainTail, checkAppClaims, extractBearer, failure }
