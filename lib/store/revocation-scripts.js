'use strict'

// The Lua scripts of the revocation feed (lib/store/revocations.js, docs/revocation.md). Each
// runs atomically, so the sets, the stream and the epoch marker never disagree.

// KEYS: tokens, subjects, stream. ARGV: maxLen, then (kind, member, score) per revocation.
// Keeps the later score of each member and appends one stream entry per revocation. Returns the
// last entry's id: the writer then knows how far the stream must reach (a failover to a replica
// that had not received the write shows a stream that ends before it).
const WRITE = `
local id = ''
for i = 2, #ARGV, 3 do
  local set = KEYS[1]
  if ARGV[i] == 's' then set = KEYS[2] end
  local cur = redis.call('ZSCORE', set, ARGV[i + 1])
  if (not cur) or tonumber(cur) < tonumber(ARGV[i + 2]) then redis.call('ZADD', set, ARGV[i + 2], ARGV[i + 1]) end
  id = redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[1], '*', 'k', ARGV[i], 'm', ARGV[i + 1], 'v', ARGV[i + 2])
end
return id`

// The epoch marker: a random value written once per data set. Missing, it is written with
// ARGV's candidate; a feed that finds a value other than the one it knew learns that Redis lost
// (or replaced) its data since, and re-publishes what it knows.
const EPOCH = `
local epoch = redis.call('GET', KEYS[4])
if not epoch then
  epoch = ARGV[3]
  redis.call('SET', KEYS[4], epoch)
end`

// KEYS: tokens, subjects, stream, epoch. ARGV: oldest token exp kept, oldest subject cut-off
// kept, candidate epoch. Prunes what no process can still need, then returns the stream's last
// id, both sets and the epoch.
const SNAPSHOT = `${EPOCH}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. ARGV[2])
local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
local id = '0-0'
if last[1] then id = last[1][1] end
return { id, redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES'), redis.call('ZRANGE', KEYS[2], 0, -1, 'WITHSCORES'), epoch }`

// KEYS and ARGV as SNAPSHOT (the first two of each unused). Returns the epoch, the stream's
// first id and its last id ('' when empty): the follower's check after a failed read, and once
// a second.
const CHECK = `${EPOCH}
local first = redis.call('XRANGE', KEYS[3], '-', '+', 'COUNT', 1)
local id = ''
if first[1] then id = first[1][1] end
local last = redis.call('XREVRANGE', KEYS[3], '+', '-', 'COUNT', 1)
local lastId = ''
if last[1] then lastId = last[1][1] end
return { epoch, id, lastId }`

module.exports = { WRITE, SNAPSHOT, CHECK }
