'use strict'

// `auth-shield/redis`: limits shared by every process
// through Redis, with no I/O on the request path. docs/scale-out.md is the reference.
//
//   const { createRedisStore } = require('auth-shield/redis')
//   const store = createRedisStore(redisClient)            // a connected node-redis or ioredis
//   app.use('/api', authShield(config, { store }))         // or store.attach(authenticator)
//
// Each attached authenticator spends credits leased from a shared GCRA bucket per identity
// (src/rate_limit/lease.rs, js/rate-limit/lease.js). This module is the background half: on an
// unref'd timer it takes the identities whose credits run low and asks Redis for more, every
// identity queued since the last turn in one EVALSHA (at most BATCH_KEYS each, at most
// MAX_IN_FLIGHT_BATCHES awaiting Redis), and it answers the middleware's recovery for an
// identity without credit (one round trip; requests of one identity that arrive together wait
// for the same fetch, and an answer short of them is followed by another before they retry:
// js/rate-limit/lease.js). When Redis fails or does not answer within
// `commandTimeoutMs`, leases come from a local limiter holding `outageShare` of the limit until a probe
// finds Redis again.

const { EventEmitter } = require('node:events')
const { commandClient } = require('./commands')
const { LEASE_SCRIPT, LEASE_SCRIPT_SHA, BATCH_KEYS, intervalArg } = require('./lease-script')
const { answerWithin, noAnswerWithin } = require('./answer-within')
const { RenewalCadence } = require('./renewal-cadence')
const { readLimit, readStoreOptions, ATTACH_OPTIONS } = require('./options')
const { Attachment } = require('./attachment')
const { typeError, rangeError, codedError: storeError } = require('../../base/error')
const { message } = require('../../contract')
const { checkNotElsewhere, recordStore, storeSeam } = require('../../base/store-seam')
// Revocations are shared by their own object, RevocationFeed (lib/store/revocations.js, also
// exported by auth-shield/redis): it loads the whole set into every authenticator attached
// before its start(), which this store's per-middleware attach cannot promise.

const PENDING_CODE = 'rate_limit_pending'
const MAX_KEY_BYTES = 1024

const storeClosed = () => storeError('ERR_AUTH_SHIELD_STORE_CLOSED', 'the store is closed')
/** A shared-limit check Redis could not answer (`cause`: why, when known). */
const limitUnavailable = (cause) => storeError('ERR_AUTH_SHIELD_STORE_UNAVAILABLE', 'Redis is unreachable: the shared limit cannot be checked', cause)
// Most lease batches awaiting Redis at once, per store. Identities queued past that wait here
// (at most `maxKeys` per authenticator), not in the client's command queue: a burst of new
// identities then costs a few round trips in a row, and a time-out still means that Redis did
// not answer, not that our own backlog was deep.
const MAX_IN_FLIGHT_BATCHES = 4

// Redis ran the lease script and it failed on this call's keys (Redis 7 tags such errors with
// the script's line, `@user_script:`): a key of another type written by someone else, say.
// Redis itself answered, so only this call is refused (its leases come from the fallback); the
// store is not marked down, which would refuse every other key until a probe.
function scriptFailed(err) {
  return /@user_script:/.test(String(err && err.message))
}

class RedisStore extends EventEmitter {
  #commands
  #attachments = []
  #timer = null
  #cadence
  #down = false
  // Milliseconds spent on the fallback in outages that ended, and when the current one began.
  #fallbackMs = 0
  #downSinceMs = 0
  #probe = null
  #lastProbe = 0
  // The key of the command that found Redis down (a cluster's unreachable slot), for the probe.
  #probeKey = null
  #closed = false
  #warnedClient = false
  // Lease batches awaiting Redis: { lo } (the oldest sequence number among their identities).
  #batches = new Set()
  // Sequence number of the last identity taken into a `waiting` queue.
  #queued = 0
  // flush() callers and waiting requests, oldest first: { seq, resolve }, resolved once every
  // identity queued up to `seq` is answered. At most `maxKeys` (see #wait).
  #waiters = []
  // The largest share of its slack an identity queued again after an answer had spent (-1:
  // none), for the next turn's cadence.
  #spent = -1
  // Which attachment sends first, in turn, so one busy limit cannot starve another.
  #first = 0

  constructor(client, options) {
    super()
    this.options = readStoreOptions(options)
    this.#commands = commandClient(client)
    this.#cadence = new RenewalCadence(this.options.renewIntervalMs)
    this.stats = { roundTrips: 0, failedRoundTrips: 0, leaseRequests: 0, recoveries: 0, fallbackGrants: 0, outages: 0 }
    // The middleware's recovery for `rate_limit_pending`: wait for the lease, authenticate
    // again; false (the 503 stands) when `maxKeys` requests are waiting already.
    this.recover = () => {
      this.stats.recoveries++
      return this.#wait()
    }
  }

  /** `'node-redis'` or `'ioredis'`. */
  get clientKind() {
    return this.#commands.kind
  }

  /** `'single'`, `'sentinel'` or `'cluster'`: the client's topology (docs/scale-out.md, "Topologies"). */
  get topology() {
    return this.#commands.topology
  }

  /**
   * Counters of this store, read now (docs/observability.md): round trips, failed ones,
   * outages begun, whether it is on the fallback now, and the seconds spent on it.
   */
  metrics() {
    const fallbackMs = this.#fallbackMs + (this.#down ? Date.now() - this.#downSinceMs : 0)
    return {
      roundTrips: this.stats.roundTrips,
      failedRoundTrips: this.stats.failedRoundTrips,
      outages: this.stats.outages,
      fallback: this.#down,
      fallbackSeconds: Math.max(0, fallbackMs) / 1000,
    }
  }

  /** False while Redis is unreachable and limits are local (see `outageShare`). */
  get available() {
    return !this.#down
  }

  /** The failure code a direct `authenticate()` caller sees for an identity without a lease yet. */
  get pendingCode() {
    return PENDING_CODE
  }

  /**
   * Shares `authenticator`'s rate limit (either engine) through Redis from now on. Options
   * override the store's for this authenticator: `lease`, `strict`, `maxKeys`, `outageShare`,
   * and `name` (the Redis key space of this limit; authenticators with equal `name` share
   * buckets and must have equal limits; default `<rateLimitMax>/<rateLimitRefillPerSec>`). Attaching
   * the same authenticator again returns the store without change. Returns the store.
   */
  attach(authenticator, options) {
    if (this.#closed) throw storeClosed()
    if (authenticator === null || typeof authenticator !== 'object' || storeSeam(authenticator) === undefined) {
      throw typeError('attach needs an Authenticator of auth-shield or auth-shield/js')
    }
    if (this.#attachments.some((a) => a.authenticator === authenticator)) return this
    checkNotElsewhere(authenticator, this)
    if (options === undefined || options === null) options = {}
    if (typeof options !== 'object' || Array.isArray(options)) throw typeError(message('mustBeObject', { name: 'attach options' }))
    const { name, ...rest } = options
    if (name !== undefined && (typeof name !== 'string' || name.length === 0 || name.length > 128)) {
      throw typeError('attach options.name must be a non-empty string of at most 128 characters')
    }
    const own = readStoreOptions(rest, ATTACH_OPTIONS, 'attach options')
    const merged = { ...this.options }
    for (const n of ATTACH_OPTIONS) if (rest[n] !== undefined) merged[n] = own[n]
    const attachment = new Attachment(authenticator, {
      ...merged,
      name: name === undefined ? `${authenticator.rateLimitMax}/${authenticator.rateLimitRefillPerSec}` : name,
    }, this)
    attachment.seam.enableSharedLimit(authenticator, attachment.lease, attachment.strict, merged.maxKeys)
    recordStore(authenticator, this)
    this.#attachments.push(attachment)
    if (this.#timer === null && !this.#closed) this.#schedule()
    return this
  }

  /**
   * Fetches the leases every attached authenticator is waiting for and resolves when they are
   * all answered (by Redis, or by the local fallback). Never rejects.
   */
  flush() {
    return this.#wait().then(() => undefined)
  }

  /**
   * Sends what is queued and resolves to true once every identity queued so far is answered,
   * or at once to false when `maxKeys` callers wait already (the bound on waiting requests).
   */
  #wait() {
    this.#renew()
    const seq = this.#queued
    if (this.#oldestUnanswered() > seq) return Promise.resolve(true)
    if (this.#waiters.length >= this.options.maxKeys) return Promise.resolve(false)
    return new Promise((resolve) => this.#waiters.push({ seq, resolve: () => resolve(true) }))
  }

  /** The next turn of the background loop, after the cadence's sleep (lib/store/renewal-cadence.js). */
  #schedule() {
    this.#timer = setTimeout(this.#turn, this.#cadence.delayMs)
    this.#timer.unref()
  }

  #turn = () => {
    this.#timer = null
    this.#renew()
    if (!this.#closed) this.#schedule()
  }

  /** Takes the queued identities of every authenticator and sends what the bound allows. */
  #renew() {
    if (this.#down) this.#maybeProbe()
    // The largest share of its slack an identity taken now had spent; -1: none taken.
    let spent = this.#spent
    this.#spent = -1
    for (const a of this.#attachments) spent = Math.max(spent, this.#intake(a, a.takeLeaseRequests(), null))
    const before = this.#cadence.delayMs
    // A flush that found identities short of credit: the next turn comes sooner.
    if (this.#cadence.next(spent) < before && this.#timer !== null) {
      clearTimeout(this.#timer)
      this.#schedule()
    }
    this.#pump()
  }

  /**
   * Takes `requests` (`[{ key, want }]` from the authenticator of `a`) into `a`'s queues.
   * `answered` (key → seq) holds the identities of a batch just answered: one of them queued
   * again is short of the requests waiting for it, and keeps its place (its seq) in `a.again`,
   * so they go on waiting for its next answer. Returns the largest share of its slack an
   * identity had spent, -1 for none.
   */
  #intake(a, requests, answered) {
    let spent = -1
    for (let i = 0; i < requests.length; i++) {
      const { key, want } = requests[i]
      // want ≥ lease − credits, and the identity was queued with `slack` credits.
      if (a.slack > 0) spent = Math.max(spent, Math.min(1, (want - (a.lease - a.slack)) / a.slack))
      // In a batch already: its answer is on the way, and asks again if short of its waiters.
      if (a.sending.has(key)) continue
      const seq = answered === null ? undefined : answered.get(key)
      if (seq !== undefined) {
        a.again.set(key, { want, seq })
        continue
      }
      const held = a.again.get(key) || a.waiting.get(key)
      if (held !== undefined) held.want = want
      // Past `maxKeys` waiting identities, whatever a flood of new ones does, a key is left
      // out: it stays pending and its next request queues it again.
      else if (a.waiting.size < a.maxKeys) a.waiting.set(key, { want, seq: ++this.#queued })
    }
    return spent
  }

  /** After an answer for `keys` (with their `seqs`): the ones queued again, short of their waiters. */
  #followUp(a, keys, seqs) {
    const requests = a.takeLeaseRequests()
    if (requests.length === 0) return
    const answered = new Map()
    for (let i = 0; i < keys.length; i++) answered.set(keys[i], seqs[i])
    this.#spent = Math.max(this.#spent, this.#intake(a, requests, answered))
  }

  /**
   * Sends waiting identities (those asking again first), BATCH_KEYS per round trip, while fewer
   * than MAX_IN_FLIGHT_BATCHES await Redis; while Redis is down, answers them from the fallback
   * at once.
   */
  #pump() {
    const count = this.#attachments.length
    for (let k = 0; k < count; k++) {
      const index = (this.#first + k) % count
      const a = this.#attachments[index]
      while (a.again.size > 0 || a.waiting.size > 0) {
        if (this.#down) {
          this.#answerLocally(a)
        } else if (this.#batches.size < MAX_IN_FLIGHT_BATCHES) {
          this.#sendBatch(a)
        } else {
          this.#first = index
          return this.#settleWaiters()
        }
      }
    }
    if (count > 0) this.#first = (this.#first + 1) % count
    this.#settleWaiters()
  }

  /** While Redis is down: every queued identity of `a` from the fallback, asking again while short. */
  #answerLocally(a) {
    // Each round grants a short identity at least one credit or refuses it: this ends.
    while (a.again.size > 0 || a.waiting.size > 0) {
      const keys = []
      const seqs = []
      for (const queue of [a.again, a.waiting]) {
        for (const [key, { want, seq }] of queue) {
          this.#fallbackLease(a, key, want)
          keys.push(key)
          seqs.push(seq)
        }
        queue.clear()
      }
      this.#followUp(a, keys, seqs)
    }
  }

  /**
   * One batch of BATCH_KEYS identities of `a` (those asking again, then the oldest waiting): one
   * EVALSHA, or on a cluster one per shard present in it (each script touches one slot).
   */
  #sendBatch(a) {
    const keys = []
    const wants = []
    const seqs = []
    let lo = Infinity
    for (const queue of [a.again, a.waiting]) {
      for (const [key, { want, seq }] of queue) {
        if (keys.length === BATCH_KEYS) break
        if (seq < lo) lo = seq
        keys.push(key)
        wants.push(want)
        seqs.push(seq)
        queue.delete(key)
        a.sending.add(key)
      }
    }
    const batch = { lo }
    this.#batches.add(batch)
    this.stats.leaseRequests += keys.length
    const groups = a.keys.sharded ? this.#byShard(a, keys.length, keys) : [Array.from(keys, (_, i) => i)]
    Promise.all(groups.map((group) => this.#sendGroup(a, group.map((i) => keys[i]), group.map((i) => wants[i]))))
      .finally(() => {
        this.#batches.delete(batch)
        for (let i = 0; i < keys.length; i++) a.sending.delete(keys[i])
        this.#followUp(a, keys, seqs)
        this.#pump()
      })
      // A guard: every failure is answered in #sendGroup.
      .catch(() => {})
  }

  /** The indexes of `keys` grouped by their shard (lib/store/key-layout.js). */
  #byShard(a, n, keys) {
    const groups = new Map()
    for (let i = 0; i < n; i++) {
      const shard = a.keys.shardOf(keys[i])
      const group = groups.get(shard)
      if (group === undefined) groups.set(shard, [i])
      else group.push(i)
    }
    return [...groups.values()]
  }

  /** One EVALSHA for `keys` of `a` (one slot); resolves once they are granted or answered from the fallback. */
  #sendGroup(a, keys, wants) {
    const args = [String(keys.length)]
    for (let i = 0; i < keys.length; i++) args.push(a.keys.keyOf(keys[i]))
    args.push(a.capacityArg, a.intervalArg, '1')
    for (let i = 0; i < wants.length; i++) args.push(String(wants[i]))
    return this.#eval(args)
      .then((reply) => this.#grant(a, keys, reply))
      .catch((err) => {
        if (scriptFailed(err)) this.stats.failedRoundTrips++
        else this.#markDown(err, args[1])
        for (let i = 0; i < keys.length; i++) this.#fallbackLease(a, keys[i], wants[i])
      })
  }

  /** Records the script's answers: granted, remaining, retryAfterMs per key, in order. */
  #grant(a, keys, reply) {
    if (!Array.isArray(reply) || reply.length !== keys.length * 3) {
      throw storeError('ERR_AUTH_SHIELD_STORE_REPLY', `the lease script answered ${Array.isArray(reply) ? `${reply.length} values for ${keys.length} keys` : typeof reply}`)
    }
    for (let i = 0, j = 0; i < keys.length; i++, j += 3) {
      a.grantLease(keys[i], Number(reply[j]), Number(reply[j + 1]), Number(reply[j + 2]))
    }
  }

  /** A lease for `key` from `a`'s local fallback bucket (Redis down or failing). */
  #fallbackLease(a, key, want) {
    this.stats.fallbackGrants++
    a.fallbackLease(key, want)
  }

  /** The oldest sequence number not yet answered (waiting or in a batch); Infinity if none. */
  #oldestUnanswered() {
    let oldest = Infinity
    for (const a of this.#attachments) {
      const first = a.waiting.values().next()
      if (!first.done && first.value.seq < oldest) oldest = first.value.seq
      // Identities asking again keep their old places, in no order (few: each from an answer).
      for (const { seq } of a.again.values()) if (seq < oldest) oldest = seq
    }
    for (const b of this.#batches) if (b.lo < oldest) oldest = b.lo
    return oldest
  }

  #settleWaiters() {
    if (this.#waiters.length === 0) return
    const oldest = this.#oldestUnanswered()
    let n = 0
    while (n < this.#waiters.length && this.#waiters[n].seq < oldest) this.#waiters[n++].resolve()
    if (n > 0) this.#waiters.splice(0, n)
  }

  /** The lease script (`args`: its numkeys, keys and arguments), by EVALSHA, loading it with EVAL after a NOSCRIPT. */
  #eval(args) {
    // args[1], the first key, routes the script on a cluster.
    return this.#roundTrip(['EVALSHA', LEASE_SCRIPT_SHA, ...args], args[1]).catch((err) => {
      if (!/NOSCRIPT/.test(String(err && err.message))) throw err
      return this.#roundTrip(['EVAL', LEASE_SCRIPT, ...args], args[1])
    })
  }

  /** One command with its own time-out (lib/store/answer-within.js). */
  #roundTrip(command, key) {
    this.stats.roundTrips++
    const ms = this.options.commandTimeoutMs
    return answerWithin(() => this.#commands.send(command, key), ms, () => noAnswerWithin(ms))
  }

  /**
   * Redis failed or did not answer for `key`. On a cluster the client is asked for a new slot
   * map (a promoted replica is found before the client's own refresh), and the probe asks for
   * `key` again: a PING would find some other master alive and end the outage while this slot
   * is still unreachable.
   */
  #markDown(err, key) {
    this.stats.failedRoundTrips++
    this.#commands.refresh(key).catch((e) => this.#clientError(e))
    if (key !== undefined && this.#commands.topology === 'cluster') this.#probeKey = key
    if (this.#down) return
    this.#down = true
    this.#lastProbe = Date.now()
    this.#downSinceMs = this.#lastProbe
    this.stats.outages++
    this.emit('outage', err)
  }

  /**
   * The client's own API failed (ERR_AUTH_SHIELD_STORE_CLIENT, lib/store/commands.js): event
   * `'clientError'`, or, with no listener, a process warning once per store. Never an `'error'`
   * event (that would crash an app without a listener), never dropped.
   */
  #clientError(err) {
    if (this.listenerCount('clientError') > 0) this.emit('clientError', err)
    else if (!this.#warnedClient) {
      this.#warnedClient = true
      process.emitWarning(err.message, { code: err.code })
    }
  }

  /** While down: a PING at most every `retryIntervalMs`; an answer ends the outage. */
  #maybeProbe() {
    if (this.#probe !== null || Date.now() - this.#lastProbe < this.options.retryIntervalMs) return
    this.#lastProbe = Date.now()
    const ms = this.options.commandTimeoutMs
    const key = this.#probeKey
    const probe = key === null ? ['PING'] : ['EXISTS', key]
    this.#probe = answerWithin(() => this.#commands.send(probe, key ?? undefined), ms, () => noAnswerWithin(ms))
      .then(
        () => {
          if (this.#down && !this.#closed) {
            this.#down = false
            this.#probeKey = null
            this.#fallbackMs += Date.now() - this.#downSinceMs
            this.emit('recovered')
          }
        },
        () => {},
      )
      .finally(() => (this.#probe = null))
  }

  /**
   * Takes `cost` tokens (default 1) from `key`'s shared bucket, one round trip: resolves to
   * `{ allowed, remaining, retryAfterMs }` like `RateLimiter.consume`. The bucket is
   * `limit` ({ capacity, refillPerSec }) or the store's `limit` option. Rejects (never throws)
   * with ERR_INVALID_ARG_TYPE / ERR_OUT_OF_RANGE on bad input and ERR_AUTH_SHIELD_STORE_UNAVAILABLE
   * when Redis is down or does not answer within `commandTimeoutMs`.
   */
  consume(key, cost, limit) {
    return Promise.resolve().then(() => this.#consume(key, cost, limit))
  }

  async #consume(key, cost = 1, limit) {
    const bucket = limit === undefined ? this.options.limit : readLimit(limit, 'limit')
    if (bucket === undefined) throw typeError('consume needs a limit: pass { capacity, refillPerSec } or set the store option limit')
    if (typeof key !== 'string') throw typeError(message('mustBeString', { name: 'key' }))
    if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw rangeError(message('keyTooLong', { name: 'key', max: MAX_KEY_BYTES }))
    if (typeof cost !== 'number') throw typeError(message('mustBeNumber', { name: 'cost' }))
    if (!(Number.isInteger(cost) && cost >= 1 && cost <= bucket.capacity)) {
      throw rangeError(message('costOutOfRange', { capacity: bucket.capacity, value: cost }))
    }
    if (this.#closed) throw storeClosed()
    if (this.#down) {
      this.#maybeProbe()
      throw limitUnavailable()
    }
    let reply
    try {
      reply = await this.#eval(['1', `${this.options.prefix}limit:${key}`, String(bucket.capacity), intervalArg(bucket.refillPerSec), String(cost), String(cost)])
    } catch (err) {
      if (scriptFailed(err)) {
        this.stats.failedRoundTrips++
        throw storeError('ERR_AUTH_SHIELD_STORE_UNAVAILABLE', 'the lease script failed on this key: the shared limit cannot be checked', err)
      }
      this.#markDown(err, `${this.options.prefix}limit:${key}`)
      throw limitUnavailable(err)
    }
    const [granted, remaining, retryAfterMs] = reply.map(Number)
    return { allowed: granted > 0, remaining, retryAfterMs: granted > 0 ? 0 : retryAfterMs }
  }

  /**
   * The shared DPoP replay store over this store's client (lib/store/dpop-replay.js), for the
   * middleware option `dpopReplayStore`: this store's `prefix`, `commandTimeoutMs`,
   * `dpopWaitReplicas` and `dpopWaitTimeoutMs`, each overridden by `options`. One per call; the
   * replay checks need no attach and no background loop.
   */
  dpopReplay(options) {
    const { DpopReplayStore, OPTION_NAMES } = require('./dpop-replay')
    if (options !== undefined && options !== null && typeof options !== 'object') throw typeError('options must be an object')
    const merged = {}
    for (const name of OPTION_NAMES) merged[name] = this.options[name]
    return new DpopReplayStore(undefined, { ...merged, ...(options || {}) }, this.#commands)
  }

  /** Stops the background loop (in-flight leases still land). The user's client stays open. */
  async close() {
    this.#closed = true
    if (this.#timer !== null) clearTimeout(this.#timer)
    this.#timer = null
  }
}

/** `createRedisStore(client, options)`: a store over a connected node-redis or ioredis client. */
function createRedisStore(client, options) {
  return new RedisStore(client, options)
}

module.exports = { createRedisStore, RedisStore, PENDING_CODE }
