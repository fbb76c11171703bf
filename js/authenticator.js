'use strict'

// The pure-JS Authenticator: the same six steps, config, methods and AuthResult as the native
// class (src/authenticator.rs, src/binding/*.rs), on node:crypto (HMAC-SHA256, randomUUID) and a
// Map token bucket. The fallback without a binary, the benchmark baseline, and shadow mode's
// other side.

const { randomUUID } = require('node:crypto')
const { createPublicKey, createSecretKey } = require('node:crypto')
const { readSettings, checkSigningKid } = require('./config')
const { extractBearer } = require('./bearer')
const { ClaimRules, signedWith } = require('./jwt')
const { Hs256Key } = require('./hs256')
const { KeySet } = require('./key-set')
const { normalizeKeys } = require('./keys')
const { signToken } = require('./sign')
const { TenantRules } = require('./tenant')
const { RateLimiter } = require('./rate-limit')
const { TABLE, Failure, fail, typeError, noRefreshSecret, noAccessSecret } = require('./errors')
const { resultTemplates } = require('./schema')

// Room for the scheme and spaces on top of maxTokenBytes; tenant ids are at most 63 bytes and
// hosts ~260. The native binding reads no more than this of each argument, and so do we.
const AUTHORIZATION_SLACK = 1024
const TENANT_HEADER_CAP = 1024
const HOST_CAP = 1024

/** Settings turned into keys, rules and a limiter once; shared by equal one-shot configs. */
class Core {
  constructor(settings) {
    this.settings = settings
    // Replaced whole by setKeys: a request reads this once, so it sees one set, never a mix.
    if (settings.signingKey === null) {
      this.accessKeys = settings.keys === null ? KeySet.hs256(settings.accessSecret) : new KeySet(settings.keys, 0)
    }
    // Signs access tokens: signingKey, else the accessSecret shorthand.
    this.accessSigningKey = settings.accessSecret === null ? null : new Hs256Key(settings.accessSecret)
    // signingKey: its public half verifies our own tokens, beside the configured keys.
    this.signingEntry = null
    if (settings.signingKey !== null) {
      const { kid, alg, privateKey } = settings.signingKey
      this.signingEntry = normalizeKeys([{ kid, alg, publicKey: createPublicKey(privateKey) }], { label: 'config.signingKey' })[0]
      const secret = settings.accessSecret
      const entries =
        settings.keys !== null ? settings.keys : secret === null ? [] : [{ kid: undefined, alg: 'HS256', key: secret, keyObject: createSecretKey(secret), jwk: null }]
      this.accessKeys = new KeySet([...entries, this.signingEntry], 0)
      this.accessSigningKey = settings.signingKey
    }
    this.refreshKey = settings.refreshSecret ? new Hs256Key(settings.refreshSecret) : null
    this.refreshKeys = settings.refreshSecret ? KeySet.hs256(settings.refreshSecret) : null
    this.accessRules = new ClaimRules(settings, 'access')
    this.refreshRules = new ClaimRules(settings, 'refresh')
    this.tenantRules = new TenantRules(settings.baseDomain, settings.enforceTenantMatch)
    this.limiter =
      settings.rateLimitMax > 0
        ? new RateLimiter(settings.rateLimitMax, settings.rateLimitRefill, settings.rateLimitMaxKeys)
        : null
    this.authorizationCap = settings.maxTokenBytes + AUTHORIZATION_SLACK
  }

  /** Seconds since the epoch, whole, or the fixed test clock. */
  now() {
    const fixed = this.settings.clockTimestamp
    return fixed === null ? Math.floor(Date.now() / 1000) : fixed
  }

  authenticate(authorization, tenantHeader, host) {
    const a = readHeaderArg(authorization, 'authorization', this.authorizationCap)
    const t = readHeaderArg(tenantHeader, 'tenantHeader', TENANT_HEADER_CAP)
    const h = readHeaderArg(host, 'host', HOST_CAP)
    const requestId = randomUUID()
    const limit = this.limiter === null ? undefined : this.settings.rateLimitMax
    const outcome = this.runChain(a, t, h)
    if (outcome instanceof Failure) return failureResult(outcome, requestId, limit)
    const result = { ...SUCCESS }
    result.userId = outcome.userId
    result.email = outcome.email
    result.role = outcome.role
    result.tenantId = outcome.tenant.id
    result.tenantSource = outcome.tenant.source
    result.requestId = requestId
    result.rateLimitRemaining = outcome.remaining
    result.rateLimitLimit = limit
    result.retryAfterMs = 0
    return result
  }

  runChain(authorization, tenantHeader, host) {
    const token = extractBearer(authorization, this.settings.maxTokenBytes)
    if (token instanceof Failure) return token
    const claims = this.accessRules.verify(token, this.accessKeys, this.now())
    if (claims instanceof Failure) return this.explain('access', token, claims)
    const tenant = this.tenantRules.resolve(claims.tenant_id, tenantHeader, host)
    if (tenant instanceof Failure) return tenant
    const userId = claims.sub === undefined ? '' : claims.sub
    let remaining
    if (this.limiter !== null) {
      // Keyed on what the signature vouches for (docs/rate-limiting.md): the token's own
      // tenant_id claim, ':', sub. A header or Host tenant must not buy a fresh bucket; a valid
      // tenant id has no ':', so no two (claim, sub) pairs share a key.
      const claimTenant = typeof claims.tenant_id === 'string' ? claims.tenant_id : ''
      const decision = this.limiter.take(`${claimTenant}:${userId}`)
      if (!decision.allowed) return new Failure('rate_limited', decision.retryAfterMs)
      remaining = decision.remaining
    }
    return { userId, email: claims.email, role: claims.role, tenant, remaining }
  }

  verify(token, kind) {
    if (typeof token !== 'string') throw typeError('token must be a string')
    let key = this.accessKeys
    let rules = this.accessRules
    if (kind === 'refresh') {
      if (this.refreshKeys === null) throw noRefreshSecret('verifyRefreshToken')
      key = this.refreshKeys
      rules = this.refreshRules
    }
    const claims =
      Buffer.byteLength(token) > this.settings.maxTokenBytes
        ? new Failure('token_too_large')
        : this.explain(kind, token, rules.verify(token, key, this.now()))
    // Every key always present (undefined where it does not apply), in the native order.
    if (claims instanceof Failure) {
      const { status, message } = TABLE[claims.code]
      return {
        valid: false,
        userId: undefined,
        email: undefined,
        role: undefined,
        tenantId: undefined,
        jti: undefined,
        expiresAt: undefined,
        error: message,
        errorCode: claims.code,
        errorStatus: status,
      }
    }
    const text = (v) => (typeof v === 'string' ? v : undefined)
    return {
      valid: true,
      userId: text(claims.sub),
      email: text(claims.email),
      role: text(claims.role),
      tenantId: text(claims.tenant_id),
      jti: text(claims.jti),
      expiresAt: typeof claims.exp === 'number' ? claims.exp : undefined,
      error: undefined,
      errorCode: undefined,
      errorStatus: 200,
    }
  }

  /**
   * A failure of `kind`'s check made precise (src/authenticator.rs `explain`): a signature the
   * other kind's key made is one of our tokens of the wrong type, not a forgery. Only runs
   * after the signature check failed.
   */
  explain(kind, token, verdict) {
    if (!(verdict instanceof Failure) || verdict.code !== 'invalid_signature') return verdict
    const other = kind === 'access' ? this.refreshKeys : this.accessKeys
    return other !== null && signedWith(token, other) ? fail('wrong_token_type') : verdict
  }

  /** Replaces the access-token keys at once (src/authenticator.rs `set_keys`); the new generation. */
  setKeys(keys) {
    const entries = normalizeKeys(keys, { label: 'keys', allowShortSecret: this.settings.allowShortSecret })
    if (this.signingEntry !== null) {
      checkSigningKid(entries, this.signingEntry.kid, 'keys')
      entries.push(this.signingEntry)
    }
    this.accessKeys = new KeySet(entries, this.accessKeys.generation + 1)
    return this.accessKeys.generation
  }

  sign(claims, kind) {
    let key = this.accessSigningKey
    if (kind === 'access' && key === null) throw noAccessSecret()
    if (kind === 'refresh') {
      if (this.refreshKey === null) throw noRefreshSecret('signRefreshToken')
      key = this.refreshKey
    }
    return signToken(this.settings, key, claims, kind, this.now())
  }
}

// Every AuthResult starts as a copy of one of these: all fields, in js/schema.json's order.
const { success: SUCCESS, failure: FAILURE } = resultTemplates()

function failureResult(failure, requestId, limit) {
  const { status, message } = TABLE[failure.code]
  const result = { ...FAILURE }
  result.requestId = requestId
  result.rateLimitRemaining = failure.code === 'rate_limited' ? 0 : undefined
  result.rateLimitLimit = limit
  result.retryAfterMs = failure.retryAfterMs
  result.error = message
  result.errorCode = failure.code
  result.errorStatus = status
  return result
}

/**
 * A header argument: undefined for null/undefined, else a string cut to at most `cap` UTF-8
 * bytes on a character boundary (what the native binding reads of it). Anything else throws.
 */
function readHeaderArg(value, name, cap) {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw typeError(`${name} must be a string, null or undefined`)
  if (value.length * 3 <= cap) return value
  const bytes = Buffer.from(value, 'utf8')
  if (bytes.length <= cap) return value
  let end = cap
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--
  return bytes.toString('utf8', 0, end)
}

/** Authenticates requests with settings validated and keys prepared once, at construction. */
class Authenticator {
  #core

  constructor(config) {
    this.#core = new Core(readSettings(config))
  }

  /**
   * Replaces the access-token keys at once, with the constructor's checks; returns the new
   * keySetGeneration.
   */
  setKeys(keys) {
    return this.#core.setKeys(keys)
  }

  /** Counts key-set replacements: 0 after construction, +1 per setKeys. */
  get keySetGeneration() {
    return this.#core.accessKeys.generation
  }

  /** `{ keys }`: the public JWK of each asymmetric verification key (never an HMAC secret). */
  jwks() {
    return this.#core.accessKeys.jwks()
  }

  /** Runs the whole chain for one request; nothing a client sends makes it throw. */
  authenticate(authorization, tenantHeader, host) {
    return this.#core.authenticate(authorization, tenantHeader, host)
  }

  signAccessToken(claims) {
    return this.#core.sign(claims, 'access')
  }

  signRefreshToken(claims) {
    return this.#core.sign(claims, 'refresh')
  }

  verifyRefreshToken(token) {
    return this.#core.verify(token, 'refresh')
  }

  verifyAccessToken(token) {
    return this.#core.verify(token, 'access')
  }

  get rateLimitMax() {
    return this.#core.settings.rateLimitMax
  }

  get rateLimitRefill() {
    return this.#core.settings.rateLimitRefill
  }

  get accessTtlSec() {
    return this.#core.settings.accessTtlSec
  }

  get refreshTtlSec() {
    return this.#core.settings.refreshTtlSec
  }

  /** Tells the middleware (js/engine.js) this is the JS engine, without it loading this module. */
  get [Symbol.for('auth-shield.js-engine')]() {
    return true
  }

  get rateLimitBuckets() {
    return this.#core.limiter === null ? 0 : this.#core.limiter.size
  }
}

module.exports = { Authenticator, Core, readHeaderArg }
