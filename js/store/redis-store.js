'use strict'

// `auth-shield/redis`: limits shared by every process
// through Redis, with no I/O on the request path. docs/scale-out.md is the reference.
//
//   const { createRedisStore } = require('auth-shield/redis')
//   const store = createRedisStore(redisClient)            // a connected node-redis or ioredis
//   app.use('/api', authShield(config, { store }))         // or store.attach(authenticator)
//
// Each attached authenticator spends credits leased from a shared GCRA bucket per identity
// (src/rate_limit/lease.rs, js/lease-table.js). This module is the background half: on an
// unref'd timer it takes the identities whose credits run low and asks Redis for more (one
// EVALSHA each), and it answers the middleware's recovery for an identity seen for the first
// time (one round trip). When Redis fails or times out, leases come from a local limiter holding
// `outageShare` of the limit until a probe finds Redis again.

const { EventEmitter } = require('node:events')
const { commandClient } = require('./commands')
const { LEASE_SCRIPT, LEASE_SCRIPT_SHA } = require('./lease-script')
const { RateLimiter } = require('../rate-limit')
const { typeError, rangeError } = require('../errors')
// Revocations are shared by their own object, RevocationFeed (js/store/revocations.js, also
// exported by auth-shield/redis): it loads the whole set into every authenticator attached
// before its start(), which this store's per-middleware attach cannot promise.

const PENDING_CODE = 'rate_limit_pending'
const MAX_KEY_BYTES = 1024

// Names, kinds, defaults and bounds of the store options: js/schema.json (storeOptions).
const STORE_OPTIONS = require('../schema.json').storeOptions
const SPEC = new Map(STORE_OPTIONS.map((o) => [o.name, o]))
const ATTACH_OPTIONS = ['lease', 'strict', 'maxKeys', 'outageShare']

function storeError(code, message, cause) {
  const err = new Error(message, cause === undefined ? undefined : { cause })
  err.code = code
  return err
}

function readLimit(limit, name) {
  if (limit === undefined || limit === null) return undefined
  if (typeof limit !== 'object') throw typeError(`${name} must be { capacity, refillPerSec }`)
  const { capacity, refillPerSec } = limit
  if (typeof capacity !== 'number' || typeof refillPerSec !== 'number') throw typeError(`${name} must be { capacity, refillPerSec } numbers`)
  if (!(Number.isInteger(capacity) && capacity >= 1 && capacity <= 1e9)) throw rangeError(`${name}.capacity must be an integer from 1 to 1000000000, got ${capacity}`)
  if (!(refillPerSec > 0 && refillPerSec <= 1e9)) throw rangeError(`${name}.refillPerSec must be greater than 0 and at most 1000000000, got ${refillPerSec}`)
  return { capacity, refillPerSec }
}

/** One option by its schema entry: the default when absent, else checked kind and bounds. */
function readOption(spec, value, where) {
  if (value === undefined) return spec.default === null ? undefined : spec.default
  const name = `${where}.${spec.name}`
  switch (spec.kind) {
    case 'limit':
      return readLimit(value, name)
    case 'boolean':
      if (typeof value !== 'boolean') throw typeError(`${name} must be a boolean`)
      return value
    case 'string':
      if (typeof value !== 'string' || value.length > spec.max) throw typeError(`${name} must be a string of at most ${spec.max} characters`)
      return value
    default: {
      if (typeof value !== 'number') throw typeError(`${name} must be a number`)
      const integer = spec.kind === 'integer'
      const low = spec.exclusiveMin ? value > spec.min : value >= spec.min
      if (!((!integer || Number.isInteger(value)) && low && value <= spec.max)) {
        const what = integer ? `an integer from ${spec.min} to ${spec.max}` : `greater than ${spec.min} and at most ${spec.max}`
        throw rangeError(`${name} must be ${what}, got ${value}`)
      }
      return value
    }
  }
}

/** Store options, validated once; unknown names are refused. */
function readStoreOptions(options, allowed = SPEC, where = 'options') {
  if (options === undefined || options === null) options = {}
  if (typeof options !== 'object' || Array.isArray(options)) throw typeError(`${where} must be an object`)
  for (const name of Object.keys(options)) {
    if (!allowed.has(name)) throw typeError(`${where}.${name} is not a known option`)
  }
  const read = {}
  for (const spec of allowed.values()) read[spec.name] = readOption(spec, options[spec.name], where)
  return read
}

/** Resolves like `promise`, or rejects with ERR_AUTH_SHIELD_STORE_TIMEOUT after `ms`. */
function withTimeout(promise, ms) {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(storeError('ERR_AUTH_SHIELD_STORE_TIMEOUT', `Redis did not answer within ${ms} ms`)), ms)
    timer.unref()
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** One authenticator's shared limit: its bucket parameters, in-flight leases and fallback. */
class Attachment {
  constructor(authenticator, options, store) {
    const max = authenticator.rateLimitMax
    const refill = authenticator.rateLimitRefill
    this.authenticator = authenticator
    this.strict = options.strict
    this.lease = options.strict ? 1 : options.lease !== undefined ? Math.min(options.lease, max) : Math.max(1, Math.min(100, Math.floor(max / 10)))
    this.capacity = max
    this.intervalUs = 1e6 / refill
    this.keyPrefix = `${store.options.prefix}rl:${options.name}:`
    // Outage fallback: a local bucket holding `outageShare` of the shared one.
    this.fallback = new RateLimiter(Math.max(1, Math.floor(max * options.outageShare)), refill * options.outageShare, options.maxKeys)
    this.inFlight = new Map()
    this.maxKeys = options.maxKeys
  }
}

class RedisStore extends EventEmitter {
  #commands
  #attachments = []
  #timer = null
  #down = false
  #probe = null
  #lastProbe = 0
  #closed = false

  constructor(client, options) {
    super()
    this.options = readStoreOptions(options)
    this.#commands = commandClient(client)
    this.stats = { roundTrips: 0, failedRoundTrips: 0, leaseRequests: 0, recoveries: 0, fallbackGrants: 0, outages: 0 }
    // The middleware's recovery for `rate_limit_pending`: fetch the lease, authenticate again.
    this.recover = () => {
      this.stats.recoveries++
      return this.flush().then(() => true)
    }
  }

  /** `'node-redis'` or `'ioredis'`. */
  get clientKind() {
    return this.#commands.kind
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
   * buckets and must have equal limits; default `<rateLimitMax>/<rateLimitRefill>`). Attaching
   * the same authenticator again returns the store without change. Returns the store.
   */
  attach(authenticator, options) {
    if (this.#closed) throw storeError('ERR_AUTH_SHIELD_STORE_CLOSED', 'the store is closed')
    if (authenticator === null || typeof authenticator !== 'object' || typeof authenticator.enableSharedLimit !== 'function') {
      throw typeError('attach needs an Authenticator of auth-shield or auth-shield/js')
    }
    if (this.#attachments.some((a) => a.authenticator === authenticator)) return this
    if (options === undefined || options === null) options = {}
    if (typeof options !== 'object' || Array.isArray(options)) throw typeError('attach options must be an object')
    const { name, ...rest } = options
    if (name !== undefined && (typeof name !== 'string' || name.length === 0 || name.length > 128)) {
      throw typeError('attach options.name must be a non-empty string of at most 128 characters')
    }
    const own = readStoreOptions(rest, new Map(ATTACH_OPTIONS.map((n) => [n, SPEC.get(n)])), 'attach options')
    const merged = { ...this.options }
    for (const n of ATTACH_OPTIONS) if (rest[n] !== undefined) merged[n] = own[n]
    const attachment = new Attachment(authenticator, {
      ...merged,
      name: name === undefined ? `${authenticator.rateLimitMax}/${authenticator.rateLimitRefill}` : name,
    }, this)
    authenticator.enableSharedLimit(attachment.lease, attachment.strict, merged.maxKeys)
    this.#attachments.push(attachment)
    if (this.#timer === null && !this.#closed) {
      this.#timer = setInterval(() => this.#renew(), this.options.renewIntervalMs)
      this.#timer.unref()
    }
    return this
  }

  /**
   * Fetches the leases every attached authenticator is waiting for and resolves when they are
   * all answered (by Redis, or by the local fallback). Never rejects.
   */
  flush() {
    this.#renew()
    const waits = []
    for (const a of this.#attachments) for (const p of a.inFlight.values()) waits.push(p)
    return Promise.all(waits).then(() => undefined)
  }

  /** Takes the queued identities of every authenticator and asks for their leases. */
  #renew() {
    if (this.#down) this.#maybeProbe()
    for (const a of this.#attachments) {
      const requests = a.authenticator.takeLeaseRequests()
      for (let i = 0; i < requests.length; i++) {
        const { key, want } = requests[i]
        // At most `maxKeys` round trips in flight per authenticator, whatever a flood of new
        // identities does; a key left out stays pending and is asked for again.
        if (a.inFlight.has(key) || a.inFlight.size >= a.maxKeys) continue
        // #lease answers every failure itself; the catch is a guard against an unhandled rejection.
        const p = this.#lease(a, key, want)
          .catch(() => {})
          .finally(() => a.inFlight.delete(key))
        a.inFlight.set(key, p)
      }
    }
  }

  /** One lease for `key`: from Redis, or from the fallback while it is down. Never rejects. */
  async #lease(a, key, want) {
    this.stats.leaseRequests++
    if (!this.#down) {
      try {
        const reply = await this.#eval(a.keyPrefix + key, a.capacity, a.intervalUs, want, 1)
        const [granted, remaining, retryAfterMs] = reply.map(Number)
        a.authenticator.grantLease(key, granted, remaining, retryAfterMs)
        return
      } catch (err) {
        this.#markDown(err)
      }
    }
    this.stats.fallbackGrants++
    let d = a.fallback.consume(key, want)
    if (d.allowed) return a.authenticator.grantLease(key, want, d.remaining, 0)
    d = a.fallback.consume(key, 1)
    if (d.allowed) return a.authenticator.grantLease(key, 1, d.remaining, 0)
    a.authenticator.grantLease(key, 0, 0, d.retryAfterMs)
  }

  /** The lease script, by EVALSHA, loading it with EVAL after a NOSCRIPT; one timeout each. */
  async #eval(redisKey, capacity, intervalUs, want, fewest) {
    const args = ['1', redisKey, String(capacity), String(intervalUs), String(want), String(fewest)]
    const send = (cmd) => {
      this.stats.roundTrips++
      return withTimeout(Promise.resolve().then(() => this.#commands.send(cmd)), this.options.timeoutMs)
    }
    try {
      return await send(['EVALSHA', LEASE_SCRIPT_SHA, ...args])
    } catch (err) {
      if (!/NOSCRIPT/.test(String(err && err.message))) throw err
      return send(['EVAL', LEASE_SCRIPT, ...args])
    }
  }

  #markDown(err) {
    this.stats.failedRoundTrips++
    if (this.#down) return
    this.#down = true
    this.#lastProbe = Date.now()
    this.stats.outages++
    this.emit('outage', err)
  }

  /** While down: a PING at most every `retryIntervalMs`; an answer ends the outage. */
  #maybeProbe() {
    if (this.#probe !== null || Date.now() - this.#lastProbe < this.options.retryIntervalMs) return
    this.#lastProbe = Date.now()
    this.#probe = withTimeout(Promise.resolve().then(() => this.#commands.send(['PING'])), this.options.timeoutMs)
      .then(
        () => {
          if (this.#down && !this.#closed) {
            this.#down = false
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
   * when Redis is down or does not answer within `timeoutMs`.
   */
  consume(key, cost, limit) {
    return Promise.resolve().then(() => this.#consume(key, cost, limit))
  }

  async #consume(key, cost = 1, limit) {
    const bucket = limit === undefined ? this.options.limit : readLimit(limit, 'limit')
    if (bucket === undefined) throw typeError('consume needs a limit: pass { capacity, refillPerSec } or set the store option limit')
    if (typeof key !== 'string') throw typeError('key must be a string')
    if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw rangeError(`key must be at most ${MAX_KEY_BYTES} bytes of UTF-8`)
    if (typeof cost !== 'number') throw typeError('cost must be a number')
    if (!(Number.isInteger(cost) && cost >= 1 && cost <= bucket.capacity)) {
      throw rangeError(`cost must be an integer from 1 to the capacity (${bucket.capacity}), got ${cost}`)
    }
    if (this.#closed) throw storeError('ERR_AUTH_SHIELD_STORE_CLOSED', 'the store is closed')
    if (this.#down) {
      this.#maybeProbe()
      throw storeError('ERR_AUTH_SHIELD_STORE_UNAVAILABLE', 'Redis is unreachable: the shared limit cannot be checked')
    }
    let reply
    try {
      reply = await this.#eval(`${this.options.prefix}limit:${key}`, bucket.capacity, 1e6 / bucket.refillPerSec, cost, cost)
    } catch (err) {
      this.#markDown(err)
      throw storeError('ERR_AUTH_SHIELD_STORE_UNAVAILABLE', 'Redis is unreachable: the shared limit cannot be checked', err)
    }
    const [granted, remaining, retryAfterMs] = reply.map(Number)
    return { allowed: granted > 0, remaining, retryAfterMs: granted > 0 ? 0 : retryAfterMs }
  }

  /** Stops the background loop (in-flight leases still land). The user's client stays open. */
  async close() {
    this.#closed = true
    if (this.#timer !== null) clearInterval(this.#timer)
    this.#timer = null
  }
}

/** `createRedisStore(client, options)`: a store over a connected node-redis or ioredis client. */
function createRedisStore(client, options) {
  return new RedisStore(client, options)
}

module.exports = { createRedisStore, RedisStore, PENDING_CODE }
