'use strict'

// The revocations this process made that Redis has not acknowledged yet (docs/revocation.md,
// "the queue"). A revocation is enforced locally at once and queued here; one writer delivers
// the queue in order and retries with back-off until Redis answers, so a revocation made while
// Redis is away reaches the other processes once it is back. Bounded: at most `max` entries
// (one per revoked token or subject: revoking it again while queued only raises its score), and
// at the bound a new revocation is refused, not dropped (ERR_AUTH_SHIELD_REVOCATION_QUEUE_FULL).

/**
 * The pending writes, oldest first. `add` returns what the caller's Promise resolves to:
 * `'delivered'` once Redis acknowledged the entry, or `'queued'` when it had not within
 * `waitMs` (it stays queued and is delivered later).
 */
// The writer's back-off while Redis is away: RETRY_MS doubling up to MAX_RETRY_MS.
const RETRY_MS = 100
const MAX_RETRY_MS = 1000
// Revocations per write (one script run).
const BATCH = 500

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref())

class RevocationOutbox {
  #entries = new Map() // key -> { kind, member, score, waiters: Set<(outcome) => void> }
  #writer = null // the writer's loop while it runs

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

  /**
   * Starts the writer unless it runs; resolves when the queue is empty. `send(batch)` writes
   * one batch and resolves true once Redis acknowledged it (it never rejects).
   */
  drain(send) {
    if (this.#writer === null) this.#writer = Promise.resolve().then(() => this.#write(send))
    return this.#writer
  }

  async #write(send) {
    let backoff = RETRY_MS
    while (this.#entries.size > 0) {
      const batch = this.batch(BATCH)
      if (await send(batch)) {
        this.delivered(batch)
        backoff = RETRY_MS
      } else {
        await sleep(backoff)
        backoff = Math.min(MAX_RETRY_MS, backoff * 2)
      }
    }
    // In the same turn as the last check: a revocation queued from now on starts a new loop.
    this.#writer = null
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

module.exports = { RevocationOutbox, BATCH }
