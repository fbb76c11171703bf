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

const LEASE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local capacity = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local fewest = tonumber(ARGV[3])
local limit = capacity * interval
local reply = {}
for i = 1, #KEYS do
  local want = tonumber(ARGV[i + 3])
  local tat = tonumber(redis.call('GET', KEYS[i]) or '0') or 0
  if tat < now then tat = now end
  local available = math.floor((limit - (tat - now)) / interval + 1e-6)
  local granted = math.min(want, available)
  local n = #reply
  if granted < fewest then
    local wait = math.ceil((tat + fewest * interval - now - limit) / 1000)
    if wait < 1 then wait = 1 end
    if available < 0 then available = 0 end
    reply[n + 1] = 0
    reply[n + 2] = available
    reply[n + 3] = wait
  else
    tat = tat + granted * interval
    redis.call('SET', KEYS[i], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1000)
    reply[n + 1] = granted
    reply[n + 2] = math.floor((limit - (tat - now)) / interval + 1e-6)
    reply[n + 3] = 0
  end
end
return reply
`

const LEASE_SCRIPT_SHA = createHash('sha1').update(LEASE_SCRIPT).digest('hex')

// Most buckets per call: about 100 GET/SET pairs, well under a millisecond of Redis's time.
const BATCH_KEYS = 100

module.exports = { LEASE_SCRIPT, LEASE_SCRIPT_SHA, BATCH_KEYS }
