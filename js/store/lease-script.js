'use strict'

// The shared bucket: GCRA in one Lua script, on Redis's own clock (TIME), so processes with
// skewed clocks agree. One key per identity holding its theoretical arrival time (TAT) in
// microseconds; the key expires (PX) when the bucket would be full again, so idle identities
// cost nothing. Run with EVALSHA, falling back to EVAL (which also caches the script) on
// NOSCRIPT after a restart or failover.
//
// KEYS[1] the bucket; ARGV: capacity, microseconds per token, tokens wanted, fewest worth
// granting (1 for a lease: a partial lease is better than none; the cost for consume: all or
// nothing). Reply: { granted, remaining whole tokens, retryAfterMs } (retryAfterMs 0 when
// granted: else the wait until `fewest` tokens fit).

const { createHash } = require('node:crypto')

const LEASE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local capacity = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local fewest = tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if tat < now then tat = now end
local limit = capacity * interval
local available = math.floor((limit - (tat - now)) / interval + 1e-6)
local granted = math.min(want, available)
if granted < fewest then
  local wait = math.ceil((tat + fewest * interval - now - limit) / 1000)
  if wait < 1 then wait = 1 end
  if available < 0 then available = 0 end
  return { 0, available, wait }
end
tat = tat + granted * interval
redis.call('SET', KEYS[1], string.format('%.0f', tat), 'PX', math.ceil((tat - now) / 1000) + 1000)
return { granted, math.floor((limit - (tat - now)) / interval + 1e-6), 0 }
`

const LEASE_SCRIPT_SHA = createHash('sha1').update(LEASE_SCRIPT).digest('hex')

module.exports = { LEASE_SCRIPT, LEASE_SCRIPT_SHA }
