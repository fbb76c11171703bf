'use strict'

// Brute-force throttles (OWASP Authentication Cheat Sheet, "login throttling"): auth-shield's
// RateLimiter, checked before any password hashing, so a throttled attempt costs no Argon2 work.
// Buckets are per process and bounded (maxKeys plus a fixed debt sketch): a flood of made-up
// account names cannot grow memory, nor push a real account's spent attempts out of it.

const { RateLimiter } = require('../..')
const { ApiError } = require('./errors')

const FIFTEEN_MINUTES = 15 * 60

// Attempts a key may make at once, and how fast they come back (capacity per 15 minutes).
const DEFAULTS = {
  // One account, from anywhere: slows password guessing against a known user name.
  loginPerAccount: { capacity: 10, refillPerSec: 10 / FIFTEEN_MINUTES },
  // One client address, whatever account it tries: slows credential stuffing.
  loginPerAddress: { capacity: 100, refillPerSec: 100 / FIFTEEN_MINUTES },
  // Step-up code checks per signed-in user (the OtpStore also burns a code after 5 misses).
  stepUpPerUser: { capacity: 10, refillPerSec: 10 / FIFTEEN_MINUTES },
}

function createThrottles(overrides = {}) {
  const limiters = {}
  for (const [name, settings] of Object.entries(DEFAULTS)) {
    limiters[name] = new RateLimiter({ maxKeys: 100_000, ...settings, ...overrides[name] })
  }
  return limiters
}

/**
 * Spends one attempt from every `[limiter, key]` pair, or throws 429 with `Retry-After` (whole
 * seconds) when any refuses. All are charged, so an address cannot spare its bucket by
 * rotating account names, nor an account by rotating addresses.
 */
function throttle(res, checks) {
  let waitMs = 0
  for (const [limiter, key] of checks) {
    const d = limiter.consume(key)
    if (!d.allowed) waitMs = Math.max(waitMs, d.retryAfterMs)
  }
  if (waitMs > 0) {
    res.set('Retry-After', String(Math.ceil(waitMs / 1000)))
    throw new ApiError(429, 'too_many_attempts', 'Too many attempts: try again later')
  }
}

/** Login: per account (user names compare case-insensitively in the database) and per address. */
function throttleLogin(throttles, req, res, userName) {
  throttle(res, [
    [throttles.loginPerAccount, userName.toLowerCase()],
    [throttles.loginPerAddress, req.ip ?? req.socket.remoteAddress ?? ''],
  ])
}

/** Step-up code check, per signed-in user. */
function throttleStepUp(throttles, res, userId) {
  throttle(res, [[throttles.stepUpPerUser, String(userId)]])
}

module.exports = { createThrottles, throttleLogin, throttleStepUp, DEFAULTS }
