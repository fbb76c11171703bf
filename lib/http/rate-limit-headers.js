'use strict'

// The rate-limit response headers of an AuthResult, in the shape `rateLimitHeaders` asks for:
//
// - 'legacy': RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset (delta seconds), the shape
//   of draft-ietf-httpapi-ratelimit-headers up to -06 and what most clients parse today.
// - 'draft': RateLimit-Policy and RateLimit, Structured Field Lists (RFC 9651) of the current
//   draft (-08 onwards): `RateLimit-Policy: "default";q=<capacity>;w=<seconds to refill>` and
//   `RateLimit: "default";r=<remaining>;t=<seconds>`. The policy item is a String naming it.
// - 'both', or false for none.
//
// `t` / RateLimit-Reset is the wait until the bucket is full again (success) or holds one token
// (429); a 429 always gets Retry-After (RFC 9110 §10.2.3) with the same seconds.

const POLICY = '"default"'
// The most seconds any of these headers says: 2^31, what RFC 9111 §1.2.2 has a recipient take
// for a delta-seconds too large to hold ("effectively never"). A refill of 1e-300 (which never
// refills) would otherwise write `1e+300` or `Infinity`, which no client parses as a number,
// and an RFC 9651 Integer has at most 15 digits.
const MAX_DELTA_SECONDS = 2147483648
const deltaSeconds = (s) => Math.min(s, MAX_DELTA_SECONDS)

/**
 * `(result, headers) => void`, pushing the [name, value] pairs for `mode` onto `headers`; built
 * once per middleware (the policy string never changes).
 */
function rateLimitHeaderWriter(mode, capacity, refillPerSec) {
  const legacy = mode === 'legacy' || mode === 'both'
  const draft = mode === 'draft' || mode === 'both'
  const policy = `${POLICY};q=${capacity};w=${deltaSeconds(Math.max(1, Math.ceil(capacity / refillPerSec)))}`
  return function writeRateLimitHeaders(result, headers) {
    const limit = result.rateLimitLimit
    const remaining = result.rateLimitRemaining
    const reset = deltaSeconds(result.authenticated ? Math.ceil((limit - remaining) / refillPerSec) : Math.ceil(result.retryAfterMs / 1000))
    if (legacy) {
      headers.push(['RateLimit-Limit', String(limit)], ['RateLimit-Remaining', String(remaining)])
      headers.push(['RateLimit-Reset', String(reset)])
    }
    if (draft) headers.push(['RateLimit-Policy', policy], ['RateLimit', `${POLICY};r=${remaining};t=${reset}`])
    if (!result.authenticated) headers.push(['Retry-After', String(reset)])
  }
}

module.exports = { rateLimitHeaderWriter, MAX_DELTA_SECONDS }
