'use strict'

// The introspection cache of the JS engine, the same rules as src/introspection.rs: what an
// authorization server said of an opaque token (RFC 7662), keyed by the SHA-256 digest of the
// token (never the token), each entry held until its `until`; bounded in entries and in bytes
// (claims + introspectionEntryOverheadBytes each). A new answer that does not fit evicts inactive
// answers first, oldest first; an active one then evicts the oldest active; an inactive one is
// refused rather than evict an active one.

const { LIMITS } = require('../contract')

const ENTRY_OVERHEAD = LIMITS.introspectionEntryOverheadBytes
const MAX_CLAIMS_BYTES = LIMITS.maxIntrospectionClaimsBytes

class IntrospectionCache {
  constructor(maxEntries, maxBytes) {
    this.maxEntries = maxEntries
    this.maxBytes = maxBytes
    this.entries = new Map()
    // Admission order per kind: [digest, seq] pairs; a pair whose seq is not its entry's is stale.
    this.active = []
    this.activeHead = 0
    this.inactive = []
    this.inactiveHead = 0
    this.bytes = 0
    this.seq = 0
  }

  /** The claims buffer of an active entry, null for an inactive one, undefined when none is in force. */
  lookup(digest, now) {
    const e = this.entries.get(digest)
    if (e === undefined || !(now < e.until)) return undefined
    return e.claims
  }

  /** Holds `claims` (a Buffer, or null: inactive) until `until`; false when the bounds refused it. */
  admit(digest, claims, until) {
    const active = claims !== null
    const entry = { claims, until, seq: ++this.seq }
    const cost = costOf(entry)
    if (cost > this.maxBytes) return false
    const old = this.entries.get(digest)
    if (old !== undefined) {
      this.entries.delete(digest)
      this.bytes -= costOf(old)
    }
    while (this.entries.size >= this.maxEntries || this.bytes + cost > this.maxBytes) {
      if (!this.evictOldest(false) && !(active && this.evictOldest(true))) return false
    }
    this.bytes += cost
    if (active) this.active.push([digest, entry.seq])
    else this.inactive.push([digest, entry.seq])
    this.entries.set(digest, entry)
    this.compact()
    return true
  }

  evictOldest(active) {
    const queue = active ? this.active : this.inactive
    let head = active ? this.activeHead : this.inactiveHead
    let evicted = false
    while (head < queue.length) {
      const [digest, seq] = queue[head++]
      const e = this.entries.get(digest)
      if (e !== undefined && e.seq === seq) {
        this.entries.delete(digest)
        this.bytes -= costOf(e)
        evicted = true
        break
      }
    }
    if (active) this.activeHead = head
    else this.inactiveHead = head
    return evicted
  }

  /** Consumed and stale queue items are dropped once they outnumber the live entries. */
  compact() {
    const items = this.active.length - this.activeHead + this.inactive.length - this.inactiveHead
    if (this.activeHead + this.inactiveHead <= this.maxEntries && items <= 2 * this.maxEntries + 16) return
    const live = ([d, s]) => {
      const e = this.entries.get(d)
      return e !== undefined && e.seq === s
    }
    this.active = this.active.slice(this.activeHead).filter(live)
    this.inactive = this.inactive.slice(this.inactiveHead).filter(live)
    this.activeHead = 0
    this.inactiveHead = 0
  }

  get size() {
    return this.entries.size
  }
}

function costOf(entry) {
  return ENTRY_OVERHEAD + (entry.claims === null ? 0 : entry.claims.length)
}

/** A compact JWS (three dot-separated segments) is verified locally; any other token is introspected. */
function isJwtShaped(token) {
  const first = token.indexOf('.')
  if (first === -1) return false
  const second = token.indexOf('.', first + 1)
  return second !== -1 && token.indexOf('.', second + 1) === -1
}

module.exports = { IntrospectionCache, isJwtShaped, MAX_CLAIMS_BYTES }
