'use strict'

// Test support: hand-made HS256 tokens for inputs no JWT library would emit (signed with
// node:crypto directly, so neither engine's own signer builds its own inputs), shared secrets
// and clock, and a seeded random source for generated tests.

const { createHmac } = require('node:crypto')

/** mulberry32: a small deterministic PRNG, so a failing case can be replayed from its seed. */
function random(seed) {
  let a = seed >>> 0
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  return {
    next,
    int: (n) => Math.floor(next() * n),
    pick: (list) => list[Math.floor(next() * list.length)],
    chance: (p) => next() < p,
  }
}

function b64url(data) {
  return Buffer.from(data, typeof data === 'string' ? 'latin1' : undefined).toString('base64url')
}

/**
 * A compact JWS. Header and payload are objects (JSON, UTF-8) or raw text taken byte for byte
 * (latin1), so any byte sequence can be written.
 */
function rawToken(header, payload, secret) {
  const bytes = (part) => (typeof part === 'string' ? part : Buffer.from(JSON.stringify(part)))
  const input = `${b64url(bytes(header))}.${b64url(bytes(payload))}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}

const HS256 = '{"alg":"HS256","typ":"JWT"}'
const SECRET = 'test-access-secret-0123456789abcdef'
const REFRESH_SECRET = 'test-refresh-secret-0123456789abcdef'
const NOW = 1_800_000_000

function token(claims, secret, header = HS256) {
  return rawToken(header, Buffer.from(JSON.stringify(claims)).toString('latin1'), secret)
}

/** The result without its per-call request id, for field-for-field comparison. */
function withoutRequestId(result) {
  const { requestId, ...rest } = result
  return rest
}

module.exports = { random, b64url, rawToken, token, HS256, withoutRequestId, SECRET, REFRESH_SECRET, NOW }
