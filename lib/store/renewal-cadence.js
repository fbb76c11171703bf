'use strict'

// How long the store's background loop sleeps between turns.
//
// A turn costs little JavaScript but, on an idle or half-busy event loop, one wake-up of the
// process (measured on the bench machine: ~150 µs of CPU for a bare 10 ms interval, more than
// the renewal it sends), so a fixed 10 ms cadence was most of the store's cost. What a turn has
// to be fast for is known from the identities it takes: each was queued with half a lease left
// (its slack), and how much of that slack it spent before the turn took it says whether the
// cadence is too slow. So the sleep starts at `renewIntervalMs`, doubles (up to BACK_OFF times
// it) while the identities taken have spent less than a quarter of their slack, and drops back
// to `renewIntervalMs` as soon as one has spent more than half of it (or ran out: a request that
// waits). Spending grows with the sleep, so a doubling from under a quarter stays under a half.
// A turn that takes nothing backs off too: nobody is short of credit (an idle store at the
// shortest sleep cost ~22 ms of CPU per second in wake-ups alone), and an identity queued
// during the longer sleep still has its slack, or waits for one round trip, never refused.

const BACK_OFF = 8
const EASY = 0.25
const HURRIED = 0.5

class RenewalCadence {
  constructor(shortestMs) {
    this.shortestMs = shortestMs
    this.longestMs = shortestMs * BACK_OFF
    this.delayMs = shortestMs
  }

  /**
   * After a turn: `spent` is the largest share (0 to 1) of its slack an identity taken by the
   * turn had spent, or -1 when it took none. Returns the sleep before the next turn.
   */
  next(spent) {
    if (spent > HURRIED) this.delayMs = this.shortestMs
    else if (spent < EASY) this.delayMs = Math.min(this.longestMs, this.delayMs * 2)
    return this.delayMs
  }
}

module.exports = { RenewalCadence, BACK_OFF }
