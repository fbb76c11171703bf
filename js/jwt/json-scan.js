'use strict'

// A JSON reader over bytes with serde_json's rules, in two modes: decoding (finite numbers) for
// the values the auth chain reads, and skipping (grammar only, no values built, no recursion:
// serde's IgnoredAny) for everything else. Both refuse a lone surrogate escape, which serde's
// IgnoredAny lets through: the native reader refuses it too (src/jwt/json_scan.rs). The bytes must be valid
// UTF-8 (RFC 8259 §8.1), checked once by the caller: a quote or backslash byte never sits inside
// a multi-byte sequence, so every run between them is valid UTF-8 as well.

/** null, booleans, objects, mixed arrays: values whose only use is to be the wrong type. */
const OTHER = Object.freeze({ other: true })

// Thrown (and caught by the callers) for any input serde_json would refuse.
const MALFORMED = new Error('malformed JSON')

const QUOTE = 0x22
const BACKSLASH = 0x5c
const SIMPLE_ESCAPES = { 0x22: '"', 0x5c: '\\', 0x2f: '/', 0x62: '\b', 0x66: '\f', 0x6e: '\n', 0x72: '\r', 0x74: '\t' }

class Reader {
  /** `buf` must be valid UTF-8 (see above). */
  constructor(buf) {
    this.b = buf
    // The same bytes as a string, one character per byte: ASCII runs (keys, numbers, most
    // values) are sliced from it instead of decoded one by one.
    this.s = buf.toString('latin1')
    this.i = 0
  }

  ws() {
    const b = this.b
    let i = this.i
    while (i < b.length && (b[i] === 0x20 || b[i] === 0x0a || b[i] === 0x0d || b[i] === 0x09)) i++
    this.i = i
  }

  expect(byte) {
    if (this.b[this.i] !== byte) throw MALFORMED
    this.i++
  }

  /** The string after an opening quote, decoded; refuses what serde refuses when decoding. */
  strictString() {
    const b = this.b
    let out = ''
    let start = this.i
    let ascii = true
    for (;;) {
      const c = b[this.i]
      if (c === QUOTE || c === BACKSLASH) {
        if (start < this.i) out += ascii ? this.s.slice(start, this.i) : b.toString('utf8', start, this.i)
        this.i++
        if (c === QUOTE) return out
        out += this.strictEscape()
        start = this.i
        ascii = true
      } else if (c === undefined || c < 0x20) {
        throw MALFORMED
      } else {
        if (c >= 0x80) ascii = false
        this.i++
      }
    }
  }

  strictEscape() {
    const e = this.b[this.i++]
    if (e !== 0x75) {
      const simple = SIMPLE_ESCAPES[e]
      if (simple === undefined) throw MALFORMED
      return simple
    }
    return this.unicodeEscape()
  }

  /**
   * The `XXXX` of a `\u` escape (and the trailing half of a surrogate pair). A lone surrogate is
   * refused wherever it stands, read or skipped, at any depth (src/jwt/json_scan.rs
   * `skip_unicode_escape`): it has no UTF-8 form, and both engines must call it malformed.
   */
  unicodeEscape() {
    const unit = this.hex4()
    if (unit >= 0xdc00 && unit <= 0xdfff) throw MALFORMED // lone trailing surrogate
    if (unit < 0xd800 || unit > 0xdbff) return String.fromCharCode(unit)
    // A leading surrogate must be followed by an escaped trailing one.
    if (this.b[this.i] !== BACKSLASH || this.b[this.i + 1] !== 0x75) throw MALFORMED
    this.i += 2
    const low = this.hex4()
    if (low < 0xdc00 || low > 0xdfff) throw MALFORMED
    return String.fromCharCode(unit, low)
  }

  hex4() {
    let n = 0
    for (let k = 0; k < 4; k++) {
      const d = hexValue(this.b[this.i++])
      if (d < 0) throw MALFORMED
      n = n * 16 + d
    }
    return n
  }

  /** Skips a string after its opening quote, checking only escapes and control characters. */
  looseString() {
    const b = this.b
    for (;;) {
      const c = b[this.i++]
      if (c === QUOTE) return
      if (c === BACKSLASH) {
        const e = b[this.i++]
        if (e === 0x75) this.unicodeEscape()
        else if (SIMPLE_ESCAPES[e] === undefined) throw MALFORMED
      } else if (c === undefined || c < 0x20) {
        throw MALFORMED
      }
    }
  }

  /** Scans a JSON number; with `decode`, returns its value and refuses overflow to infinity. */
  number(decode) {
    const b = this.b
    const start = this.i
    if (b[this.i] === 0x2d) this.i++
    if (b[this.i] === 0x30) this.i++
    else if (isDigit19(b[this.i])) this.skipDigits()
    else throw MALFORMED
    if (b[this.i] === 0x2e) {
      this.i++
      if (!isDigit(b[this.i])) throw MALFORMED
      this.skipDigits()
    }
    if (b[this.i] === 0x65 || b[this.i] === 0x45) {
      this.i++
      if (b[this.i] === 0x2b || b[this.i] === 0x2d) this.i++
      if (!isDigit(b[this.i])) throw MALFORMED
      this.skipDigits()
    }
    if (!decode) return undefined
    const value = Number(this.s.slice(start, this.i))
    if (!Number.isFinite(value)) throw MALFORMED
    return value
  }

  skipDigits() {
    while (isDigit(this.b[this.i])) this.i++
  }

  literal() {
    const b = this.b
    const i = this.i
    const word = b[i] === 0x74 ? 'true' : b[i] === 0x66 ? 'false' : b[i] === 0x6e ? 'null' : null
    if (word === null || !this.s.startsWith(word, i)) throw MALFORMED
    this.i += word.length
  }

  /** Skips any value after a grammar check, iteratively (serde's IgnoredAny). */
  ignoreValue() {
    const b = this.b
    const stack = []
    for (;;) {
      this.ws()
      const c = b[this.i]
      if (c === 0x5b) {
        this.i++
        this.ws()
        if (b[this.i] === 0x5d) this.i++
        else {
          stack.push(0x5d)
          continue
        }
      } else if (c === 0x7b) {
        this.i++
        this.ws()
        if (b[this.i] === 0x7d) this.i++
        else {
          this.looseKey()
          stack.push(0x7d)
          continue
        }
      } else this.scalar(false)
      // A value ended: close what it completes, or move on to the next element.
      for (;;) {
        if (stack.length === 0) return
        this.ws()
        const next = b[this.i++]
        const close = stack[stack.length - 1]
        if (next === close) {
          stack.pop()
        } else if (next === 0x2c) {
          if (close === 0x7d) {
            this.ws()
            this.looseKey()
          }
          break
        } else throw MALFORMED
      }
    }
  }

  looseKey() {
    this.expect(QUOTE)
    this.looseString()
    this.ws()
    this.expect(0x3a)
  }

  /** A string, number or literal; strings are skipped loosely unless `decode`. */
  scalar(decode) {
    const c = this.b[this.i]
    if (c === QUOTE) {
      this.i++
      if (decode) return this.strictString()
      this.looseString()
      return undefined
    }
    if (c === 0x2d || isDigit(c)) return this.number(decode)
    this.literal()
    return OTHER
  }

  /** `{ "key": <ignored>, ... }` with keys decoded strictly (serde's MapKey). */
  objectOfIgnored() {
    this.i++
    this.ws()
    if (this.b[this.i] === 0x7d) {
      this.i++
      return
    }
    for (;;) {
      this.ws()
      this.expect(QUOTE)
      this.strictString()
      this.ws()
      this.expect(0x3a)
      this.ignoreValue()
      this.ws()
      const c = this.b[this.i++]
      if (c === 0x7d) return
      if (c !== 0x2c) throw MALFORMED
    }
  }

  /** Walks a top-level object, handing each decoded key to `onEntry`, which reads the value. */
  topObject(onEntry) {
    this.members(onEntry)
    this.ws()
    if (this.i !== this.b.length) throw MALFORMED
  }

  /** Walks the object at the cursor, as topObject does for the top level. */
  members(onEntry) {
    this.ws()
    this.expect(0x7b)
    this.ws()
    if (this.b[this.i] === 0x7d) this.i++
    else {
      for (;;) {
        this.ws()
        this.expect(QUOTE)
        const key = this.strictString()
        this.ws()
        this.expect(0x3a)
        onEntry(key)
        this.ws()
        const c = this.b[this.i++]
        if (c === 0x7d) break
        if (c !== 0x2c) throw MALFORMED
      }
    }
  }
}

function isDigit(c) {
  return c >= 0x30 && c <= 0x39
}

function isDigit19(c) {
  return c >= 0x31 && c <= 0x39
}

function hexValue(c) {
  if (c >= 0x30 && c <= 0x39) return c - 0x30
  if (c >= 0x61 && c <= 0x66) return c - 0x57
  if (c >= 0x41 && c <= 0x46) return c - 0x37
  return -1
}

module.exports = { Reader, MALFORMED, OTHER }
