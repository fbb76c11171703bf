'use strict'

// Credits leased from a shared bucket, spent locally with no I/O: the JS engine's mirror of
// src/rate_limit/lease.rs (same decisions, renewal rule, count of waiting requests, bounds and
// sweep). See that file and docs/scale-out.md for the bound across processes.

const { LIMITS } = require('../../contract')

const MAX_LEASE = LIMITS.maxLease
// Most requests of one identity counted as waiting for its credits (src/rate_limit/lease.rs).
const MAX_WAITERS = LIMITS.maxLeaseWaiters

class LeaseTable {
  constructor(capacity, lease, strict, maxKeys) {
    this.capacity = capacity
    this.lease = strict ? 1 : Math.min(Math.max(lease, 1), MAX_LEASE)
    this.strict = strict
    this.maxKeys = Math.max(maxKeys, 1)
    this.entries = new Map()
    this.queue = []
    // Use counter for least-recently-used order: no ties, unlike a clock (the native table too).
    this.uses = 0
  }

  get size() {
    return this.entries.size
  }

  /**
   * Spends one credit of `key` at `nowNanos` (monotonic): `{ allowed: true, remaining }`,
   * `{ allowed: false, retryAfterMs }` (blocked by the store), or `null` (pending: queued).
   */
  take(key, nowNanos) {
    const lowWater = Math.floor(this.lease / 2)
    const queueRoom = this.queue.length < this.maxKeys
    const use = ++this.uses
    const entry = this.entries.get(key)
    if (entry !== undefined) {
      entry.lastUse = use
      if (entry.credits > 0) {
        entry.credits -= 1
        const remaining = Math.min(entry.credits + entry.sharedRemaining, this.capacity)
        if (!this.strict && entry.credits <= lowWater && !entry.queued && queueRoom) {
          entry.queued = true
          this.queue.push(key)
        }
        return { allowed: true, remaining }
      }
      if (entry.blockedUntil > nowNanos) {
        return { allowed: false, retryAfterMs: Math.max(Math.ceil((entry.blockedUntil - nowNanos) / 1e6), 1) }
      }
      if (entry.waiters < MAX_WAITERS) entry.waiters += 1
      if (!entry.queued && queueRoom) {
        entry.queued = true
        this.queue.push(key)
      }
      return null
    }
    if (this.entries.size >= this.maxKeys) this.sweep()
    const queued = this.queue.length < this.maxKeys
    if (queued) this.queue.push(key)
    this.entries.set(key, { credits: 0, sharedRemaining: 0, blockedUntil: 0, queued, lastUse: use, waiters: 1 })
    return null
  }

  /** Most credits `entry` may hold: a lease, plus one for each further request waiting. */
  target(entry) {
    return this.lease - 1 + Math.max(entry.waiters, 1)
  }

  /**
   * The queued keys with the tokens each wants (`lease − credits`, plus one for each further
   * request waiting); empties the queue.
   */
  drain() {
    const queue = this.queue
    this.queue = []
    const wanted = []
    for (const key of queue) {
      const entry = this.entries.get(key)
      // Not queued any more: answered (or queued twice) since it was pushed.
      if (entry === undefined || !entry.queued) continue
      entry.queued = false
      const want = this.target(entry) - entry.credits
      if (want > 0) wanted.push({ key, want })
    }
    return wanted
  }

  /**
   * The store's answer: `tokens` granted (0 blocks for `retryAfterMs`), `sharedRemaining` left.
   * A grant that leaves fewer credits than requests waiting queues the key again at once.
   */
  grant(key, tokens, sharedRemaining, retryAfterMs, nowNanos) {
    let entry = this.entries.get(key)
    if (entry === undefined) {
      if (this.entries.size >= this.maxKeys) this.sweep()
      entry = { credits: 0, sharedRemaining: 0, blockedUntil: 0, queued: false, lastUse: 0, waiters: 0 }
      this.entries.set(key, entry)
    }
    entry.lastUse = ++this.uses
    // An answer settles whatever was queued for the key.
    entry.queued = false
    entry.credits = Math.min(entry.credits + tokens, this.target(entry))
    entry.sharedRemaining = sharedRemaining
    entry.blockedUntil = tokens === 0 ? nowNanos + Math.max(retryAfterMs, 1) * 1e6 : 0
    if (tokens > 0 && entry.credits < entry.waiters) {
      // Short of the requests waiting (they came after it was asked for, or the shared bucket
      // had fewer): ask again before they retry. A refusal ends the wait (they get 429).
      if (this.queue.length < this.maxKeys) {
        entry.queued = true
        this.queue.push(key)
      }
    } else {
      entry.waiters = 0
    }
  }

  /** Forgets entries down to half the bound, unqueued and least recently used first. */
  sweep() {
    const excess = this.entries.size - Math.floor(this.maxKeys / 2)
    if (excess <= 0) return
    const order = (e) => [e.queued ? 1 : 0, e.lastUse]
    const stamps = Array.from(this.entries.values(), order).sort((a, b) => a[0] - b[0] || a[1] - b[1])
    const [cq, cl] = stamps[excess - 1]
    for (const [key, e] of this.entries) {
      const [q, l] = order(e)
      if (!(q > cq || (q === cq && l > cl))) this.entries.delete(key)
    }
  }
}

module.exports = { LeaseTable, MAX_LEASE, MAX_WAITERS }
