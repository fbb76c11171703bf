'use strict'

// What this process knows of the shared set: every revocation it made or applied from Redis,
// until Redis itself would prune it (docs/revocation.md, "Redis restarted empty"). When Redis
// comes back without its data (a restart without persistence, a flush, a failover to an empty
// replica), each live feed re-publishes what it knows, so the set is rebuilt as long as one
// process that knew a revocation is alive. The attached authenticators hold the same entries,
// but a deny list cannot be listed (the native one lives in Rust), hence this copy.
//
// Bounded: at most `max` entries (option `maxKnown`). Expired entries are swept when room is
// needed (at most once a second). At the bound a revocation made here is refused
// (ERR_AUTH_SHIELD_REVOCATION_LIMIT, as at `maxRevocations`); one read from Redis that finds no
// room is still enforced, counted and reported, and its writer still knows it.

const SWEEP_EVERY_MS = 1000

class KnownRevocations {
  #entries = new Map() // key -> { kind, member, score, until }
  #sweptAt = 0

  constructor(max) {
    this.max = max
  }

  get size() {
    return this.#entries.size
  }

  /** Whether `key` can be held: already held, or room left once expired entries are swept. */
  accepts(key) {
    if (this.#entries.has(key) || this.#entries.size < this.max) return true
    this.#sweep(false)
    return this.#entries.size < this.max
  }

  /**
   * Holds `key` until `until` (seconds), keeping the later score; false when it is already
   * expired or there is no room (after `accepts`, never).
   */
  add(key, kind, member, score, until) {
    if (until * 1000 < Date.now()) return false
    const held = this.#entries.get(key)
    if (held !== undefined) {
      if (held.score < score) Object.assign(held, { score, until })
      return true
    }
    if (!this.accepts(key)) return false
    this.#entries.set(key, { kind, member, score, until })
    return true
  }

  /** The entries not yet expired: `[{ key, kind, member, score }]`. */
  live() {
    this.#sweep(true)
    return [...this.#entries].map(([key, { kind, member, score }]) => ({ key, kind, member, score }))
  }

  clear() {
    this.#entries.clear()
  }

  #sweep(always) {
    const now = Date.now()
    if (!always && now - this.#sweptAt < SWEEP_EVERY_MS) return
    this.#sweptAt = now
    for (const [key, { until }] of this.#entries) if (until * 1000 < now) this.#entries.delete(key)
  }
}

module.exports = { KnownRevocations }
