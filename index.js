'use strict'

// `require('auth-shield')`: the native engine. binding.js is the loader `napi build` generates;
// native.js adds the little the binding cannot do itself. Only the names below are the package's.

const { binding, Authenticator, authenticateRequest } = require('./native.js')
const { resolveTenant, RateLimiter, CspBuilder, OtpStore, buildProfile, timingSafeEqual } = binding
const { hashPassword, hashPasswordSync, verifyPassword, verifyPasswordSync, needsRehash } = binding
const { generateApiKey, parseApiKey, verifyApiKey, hashApiKey } = binding
const { generateTotpSecret, totp, totpUri, verifyTotp, hotp, verifyHotp } = binding
const { sanitizeHtml, sanitizeFilename, validateSqlInterval } = binding

module.exports = {
  Authenticator,
  authenticateRequest,
  resolveTenant,
  RateLimiter,
  hashPassword,
  hashPasswordSync,
  verifyPassword,
  verifyPasswordSync,
  needsRehash,
  generateApiKey,
  parseApiKey,
  verifyApiKey,
  hashApiKey,
  generateTotpSecret,
  totp,
  totpUri,
  verifyTotp,
  hotp,
  verifyHotp,
  OtpStore,
  CspBuilder,
  sanitizeHtml,
  sanitizeFilename,
  validateSqlInterval,
  timingSafeEqual,
  buildProfile,
}
