'use strict'
// Hand-rolled HS256 tokens for tests that need headers or payloads no JWT library would emit.
const crypto = require('node:crypto')

const b64url = (input) => Buffer.from(input).toString('base64url')

function rawToken(header, payload, secret) {
  const h = typeof header === 'string' ? header : JSON.stringify(header)
  const p = typeof payload === 'string' ? payload : JSON.stringify(payload)
  const input = `${b64url(h)}.${b64url(p)}`
  const sig = crypto.createHmac('sha256', secret).update(input).digest('base64url')
  return `${input}.${sig}`
}

const SECRET = 'test-access-secret-0123456789abcdef'
const REFRESH_SECRET = 'test-refresh-secret-0123456789abcdef'
const NOW = 1_800_000_000

module.exports = { b64url, rawToken, SECRET, REFRESH_SECRET, NOW }
