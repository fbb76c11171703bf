'use strict'

// Where evicted debts go, as src/rate_limit/debt_sketch.rs: ROWS rows of GCRA theoretical
// arrival times; folding keeps the latest TAT in each of a key's cells, a returning key starts
// from the earliest of its cells, so it is never fresher than it left. Same hash (two 32-bit
// lanes over the key's UTF-8 bytes, Math.imul for the native wrapping multiply), same cells.

const { createHmac, randomBytes } = require('#node/crypto')

const ROWS = 4
const MIN_WIDTH = 1 << 10
const MAX_WIDTH = 1 << 20
const FNV_PRIME = 0x01000193
const LANE2_MULTIPLIER = 0x5bd1e995

function fmix32(h) {
  h ^= h >>> 16
  h = Math.imul(h, 0x85ebca6b)
  h ^= h >>> 13
  h = Math.imul(h, 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

/**
 * The two hash lanes of `key` (its UTF-8 bytes, a lone surrogate as U+FFFD as Node encodes it)
 * under `seeds`, as `hash_key` in Rust: `[h1, h2]`, unsigned 32-bit.
 */
function hashKey(seed1, seed2, key) {
  let h1 = seed1 | 0
  let h2 = seed2 | 0
  let len = 0
  const n = key.length
  for (let i = 0; i < n; i++) {
    let c = key.charCodeAt(i)
    if (c < 0x80) {
      h1 = Math.imul(h1 ^ c, FNV_PRIME)
      h2 = Math.imul(h2 ^ c, LANE2_MULTIPLIER)
      len += 1
      continue
    }
    if (c >= 0xd800 && c <= 0xdfff) {
      const next = i + 1 < n ? key.charCodeAt(i + 1) : 0
      if (c <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (next - 0xdc00)
        i++
      } else {
        c = 0xfffd
      }
    }
    let bytes
    if (c < 0x800) bytes = [0xc0 | (c >> 6), 0x80 | (c & 0x3f)]
    else if (c < 0x10000) bytes = [0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)]
    else bytes = [0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f)]
    for (const b of bytes) {
      h1 = Math.imul(h1 ^ b, FNV_PRIME)
      h2 = Math.imul(h2 ^ b, LANE2_MULTIPLIER)
    }
    len += bytes.length
  }
  return [fmix32(h1 ^ len), (fmix32(h2 ^ len) | 1) >>> 0]
}

/** Row width for a limiter keeping `maxKeys` buckets: a power of two within bounds. */
function widthFor(maxKeys) {
  const n = Math.min(Math.max(maxKeys, MIN_WIDTH), MAX_WIDTH)
  return 2 ** Math.ceil(Math.log2(n))
}

/** Two random 32-bit seeds, so nobody outside the process can aim keys at a user's cells. */
function randomSeeds() {
  const b = randomBytes(8)
  return [b.readUInt32LE(0), b.readUInt32LE(4)]
}

/**
 * Seeds derived from a secret, as `seeds_from_secret` in src/rate_limit.rs: HMAC-SHA256 under
 * the secret over a fixed label, its first 8 bytes as two little-endian u32. Unpredictable to
 * anyone without the secret, and the same in both engines built from one config.
 */
function seedsFromSecret(secret) {
  const tag = createHmac('sha256', secret).update('auth-shield rate-limit sketch seeds v1').digest()
  return [tag.readUInt32LE(0), tag.readUInt32LE(4)]
}

class DebtSketch {
  constructor(width, seeds) {
    this.width = width
    this.mask = width - 1
    this.seed1 = seeds[0]
    this.seed2 = seeds[1]
    // Float64 TATs in nanoseconds; 0 (the distant past) means nothing owed. Allocated at the
    // first debt folded in: until then every cell reads 0, and a limiter that never evicts an
    // owing bucket never pays for the 4 × width × 8 bytes (4 MiB at the default maxKeys, which
    // cost each construction a fresh zeroed buffer and the GC pressure of it; the native sketch
    // is zeroed by the allocator, its pages committed as debts land in them).
    this.cells = null
  }

  /** The sketch's fixed size in bytes, allocated or not yet. */
  get bytes() {
    return ROWS * this.width * Float64Array.BYTES_PER_ELEMENT
  }

  hash(key) {
    return hashKey(this.seed1, this.seed2, key)
  }

  /** The cell of `hash` in each row (as `cells_of` in Rust). */
  cellsOf(hash) {
    const out = []
    for (let row = 0; row < ROWS; row++) out.push(row * this.width + ((hash[0] + Math.imul(row, hash[1])) & this.mask))
    return out
  }

  fold(hash, tat) {
    if (this.cells === null) this.cells = new Float64Array(ROWS * this.width)
    const [h1, h2] = hash
    for (let row = 0; row < ROWS; row++) {
      const i = row * this.width + ((h1 + Math.imul(row, h2)) & this.mask)
      if (this.cells[i] < tat) this.cells[i] = tat
    }
  }

  tatOf(hash) {
    if (this.cells === null) return 0
    const [h1, h2] = hash
    let tat = Infinity
    for (let row = 0; row < ROWS; row++) {
      const cell = this.cells[row * this.width + ((h1 + Math.imul(row, h2)) & this.mask)]
      if (cell < tat) tat = cell
    }
    return tat
  }
}

module.exports = { DebtSketch, hashKey, widthFor, randomSeeds, seedsFromSecret, ROWS }
