'use strict'

// The in-process replay cache of DPoP proofs, as src/dpop/replay.rs: one admission per key
// (SHA-256 of thumbprint '.' jti, hex) while the proof is in its window; expired entries go
// first; when every entry is live a new proof is refused ('full'), never admitted by
// forgetting one that could then be replayed. A Map plus a binary min-heap by expiry.

class ReplayCache {
  constructor(capacity) {
    this.capacity = capacity
    this.live = new Map()
    // [expiresAt, key] pairs, soonest first.
    this.heap = []
  }

  get size() {
    return this.live.size
  }

  /** 'fresh', 'replayed' or 'full'; an entry stays until `now` is past its expiry. */
  admit(key, expiresAt, now) {
    const heap = this.heap
    while (heap.length > 0 && heap[0][0] < now) {
      // A released key admitted again has a newer heap entry: only the one matching the live
      // expiry removes it.
      const [at, old] = pop(heap)
      if (this.live.get(old) === at) this.live.delete(old)
    }
    if (this.live.has(key)) return 'replayed'
    if (this.live.size >= this.capacity) return 'full'
    const at = Math.max(expiresAt, 0)
    this.live.set(key, at)
    push(heap, [at, key])
    return 'fresh'
  }

  /**
   * Forgets `key` (a proof whose request was refused after the engine admitted it); true if it
   * was held. Its heap entry stays until it expires or the heap holds twice the capacity, when
   * the heap is rebuilt from the live entries (memory bounded, amortised O(1) per release).
   */
  release(key) {
    if (!this.live.delete(key)) return false
    if (this.heap.length >= 2 * this.capacity) {
      // Sorted by expiry is a valid min-heap.
      this.heap = Array.from(this.live, ([k, at]) => [at, k]).sort((a, b) => a[0] - b[0])
    }
    return true
  }
}

function less(a, b) {
  return a[0] < b[0]
}

function push(heap, item) {
  let i = heap.push(item) - 1
  while (i > 0) {
    const parent = (i - 1) >> 1
    if (!less(heap[i], heap[parent])) break
    ;[heap[i], heap[parent]] = [heap[parent], heap[i]]
    i = parent
  }
}

function pop(heap) {
  const top = heap[0]
  const last = heap.pop()
  if (heap.length > 0) {
    heap[0] = last
    let i = 0
    for (;;) {
      const l = 2 * i + 1
      const r = l + 1
      let m = i
      if (l < heap.length && less(heap[l], heap[m])) m = l
      if (r < heap.length && less(heap[r], heap[m])) m = r
      if (m === i) break
      ;[heap[i], heap[m]] = [heap[m], heap[i]]
      i = m
    }
  }
  return top
}

module.exports = { ReplayCache }
