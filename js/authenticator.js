'use strict'

// The pure-JS Authenticator: the same six steps, config, methods and AuthResult as the native
// class (src/authenticator.rs, src/binding/*.rs), on node:crypto (HMAC-SHA256, randomUUID) and a
// Map token bucket. The fallback without a binary, the benchmark baseline, and shadow mode's
// other side.

const { randomUUID } = require('#node/crypto')
const { performance } = globalThis
const { createPublicKey, createSecretKey } = require('#node/crypto')
const { readSettings, checkSigningKid, fingerprint } = require('./config')
const { extractBearer, isB64token } = require('./bearer')
const { ClaimRules, signedWith, decodeKnownGood, grantedScopes } = require('./jwt')
const { VerifiedCache, digestOf, DEFAULT_CAPACITY } = require('./verified-cache')
const { IntrospectionCache, isJwtShaped, MAX_CLAIMS_BYTES } = require('./introspection')
const { parseClaims } = require('./jwt/claims')
const { Hs256Key } = require('./jwt/key')
const { KeySet } = require('./jwt/key-set')
const { ALGS, normalizeKeys } = require('../base/keys/normalize')
const { signToken } = require('./issue')
const { TenantRules } = require('./tenant')
const { IssuerKeys } = require('./issuers')
const { asciiLower } = require('./config')
const { RateLimiter, identityKey, monotonicNanos } = require('./rate-limit')
const { randomSeeds, seedsFromSecret } = require('./rate-limit/debt-sketch')
const { LeaseTable, MAX_LEASE } = require('./rate-limit/lease')
const { Revocations, LIMIT_CODE } = require('./revocation')
const { CertificateBinding, THUMBPRINT_LEN, bindingOf, checkBinding } = require('./cert-binding')
const { Metrics } = require('./metrics')
const { dpopScheme, readProof, proofAlgs } = require('./dpop')
const { ReplayCache } = require('./dpop/replay')
// An AuthResult's dpopReplayKey, as it is written (src/dpop/replay.rs parse_replay_key).
const REPLAY_KEY = /^[0-9a-f]{64}$/
const { NonceKey } = require('./dpop/nonce')
const { splitStore, attachStore, STORE_SEAM, revocationWriter } = require('../base/store-seam')
const { ENGINE_CLOCK } = require('../base/engine-clock')
const { warnDeprecated, renamedName } = require('../base/deprecation')

// Bounds of the store-facing methods (src/rate_limit/lease.rs, src/binding/store_seam.rs).
const { LIMITS, message } = require('../contract')
const MAX_LEASE_KEYS = LIMITS.maxLeaseKeys
const MAX_GRANT = LIMITS.maxGrant
const MAX_GRANT_KEY_BYTES = LIMITS.maxGrantKeyBytes
// The longest a signature waits for the clock to pass a subject revocation's cut-off (at most
// 2 ms ahead); past it the token takes the cut-off as its iat (src/authenticator.rs).
const CUTOFF_WAIT_MS = 5
const { TABLE, Failure, fail, typeError, rangeError, noRefreshSecret, noAccessSecret, sharedKeys } = require('../base/error')
const { resultTemplates, verificationTemplates, checkKnownOptions } = require('../base/schema')

// What both engines read of each header argument (contract/limits.json says why).
const { authorizationSlack: AUTHORIZATION_SLACK, tenantHeaderCap: TENANT_HEADER_CAP, hostCap: HOST_CAP } = LIMITS

/** Settings turned into keys, rules and a limiter once; shared by equal one-shot configs. */
class Core {
  constructor(settings) {
    this.settings = settings
    // Replaced whole by setKeys: a request reads this once, so it sees one set, never a mix.
    if (settings.signingKey === null) {
      // With trusted issuers (below) the one set stays empty.
      this.accessKeys =
        settings.keys !== null ? new KeySet(settings.keys, 0) : settings.accessSecret === null ? new KeySet([], 0) : KeySet.hs256(settings.accessSecret)
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
    // Refresh tokens (src/refresh_key.rs): refreshSecret when given (explicit HMAC wins: no
    // holder of the public JWKS can verify them), else signingKey, checked against its public
    // half alone, never the other access keys (an outside token claiming type refresh fails).
    this.refreshKey = null
    this.refreshKeys = null
    if (settings.refreshSecret) {
      this.refreshKey = new Hs256Key(settings.refreshSecret)
      this.refreshKeys = KeySet.hs256(settings.refreshSecret)
    } else if (this.signingEntry !== null) {
      this.refreshKey = settings.signingKey
      this.refreshKeys = new KeySet([this.signingEntry], 0)
    }
    // Access tokens verified before (js/verified-cache.js): on by default for key sets with an
    // asymmetric key, for HMAC-only sets only when its size is given.
    const cacheSize = settings.verifiedTokenCacheMaxEntries
    this.cache = cacheSize === 0 ? null : new VerifiedCache(cacheSize === null ? DEFAULT_CAPACITY : cacheSize)
    this.cacheHmac = cacheSize !== null
    // Answers of the introspection endpoint for opaque tokens (js/introspection.js); null when off.
    this.introspection = settings.introspectionCacheMaxEntries === 0 ? null : new IntrospectionCache(settings.introspectionCacheMaxEntries, settings.introspectionCacheMaxBytes)
    this.accessRules = new ClaimRules(settings, 'access')
    // The trusted-issuer registry (js/issuers.js), null when not configured: the top-level key
    // set then stays empty, and each issuer's set is replaced by setKeys(keys, { issuer }).
    this.issuerKeys = null
    this.issuerTenants = false
    if (settings.trustedIssuers !== null) {
      // An issuer's own audiences replace the config's; the issuer was chosen by its own iss.
      const rulesOf = (audiences) => new ClaimRules({ ...settings, issuers: [], audiences: audiences === null ? settings.audiences : audiences }, 'access')
      this.issuerKeys = IssuerKeys.create(settings.trustedIssuers, rulesOf)
      this.issuerTenants = settings.trustedIssuers.some((i) => i.tenant !== null)
    }
    // DPoP proofs seen inside their window (js/dpop/replay.js); null when dpop is off.
    this.dpopReplay = settings.dpop ? new ReplayCache(settings.dpopMaxReplayEntries) : null
    // DPoP server nonces (js/dpop/nonce.js); null without dpopNonceSecret.
    this.dpopNonces = settings.dpopNonceSecret === null ? null : new NonceKey(settings.dpopNonceSecret, settings.dpopNonceLifetimeSec)
    // The algorithms a DPoP proof may use (dpopAlgorithms, checked asymmetric by js/config.js).
    this.dpopAlgs = proofAlgs(settings.dpopAlgorithms)
    this.refreshRules = new ClaimRules(settings, 'refresh')
    this.tenantRules = new TenantRules(settings.baseDomain, settings.enforceTenantMatch)
    this.certificateBinding = bindingOf(settings)
    this.limiter =
      settings.rateLimitMax > 0
        ? new RateLimiter(settings.rateLimitMax, settings.rateLimitRefillPerSec, settings.rateLimitMaxKeys, sketchSeeds(settings))
        : null
    this.authorizationCap = settings.maxTokenBytes + AUTHORIZATION_SLACK
    // Leases of a shared limit once a store is attached (js/rate-limit/lease.js); null until then.
    this.leases = null
    // A subject entry outlives every token issued before its cut-off (src/authenticator.rs).
    const retentionSec = Math.max(settings.accessTtlSec, settings.refreshTtlSec) + settings.clockToleranceSec
    this.revocations = new Revocations(settings.maxRevocations, settings.clockToleranceSec, retentionSec)
    this.defaultIssuer = settings.issuers.length > 0 ? settings.issuers[0] : ''
    // Counters of the calls and their verdicts, read by metrics() (js/metrics.js).
    this.metrics = new Metrics()
  }

  /** Runs a revocation, counting one refused at the maxRevocations bound (src/authenticator.rs). */
  revoke(run) {
    try {
      run()
    } catch (err) {
      if (err !== null && typeof err === 'object' && err.code === LIMIT_CODE) this.metrics.revocationsRefused++
      throw err
    }
  }

  /** Whole milliseconds since the epoch, or the fixed test clock's (src/authenticator.rs `now_ms`). */
  nowMs() {
    const fixed = this.settings.clockTimestamp
    return fixed === null ? Date.now() : Math.floor(fixed * 1000)
  }

  /** Seconds since the epoch, whole, or the fixed test clock. */
  now() {
    const fixed = this.settings.clockTimestamp
    return fixed === null ? Math.floor(Date.now() / 1000) : fixed
  }

  authenticate(authorization, tenantHeader, host, sender) {
    const a = readHeaderArg(authorization, 'authorization', this.authorizationCap)
    const t = readHeaderArg(tenantHeader, 'tenantHeader', TENANT_HEADER_CAP)
    const h = readHeaderArg(host, 'host', HOST_CAP)
    // Read only when certificate-bound tokens or DPoP are checked (src/binding/sender.rs):
    // nothing to pay otherwise.
    const certificate = this.certificateBinding !== CertificateBinding.OFF
    const s = !certificate && this.dpopReplay === null ? NO_SENDER : readSender(sender, certificate, this.dpopReplay !== null)
    const requestId = randomUUID()
    const limit = this.limiter === null ? undefined : this.settings.rateLimitMax
    const metrics = this.metrics
    const start = metrics.timing ? performance.now() : 0
    const outcome = this.runChain(a, t, h, s)
    const failed = outcome instanceof Failure
    metrics.record(failed ? outcome.code : undefined, !failed && outcome.remaining !== undefined, metrics.timing ? (performance.now() - start) * 1e6 : undefined)
    if (failed) return failureResult(outcome, requestId, limit)
    const result = { ...SUCCESS }
    result.userId = outcome.userId
    result.email = outcome.email
    result.role = outcome.role
    result.tenantId = outcome.tenant.id
    result.tenantSource = outcome.tenant.source
    result.scope = outcome.scope
    result.requestId = requestId
    result.rateLimitRemaining = outcome.remaining
    // An identity without a bucket (a client-credentials token) gets no limit, so no RateLimit headers.
    result.rateLimitLimit = outcome.remaining === undefined ? undefined : limit
    result.retryAfterMs = 0
    // A DPoP request: what a replay store shared across processes records (lib/http/dpop.js).
    if (outcome.dpopReplay !== null) {
      result.dpopReplayKey = outcome.dpopReplay.replayKey
      result.dpopReplayUntilSec = outcome.dpopReplay.expiresAt
    }
    return result
  }

  runChain(authorization, tenantHeader, host, sender) {
    const dpopToken = this.dpopReplay === null ? undefined : dpopScheme(authorization)
    // One clock read per request, as the native chain's (src/authenticator.rs `run_chain`): a
    // second ticking between the proof's window check and the replay cache must not let the
    // cache forget the proof it is asked about.
    const now = this.now()
    let token
    let proof = null
    if (dpopToken === undefined) {
      token = extractBearer(authorization, this.settings.maxTokenBytes)
      if (token instanceof Failure) return token
    } else {
      // The same checks as a Bearer token's, before the proof's claims; its signature waits
      // for the token (src/authenticator.rs).
      token = extractBearer(`Bearer ${dpopToken}`, this.settings.maxTokenBytes)
      if (token instanceof Failure) return token
      proof = readProof(sender, now, this.settings.dpopIatWindowSec, this.dpopAlgs, this.dpopNonces)
      if (proof instanceof Failure) return proof
    }
    let claims
    if (this.introspection !== null && (this.settings.introspectJwts || !isJwtShaped(token))) {
      // An opaque token: what its issuer's introspection endpoint said of it.
      claims = this.introspected(token, now)
      if (claims instanceof Failure) return claims
    } else {
      claims = this.verifyAccess(token, now)
      if (claims instanceof Failure) return this.explain('access', token, claims)
    }
    // RFC 9449 §7.1: a bound token needs the proof of its key; no downgrade to Bearer. The
    // cheap checks first (ath, the key's thumbprint), the proof's signature last.
    if (proof === null) {
      if (claims.cnf_jkt !== undefined) return fail('dpop_bound_token_as_bearer')
    } else {
      const refused = proof.checkAth(token)
      if (refused !== undefined) return refused
      if (typeof claims.cnf_jkt !== 'string' || claims.cnf_jkt !== proof.thumbprint) return fail('dpop_key_mismatch')
      const forged = proof.checkSignature()
      if (forged !== undefined) return forged
    }
    const revoked = this.revocations.check(claims)
    if (revoked !== undefined) return fail(revoked)
    const unbound = checkBinding(this.certificateBinding, claims.cnf, sender.clientCertThumbprint)
    if (unbound !== undefined) return fail(unbound)
    // The tenant of the trusted issuer (src/authenticator.rs): it vouches for it, so a token
    // naming another one is refused.
    const issuerTenant = this.issuerTenants ? this.issuerKeys.tenantOf(claims) : undefined
    if (issuerTenant !== undefined && typeof claims.tenant_id === 'string' && claims.tenant_id !== '' && asciiLower(claims.tenant_id) !== asciiLower(issuerTenant)) {
      return fail('tenant_mismatch')
    }
    let tenant = this.tenantRules.resolve(issuerTenant === undefined ? claims.tenant_id : issuerTenant, tenantHeader, host)
    if (tenant instanceof Failure) return tenant
    if (issuerTenant !== undefined && tenant.source === 'token') tenant = { id: issuerTenant, source: 'issuer' }
    const userId = claims.sub === undefined ? '' : claims.sub
    let remaining
    // The bucket key (js/rate-limit.js identityKey, docs/rate-limiting.md): what the signature
    // vouches for, tenant claim and subject; none for a client-credentials token unless
    // rateLimitClientCredentials.
    const key =
      this.limiter === null
        ? undefined
        : identityKey(issuerTenant !== undefined ? issuerTenant : typeof claims.tenant_id === 'string' ? claims.tenant_id : '', userId, claims.client_id, this.settings.rateLimitClientCredentials)
    if (key !== undefined) {
      const decision = this.leases === null ? this.limiter.take(key) : this.leases.take(key, monotonicNanos())
      if (decision === null) return fail('rate_limit_pending')
      if (!decision.allowed) return new Failure('rate_limited', decision.retryAfterMs)
      remaining = decision.remaining
    }
    // State is written after the decision (src/authenticator.rs): the proof takes room only now
    // that every other check admitted the request.
    if (proof !== null) {
      const admission = this.dpopReplay.admit(proof.replayKey, proof.expiresAt, now)
      if (admission === 'replayed') return fail('dpop_proof_replayed')
      if (admission === 'full') return fail('dpop_replay_cache_full')
    }
    return { userId, email: claims.email, role: claims.role, tenant, scope: grantedScopes(claims), remaining, dpopReplay: proof }
  }

  /**
   * The claims held for an opaque token, checked as a verified JWT's are (src/authenticator.rs
   * `introspected`): introspection_required when none are held, token_inactive for an inactive one.
   */
  introspected(token, now) {
    const found = this.introspection.lookup(digestOf(token), now)
    if (found === undefined) return fail('introspection_required')
    if (found === null) return fail('token_inactive')
    const claims = parseClaims(found)
    if (claims === null) return fail('malformed_token')
    const rules = this.accessRules.rulesFor(this.issuerKeys === null ? this.accessKeys : this.issuerKeys, claims)
    return rules === null ? fail('untrusted_issuer') : rules.validate(claims, now)
  }

  /** src/authenticator.rs `admit_introspection`: the checks in its order, then the cache's verdict. */
  admitIntrospection(token, claimsJson, until) {
    if (this.introspection === null) throw typeError(message('introspectionOff'))
    if (typeof token !== 'string' || token === '' || token.length > this.settings.maxTokenBytes || Buffer.byteLength(token) > this.settings.maxTokenBytes) {
      throw typeError(message('introspectionToken'))
    }
    let claims = null
    if (claimsJson !== undefined && claimsJson !== null) {
      claims = typeof claimsJson === 'string' && claimsJson.length <= MAX_CLAIMS_BYTES ? Buffer.from(claimsJson, 'utf8') : null
      if (claims === null || claims.length > MAX_CLAIMS_BYTES || claims[0] !== 0x7b || parseClaims(claims) === null) throw typeError(message('introspectionClaims'))
    }
    if (typeof until !== 'number' || !Number.isFinite(until)) throw typeError(message('introspectionUntil'))
    return this.introspection.admit(digestOf(token), claims, until)
  }

  /** Access-token verification through the cache when it serves the key set (src/authenticator.rs `verify_access`). */
  verifyAccess(token, now) {
    const keys = this.issuerKeys === null ? this.accessKeys : this.issuerKeys
    const cache = this.cache
    if (cache === null || (keys.allHmac && !this.cacheHmac)) return this.accessRules.verify(token, keys, now)
    const digest = digestOf(token)
    if (cache.hit(digest, keys.generation, now)) {
      // Known good under this key set: the signature is skipped, never the claim checks.
      const claims = decodeKnownGood(token)
      if (claims instanceof Failure) return claims
      const rules = this.accessRules.rulesFor(keys, claims)
      return rules === null ? fail('untrusted_issuer') : rules.validate(claims, now)
    }
    const claims = this.accessRules.verify(token, keys, now)
    // Not even a b64token: not a lookup (src/jwt/verify.rs `verify_cached`; authenticate refused it already).
    if (!(claims instanceof Failure && claims.code === 'malformed_token') || isB64token(token)) cache.countMiss()
    // The memo holds the key that just verified it (js/jwt.js): an HMAC check costs less than
    // the digest, so HMAC tokens are remembered only when the cache was asked for by size.
    if (!(claims instanceof Failure) && (this.cacheHmac || !this.accessRules.acceptedKey.isHmac)) {
      cache.insert(digest, keys.generation, claims.exp)
    }
    return claims
  }

  verify(token, kind) {
    if (typeof token !== 'string') throw typeError(message('mustBeString', { name: 'token' }))
    let key = this.accessKeys
    let rules = this.accessRules
    if (kind === 'refresh') {
      if (this.refreshKeys === null) throw noRefreshSecret('verifyRefreshToken')
      key = this.refreshKeys
      rules = this.refreshRules
    }
    let claims =
      Buffer.byteLength(token) > this.settings.maxTokenBytes
        ? new Failure('token_too_large')
        : this.explain(kind, token, kind === 'access' ? this.verifyAccess(token, this.now()) : rules.verify(token, key, this.now()))
    if (!(claims instanceof Failure)) claims = this.judgeWithoutSender(claims, kind)
    // Every key always present (undefined where it does not apply), in contract/results.json's order.
    if (claims instanceof Failure) {
      const { status, message } = TABLE[claims.code]
      const r = { ...REFUSED }
      r.error = message
      r.errorCode = claims.code
      r.errorStatus = status
      return r
    }
    const text = (v) => (typeof v === 'string' ? v : undefined)
    const r = { ...VERIFIED }
    r.userId = text(claims.sub)
    r.email = text(claims.email)
    r.role = text(claims.role)
    r.tenantId = text(claims.tenant_id)
    r.jti = text(claims.jti)
    r.expiresAtSec = typeof claims.exp === 'number' ? claims.exp : undefined
    return r
  }

  /**
   * The checks after the signature for a token with no request (src/authenticator.rs
   * `verify`): an access token as `authenticate` judges it sent as Bearer without a client
   * certificate, so a sender-constrained token fails closed.
   */
  judgeWithoutSender(claims, kind) {
    const access = kind === 'access'
    if (access && claims.cnf_jkt !== undefined) return fail('dpop_bound_token_as_bearer')
    const revoked = this.revocations.check(claims)
    if (revoked !== undefined) return fail(revoked)
    if (access) {
      const unbound = checkBinding(this.certificateBinding, claims.cnf, undefined)
      if (unbound !== undefined) return fail(unbound)
    }
    return claims
  }

  /**
   * A failure of `kind`'s check made precise (src/authenticator.rs `explain`): a token that
   * `kind`'s keys refuse (no key for its kid or alg, or a bad signature) but the other kind's
   * keys verify is one of our tokens of the wrong type, not a forgery. Only runs after the
   * check failed, and only turns one refusal into another.
   */
  explain(kind, token, verdict) {
    if (!(verdict instanceof Failure) || !EXPLAINED.has(verdict.code)) return verdict
    const other = kind === 'access' ? this.refreshKeys : this.issuerKeys === null ? this.accessKeys : this.issuerKeys
    return other !== null && signedWith(token, other) ? fail('wrong_token_type') : verdict
  }

  /** Replaces the access-token keys at once (src/authenticator.rs `set_keys`); the new generation. */
  setKeys(keys, options) {
    const entries = normalizeKeys(keys, { label: 'keys', allowShortSecret: this.settings.allowShortSecret })
    const issuer = readSetKeysIssuer(options)
    if (issuer !== undefined) {
      if (this.issuerKeys === null) throw typeError('options.issuer needs an authenticator configured with issuers')
      const next = this.issuerKeys.replaced(issuer, entries)
      if (next === null) throw rangeError(`options.issuer ${JSON.stringify(issuer)} is not a configured issuer`)
      this.issuerKeys = next
      if (this.cache !== null) this.cache.clear()
      return next.generation
    }
    if (this.issuerKeys !== null) throw typeError('with issuers, setKeys takes { issuer } naming whose keys these are')
    if (this.signingEntry !== null) {
      checkSigningKid(entries, this.signingEntry.kid, 'keys')
      entries.push(this.signingEntry)
    }
    this.accessKeys = new KeySet(entries, this.accessKeys.generation + 1)
    if (this.cache !== null) this.cache.clear()
    return this.accessKeys.generation
  }

  sign(claims, kind) {
    let key = this.accessSigningKey
    if (kind === 'access' && key === null) throw noAccessSecret()
    if (kind === 'refresh') {
      if (this.refreshKey === null) throw noRefreshSecret('signRefreshToken')
      key = this.refreshKey
    }
    return signToken(this.settings, key, claims, kind, this.issueTime())
  }

  /**
   * The iat of a token signed now, to the millisecond; right after a subject revocation it waits
   * for the clock to reach the cut-off, at most CUTOFF_WAIT_MS (src/authenticator.rs `issue_time`).
   */
  issueTime() {
    const cutoff = this.revocations.recentCutoff
    let now = this.nowMs() / 1000
    if (cutoff > now && this.settings.clockTimestamp === null) {
      const deadline = performance.now() + CUTOFF_WAIT_MS
      while (now < cutoff && performance.now() < deadline) now = Date.now() / 1000
    }
    return this.revocations.issuedAt(now)
  }
}

/** setKeys's `options.issuer` (src/binding/authenticator.rs `read_set_keys_issuer`): undefined when not given. */
function readSetKeysIssuer(options) {
  if (options === undefined || options === null) return undefined
  if (typeof options !== 'object') throw typeError('options must be an object { issuer? }')
  // `{ isuer }` must not replace the config's keys in place of one issuer's (src/binding/authenticator.rs).
  checkKnownOptions(options, 'SetKeysOptions')
  const { issuer } = options
  if (issuer === undefined || issuer === null) return undefined
  if (typeof issuer !== 'string') throw typeError('options.issuer must be a string')
  return issuer
}

// The refusals of a key set that `explain` looks into: the token's key or signature.
const EXPLAINED = new Set(['invalid_signature', 'unknown_key', 'unsupported_algorithm'])

// Every AuthResult starts as a copy of one of these: all fields, in contract/options.json's order.
const { success: SUCCESS, failure: FAILURE } = resultTemplates()
const { success: VERIFIED, failure: REFUSED } = verificationTemplates()

/**
 * The limiter's sketch seeds, as `sketch_seeds` in src/authenticator.rs: derived from the first
 * HMAC secret of the config (`accessSecret`, else the first HMAC key of `keys`), random when the
 * config holds no secret.
 */
function sketchSeeds(settings) {
  if (settings.accessSecret !== null) return seedsFromSecret(settings.accessSecret)
  const hmac = settings.keys === null ? undefined : settings.keys.find((k) => ALGS[k.alg].family === 'hmac')
  return hmac === undefined ? randomSeeds() : seedsFromSecret(hmac.key)
}

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
const NO_SENDER = Object.freeze({ dpop: undefined, method: undefined, url: undefined })

/** authenticate's 4th argument, each field read as a header argument (src/binding/sender.rs). */
function readSender(sender, certificate, dpop) {
  if (sender === undefined || sender === null) return NO_SENDER
  if (typeof sender !== 'object') throw typeError(message('senderNotContext'))
  // In this order in both engines (src/binding/sender.rs): the first bad member names the TypeError.
  let clientCertThumbprint
  if (certificate) {
    // Cut a few bytes past a thumbprint's length, as native reads it; empty is no certificate.
    const value = readHeaderArg(sender.clientCertThumbprint, 'sender.clientCertThumbprint', THUMBPRINT_LEN + 4)
    clientCertThumbprint = value === '' ? undefined : value
  }
  if (!dpop) return { clientCertThumbprint, dpop: undefined, method: undefined, url: undefined }
  return {
    clientCertThumbprint,
    dpop: readHeaderArg(sender.dpop, 'sender.dpop', LIMITS.dpopProofCap + 4),
    method: readHeaderArg(sender.method, 'sender.method', LIMITS.dpopUrlCap + 4),
    url: readHeaderArg(sender.url, 'sender.url', LIMITS.dpopUrlCap + 4),
  }
}

function readHeaderArg(value, name, cap) {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'string') throw typeError(message('mustBeOptionalString', { name }))
  if (value.length * 3 <= cap) return value
  const bytes = Buffer.from(value, 'utf8')
  if (bytes.length <= cap) return value
  let end = cap
  while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--
  return bytes.toString('utf8', 0, end)
}

// The table behind Authenticator.shared and authenticateRequest (js/one-shot.js): cores kept by
// their settings, so an equal config reuses prepared keys, rate-limit buckets and revocations
// (src/binding/one_shot.rs). It lives beside the Core it holds, so js/one-shot.js requires this
// module and this module requires nothing of it.
//
// The table is never emptied, in whole or in part: it holds security state (an exhausted
// bucket, a revoked token) that no other place keeps, and forgetting it would let 64 other
// configs, which a client may be able to influence (per-tenant audiences), reset a limit or
// un-revoke a token. It is bounded instead: past MAX_SHARED_CONFIGS distinct settings a new one
// is refused (ERR_AUTH_SHIELD_CONFIG_LIMIT); the configs already kept go on working.

// Distinct settings kept (a process normally has one): each holds its own buckets, debt
// sketch and revocations, so the bound keeps memory bounded (docs/api.md).
const MAX_SHARED_CONFIGS = LIMITS.maxSharedConfigs
const sharedCores = new Map()

/** The refusal of one more distinct config (contract/messages.json `sharedConfigLimit`). */
function configLimit() {
  const err = new RangeError(message('sharedConfigLimit', { max: MAX_SHARED_CONFIGS }))
  err.code = 'ERR_AUTH_SHIELD_CONFIG_LIMIT'
  return err
}

/** The core shared by every caller with settings equal to `config`'s (validated here). */
function sharedCore(config) {
  const settings = readSettings(config)
  const key = fingerprint(settings)
  let core = sharedCores.get(key)
  if (core === undefined) {
    if (sharedCores.size >= MAX_SHARED_CONFIGS) throw configLimit()
    core = new Core(settings)
    sharedCores.set(key, core)
  }
  return core
}

// The second constructor argument of Authenticator.shared: a core from the shared table
// instead of a config. Module-private, so no caller can hand in a core of its own.
const SHARED_CORE = Symbol('auth-shield.shared-core')
// An authenticator's core, for the store seam below (set in the class's static block).
let coreOf

/** Authenticates requests with settings validated and keys prepared once, at construction. */
class Authenticator {
  #core
  // Made by `shared`: its keys are its config's, setKeys refuses (src/binding/authenticator.rs).
  #shared = false

  constructor(config, sharedCore) {
    if (sharedCore !== undefined && sharedCore.tag === SHARED_CORE) {
      this.#core = sharedCore.core
      this.#shared = true
      return
    }
    // `store` (docs/scale-out.md): a JS object, checked and taken out before the settings are
    // read, attached once the authenticator exists, as native.js does (base/store-seam.js).
    const { config: settings, store } = splitStore(config)
    this.#core = new Core(readSettings(settings))
    if (store !== undefined) attachStore(this, store)
  }

  /**
   * An authenticator sharing keys, rate-limit buckets and revocations with every other one
   * made by `shared` (or by `authenticateRequest`) from equal settings. At most 64 distinct
   * settings are kept, none ever forgotten: one more throws ERR_AUTH_SHIELD_CONFIG_LIMIT.
   */
  static shared(config) {
    return new Authenticator(undefined, { tag: SHARED_CORE, core: sharedCore(config) })
  }

  /**
   * Replaces the access-token keys at once, with the constructor's checks; returns the new
   * keySetGeneration.
   */
  setKeys(keys, options) {
    if (this.#shared) throw sharedKeys()
    return this.#core.setKeys(keys, options)
  }

  /**
   * Holds what the introspection endpoint answered for the opaque `token` (RFC 7662) until
   * `cacheUntilSec`: `claimsJson` the answer mapped to claims, or null for an inactive token.
   * False when the cache's bounds refused it (src/binding/authenticator.rs says the rest).
   */
  admitIntrospection(token, claimsJson, cacheUntilSec) {
    return this.#core.admitIntrospection(token, claimsJson, cacheUntilSec)
  }

  /** The claims JSON held for the active opaque `token` now, or null (src/binding/authenticator.rs). */
  introspectionClaims(token) {
    const cache = this.#core.introspection
    if (cache === null || typeof token !== 'string' || Buffer.byteLength(token) > this.#core.settings.maxTokenBytes) return null
    const found = cache.lookup(digestOf(token), this.#core.now())
    return found === undefined || found === null ? null : found.toString('utf8')
  }

  /** Answers held by the introspection cache (at most introspectionCacheMaxEntries). */
  get introspectionCacheEntries() {
    const cache = this.#core.introspection
    return cache === null ? 0 : cache.size
  }

  /** Tokens held by the verified-token cache (at most verifiedTokenCacheMaxEntries). */
  get verifiedTokenCacheEntries() {
    return this.#core.cache === null ? 0 : this.#core.cache.size
  }

  /**
   * The counters of this authenticator, read now (docs/observability.md): verdicts by error
   * code, rate-limit decisions, verified-token cache lookups, revocations, call durations.
   */
  metrics() {
    const core = this.#core
    return core.metrics.snapshot(core.cache, core.revocations, core.now())
  }

  /** Times every later authenticate call into metrics().duration, or stops (off by default). */
  setDurationMetrics(enabled) {
    if (typeof enabled !== 'boolean') throw typeError(message('mustBeBoolean', { name: 'enabled' }))
    this.#core.metrics.timing = enabled
  }

  /** Counts key-set replacements: 0 after construction, +1 per setKeys. */
  get keySetGeneration() {
    const core = this.#core
    return core.issuerKeys === null ? core.accessKeys.generation : core.issuerKeys.generation
  }

  /** `{ keys }`: the public JWK of each asymmetric verification key (never an HMAC secret). */
  jwks() {
    return this.#core.accessKeys.jwks()
  }

  /** Runs the whole chain for one request; nothing a client sends makes it throw. */
  authenticate(authorization, tenantHeader, host, sender) {
    return this.#core.authenticate(authorization, tenantHeader, host, sender)
  }

  /** The DPoP nonce to hand out now (DPoP-Nonce, RFC 9449 §8), or undefined without dpopNonceSecret. */
  dpopNonce() {
    const core = this.#core
    return core.dpopNonces === null ? undefined : core.dpopNonces.current(core.now())
  }

  /** Seconds a DPoP proof's iat may be from now, either side (dpopIatWindowSec). */
  get dpopIatWindowSec() {
    return this.#core.settings.dpopIatWindowSec
  }

  /** The algorithms a DPoP proof may use (dpopAlgorithms, else the default list), in the challenge's algs order. */
  get dpopAlgorithms() {
    return [...this.#core.dpopAlgs]
  }

  /**
   * Forgets the DPoP proof of a request that a later check refused after authenticate admitted
   * it (replayKey: the result's dpopReplayKey), as src/authenticator.rs release_dpop_proof: a
   * replay of that proof meets the same refusal (same token, same htm/htu). True if held.
   */
  releaseDpopProof(replayKey) {
    if (typeof replayKey !== 'string' || !REPLAY_KEY.test(replayKey)) throw typeError(message('replayKeyMalformed'))
    const cache = this.#core.dpopReplay
    return cache !== null && cache.release(replayKey)
  }

  /** DPoP proofs held by the replay cache (at most dpopMaxReplayEntries; 0 without dpop). */
  get dpopReplayEntries() {
    return this.#core.dpopReplay === null ? 0 : this.#core.dpopReplay.size
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

  /**
   * Refuses the token `(options.iss, jti)` until `expiresAtSec` (docs/revocation.md); with a
   * RevocationFeed attached, through the feed (base/store-seam.js revocationWriter).
   */
  revokeToken(jti, expiresAtSec, options) {
    const writer = revocationWriter(this)
    if (writer !== undefined) return writer.revokeToken(jti, expiresAtSec, options)
    const core = this.#core
    core.revoke(() => core.revocations.revokeToken(jti, expiresAtSec, options, core.defaultIssuer, core.now()))
  }

  /**
   * Refuses the tokens of `sub` issued before `options.issuedBeforeSec`; by default every token issued up
   * to and including the current millisecond (docs/revocation.md); as revokeToken.
   */
  revokeSubject(sub, options) {
    const writer = revocationWriter(this)
    if (writer !== undefined) return writer.revokeSubject(sub, options)
    const core = this.#core
    core.revoke(() => core.revocations.revokeSubject(sub, options, core.defaultIssuer, core.nowMs()))
  }

  /** Whether authenticate checks certificate-bound tokens (the adapters read the client certificate only then). */
  get certificateBoundTokens() {
    return this.#core.certificateBinding !== CertificateBinding.OFF
  }

  get revocationCount() {
    return this.#core.revocations.count(this.#core.now())
  }

  get revocationUnavailable() {
    return this.#core.revocations.unavailable
  }

  /** The scopes every access token must grant (`requiredScope`); empty when not checked. */
  get requiredScope() {
    return this.#core.settings.requiredScopes.slice()
  }

  /** The acr values a step-up accepts (`requiredAcr`); empty when not checked. */
  get requiredAcr() {
    return this.#core.settings.requiredAcrs.slice()
  }

  /** The most seconds since the user authenticated (`maxAuthAgeSec`); null when not checked. */
  get maxAuthAgeSec() {
    return this.#core.settings.maxAuthAgeSec
  }

  get rateLimitMax() {
    return this.#core.settings.rateLimitMax
  }

  get rateLimitRefillPerSec() {
    return this.#core.settings.rateLimitRefillPerSec
  }

  /** @deprecated The old name of `rateLimitRefillPerSec` (base/deprecation.js). */
  get rateLimitRefill() {
    warnDeprecated(renamedName('Authenticator', 'rateLimitRefill'), 'authenticator')
    return this.#core.settings.rateLimitRefillPerSec
  }

  get accessTtlSec() {
    return this.#core.settings.accessTtlSec
  }

  get refreshTtlSec() {
    return this.#core.settings.refreshTtlSec
  }

  /** Tells the middleware (lib/http/engine.js) this is the JS engine, without it loading this module. */
  get [Symbol.for('auth-shield.js-engine')]() {
    return true
  }

  get rateLimitBuckets() {
    return this.#core.limiter === null ? 0 : this.#core.limiter.size
  }

  /** The store-facing functions (base/store-seam.js STORE_SEAM), as the binding exports them. */
  get [STORE_SEAM]() {
    return JS_SEAM
  }

  /** The fixed clock of the config (base/engine-clock.js), or null. */
  get [ENGINE_CLOCK]() {
    return this.#core.settings.clockTimestamp
  }

  static {
    coreOf = (authenticator) => authenticator.#core
  }
}

// The store-facing side (src/binding/store_seam.rs, docs/scale-out.md): functions taking the
// authenticator, kept off the class's members.
const JS_SEAM = Object.freeze({ enableSharedLimit, takeLeaseRequests, grantLease, sharedLimitKeys, setRevocationUnavailable })

/** Switches the rate limit to leases of a shared bucket; once per authenticator. */
function enableSharedLimit(authenticator, lease, strict, maxKeys) {
  const core = coreOf(authenticator)
  if (typeof lease !== 'number') throw typeError(message('mustBeNumber', { name: 'lease' }))
  if (typeof strict !== 'boolean') throw typeError(message('mustBeBoolean', { name: 'strict' }))
  if (typeof maxKeys !== 'number') throw typeError(message('mustBeNumber', { name: 'maxKeys' }))
  for (const [name, v, max] of [['lease', lease, MAX_LEASE], ['maxKeys', maxKeys, MAX_LEASE_KEYS]]) {
    if (!(Number.isInteger(v) && v >= 1 && v <= max)) {
      throw rangeError(message('integerOutOfRange', { name, min: 1, max, value: v }))
    }
  }
  const refuse = (message) => Object.assign(new Error(message), { code: 'ERR_AUTH_SHIELD_SHARED_LIMIT' })
  if (core.limiter === null) throw refuse(message('rateLimitOff'))
  if (core.leases !== null) throw refuse('a store is already attached to this authenticator')
  core.leases = new LeaseTable(core.settings.rateLimitMax, lease, strict, maxKeys)
}

/** The identities waiting for a lease, `[{ key, want }]`; empties the queue. */
function takeLeaseRequests(authenticator) {
  const leases = coreOf(authenticator).leases
  return leases === null ? [] : leases.drain()
}

/** The store's answer for `key` (`tokens` 0: refused, blocked for `retryAfterMs`). */
function grantLease(authenticator, key, tokens, sharedRemaining, retryAfterMs) {
  const core = coreOf(authenticator)
  if (typeof key !== 'string') throw typeError(message('mustBeString', { name: 'key' }))
  const keyBytes = key.length * 3 > MAX_GRANT_KEY_BYTES ? Buffer.byteLength(key) : 0
  if (keyBytes > MAX_GRANT_KEY_BYTES) throw rangeError(message('tooManyBytes', { name: 'key', max: MAX_GRANT_KEY_BYTES, bytes: keyBytes }))
  for (const [name, v] of [['tokens', tokens], ['sharedRemaining', sharedRemaining], ['retryAfterMs', retryAfterMs]]) {
    if (typeof v !== 'number') throw typeError(message('mustBeNumber', { name }))
  }
  for (const [name, v] of [['tokens', tokens], ['sharedRemaining', sharedRemaining]]) {
    if (!(Number.isInteger(v) && v >= 0 && v <= MAX_GRANT)) {
      throw rangeError(message('integerOutOfRange', { name, min: 0, max: MAX_GRANT, value: v }))
    }
  }
  if (!(retryAfterMs >= 0 && retryAfterMs <= LIMITS.maxRetryAfterMs)) {
    throw rangeError(message('outOfRange', { name: 'retryAfterMs', min: 0, max: LIMITS.maxRetryAfterMs, value: retryAfterMs }))
  }
  const leases = core.leases
  if (leases !== null) leases.grant(key, tokens, sharedRemaining, Math.trunc(retryAfterMs), monotonicNanos())
}

/** Identities whose leases are held (0 without a store). */
function sharedLimitKeys(authenticator) {
  const leases = coreOf(authenticator).leases
  return leases === null ? 0 : leases.size
}

/** Sets revocationUnavailable (a revocation feed past maxRevocationLagMs, onStale: 'closed'). */
function setRevocationUnavailable(authenticator, unavailable) {
  const core = coreOf(authenticator)
  if (typeof unavailable !== 'boolean') throw typeError(message('mustBeBoolean', { name: 'unavailable' }))
  core.revocations.unavailable = unavailable
}

module.exports = { Authenticator, Core, readHeaderArg, sharedCore, MAX_SHARED_CONFIGS }
