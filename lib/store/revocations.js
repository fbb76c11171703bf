'use strict'

// Revocations shared through Redis (docs/revocation.md). A revocation is written to the current
// set (two sorted sets: revoked tokens scored by `exp`, revoked subjects scored by `before`) and
// appended to a stream, in one Lua script so the two never disagree. Every process loads the set
// at start together with the stream's last id (one script: no gap between them), then follows
// the stream with XREAD BLOCK on a connection of its own and applies each entry to the native
// deny list of the authenticators attached to it. Checking a token never does I/O.
//
// After a failed or stalled read the feed resumes from its last id; if that id may have been
// trimmed off the stream (MAXLEN), it reloads the whole set instead. Past `maxRevocationLagMs`
// without a successful read the feed is stale: `onStale: 'open'` (the default) keeps enforcing
// what it knows and admits the rest; `'closed'` makes the authenticators refuse every token not
// already refused with `revocation_unavailable` (503) until a read succeeds again.
//
// Writing never fails for want of Redis: a revocation is enforced locally at once and queued
// (lib/store/revocation-outbox.js, bounded), and delivered once Redis answers. Each feed also
// keeps what it knows (lib/store/known-revocations.js, bounded) and re-publishes it when the
// epoch marker shows that Redis lost its data (a restart without persistence), so the set is
// rebuilt as long as one process that knew a revocation is alive.

const { randomUUID } = require('node:crypto')
const { commandClient } = require('./commands')
const { answerWithin } = require('./answer-within')
const { typeError, codedError: storeError } = require('../../base/error')
const { renameDeprecated } = require('../../base/deprecation')
const { readFeedOptions } = require('./revocation-options')
const { idLess, streamEntries, fieldsOf } = require('./stream-replies')
const { WRITE, SNAPSHOT, CHECK } = require('./revocation-scripts')
const { RevocationOutbox, BATCH } = require('./revocation-outbox')
const { KnownRevocations } = require('./known-revocations')
const { revocationSeam, setRevocationWriter, clearRevocationWriter, revocationWriter, revokeLocally } = require('../../base/store-seam')
const { revocationKeys } = require('./key-layout')

// One day: the largest clockToleranceSec, so no process still accepts a token whose entry went.
const GRACE_SEC = 86_400
const RETRY_MS = 100
// A write the client still holds unanswered this long (in its offline queue while it
// reconnects) is sent again; before that, never a second copy: at most one write in flight.
const HELD_WRITE_MS = 30_000
// How much longer than its BLOCK time a read may take before the feed suspects a gap.
const STALL_MS = 1000
// How often a healthy follower checks the epoch marker (a flush without a reconnect).
const CHECK_MS = 1000

/**
 * The cut-off a subject revocation is written with: `options.issuedBeforeSec`, else now
 * (NumericDate seconds). Fixed once, by the revoking process, so every process applies the same
 * one; a bad `options` is left for the authenticator to refuse with its usual error.
 */
function subjectCutoff(options) {
  const before = typeof options === 'object' && options !== null ? options.issuedBeforeSec : undefined
  // Default: the millisecond after now, as Authenticator#revokeSubject (docs/revocation.md). The
  // cut-off is fixed here, so every process applies the same one.
  return before ?? (Date.now() + 1) / 1000
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref())

/**
 * `promise`, or a rejection when Redis gave no answer within `ms` of the command being written
 * (lib/store/answer-within.js: a busy event loop does not count); the late outcome of `promise`
 * is swallowed.
 */
function withTimeout(promise, ms, what) {
  promise.catch(() => {})
  return answerWithin(
    () => promise,
    ms,
    () => storeError('ERR_AUTH_SHIELD_STORE_TIMEOUT', `${what} got no answer from Redis within ${ms} ms`),
  )
}

/**
 * Follows the shared revocations of one Redis (docs/revocation.md).
 *
 *   const feed = new RevocationFeed(client, { onStale: 'closed' }).attach(authenticator)
 *   await feed.start()
 *   await authenticator.revokeToken(jti, exp)   // 'delivered', or 'queued' while Redis is away
 */
class RevocationFeed {
  #commands
  #reader = null
  #warnedClient = false
  #options
  #keys
  #targets = [] // { authenticator, seam }
  #outbox
  #known
  #epoch = null // the marker value of the data set this feed loaded (null before start)
  #checking = null // the epoch check in flight
  #onReady = null // the app client's 'ready' listener while started
  #closing // resolves when close() is called: no write waits for a held command past it
  #endWaits
  #lastId = null
  // The id of the last entry this feed wrote (null: none since the last load). The stream must
  // reach it: one ending before both it and #lastId lost acknowledged entries (a failover).
  #written = null
  #lastReadAt = 0
  #checkedAt = 0
  #running = false
  #loop = null
  #staleTimer = null
  #stale = false
  #stats = { applied: 0, reloads: 0, readErrors: 0, refused: 0, written: 0, writeErrors: 0, rebuilds: 0, republished: 0, undelivered: 0 }

  /** `client`: a connected node-redis or ioredis client, or a `commandClient` of one. */
  constructor(client, options) {
    this.#commands = client && typeof client.send === 'function' && typeof client.duplicate === 'function' ? client : commandClient(client)
    this.#options = readFeedOptions(options)
    // One slot on a cluster (lib/store/key-layout.js); the names of every earlier version elsewhere.
    this.#keys = revocationKeys(this.#options.prefix, this.#commands.topology)
    this.#outbox = new RevocationOutbox(this.#options.maxQueued)
    this.#known = new KnownRevocations(this.#options.maxKnown)
    this.#closing = new Promise((resolve) => (this.#endWaits = resolve))
  }

  /**
   * Applies the shared revocations to `authenticator` (either engine; an `expressjwt`
   * middleware's with a secret getter: every key's engine, those made later too) and makes its
   * `revokeToken` / `revokeSubject` write through this feed: they then return a Promise of
   * `'delivered'` / `'queued'` (the feed's own methods, below). Nothing of the authenticator is
   * replaced: its methods read the feed from base/store-seam.js, until close().
   */
  attach(authenticator) {
    if (!authenticator || typeof authenticator.revokeToken !== 'function' || revocationSeam(authenticator) === undefined) {
      throw typeError('attach needs an auth-shield Authenticator (native or auth-shield/js, or a middleware\'s `authenticator`)')
    }
    if (this.#targets.some((t) => t.authenticator === authenticator)) return this
    if (this.#running) throw storeError('ERR_AUTH_SHIELD_ALREADY_STARTED', 'attach every Authenticator before start(), which loads the set into them')
    // Its revokeToken / revokeSubject write through one feed: a second would take them from the
    // first without a word (the app's own revocations reaching one data set only).
    if (revocationWriter(authenticator) !== undefined) {
      throw storeError('ERR_AUTH_SHIELD_ALREADY_ATTACHED', 'this Authenticator is attached to another RevocationFeed: close() that one first (one feed per Authenticator)')
    }
    const target = { authenticator, seam: revocationSeam(authenticator) }
    this.#targets.push(target)
    // The authenticator's revokeToken / revokeSubject now hand their calls to this feed
    // (base/store-seam.js), which applies them locally through revokeLocally; close() ends it.
    setRevocationWriter(authenticator, this)
    if (this.#stale && this.#options.onStale === 'closed') target.seam.setRevocationUnavailable(authenticator, true)
    return this
  }

  /** Whether the feed is past `maxRevocationLagMs` without a successful read. */
  get stale() {
    return this.#stale
  }

  /**
   * Counters read now (docs/observability.md): revocations applied from the stream and refused
   * at maxRevocations, read and write errors, revocations waiting for Redis, `lagSeconds` since
   * the last successful read (null before the first), and `stale`.
   */
  metrics() {
    const s = this.#stats
    return {
      applied: s.applied,
      refused: s.refused,
      readErrors: s.readErrors,
      writeErrors: s.writeErrors,
      queued: this.#outbox.size,
      lagSeconds: this.#lastReadAt === 0 ? null : Math.max(0, Date.now() - this.#lastReadAt) / 1000,
      stale: this.#stale,
    }
  }

  /** Counters (docs/revocation.md), the revocations waiting for Redis, staleness, the last id. */
  stats() {
    return { ...this.#stats, queued: this.#outbox.size, known: this.#known.size, stale: this.#stale, lastId: this.#lastId }
  }

  /**
   * Revokes the token `(options.iss, jti)` in every attached authenticator at once, then in
   * Redis. Throws (synchronously) what the authenticator throws, or a full queue; the Promise
   * never rejects: `'delivered'` once Redis acknowledged, `'queued'` when it had not within
   * `commandTimeoutMs` (delivered later, in order, once Redis answers).
   */
  revokeToken(jti, expiresAtSec, options) {
    return this.#write('t', (a) => a.revokeToken(jti, expiresAtSec, options), [options?.iss ?? null, jti], expiresAtSec)
  }

  /** Revokes the tokens of `sub` issued before `options.issuedBeforeSec` (default now), everywhere; as `revokeToken`. */
  revokeSubject(sub, options) {
    if (typeof options === 'object' && options !== null) options = renameDeprecated(options, 'RevokeSubjectOptions', 'options')
    const before = subjectCutoff(options)
    const local = options === undefined || options === null ? { issuedBeforeSec: before } : typeof options === 'object' ? { ...options, issuedBeforeSec: before } : options
    return this.#write('s', (a) => a.revokeSubject(sub, local), [options?.iss ?? null, sub], before)
  }

  /** Synchronous up to the queue: every refusal is a throw, before anything is written. */
  #write(kind, applyLocally, member, score) {
    if (this.#targets.length === 0) throw storeError('ERR_AUTH_SHIELD_NOT_ATTACHED', 'attach an Authenticator before revoking')
    const m = JSON.stringify(member)
    const key = kind + m
    if (!this.#outbox.accepts(key)) {
      throw storeError(
        'ERR_AUTH_SHIELD_REVOCATION_QUEUE_FULL',
        `${this.#outbox.size} revocations (maxQueued) are already waiting for Redis: this one was not made; retry once Redis is back`,
      )
    }
    if (!this.#known.accepts(key)) {
      const err = new RangeError(`the feed already knows ${this.#known.size} live revocations (maxKnown): this one was not made`)
      err.code = 'ERR_AUTH_SHIELD_REVOCATION_LIMIT'
      throw err
    }
    // Local first: validates the arguments (same errors as without a store) and enforces at once.
    for (const { authenticator } of this.#targets) revokeLocally(authenticator, () => applyLocally(authenticator))
    this.#known.add(key, kind, m, score, this.#keepUntil(kind, score))
    const outcome = this.#outbox.add(key, kind, m, score, this.#options.commandTimeoutMs)
    this.#outbox.drain((batch) => this.#send(this.#commands, batch))
    return outcome
  }

  /** Until when (seconds) Redis keeps an entry: what `start()` prunes past. */
  #keepUntil(kind, score) {
    return kind === 't' ? score + GRACE_SEC : score + this.#retentionSec()
  }

  /** One write of `batch` through `connection`: true once acknowledged. Never throws. */
  async #send(connection, batch) {
    const args = ['EVAL', WRITE, '3', this.#keys.tokens, this.#keys.subjects, this.#keys.stream, String(this.#options.maxLen)]
    for (const { kind, member, score } of batch) args.push(kind, member, String(score))
    let attempt
    try {
      attempt = Promise.resolve(connection.send(args, this.#keys.tokens))
    } catch (err) {
      attempt = Promise.reject(err)
    }
    try {
      this.#noteWritten(await withTimeout(attempt, this.#options.commandTimeoutMs, 'the revocation write'))
      this.#stats.written += batch.length
      return true
    } catch (err) {
      this.#stats.writeErrors++
      this.#report(err)
    }
    // Timed out: the client may hold the command until it reconnects, then send it; waiting
    // for that answer delivers as soon as Redis is back, without piling up copies.
    const late = await Promise.race([attempt.then((id) => (this.#noteWritten(id), true), () => false), sleep(HELD_WRITE_MS).then(() => false), this.#closing.then(() => false)])
    if (late) this.#stats.written += batch.length
    return late
  }

  /** Records the id a write's script answered (the last entry it appended). */
  #noteWritten(id) {
    if (id === null || id === undefined || id === '' || typeof id === 'number') return // 1: a server of the earlier script
    const s = String(id)
    if (this.#written === null || idLess(this.#written, s)) this.#written = s
  }

  /** Loads the current set, then follows the stream in the background. Resolves once loaded. */
  async start() {
    if (this.#running) return
    if (this.#targets.length === 0) throw storeError('ERR_AUTH_SHIELD_NOT_ATTACHED', 'attach an Authenticator before start()')
    this.#running = true
    try {
      const opening = Promise.resolve(this.#commands.duplicate())
      // A connection that opens after the timeout is closed, not leaked.
      opening.then((c) => this.#reader !== c && !this.#running && c.close().catch(() => {}), () => {})
      this.#reader = await withTimeout(opening, this.#options.commandTimeoutMs, 'opening the stream connection')
      await this.#reload()
    } catch (err) {
      this.#running = false
      await this.#closeReader()
      throw err
    }
    this.#lastReadAt = Date.now()
    this.#checkedAt = Date.now()
    // A reconnection may be to a Redis that lost its data: check at once, not at the next read.
    const client = this.#commands.client
    if (client && typeof client.on === 'function' && typeof client.off === 'function') {
      this.#onReady = () => this.#running && this.#check().catch((err) => this.#report(err))
      client.on('ready', this.#onReady)
    }
    const { maxRevocationLagMs } = this.#options
    this.#staleTimer = setInterval(() => this.#checkStale(), Math.max(10, Math.min(250, maxRevocationLagMs / 4)))
    this.#staleTimer.unref()
    this.#loop = this.#follow()
  }

  /**
   * Stops following and closes the feed's own connection (never the caller's client). What is
   * still queued gets one more `commandTimeoutMs` to be delivered; then it is dropped (counted
   * in `stats().undelivered`, reported to `onError`) and its callers get `'queued'`.
   */
  async close() {
    this.#running = false
    clearInterval(this.#staleTimer)
    if (this.#onReady !== null) this.#commands.client.off('ready', this.#onReady)
    this.#onReady = null
    if (this.#outbox.size > 0) await Promise.race([this.#outbox.drain((batch) => this.#send(this.#commands, batch)), sleep(this.#options.commandTimeoutMs)])
    this.#endWaits()
    const undelivered = this.#outbox.clear()
    if (undelivered > 0) {
      this.#stats.undelivered += undelivered
      this.#report(storeError('ERR_AUTH_SHIELD_STORE_TIMEOUT', `close() dropped ${undelivered} revocations Redis had not acknowledged: other processes may not know them`))
    }
    this.#known.clear()
    await this.#closeReader()
    await this.#loop
    for (const { authenticator } of this.#targets) clearRevocationWriter(authenticator, this)
    this.#targets = []
    this.#epoch = null
    this.#closing = new Promise((resolve) => (this.#endWaits = resolve))
  }

  async #closeReader() {
    const reader = this.#reader
    this.#reader = null
    if (reader !== null) await reader.close().catch(() => {})
  }

  #retentionSec() {
    if (this.#options.subjectRetentionSec !== undefined) return this.#options.subjectRetentionSec
    const ttl = Math.max(...this.#targets.map(({ authenticator: a }) => Math.max(a.accessTtlSec, a.refreshTtlSec)))
    return ttl + GRACE_SEC
  }

  /** The script arguments shared by SNAPSHOT and CHECK. */
  #scriptArgs(script) {
    const now = Math.floor(Date.now() / 1000)
    const k = this.#keys
    return ['EVAL', script, '4', k.tokens, k.subjects, k.stream, k.epoch, String(now - GRACE_SEC), String(now - this.#retentionSec()), randomUUID()]
  }

  async #reload() {
    const reply = await withTimeout(this.#reader.send(this.#scriptArgs(SNAPSHOT), this.#keys.tokens), this.#options.commandTimeoutMs, 'loading the revocations')
    const [id, tokens, subjects, epoch] = reply
    for (let i = 0; i < tokens.length; i += 2) this.#apply('t', String(tokens[i]), String(tokens[i + 1]))
    for (let i = 0; i < subjects.length; i += 2) this.#apply('s', String(subjects[i]), String(subjects[i + 1]))
    this.#lastId = String(id)
    this.#written = null
    this.#stats.reloads++
    await this.#adopt(String(epoch))
  }

  /**
   * `epoch` is the marker Redis holds now. Another than the one this feed loaded means Redis
   * lost its data since (restarted without persistence, flushed, failed over to an empty
   * replica): re-publish every live revocation this process knows, then adopt it. A failure
   * leaves the old epoch, so the next check tries again. True when it re-published.
   */
  async #adopt(epoch) {
    if (this.#epoch === null || this.#epoch === epoch) {
      this.#epoch = epoch
      return false
    }
    await this.#republish()
    this.#epoch = epoch
    return true
  }

  /** Writes again every live revocation this process knows. Throws when a write fails. */
  async #republish() {
    const live = this.#known.live()
    for (let i = 0; i < live.length; i += BATCH) {
      const batch = live.slice(i, i + BATCH)
      if (!(await this.#send(this.#commands, batch))) throw storeError('ERR_AUTH_SHIELD_STORE_TIMEOUT', 're-publishing the revocations failed')
    }
    this.#stats.rebuilds++
    this.#stats.republished += live.length
  }

  #apply(kind, member, value) {
    let iss, id
    try {
      ;[iss, id] = JSON.parse(member)
    } catch {
      return // not ours
    }
    const score = Number(value)
    const options = iss === null ? undefined : { iss }
    let held = false
    for (const target of this.#targets) {
      try {
        const a = target.authenticator
        if (kind === 't') revokeLocally(a, () => a.revokeToken(id, score, options))
        else revokeLocally(a, () => a.revokeSubject(id, { ...options, issuedBeforeSec: score }))
        this.#stats.applied++
        held = true
      } catch (err) {
        // At maxRevocations (or an entry another version wrote): reported, never thrown here.
        this.#stats.refused++
        this.#report(err)
      }
    }
    if (held && !this.#known.add(kind + member, kind, member, score, this.#keepUntil(kind, score)) && this.#known.size >= this.#known.max) {
      this.#stats.refused++
      const err = new RangeError('a revocation read from Redis is enforced but not kept for re-publishing: maxKnown reached')
      err.code = 'ERR_AUTH_SHIELD_REVOCATION_LIMIT'
      this.#report(err)
    }
  }

  /** The client's own API failed (lib/store/commands.js): `onError`, or without one a process warning once. */
  #clientError(err) {
    if (this.#options.onError !== undefined) this.#report(err)
    else if (!this.#warnedClient) {
      this.#warnedClient = true
      process.emitWarning(err.message, { code: err.code })
    }
  }

  #report(err) {
    if (this.#options.onError === undefined) return
    try {
      this.#options.onError(err)
    } catch {
      // A broken hook must not stop the feed.
    }
  }

  #checkStale() {
    const late = Date.now() - this.#lastReadAt > this.#options.maxRevocationLagMs
    if (late !== this.#stale) this.#setStale(late)
  }

  #setStale(stale) {
    this.#stale = stale
    if (this.#options.onStale === 'closed') {
      for (const { authenticator, seam } of this.#targets) seam.setRevocationUnavailable(authenticator, stale)
    }
  }

  #fresh() {
    this.#lastReadAt = Date.now()
    if (this.#stale) this.#setStale(false)
  }

  async #follow() {
    const { maxRevocationLagMs, commandTimeoutMs } = this.#options
    // Shorter than the allowed lag, so a healthy but quiet stream is never stale.
    const blockMs = Math.max(10, Math.min(1000, Math.floor(maxRevocationLagMs / 2)))
    let resume = false
    while (this.#running) {
      try {
        const now = Date.now()
        if (resume || now - this.#lastReadAt > blockMs + commandTimeoutMs || now - this.#checkedAt > CHECK_MS) await this.#resume()
        resume = false
        const started = Date.now()
        const reply = await withTimeout(
          this.#reader.send(['XREAD', 'COUNT', '1000', 'BLOCK', String(blockMs), 'STREAMS', this.#keys.stream, this.#lastId], this.#keys.stream),
          blockMs + commandTimeoutMs,
          'the stream read',
        )
        if (!this.#running) break
        // A read that took far longer than it blocks (this process was stopped or starved):
        // entries after the last id may have been trimmed meanwhile. Check before applying,
        // while the last id still says where we were; after a reload the reply is stale.
        if (Date.now() - started > blockMs + STALL_MS && (await this.#resume())) {
          this.#fresh()
          continue
        }
        const entries = streamEntries(reply)
        for (const [id, fields] of entries) {
          const f = fieldsOf(fields)
          this.#apply(f.k, f.m, f.v)
          this.#lastId = String(id)
        }
        this.#fresh()
        if (entries.length > 0 && this.#options.onApplied) {
          try {
            this.#options.onApplied(entries.length)
          } catch (err) {
            this.#report(err)
          }
        }
      } catch (err) {
        if (!this.#running) break
        this.#stats.readErrors++
        this.#report(err)
        // A cluster client may keep sending to a master that died: ask both for a new slot map.
        for (const c of [this.#reader, this.#commands]) c?.refresh?.(this.#keys.stream)?.catch?.((e) => this.#clientError(e))
        resume = true
        await sleep(RETRY_MS)
      }
    }
  }

  /**
   * Checks the epoch marker (one check at a time) and re-publishes when Redis lost its data;
   * resolves to `{ first, lost }`: the stream's first id (null when empty), and whether the
   * stream ends before an entry this feed read or wrote (acknowledged entries lost by a failover
   * to a replica that had not received them).
   */
  #check() {
    if (this.#checking === null) this.#checking = this.#checkOnce().finally(() => (this.#checking = null))
    return this.#checking
  }

  async #checkOnce() {
    // Taken before the check is sent: an entry read or written while it is on the way is not
    // one the stream lost.
    const reach = this.#written !== null && idLess(this.#lastId, this.#written) ? this.#written : this.#lastId
    // On the app's connection, not the reader's: ioredis re-sends a read that was blocked when
    // the connection dropped, and a check queued behind it would wait out its BLOCK time.
    const [epoch, first, last] = await withTimeout(this.#commands.send(this.#scriptArgs(CHECK), this.#keys.tokens), this.#options.commandTimeoutMs, 'the stream check')
    this.#checkedAt = Date.now()
    const rebuilt = await this.#adopt(String(epoch))
    const end = last ? String(last) : '0-0'
    const lost = !rebuilt && reach !== null && last !== undefined && idLess(end, reach)
    return { first: first ? String(first) : null, lost }
  }

  /**
   * After a failed or stalled read, and once every CHECK_MS: the check, then a reload (true)
   * when the last id may have been trimmed away (or belongs to a stream Redis lost). When the
   * stream lost acknowledged entries (a failover), what this process knows is written again
   * first, so the entries reach every process.
   */
  async #resume() {
    const { first, lost } = await this.#check()
    if (lost) {
      await this.#republish()
      await this.#reload()
      return true
    }
    if (first !== null && this.#lastId !== first && idLess(this.#lastId, first)) {
      await this.#reload()
      return true
    }
    return false
  }
}

module.exports = { RevocationFeed }
