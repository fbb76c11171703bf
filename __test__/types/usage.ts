// A CommonJS consumer (this folder has no "type": "module"): every public name
// of `auth-shield` used with its declared types. `@ts-expect-error` lines prove
// the types are precise, not `any`: each must stay an error.
import {
  Authenticator,
  authenticateRequest,
  CspBuilder,
  OtpStore,
  RateLimiter,
  type RateLimitDecision,
  generateApiKey,
  generateTotpSecret,
  hashPassword,
  hashPasswordSync,
  hotp,
  needsRehash,
  parseApiKey,
  sanitizeFilename,
  sanitizeHtml,
  timingSafeEqual,
  totp,
  totpUri,
  validateSqlInterval,
  verifyApiKey,
  verifyHotp,
  verifyPassword,
  verifyPasswordSync,
  verifyTotp,
} from 'auth-shield'
import type { AuthConfig, AuthResult, ErrorCode, ResolvedTenant, TokenClaims, TokenVerification } from 'auth-shield'
import { resolveTenant } from 'auth-shield'
import type { OtpVerifyResult, ParsedApiKey } from 'auth-shield'
import authShield = require('auth-shield/express')
import authShieldPlugin = require('auth-shield/fastify')
import * as jsEngine from 'auth-shield/js'
import helpers = require('auth-shield')
import express = require('express')
import Fastify = require('fastify')
import { createRedisStore, type RedisStore, type SharedLimitDecision } from 'auth-shield/redis'

const secret = 'a-secret-of-at-least-thirty-two-bytes!!'
const config: AuthConfig = {
  accessSecret: secret,
  refreshSecret: Buffer.from('another-secret-of-at-least-32-bytes!!'),
  issuer: ['https://issuer.example'],
  audience: 'api',
  clockToleranceSec: 0,
  rateLimitMax: 100,
  rateLimitRefillPerSec: 10,
  rateLimitMaxKeys: 100_000,
  enforceTenantMatch: false,
  baseDomain: 'example.com',
  accessTtlSec: 900,
  refreshTtlSec: 604_800,
  maxTokenBytes: 8192,
  requireTokenType: false,
  requireExpiration: true,
  requireSubject: true,
  clockTimestamp: null,
  allowShortSecret: false,
}
// @ts-expect-error unknown options are rejected at compile time too
const misspelt: AuthConfig = { accessSecret: secret, acessSecret: secret }
// @ts-expect-error accessSecret is required
const missing: AuthConfig = { issuer: 'x' }

// keys instead of accessSecret: PEM, JWK or KeyObject public keys, HMAC secrets, each bound to its alg.
const keyed: AuthConfig = {
  keys: [
    { kid: 'rsa', alg: 'RS256', publicKey: '-----BEGIN PUBLIC KEY-----\n...' },
    { alg: 'ES256', publicKey: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' } },
    { kid: 'hmac', alg: 'HS512', secret: Buffer.alloc(64) },
  ],
  verifiedTokenCacheMaxEntries: 1000,
}
// @ts-expect-error accessSecret and keys are exclusive
const bothSources: AuthConfig = { accessSecret: secret, keys: [{ alg: 'HS256', secret }] }
// @ts-expect-error ES512 is not a supported alg
const es512: AuthConfig = { keys: [{ alg: 'ES512', publicKey: 'pem' }] }
const rotating = new Authenticator(keyed)
const generation: number = rotating.setKeys([{ kid: 'ed', alg: 'EdDSA', publicKey: 'pem' }])
const served: string | undefined = rotating.jwks().keys[0]?.kid
const cachedCount: number = rotating.verifiedTokenCacheEntries + rotating.keySetGeneration
// DPoP (docs/sender-constrained.md): the config options, the 4th argument, the getters, the new codes.
const dpopAuth = new Authenticator({ ...keyed, dpop: true, dpopIatWindowSec: 30, dpopMaxReplayEntries: 1000, dpopNonceSecret: secret, dpopNonceLifetimeSec: 60 })
const dpopResult = dpopAuth.authenticate('DPoP t', undefined, undefined, { dpop: 'proof', method: 'GET', url: 'https://api.example.com/r' })
const dpopCode: ErrorCode | undefined = dpopResult.authenticated ? undefined : dpopResult.errorCode
const dpopNonce: string | undefined = dpopAuth.dpopNonce()
const dpopCounts: number = dpopAuth.dpopReplayEntries + dpopAuth.dpopIatWindowSec + new jsEngine.Authenticator(keyed).dpopReplayEntries
const nonceCode: ErrorCode = 'use_dpop_nonce'
// @ts-expect-error the sender's method is a string
dpopAuth.authenticate('DPoP t', undefined, undefined, { method: 1 })
// Trusted issuers in the engine (docs/resource-server.md): per-issuer keys, setKeys per issuer.
const trusted = new Authenticator({ issuers: [{ issuer: 'https://a.example/', keys: [{ kid: 'k', alg: 'HS256', secret }], audience: 'api', algorithms: ['HS256'], tenant: 'acme' }] })
const trustedGeneration: number = trusted.setKeys([{ kid: 'k2', alg: 'HS256', secret }], { issuer: 'https://a.example/' })
const untrusted: ErrorCode = 'untrusted_issuer'
// @ts-expect-error issuers and accessSecret are exclusive
const issuersAndSecret: AuthConfig = { issuers: [{ issuer: 'https://a.example/' }], accessSecret: secret }
const jsTrusted: number = new jsEngine.Authenticator({ issuers: [{ issuer: 'https://a.example/' }] }).setKeys([{ alg: 'HS256', secret }], { issuer: 'https://a.example/' })
const jsRotating = new jsEngine.Authenticator(keyed)
const jsGeneration: number = jsRotating.setKeys(keyed.keys ?? []) + jsRotating.keySetGeneration

const auth = new Authenticator(config)
const claims: TokenClaims = { sub: 'user-1', email: 'a@example.com', role: 'admin', tenant_id: 'acme', plan: 'pro' }
// @ts-expect-error iat is set by auth-shield
const withIat: TokenClaims = { sub: 'user-1', iat: 1 }
const access: string = auth.signAccessToken(claims)
const refresh: string = auth.signRefreshToken({ sub: 'user-1' })

const result: AuthResult = auth.authenticate(`Bearer ${access}`, null, 'acme.example.com')
// The introspection cache (RFC 7662): an answer held for an opaque token, its claims read back.
const opaqueAuth = new Authenticator({ accessSecret: 'x'.repeat(32), introspectionCacheMaxEntries: 1000, introspectionCacheMaxBytes: 1 << 20 })
const admitted: boolean = opaqueAuth.admitIntrospection('opaque', '{"sub":"u"}', 1_900_000_000)
const heldClaims: string | null = opaqueAuth.introspectionClaims('opaque')
const heldCount: number = opaqueAuth.introspectionCacheEntries
void [admitted, heldClaims, heldCount]
const authenticated: boolean = result.authenticated
const status: number | undefined = result.errorStatus
const retry: number = result.retryAfterMs
const requestId: string = result.requestId
const userId: string | undefined = result.userId
const code: string | undefined = result.errorCode
const tenantSource: 'token' | 'header' | 'host' | 'issuer' | undefined = result.tenantSource
// @ts-expect-error tenantSource is one of three sources
const wrongSource: AuthResult['tenantSource'] = 'cookie'
// @ts-expect-error userId is absent on failures
const mustBeString: string = result.userId
auth.authenticate(undefined, undefined, undefined)
const oneShot: AuthResult = authenticateRequest(`Bearer ${access}`, 'acme', undefined, config)

// AuthResult is a union on `authenticated`: TypeScript narrows userId and errorCode.
if (result.authenticated) {
  const narrowedUser: string = result.userId
  const noCode: undefined = result.errorCode
} else {
  const narrowedCode: ErrorCode = result.errorCode
  const failureStatus: 400 | 401 | 403 | 429 | 503 = result.errorStatus
  // @ts-expect-error a failure has no userId
  const noUser: string = result.userId
}
// @ts-expect-error a misspelt error code is a compile error, not a silent false
const misspeltCode: boolean = result.errorCode === 'token_expierd'
const expiredCheck: boolean = result.errorCode === 'token_expired'
// Optional options accept `process.env.X` (string | undefined) under exactOptionalPropertyTypes.
const fromEnv: AuthConfig = {
  accessSecret: secret,
  refreshSecret: process.env.JWT_REFRESH_SECRET,
  issuer: process.env.JWT_ISSUER,
  baseDomain: process.env.BASE_DOMAIN,
  clockTimestamp: undefined,
}
// @ts-expect-error accessSecret stays required: check process.env at startup instead
const unchecked: AuthConfig = { accessSecret: process.env.JWT_SECRET }
// The tenant of a request without a token (login, register), with the fused call's rules.
const requested: ResolvedTenant = resolveTenant(null, 'acme.example.com', { baseDomain: process.env.BASE_DOMAIN })
if (requested.tenantId !== undefined) {
  const requestedSource: 'header' | 'host' = requested.tenantSource
} else if (requested.errorCode !== undefined) {
  const invalid: 'invalid_tenant' = requested.errorCode
}
const jsRequested: ResolvedTenant = jsEngine.resolveTenant('acme', undefined)

const verification: TokenVerification = auth.verifyRefreshToken(refresh)
if (!verification.valid) {
  const verificationCode: ErrorCode = verification.errorCode
  // @ts-expect-error a misspelt verification code is a compile error
  const misspeltVerification: boolean = verification.errorCode === 'wrong_type'
}
const valid: boolean = verification.valid && auth.verifyAccessToken(access).valid
const expiresAtSec: number | undefined = verification.expiresAtSec
const limits: number[] = [auth.rateLimitMax, auth.rateLimitRefillPerSec, auth.accessTtlSec, auth.refreshTtlSec, auth.rateLimitBuckets]

// Security helpers.
const csp: string = new CspBuilder().scriptSrc(['self']).nonce('script-src') && new CspBuilder().build()
const store = new OtpStore({ digits: 6, ttlSec: 300 })
const otp: string = store.issue('user-1')
const otpValid: boolean = store.verify('user-1', otp).valid
const apiKey = generateApiKey({ secret })
const parsed: boolean = parseApiKey(apiKey.key).valid && verifyApiKey(apiKey.hash, apiKey.key, { secret })
const totpSecret: string = generateTotpSecret()
const codes: string[] = [hotp(totpSecret, 0), totp(totpSecret, { digits: 6 }), totpUri({ secret: totpSecret, account: 'a@example.com' })]
const otpMatches: boolean = verifyHotp(totpSecret, codes[0], 0).valid && verifyTotp(totpSecret, codes[1]).delta !== null
const hash: string = hashPasswordSync('correct horse', { timeCost: 2 })
const rehash: boolean = needsRehash(hash) || verifyPasswordSync(hash, 'correct horse')
const pending: Promise<boolean> = hashPassword('pw').then((h) => verifyPassword(h, 'pw'))
const clean: string[] = [sanitizeHtml('<b>x</b>'), sanitizeFilename('../etc/passwd'), validateSqlInterval('1 day')]
const same: boolean = timingSafeEqual('a', Buffer.from('a'))
const limiter = new RateLimiter({ capacity: 10, refillPerSec: 10 / 900, maxKeys: 1000 })
const attempt: RateLimitDecision = limiter.consume('alice', 1)
const throttled: boolean = !attempt.allowed && attempt.retryAfterMs > 0 && attempt.remaining + limiter.size >= 0
// @ts-expect-error capacity is required
new RateLimiter({ refillPerSec: 1 })

// Helper results are typed as precisely as the runtime: literal unions, required options,
// user-supplied codes and keys of any shape give a result.
const storeCheck = store.verify('user-1', 123456)
const storeCode: 'not_found' | 'expired' | 'mismatch' | 'too_many_attempts' | undefined = storeCheck.errorCode
// @ts-expect-error a misspelt code is a compile error, not a silent false
const misspeltStoreCode: boolean = storeCheck.errorCode === 'not_fuond'
const keyCheck = parseApiKey(apiKey.key)
const keyError: 'malformed' | 'bad_checksum' | undefined = keyCheck.errorCode
// @ts-expect-error the API-key error codes use underscores
const misspeltKeyError: boolean = keyCheck.errorCode === 'bad-checksum'
// @ts-expect-error the secret is required
generateApiKey({ prefix: 'acme_live' })
// @ts-expect-error algorithm is 'SHA1' | 'SHA256' | 'SHA512'
totp(totpSecret, { algorithm: 'SHA3' })
// @ts-expect-error algorithm is 'SHA1' | 'SHA256' | 'SHA512'
totpUri({ secret: totpSecret, account: 'a@example.com', algorithm: 'md5' })
const fromJsonBody: boolean = verifyTotp(totpSecret, 123456).valid && verifyHotp(totpSecret, 12345, 0).valid
const presented: string | undefined = undefined
const lookupHash: string | null = helpers.hashApiKey(presented, { secret })
const absentKey: boolean = verifyApiKey(apiKey.hash, presented, { secret }) || parseApiKey(presented).valid
// @ts-expect-error hashApiKey may give null (a malformed key has no row)
const lookupNotNull: string = helpers.hashApiKey(apiKey.key, { secret })
const rejected: Promise<string> = hashPassword('p'.repeat(5000)).catch((e: { code: string }) => e.code)
// The results narrow on `valid`.
const totpCheck = verifyTotp(totpSecret, '123456')
const matchedStep: number | undefined = totpCheck.valid ? totpCheck.delta : undefined
// @ts-expect-error delta is null when not valid
const noStep: number = totpCheck.valid ? 0 : totpCheck.delta
const knownPrefix: string | undefined = keyCheck.valid ? keyCheck.prefix : undefined
const whyNot: 'malformed' | 'bad_checksum' | undefined = keyCheck.valid ? undefined : keyCheck.errorCode
const whyNotText: string | undefined = keyCheck.valid ? undefined : keyCheck.error
const storeFailure: string | undefined = storeCheck.valid ? undefined : storeCheck.error
// @ts-expect-error a passed check has no errorCode
const passedCode: 'mismatch' = storeCheck.valid ? storeCheck.errorCode : 'mismatch'
const keepsInterface: OtpVerifyResult = storeCheck
const keepsParsed: ParsedApiKey = keyCheck

// The pure-JS engine: same config, same result type.
const jsAuth = new jsEngine.Authenticator(config)
const jsResult: AuthResult = jsAuth.authenticate(`Bearer ${jsAuth.signAccessToken(claims)}`, null, null)
const jsOneShot: AuthResult = jsEngine.authenticateRequest(null, null, null, config)
const jsShared: jsEngine.Authenticator = jsEngine.Authenticator.shared(config)

// Express: a config or an Authenticator of either engine, options, req.user typed.
const app = express()
const middleware = authShield(config, {
  credentialsRequired: false,
  getToken: (req) => req.headers['x-token'] as string | undefined,
  skip: ['/health', /^\/public\//],
  engine: 'native',
  shadow: true,
  onMismatch: (mismatch) => console.warn(mismatch.fields, mismatch.primary.errorCode),
  onError: (err, _req, res) => {
    const status: number = err.status
    res.statusCode = status
    const errCode: ErrorCode = err.code
    // @ts-expect-error AuthShieldError.code is an ErrorCode
    const misspeltErr: boolean = err.code === 'rate_limitted'
    res.end(errCode)
  },
})
app.use('/api', middleware, authShield(jsAuth), authShield(auth))
app.get('/api/me', (req, res) => {
  const who: string | undefined = req.user?.userId
  const tenant: string | undefined = req.tenantId
  const source: 'token' | 'header' | 'host' | 'issuer' | undefined = req.tenantSource
  res.json({ who, tenant, source, requestId: req.requestId, id: req.id })
})
const engineName: 'native' | 'js' = middleware.engine
const mismatches: number = middleware.stats().mismatches
// @ts-expect-error options are checked
authShield(config, { credentialsRequired: 'no' })
// express-jwt's conventions: options, req.auth, the UnauthorizedError of errors: 'next'.
const conventional = authShield(config, {
  errors: 'next',
  cookie: 'session',
  unless: { path: ['/login', { url: /^\/public\//, methods: ['GET'] }], ext: 'css' },
  skipPreflight: false,
  getToken: async (req) => (req.headers['x-token'] as string | undefined) ?? null,
  isRevoked: async (_req, claims) => claims.jti === 'revoked',
  rateLimitHeaders: 'draft',
  requestProperty: 'auth',
}).unless({ path: '/token', method: 'OPTIONS' })
const readme = authShield.expressjwt({ secret: 'a-32-byte-secret-for-the-readme-app!!', algorithms: ['HS256'], errors: 'next', credentialsRequired: false })
app.use(conventional, readme)
app.get('/api/claims', (req, res) => {
  const scope: unknown = req.auth?.['scope']
  const sub: string | undefined = req.auth?.sub
  res.json({ scope, sub })
})
app.use((err: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
  if (err instanceof authShield.UnauthorizedError) {
    const jwtCode: 'credentials_required' | 'credentials_bad_scheme' | 'credentials_bad_format' | 'invalid_token' | 'revoked_token' | 'invalid_tenant' | 'tenant_mismatch' | 'insufficient_scope' = err.code
    const ours: ErrorCode = err.errorCode
    const cause = err.inner instanceof authShield.AuthShieldError ? err.inner.result.errorCode : err.inner.message
    res.status(err.status).json({ jwtCode, ours, cause })
  } else next(err)
})
// Fail closed: a bound on every callback's Promise, async predicates and an async onMismatch.
authShield(config, {
  callbackTimeoutMs: 2000,
  skip: async (req) => req.headers['x-internal'] === 'yes',
  shadow: true,
  onMismatch: async (m) => {
    await Promise.resolve(m.fields.length)
  },
})
authShield(config, { unless: { custom: async () => false } })
// @ts-expect-error callbackTimeoutMs is a number of milliseconds
authShield(config, { callbackTimeoutMs: '10s' })
// The compatible export: express-jwt's callback shapes and errors (issue 23, issue 22 §4).
const getKey: authShield.GetVerificationKey = async (_req, token) =>
  token && typeof token.payload !== 'string' && token.payload['iss'] === 'a' ? 'a-32-byte-secret-for-tenant-a!!!!!' : undefined
app.use(
  authShield.expressjwt({
    secret: getKey,
    algorithms: ['HS256'],
    isRevoked: async (_req, token) => typeof token.payload !== 'string' && token.payload['jti'] === 'revoked',
    onExpired: async (req: authShield.Request, err) => {
      if (err.inner instanceof Error && err.inner.name === 'TokenExpiredError' && req.path !== '/refresh') throw err
    },
  }),
)
app.use((err: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
  if (err instanceof authShield.TooManyRequestsError || err instanceof authShield.ServiceUnavailableError) {
    const status: 429 | 503 = err.status
    res.set(err.headers).status(status).json({ code: err.code, expose: err.expose })
  } else if (err instanceof authShield.UnauthorizedError) res.status(401).end()
  else next(err)
})
const thrown = new authShield.UnauthorizedError('invalid_token', { message: 'Invalid token!' })
const thrownCode: string = thrown.code
// @ts-expect-error errors is 'respond' | 'next'
authShield(config, { errors: 'throw' })
// @ts-expect-error rateLimitHeaders is 'draft' | 'legacy' | 'both' | false
authShield(config, { rateLimitHeaders: 'ietf' })
// @ts-expect-error secret and accessSecret name the same key
authShield.expressjwt({ secret: 'a-32-byte-secret-for-the-readme-app!!', accessSecret: 'x' })
const expressError: authShield.AuthShieldError | undefined = undefined
const expressCode: authShield.ErrorCode = 'token_expired'
const fastifyCode: authShieldPlugin.ErrorCode = 'rate_limited'

// Fastify: the plugin with a config or an authenticator; request.user typed.
const fastify = Fastify()
fastify.register(authShieldPlugin, { config, hook: 'preHandler', credentialsRequired: false })
fastify.register(authShieldPlugin, { authenticator: jsAuth, hook: false })
fastify.get('/me', { onRequest: [fastify.authenticate] }, async (request) => {
  const who: string | undefined = request.user?.userId
  const tenant: string | undefined = request.tenantId
  const source: 'token' | 'header' | 'host' | 'issuer' | undefined = request.tenantSource
  return { who, tenant, source, requests: fastify.authShield.stats().requests }
})
fastify.register(authShieldPlugin, {
  config,
  errors: 'next',
  formatUser: (claims) => ({ userId: claims.sub }),
  cookie: { cookieName: 'token' },
  isRevoked: (_request, claims) => claims.exp < 0,
})
fastify.get('/claims', async (request) => ({ sub: request.auth?.sub }))
fastify.setErrorHandler((err, _request, reply) => {
  if (err instanceof authShieldPlugin.UnauthorizedError) return reply.code(err.statusCode).send({ code: err.code })
  return reply.send(err)
})
// @ts-expect-error formatUser is a function of the claims
fastify.register(authShieldPlugin, { config, formatUser: 'sub' })
// @ts-expect-error hook is one of 'onRequest' | 'preHandler' | false
fastify.register(authShieldPlugin, { config, hook: 'onSend' })

// auth-shield/redis: a store over any client object, attached to either engine, passed to the middleware.
declare const redisClient: object
const redisStore: RedisStore = createRedisStore(redisClient, { lease: 10, outageShare: 0.5, limit: { capacity: 5, refillPerSec: 1 } })
redisStore.attach(new Authenticator(config), { strict: true, name: 'login' }).attach(new jsEngine.Authenticator(config))
express().use(authShield(config, { store: redisStore }))
const shared: Promise<SharedLimitDecision> = redisStore.consume('login:ada', 1)
const pendingCode: ErrorCode = redisStore.pendingCode
redisStore.on('outage', (err: unknown) => void err)
// @ts-expect-error outageShare is a number
createRedisStore(redisClient, { outageShare: 'half' })
// The store as an option of the constructor (either engine), not of the one-shot.
const storedAuth = new Authenticator({ ...config, store: redisStore })
new jsEngine.Authenticator({ accessSecret: 'x', store: null })
express().use(authShield(storedAuth, { store: redisStore }))
// @ts-expect-error store is a RedisStore
new Authenticator({ accessSecret: 'x', store: 'redis://localhost' })
// @ts-expect-error authenticateRequest takes an AuthConfig, without a store
authenticateRequest(null, null, null, { accessSecret: 'x', store: redisStore })
// @ts-expect-error the JS engine's Authenticator.shared takes an AuthConfig, without a store
jsEngine.Authenticator.shared({ accessSecret: 'x', store: redisStore })

// auth-shield/jwks: a remote key set feeding the middleware; signingKey and jwks().
import jwksModule = require('auth-shield/jwks')
const remote = jwksModule.createRemoteJwks('https://idp.example.com/.well-known/jwks.json', { cooldownMs: 30000, algorithms: ['RS256', 'EdDSA'] })
const refreshed: Promise<boolean> = remote.refresh()
const remoteError: string | undefined = remote.lastError?.code
authShield({ issuer: 'https://idp.example.com/' }, { jwks: remote })
// Outages: back-off, stale-if-error, and events instead of polling lastError.
const resilient = jwksModule.createRemoteJwks('https://idp.example.com/jwks', { cooldownMs: 5000, staleIfErrorMs: 3_600_000, retryMinMs: 1000, retryMaxMs: 30_000 })
resilient.on('error', (err) => console.warn(err.code satisfies jwksModule.JwksErrorCode, err.message))
resilient.on('keys', (keys) => console.info(keys.map((k) => k.kid)))
resilient.once('expired', (err) => console.error(err.cause))
// @ts-expect-error the 'keys' listener gets the key set, not an error
resilient.on('keys', (err: Error) => err)
// @ts-expect-error staleIfErrorMs is milliseconds, a number
jwksModule.createRemoteJwks('https://idp.example.com/jwks', { staleIfErrorMs: '1h' })
// Fastify with a jwks source: a config of claims checks alone, no keys.
fastify.register(authShieldPlugin, { config: { issuer: 'https://idp.example.com/', audience: 'api' }, jwks: remote })
fastify.register(authShieldPlugin, { config: { issuer: 'https://idp.example.com/' }, jwks: remote, hook: 'preHandler', errors: 'next' })
fastify.register(authShieldPlugin, { config, jwks: remote })
fastify.register(authShieldPlugin, { authenticator: jsAuth, jwks: remote })
// @ts-expect-error without jwks a config needs accessSecret, keys or signingKey
fastify.register(authShieldPlugin, { config: { issuer: 'https://idp.example.com/' } })
// @ts-expect-error jwks is a source from createRemoteJwks, not its URL
fastify.register(authShieldPlugin, { config: { issuer: 'https://idp.example.com/' }, jwks: 'https://idp.example.com/jwks' })
// @ts-expect-error the config's options keep their types
fastify.register(authShieldPlugin, { config: { issuer: 5 }, jwks: remote })
// @ts-expect-error a jwks config is still a config, not an authenticator's options
fastify.register(authShieldPlugin, { config: { issuer: 'https://idp.example.com/', hook: false }, jwks: remote })
// @ts-expect-error the options keep their types beside jwks
fastify.register(authShieldPlugin, { config: { issuer: 'https://idp.example.com/' }, jwks: remote, hook: 'onSend' })
// @ts-expect-error ES512 is not a supported algorithm
jwksModule.createRemoteJwks('https://idp.example.com/jwks', { algorithms: ['ES512'] })
const issuer = new Authenticator({ signingKey: { kid: 'k1', alg: 'EdDSA', privateKey: '-----BEGIN PRIVATE KEY-----' } })
const published: string | undefined = issuer.jwks().keys[0]?.kid
// @ts-expect-error ES384 cannot sign
new Authenticator({ signingKey: { kid: 'k1', alg: 'ES384', privateKey: '' } })

export {
  shared, pendingCode,
  refreshed, remoteError, published,
  jsResult, jsOneShot, jsShared, engineName, mismatches, expressError,
  misspelt, missing, withIat, tenantSource, wrongSource, authenticated, status, retry, requestId, userId, code, mustBeString, oneShot,
  valid, expiresAtSec, limits, csp, otpValid, parsed, codes, otpMatches, rehash, pending, clean, same, throttled,
}
