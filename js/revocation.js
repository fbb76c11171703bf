'use strict'

// The deny list of the JS engine, the same rules as the native core's (src/revocation.rs):
// revoked tokens keyed `iss \0 jti`, revoked subjects keyed `iss \0 sub` with a cut-off on
// `iat` (a token without `iat` is refused), entries dropped once their tokens expire, at most
// `maxRevocations` entries, and a new revocation refused at the bound (never an eviction).

const { typeError, rangeError } = require('../base/error')
const { message } = require('../contract')
const { renameDeprecated } = require('../base/deprecation')
const { checkKnownOptions } = require('../base/schema')

const MAX_PART_BYTES = 256
const MAX_TIME_SEC = 1e13
const LIMIT_CODE = 'ERR_AUTH_SHIELD_REVOCATION_LIMIT'
// How far ahead of the clock a subject cut-off may be and still hold back the next `iat`.
const CUTOFF_AHEAD_SEC = 0.002

function limitReached(max) {
  const err = new RangeError(message('revocationLimit', { max }))
  err.code = LIMIT_CODE
  return err
}

/** A string argument of at most MAX_PART_BYTES UTF-8 bytes (src/binding/args.rs `string`). */
function readPart(value, name) {
  if (typeof value !== 'string') throw typeError(message('mustBeString', { name }))
  const bytes = value.length <= MAX_PART_BYTES / 3 ? value.length : Buffer.byteLength(value)
  if (bytes > MAX_PART_BYTES) throw rangeError(message('tooManyBytes', { name, max: MAX_PART_BYTES, bytes }))
  return value
}

function readNumber(value, name) {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'number') throw typeError(message('mustBeNumber', { name }))
  return value
}

/** The options object (`typeName` in contract/options.json's callOptions): unknown names are refused. */
function readOptions(options, typeName) {
  if (options === undefined || options === null) return {}
  if (typeof options !== 'object') throw typeError(message('mustBeObject', { name: 'options' }))
  checkKnownOptions(options, typeName)
  return options
}

function readIss(options) {
  const iss = options.iss
  return iss === undefined || iss === null ? undefined : readPart(iss, 'options.iss')
}

function checkNotEmpty(value, name) {
  if (value === '') throw rangeError(message('mustNotBeEmpty', { name }))
}

function checkTime(value, name) {
  if (!(Number.isFinite(value) && value >= 0 && value <= MAX_TIME_SEC)) {
    throw rangeError(message('notNumericDate', { name, max: MAX_TIME_SEC }))
  }
}

class Revocations {
  #recentCutoff
  constructor(maxEntries, toleranceSec, retentionSec) {
    this.maxEntries = maxEntries
    this.toleranceSec = toleranceSec
    this.retentionSec = retentionSec
    this.tokens = new Map() // key -> dropAt
    this.subjects = new Map() // key -> { before, dropAt }
    this.nextSweepAt = Infinity
    this.unavailable = false
    // The latest subject cut-off at most CUTOFF_AHEAD_SEC ahead of the clock (or of the latest
    // iat) when it was set, and the latest iat signed (src/revocation.rs).
    this.#recentCutoff = 0
    this.lastIssued = 0
  }

  /**
   * The `iat` of a token signed at `now` (seconds, millisecond precision): `now`, or the cut-off
   * of a subject revocation made in this same millisecond, so the login right after "log out
   * everywhere" is accepted (src/revocation.rs `issued_at`).
   */
  /** The latest subject cut-off at most CUTOFF_AHEAD_SEC ahead of the clock, or 0. */
  get recentCutoff() {
    return this.#recentCutoff
  }

  issuedAt(now) {
    const iat = Math.max(now, this.#recentCutoff)
    this.lastIssued = Math.max(this.lastIssued, iat)
    return iat
  }

  /** The default cut-off at `nowMs`: the millisecond after the call and the latest iat signed. */
  defaultCutoff(nowMs) {
    return (Math.max(nowMs, Math.round(this.lastIssued * 1000)) + 1) / 1000
  }

  get size() {
    return this.tokens.size + this.subjects.size
  }

  /** Drops entries whose tokens can no longer be accepted; at most once per second of clock. */
  sweep(now) {
    if (now < this.nextSweepAt) return
    let next = Infinity
    for (const [key, dropAt] of this.tokens) {
      if (dropAt > now) next = Math.min(next, dropAt)
      else this.tokens.delete(key)
    }
    for (const [key, entry] of this.subjects) {
      if (entry.dropAt > now) next = Math.min(next, entry.dropAt)
      else this.subjects.delete(key)
    }
    this.nextSweepAt = Math.max(next, now + 1)
  }

  makeRoom(now) {
    if (this.size < this.maxEntries) return
    this.sweep(now)
    if (this.size >= this.maxEntries) throw limitReached(this.maxEntries)
  }

  revokeToken(jti, expiresAtSec, options, defaultIss, now) {
    readPart(jti, 'jti')
    const exp = readNumber(expiresAtSec, 'expiresAtSec')
    if (exp === undefined) throw typeError(message('mustBeNumber', { name: 'expiresAtSec' }))
    const iss = readIss(readOptions(options, 'RevokeTokenOptions')) ?? defaultIss
    checkNotEmpty(jti, 'jti')
    checkTime(exp, 'expiresAtSec')
    const dropAt = exp + this.toleranceSec
    if (dropAt <= now) return
    const key = `${iss}\0${jti}`
    const held = this.tokens.get(key)
    if (held !== undefined) {
      this.tokens.set(key, Math.max(held, dropAt))
      return
    }
    this.makeRoom(now)
    this.tokens.set(key, dropAt)
    this.nextSweepAt = Math.min(this.nextSweepAt, dropAt)
  }

  /** `nowMs`: whole milliseconds; the default cut-off is the next one (src/authenticator.rs). */
  revokeSubject(sub, options, defaultIss, nowMs) {
    const now = nowMs / 1000
    readPart(sub, 'sub')
    const opts = renameDeprecated(readOptions(options, 'RevokeSubjectOptions'), 'RevokeSubjectOptions', 'options')
    const before = readNumber(opts.issuedBeforeSec, 'options.issuedBeforeSec') ?? this.defaultCutoff(nowMs)
    const iss = readIss(opts) ?? defaultIss
    checkNotEmpty(sub, 'sub')
    checkTime(before, 'options.issuedBeforeSec')
    if (before <= Math.max(now, Math.round(this.lastIssued * 1000) / 1000) + CUTOFF_AHEAD_SEC) this.#recentCutoff = Math.max(this.#recentCutoff, before)
    const dropAt = before + this.retentionSec
    if (dropAt <= now) return
    const key = `${iss}\0${sub}`
    const held = this.subjects.get(key)
    if (held !== undefined) {
      held.before = Math.max(held.before, before)
      held.dropAt = Math.max(held.dropAt, dropAt)
      return
    }
    this.makeRoom(now)
    this.subjects.set(key, { before, dropAt })
    this.nextSweepAt = Math.min(this.nextSweepAt, dropAt)
  }

  count(now) {
    this.sweep(now)
    return this.size
  }

  /** The failure code for verified `claims`, or undefined. */
  check(claims) {
    if (this.tokens.size + this.subjects.size !== 0 && this.isRevoked(claims)) return 'token_revoked'
    if (this.unavailable) return 'revocation_unavailable'
    return undefined
  }

  isRevoked(claims) {
    const iss = typeof claims.iss === 'string' ? claims.iss : ''
    if (typeof claims.jti === 'string' && this.tokens.has(`${iss}\0${claims.jti}`)) return true
    if (this.subjects.size === 0 || typeof claims.sub !== 'string') return false
    const entry = this.subjects.get(`${iss}\0${claims.sub}`)
    if (entry === undefined) return false
    // No iat: nothing proves the token came after the cut-off, so it is refused.
    return typeof claims.iat !== 'number' || claims.iat < entry.before
  }
}

module.exports = { Revocations, MAX_PART_BYTES, LIMIT_CODE }
