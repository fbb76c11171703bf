'use strict'

// Certificate-bound access tokens (RFC 8705 §3), twin of src/cert_binding.rs: a token whose
// cnf claim carries x5t#S256 is usable only over a TLS connection authenticated with that
// certificate. The caller computes the presented certificate's thumbprint (the adapters read
// the TLS socket); this module only compares it with the token's.

const { OTHER } = require('./jwt/claims')

/** `certificateBoundTokens` / `requireCertificateBoundTokens`. */
const CertificateBinding = Object.freeze({ OFF: 0, CHECKED: 1, REQUIRED: 2 })

/** Length of a base64url SHA-256 digest without padding. */
const THUMBPRINT_LEN = 43

// 43 characters of the URL-safe alphabet, the last carrying 2 zero padding bits, so one
// digest has exactly one spelling.
const THUMBPRINT = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/

function isThumbprint(s) {
  return typeof s === 'string' && s.length === THUMBPRINT_LEN && THUMBPRINT.test(s)
}

function bindingOf(settings) {
  if (settings.requireCertificateBoundTokens) return CertificateBinding.REQUIRED
  return settings.certificateBoundTokens ? CertificateBinding.CHECKED : CertificateBinding.OFF
}

/**
 * The error code for a verified token's cnf given the presented thumbprint, or undefined when
 * it passes. `cnf` is as js/jwt/claims.js reads it: undefined, OTHER, or `{ x5tS256 }`.
 * Order: a malformed binding (invalid_claims), an unbound token when bound ones are required,
 * then the certificate. OFF (the default), no certificate counts, so a bound token is
 * certificate_required, as a DPoP-bound token sent as Bearer is refused (RFC 9449 §7.1); a cnf
 * that is not an object names no certificate there (src/cert_binding.rs `check`).
 */
function checkBinding(binding, cnf, presented) {
  let bound
  if (cnf === undefined || (cnf !== OTHER && cnf.x5tS256 === undefined)) bound = undefined
  else if (cnf === OTHER && binding === CertificateBinding.OFF) bound = undefined
  else if (cnf !== OTHER && isThumbprint(cnf.x5tS256)) bound = cnf.x5tS256
  else return 'invalid_claims'
  if (bound === undefined) return binding === CertificateBinding.REQUIRED ? 'unbound_token' : undefined
  if (presented === undefined || binding === CertificateBinding.OFF) return 'certificate_required'
  // Thumbprints are public values: a plain comparison leaks nothing.
  return bound === presented ? undefined : 'certificate_mismatch'
}

module.exports = { CertificateBinding, THUMBPRINT_LEN, isThumbprint, bindingOf, checkBinding }
