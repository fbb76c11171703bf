'use strict'

// Bearer token extraction from an Authorization header (RFC 6750 §2.1), as src/bearer.rs.

const { fail } = require('../base/error')

// RFC 6750 b64token: 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/
// The scheme is case-insensitive (RFC 7235 §2.1), followed by one or more spaces.
const SCHEME = /^bearer +/i

/** The token of `Bearer <token>`, or a Failure. */
function extractBearer(header, maxTokenBytes) {
  if (header === undefined || header === '') return fail('missing_authorization')
  const scheme = SCHEME.exec(header)
  if (scheme === null) return fail('invalid_authorization_format')
  const token = header.slice(scheme[0].length)
  if (token === '') return fail('invalid_authorization_format')
  // Size before content, so an oversized header costs almost nothing. Bytes, as the native side counts.
  if (token.length > maxTokenBytes || Buffer.byteLength(token) > maxTokenBytes) {
    return fail('token_too_large')
  }
  if (!B64TOKEN.test(token)) return fail('invalid_authorization_format')
  return token
}

/** Whether `token` is an RFC 6750 b64token. */
function isB64token(token) {
  return B64TOKEN.test(token)
}

module.exports = { extractBearer, isB64token }
