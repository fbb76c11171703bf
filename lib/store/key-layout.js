'use strict'

// Where the store and the revocation feed put their keys on each topology (docs/scale-out.md,
// "Topologies"). On one Redis (or behind Sentinel) the names are those of every earlier version.
// On a cluster every script must touch one hash slot, so keys carry a hash tag (`{…}`: Redis
// hashes only what is inside the first pair of braces):
//   - a limit's buckets are spread over SHARDS tags, `<prefix>rl:{<name>:<shard>}:<identity>`,
//     the shard a fixed function of the identity: a renewal batch becomes one script per shard
//     present in it (at most SHARDS), and the identities of one limit land on SHARDS slots,
//     spread over the masters;
//   - the revocation keys share one tag, `{<prefix>}:tokens` and so on: the sets, the stream and
//     the epoch marker live in one slot, on one master.
//   - a DPoP replay entry is one key, `<prefix>dpop:<replay key>`, on every topology and without
//     a tag: each is written by one SET NX PX (one key, one slot), and untagged entries spread
//     over every master instead of piling every client's proofs onto one.
// A prefix that already holds a hash tag is used as it is: everything under it is in one slot,
// on every topology.

// Tags per limit on a cluster. Part of the key layout: every process of one cluster must agree.
const SHARDS = 16

/** Whether `s` holds a hash tag: a `{` followed, later, by a `}` with something between. */
function hasHashTag(s) {
  const open = s.indexOf('{')
  if (open < 0) return false
  const close = s.indexOf('}', open + 1)
  return close > open + 1
}

// CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), the hash of Redis Cluster's key slots
// (the cluster specification, "Key distribution model"), one byte at a time from this table.
const CRC16 = new Uint16Array(256)
for (let b = 0; b < 256; b++) {
  let c = b << 8
  for (let i = 0; i < 8; i++) c = c & 0x8000 ? (c << 1) ^ 0x1021 : c << 1
  CRC16[b] = c & 0xffff
}

/**
 * The cluster hash slot (0-16383) of `key` (a string, hashed as UTF-8): CRC16 of its hash tag
 * when it has one, else of the whole key, modulo 16384. The same as `CLUSTER KEYSLOT`.
 */
function slotOf(key) {
  let s = key
  const open = key.indexOf('{')
  if (open >= 0) {
    const close = key.indexOf('}', open + 1)
    if (close > open + 1) s = key.slice(open + 1, close)
  }
  let crc = 0
  for (const byte of Buffer.from(s, 'utf8')) crc = ((crc << 8) & 0xffff) ^ CRC16[((crc >> 8) ^ byte) & 0xff]
  return crc & 16383
}

/** The shard of an identity: FNV-1a (32 bits) of its UTF-16 code units, modulo SHARDS. Stable across versions. */
function shardOf(identity) {
  let h = 0x811c9dc5
  for (let i = 0; i < identity.length; i++) {
    h ^= identity.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return (h >>> 0) % SHARDS
}

/**
 * The bucket keys of one limit: `{ sharded, keyOf(identity), shardOf }`. `sharded` is true on a
 * cluster (without a tag in `prefix`): keys are then grouped by shard, one script per group.
 */
function leaseKeys(prefix, name, topology) {
  if (topology !== 'cluster' || hasHashTag(prefix)) {
    const base = `${prefix}rl:${name}:`
    return { sharded: false, keyOf: (identity) => base + identity, shardOf: () => 0 }
  }
  const bases = Array.from({ length: SHARDS }, (_, shard) => `${prefix}rl:{${name}:${shard}}:`)
  return { sharded: true, keyOf: (identity) => bases[shardOf(identity)] + identity, shardOf }
}

/** The revocation feed's keys for `prefix`: tokens, subjects, stream, epoch (one slot on a cluster). */
function revocationKeys(prefix, topology) {
  const p = topology === 'cluster' && !hasHashTag(prefix) ? `{${prefix}}` : prefix
  return { tokens: `${p}:tokens`, subjects: `${p}:subjects`, stream: `${p}:stream`, epoch: `${p}:epoch` }
}

/** The DPoP replay entry of `replayKey` under `prefix`: the same single key on every topology. */
function dpopReplayKey(prefix, replayKey) {
  return `${prefix}dpop:${replayKey}`
}

module.exports = { SHARDS, hasHashTag, shardOf, slotOf, leaseKeys, revocationKeys, dpopReplayKey }
