'use strict'

// The revocations this process made that Redis has not acknowledged yet (docs/revocation.md,
// "Outages"). A revocation is enforced locally at once and queued here; the feed's writer
// delivers the queue in order and retries until Redis answers, so a revocation made while
// Redis is away reaches the other processes once it is back. Bounded: at most `max` entries
// (one per revoked token or subject: revoking it again while queued only raises its score), and
// at the bound a new revocation is refused, not dropped (ERR_AUTH_SHIELD_REVOCATION_QUEUE_FULL).

/**
 * The pending writes, oldest first. `add` returns what the caller's Promise resolves to:
 * `'delivered'` once Redis acknowledged the entry, or `'queued'` when it had not within
 * `waitMs` (it stays queued and is delivered later).
 */
class RevocationOutbox {
  #entries = new Map() // key -> { kind, member, score, waiters: Set<(outcome) => void> }

  constructor(max) {
    this.max = max
  }

  get size() {
    return this.#entries.size
  }

  /** Whether `key` can be queued: already queued, or room left. */
  accepts(key) {
    return this.#entries.has(key) || this.#entries.size < this.max
  }

  /** Queues `key` (after `accepts`), keeping the later score; resolves as the class says. */
  add(key, kind, member, score, waitMs) {
    let entry = this.#entries.get(key)
    if (entry === undefined) {
      entry = { kind, member, score, waiters: new Set() }
      this.#entries.set(key, entry)
    } else if (entry.score < score) {
      entry.score = score
    }
    const { waiters } = entry
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        waiters.delete(settle)
        resolve('queued')
      }, waitMs)
      timer.unref()
      const settle = (outcome) => {
        clearTimeout(timer)
        resolve(outcome)
      }
      waiters.add(settle)
    })
  }

  /** The oldest `n` entries as they are now: `[{ key, kind, member, score }]`. */
  batch(n) {
    const out = []
    for (const [key, { kind, member, score }] of this.#entries) {
      if (out.length === n) break
      out.push({ key, kind, member, score })
    }
    return out
  }

  /** Redis acknowledged `batch`: entries not raised since leave the queue, their callers learn. */
  delivered(batch) {
    for (const sent of batch) {
      const entry = this.#entries.get(sent.key)
      if (entry === undefined || entry.score > sent.score) continue
      this.#entries.delete(sent.key)
      for (const settle of entry.waiters) settle('delivered')
    }
  }

  /** Empties the queue (the feed is closing); callers still waiting get `'queued'`. */
  clear() {
    const entries = [...this.#entries.values()]
    this.#entries.clear()
    for (const entry of entries) for (const settle of entry.waiters) settle('queued')
    return entries.length
  }
}

module.exports = { RevocationOutbox }
