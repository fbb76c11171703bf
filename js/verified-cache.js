'use strict'

// The verified-token cache of the JS engine, the same rules as src/verified_cache.rs: keyed by
// the SHA-256 digest of the whole token string, each entry tagged with the key-set generation
// it was verified under and dropped once its token's exp has passed, only successes stored,
// at most `capacity` entries (first in, first out; a Map keeps insertion order).

const crypto = require('#node/crypto')

const digestOf =
  typeof crypto.hash === 'function'
    ? (token) => crypto.hash('sha256', token, 'base64')
    : (token) => crypto.createHash('sha256').update(token).digest('base64')

// Default capacity when any verification key is asymmetric (verifiedTokenCacheMaxEntries unset).
const DEFAULT_CAPACITY = 1000

class VerifiedCache {
  constructor(capacity) {
    this.capacity = capacity
    this.entries = new Map()
    // Lookups answered from the cache, and the others (metrics(), js/metrics.js).
    this.hits = 0
    this.misses = 0
  }

  /**
   * Whether `digest` was verified under `generation` and has not expired at `now`. A hit is
   * counted here, a miss by the caller (`countMiss`), as src/verified_cache.rs.
   */
  hit(digest, generation, now) {
    const entry = this.entries.get(digest)
    if (entry !== undefined && entry.generation === generation && now < entry.exp) {
      this.hits++
      return true
    }
    if (entry !== undefined) this.entries.delete(digest)
    return false
  }

  countMiss() {
    this.misses++
  }

  insert(digest, generation, exp) {
    if (this.entries.has(digest)) return
    while (this.entries.size >= this.capacity) this.entries.delete(this.entries.keys().next().value)
    this.entries.set(digest, { generation, exp: typeof exp === 'number' ? exp : Infinity })
  }

  clear() {
    this.entries.clear()
  }

  get size() {
    return this.entries.size
  }
}

module.exports = { VerifiedCache, digestOf, DEFAULT_CAPACITY }
