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
import type { AuthConfig, AuthResult, TokenClaims, TokenVerification } from 'auth-shield'
import authShield = require('auth-shield/express')
import authShieldPlugin = require('auth-shield/fastify')
import * as jsEngine from 'auth-shield/js'
import express = require('express')
import Fastify = require('fastify')

const secret = 'a-secret-of-at-least-thirty-two-bytes!!'
const config: AuthConfig = {
  accessSecret: secret,
  refreshSecret: Buffer.from('another-secret-of-at-least-32-bytes!!'),
  issuer: ['https://issuer.example'],
  audience: 'api',
  clockToleranceSec: 0,
  rateLimitMax: 100,
  rateLimitRefill: 10,
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

const auth = new Authenticator(config)
const claims: TokenClaims = { sub: 'user-1', email: 'a@example.com', role: 'admin', tenant_id: 'acme', plan: 'pro' }
// @ts-expect-error iat is set by auth-shield
const withIat: TokenClaims = { sub: 'user-1', iat: 1 }
const access: string = auth.signAccessToken(claims)
const refresh: string = auth.signRefreshToken({ sub: 'user-1' })

const result: AuthResult = auth.authenticate(`Bearer ${access}`, null, 'acme.example.com')
const authenticated: boolean = result.authenticated
const status: number = result.errorStatus
const retry: number = result.retryAfterMs
const requestId: string = result.requestId
const userId: string | undefined = result.userId
const code: string | undefined = result.errorCode
// @ts-expect-error userId is absent on failures
const mustBeString: string = result.userId
auth.authenticate(undefined, undefined, undefined)
const oneShot: AuthResult = authenticateRequest(`Bearer ${access}`, 'acme', undefined, config)

const verification: TokenVerification = auth.verifyRefreshToken(refresh)
const valid: boolean = verification.valid && auth.verifyAccessToken(access).valid
const expiresAt: number | undefined = verification.expiresAt
const limits: number[] = [auth.rateLimitMax, auth.rateLimitRefill, auth.accessTtlSec, auth.refreshTtlSec, auth.rateLimitBuckets]

// Security helpers.
const csp: string = new CspBuilder().scriptSrc(['self']).nonce('script-src') && new CspBuilder().build()
const store = new OtpStore({ digits: 6, ttlSec: 300 })
const otp: string = store.issue('user-1')
const otpValid: boolean = store.verify('user-1', otp).valid
const apiKey = generateApiKey({ secret })
const parsed: boolean = parseApiKey(apiKey.key).valid && verifyApiKey(apiKey.key, apiKey.hash, secret)
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

// The pure-JS engine: same config, same result type.
const jsAuth = new jsEngine.Authenticator(config)
const jsResult: AuthResult = jsAuth.authenticate(`Bearer ${jsAuth.signAccessToken(claims)}`, null, null)
const jsOneShot: AuthResult = jsEngine.authenticateRequest(null, null, null, config)

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
    res.end(err.code)
  },
})
app.use('/api', middleware, authShield(jsAuth), authShield(auth))
app.get('/api/me', (req, res) => {
  const who: string | undefined = req.user?.userId
  const tenant: string | undefined = req.tenantId
  res.json({ who, tenant, id: req.id })
})
const engineName: 'native' | 'js' = middleware.engine
const mismatches: number = middleware.stats().mismatches
// @ts-expect-error options are checked
authShield(config, { credentialsRequired: 'no' })
const expressError: authShield.AuthShieldError | undefined = undefined

// Fastify: the plugin with a config or an authenticator; request.user typed.
const fastify = Fastify()
fastify.register(authShieldPlugin, { config, hook: 'preHandler', credentialsRequired: false })
fastify.register(authShieldPlugin, { authenticator: jsAuth, hook: false })
fastify.get('/me', { onRequest: [fastify.authenticate] }, async (request) => {
  const who: string | undefined = request.user?.userId
  const tenant: string | null = request.tenantId
  return { who, tenant, requests: fastify.authShield.stats().requests }
})
// @ts-expect-error hook is one of 'onRequest' | 'preHandler' | false
fastify.register(authShieldPlugin, { config, hook: 'onSend' })

export {
  jsResult, jsOneShot, engineName, mismatches, expressError,
  misspelt, missing, withIat, authenticated, status, retry, requestId, userId, code, mustBeString, oneShot,
  valid, expiresAt, limits, csp, otpValid, parsed, codes, otpMatches, rehash, pending, clean, same, throttled,
}
