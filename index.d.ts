// Types of the package entry (index.js). The binding's types are generated into binding.d.ts
// (from the Rust doc comments and types/index-header.d.ts); this file re-exports the ones users
// see, without the loader's `__napiBindingTarget` and the store seam's `LeaseRequest`
// (__test__/package/entry.test.js holds the lists equal to index.js and binding.d.ts), and declares
// `authenticateRequest`, which native.js defines.

export type {
  ApiKeyErrorCode, ApiKeySecretOptions, AuthConfig, AuthConfigOptions, AuthenticatorConfig,
  AuthenticatorEntryOptions, AuthenticatorMetrics, AuthFailure, AuthResult, AuthResultFields, AuthSuccess, ErrorCode,
  GenerateApiKeyOptions, GeneratedApiKey, HmacKeyInput, JwkInput, KeyInput, OtpErrorCode,
  OtpMatch, OtpOptions, OtpStoreOptions, OtpVerifyResult, ParsedApiKey, PasswordOptions,
  PublicJwk, PublicJwks, PublicKeyInput, RateLimitDecision, RateLimiterOptions, ResolvedTenant,
  ResolveTenantOptions, RevokeSubjectOptions, RevokeTokenOptions, SanitizeFilenameOptions,
  SanitizeHtmlOptions, Secret, SenderContext, SetKeysOptions, SigningKeyInput, TenantSource, TokenClaims, TokenInvalid,
  TokenValid, TokenVerification, TokenVerificationFields, TotpUriInput, TrustedIssuer, VerifyPasswordOptions,
} from './binding'

export {
  Authenticator, buildProfile, CspBuilder, generateApiKey, generateTotpSecret, hashApiKey,
  hashPassword, hashPasswordSync, hotp, needsRehash, OtpStore, parseApiKey, RateLimiter,
  resolveTenant, sanitizeFilename, sanitizeHtml, timingSafeEqual, totp, totpUri,
  validateSqlInterval, verifyApiKey, verifyHotp, verifyPassword, verifyPasswordSync, verifyTotp,
} from './binding'

import type { AuthConfig, AuthResult, SenderContext } from './binding'

/**
 * Same chain and result as `Authenticator#authenticate`, configured per call. Keys,
 * rate-limit buckets and revocations are shared by equal configs (and with
 * `Authenticator.shared`); reusing one config object skips reading it again while its values
 * are unchanged. At most 64 distinct configs are kept, never forgotten: one more throws a
 * `RangeError` with code `ERR_AUTH_SHIELD_CONFIG_LIMIT` (use `new Authenticator(config)`).
 * `sender` is `authenticate`'s 4th argument (the DPoP proof, the client certificate's
 * thumbprint), read only when the config turns DPoP or certificate-bound tokens on.
 */
export declare function authenticateRequest(
  authorization: string | null | undefined,
  tenantHeader: string | null | undefined,
  host: string | null | undefined,
  config: AuthConfig,
  sender?: SenderContext | null,
): AuthResult
