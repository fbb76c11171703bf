'use strict'

// The shared bucket: GCRA in one Lua script, on Redis's own clock (TIME), so processes with
// skewed clocks agree. One key per identity holding its theoretical arrival time (TAT) in
// microseconds; the key expires (PX) when the bucket would be full again, so idle identities
// cost nothing. Run with EVALSHA, falling back to EVAL (which also caches the script) on
// NOSCRIPT after a restart or failover.
//
// One call answers many buckets of the same limit: the store's background loop renews every
// identity queued since its last turn in one round trip (at most BATCH_KEYS per call, so one
// script never holds Redis for long), and `consume` asks for one.
//
// KEYS: the buckets. ARGV: capacity, microseconds per token, fewest worth granting (1 for a
// lease: a partial lease is better than none; the cost for consume: all or nothing), then the
// tokens wanted by each key in KEYS order. Reply: for each key in order, granted, remaining
// whole tokens, retryAfterMs (0 when granted: else the wait until `fewest` tokens fit), as one
// flat array.

const { createHash } = require('node:crypto')

// Each bucket is stored relative to its last grant, as the in-process limiter keeps it
// (js/rate-limit.js): "<debt> <last>", the TAT's lead over `last` in microseconds (%.17g) and
// the Redis time of that grant in whole microseconds. An absolute TAT near 1.7e15 µs is exact
// only to 0.25 µs and was stored rounded to a whole µs: at refills near 1e9/s each grant lost
// up to half a microsecond of debt (hundreds of tokens). now - last is exact (both integers
// below 2^53). A value of the older form (one absolute TAT) is read as such.
//
// Every number sent to Redis stays an integer within its range: the interval is capped at
// MAX_INTERVAL_MICROS (a slower refill never refills, js/rate-limit.js MAX_INTERVAL_NANOS), and
// the key's PX and the retryAfterMs answered are capped at MAX_MS (about 31,700 years, the
// bound grantLease accepts). Unclamped, a refill of 1e-300 sent PX 1e303, which Redis refused:
// the script failed and the store went into its outage state.
const MAX_INTERVAL_MICROS = 1e287
const MAX_MS = 1e15

const LEASE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local capacity = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
if not (interval <= ${MAX_INTERVAL_MICROS}) then interval = ${MAX_INTERVAL_MICROS} end
local fewest = tonumber(ARGV[3])
local limit = capacity * interval
local reply = {}
for i = 1, #KEYS do
  local want = tonumber(ARGV[i + 3])
  local held = redis.call('GET', KEYS[i])
  local owed = 0
  if held then
    local debt, last = string.match(held, '^(%S+) (%d+)$')
    if debt then
      owed = (tonumber(debt) or 0) - (now - tonumber(last))
    else
      owed = (tonumber(held) or 0) - now
    end
  end
  if not (owed > 0) then owed = 0 end
  local available = math.floor((limit - owed) / interval + 1e-6)
  local granted = math.min(want, available)
  local n = #reply
  if granted < fewest then
    local wait = math.ceil((owed + fewest * interval - limit) / 1000)
    if not (wait >= 1) then wait = 1 end
    if wait > ${MAX_MS} then wait = ${MAX_MS} end
    if available < 0 then available = 0 end
    reply[n + 1] = 0
    reply[n + 2] = available
    reply[n + 3] = wait
  else
    owed = owed + granted * interval
    local px = math.ceil(owed / 1000) + 1000
    if px > ${MAX_MS} then px = ${MAX_MS} end
    redis.call('SET', KEYS[i], string.format('%.17g %.0f', owed, now), 'PX', string.format('%.0f', px))
    reply[n + 1] = granted
    reply[n + 2] = math.floor((limit - owed) / interval + 1e-6)
    reply[n + 3] = 0
  end
end
return reply
`

const LEASE_SCRIPT_SHA = createHash('sha1').update(LEASE_SCRIPT).digest('hex')

// Most buckets per call: about 100 GET/SET pairs, well under a millisecond of Redis's time.
const BATCH_KEYS = 100

/** Microseconds per token as the script takes it: 1e6 / refill, capped at MAX_INTERVAL_MICROS. */
function intervalArg(refillPerSec) {
  const interval = 1e6 / refillPerSec
  return String(Number.isNaN(interval) || interval > MAX_INTERVAL_MICROS ? MAX_INTERVAL_MICROS : interval)
}

module.exports = { LEASE_SCRIPT, LEASE_SCRIPT_SHA, BATCH_KEYS, MAX_INTERVAL_MICROS, MAX_MS, intervalArg }
