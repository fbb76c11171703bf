// A CommonJS consumer (this folder has no "type": "module"): every public name
// of `auth-shield` used with its declared types. `@ts-expect-error` lines prove
// the types are precise, not `any`: each must stay an error.
import {
  Authenticator,
  authenticateRequest,
  CspBuilder,
  OtpStore,
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

export {
  misspelt, missing, withIat, authenticated, status, retry, requestId, userId, code, mustBeString, oneShot,
  valid, expiresAt, limits, csp, otpValid, parsed, codes, otpMatches, rehash, pending, clean, same,
}
