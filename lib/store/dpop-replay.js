'use strict'

// The shared DPoP replay store (RFC 9449 §11.1): a proof accepted by one process is refused by
// every other one sharing the Redis. Each DPoP request the engine accepted records its replay
// key (AuthResult.dpopReplayKey, SHA-256(thumbprint.jti)) with SET <prefix>dpop:<key> 1 NX PX
// <ms>, kept until the proof's iat window has passed.
//
// Requests that arrive together share one round trip: the keys asked for in one turn of the
// event loop, and those asked for while an earlier write is still in flight, go out together as
// one EVAL of a script that runs SET NX PX for each and answers 1 (new) or 0 (held) per key; each
// request still gets its own verdict. A lone request pays one round trip, as before; under load
// (requests arriving faster than Redis answers) one round trip serves every request that arrived
// during the previous one, so Redis sees one command per round trip, not per request. (Node's
// HTTP server hands over about one request per event-loop turn, so the turn alone seldom
// batches; the write in flight is what gathers them.) At most MAX_QUEUED keys wait: past that a
// request is refused (503) at once, a bound on the memory a stalled Redis can make us hold. On a Cluster a script must
// touch one slot: with a prefix holding a hash tag every entry is in one slot and batches stay
// one EVAL; without one (the default, lib/store/key-layout.js `dpopReplayKey`: entries spread
// over every master) each key is its own SET NX PX, sent in the same turn, which the client
// pipelines per master.
//
// `dpopWaitReplicas` (off by default): after the write, WAIT numreplicas timeout on the same
// connection; a batch that fewer replicas acknowledged is refused (503) rather than accepted on
// a write a failover could lose. Redis failing, answering anything unexpected or later than
// commandTimeoutMs refuses too: never a pass.
//
//   const { createDpopReplayStore, createRedisStore } = require('auth-shield/redis')
//   app.use(authShield({ keys, dpop: true }, { dpopOrigin, dpopReplayStore: createDpopReplayStore(redis) }))
//   // or, from the store the rate limit already uses: createRedisStore(redis).dpopReplay()

const { commandClient } = require('./commands')
const { answerWithin, noAnswerWithin } = require('./answer-within')
const { readStoreOptions } = require('./options')
const { dpopReplayKey, hasHashTag } = require('./key-layout')
const { codedError } = require('../../base/error')

// SET NX PX per key; 1 for a key set now, 0 for one held already. KEYS[i] with ARGV[i] (ms).
const SCRIPT = `local out = {}
for i = 1, #KEYS do
  if redis.call('SET', KEYS[i], '1', 'NX', 'PX', ARGV[i]) then out[i] = 1 else out[i] = 0 end
end
return out`

// Most keys in one script: a batch with more sends several scripts (all at once).
const BATCH_KEYS = 500
// Most keys waiting for the write in flight (a request each); past it: refused at once.
const MAX_QUEUED = 100000

// The store options a replay store reads.
const OPTION_NAMES = ['prefix', 'commandTimeoutMs', 'dpopWaitReplicas', 'dpopWaitTimeoutMs']

class DpopReplayStore {
  #commands
  // Keys waiting to be sent: { key, ttl, resolve, reject }; sent at the end of this turn, or
  // when the write in flight has answered.
  #queue = []
  #scheduled = false
  // Commands of the batch in flight (0: none).
  #inFlight = 0
  // Whether a batch may be one script (not a Cluster, or every key in one tagged slot).
  #scripted
  #warnedClient = false

  constructor(client, options, commands) {
    this.options = readStoreOptions(options, OPTION_NAMES)
    this.#commands = commands === undefined ? commandClient(client) : commands
    this.#scripted = this.#commands.topology !== 'cluster' || hasHashTag(this.options.prefix)
    // roundTrips: commands sent (scripts, SETs and WAITs); batches: turns that sent any.
    this.stats = { admitted: 0, replayed: 0, failed: 0, roundTrips: 0, batches: 0 }
  }

  /**
   * Records `replayKey` (64 hex characters) for `ttlMs`: resolves to `'fresh'` the first time,
   * `'replayed'` while it is held; rejects (ERR_AUTH_SHIELD_STORE_UNAVAILABLE) when Redis fails,
   * answers anything else, is later than `commandTimeoutMs`, or (with `dpopWaitReplicas`)
   * fewer replicas acknowledged the write: the caller refuses the request.
   */
  admit(replayKey, ttlMs) {
    return new Promise((resolve, reject) => {
      if (this.#queue.length >= MAX_QUEUED) {
        this.stats.failed++
        return reject(codedError('ERR_AUTH_SHIELD_STORE_UNAVAILABLE', `${MAX_QUEUED} DPoP replay writes are waiting for Redis already`))
      }
      const key = dpopReplayKey(this.options.prefix, replayKey)
      const ttl = String(Math.max(1, Math.ceil(ttlMs)))
      this.#queue.push({ key, ttl, resolve, reject })
      this.#schedule()
    })
  }

  /**
   * Forgets `replayKey` (DEL), recorded `'fresh'` by this store for a request a later check
   * then refused: only proofs of admitted requests take room (docs/sender-constrained.md,
   * "Replay cache"). Best effort: until the DEL lands, or if it fails, a replay of that proof is
   * refused as a replay, which is still a refusal.
   */
  release(replayKey) {
    const key = dpopReplayKey(this.options.prefix, replayKey)
    this.#send(['DEL', key], key).then(undefined, () => {
      this.stats.failed++
    })
  }

  /** A flush at the end of this turn, unless one is due or a write is in flight (it flushes when answered). */
  #schedule() {
    if (this.#scheduled || this.#inFlight > 0 || this.#queue.length === 0) return
    this.#scheduled = true
    setImmediate(() => this.#flush())
  }

  #flush() {
    this.#scheduled = false
    const queue = this.#queue
    this.#queue = []
    if (queue.length === 0) return
    this.stats.batches++
    const sent = []
    if (!this.#scripted) {
      for (const entry of queue) sent.push(this.#settle([entry], this.#set(entry)))
    } else {
      for (let i = 0; i < queue.length; i += BATCH_KEYS) {
        const batch = queue.slice(i, i + BATCH_KEYS)
        sent.push(this.#settle(batch, this.#script(batch)))
      }
    }
    this.#inFlight += sent.length
    for (const done of sent) {
      done.then(() => {
        this.#inFlight--
        this.#schedule()
      })
    }
  }

  /** One EVAL for `batch` (one slot): resolves to its replies, 1 or 0 per key. */
  #script(batch) {
    const args = ['EVAL', SCRIPT, String(batch.length)]
    for (const e of batch) args.push(e.key)
    for (const e of batch) args.push(e.ttl)
    return this.#send(args, batch[0].key).then((reply) => {
      if (!Array.isArray(reply) || reply.length !== batch.length) throw unexpected(reply)
      return reply.map(Number)
    })
  }

  /** One SET NX PX (a Cluster without a hash tag): resolves to `[1]` or `[0]`. */
  #set(entry) {
    return this.#send(['SET', entry.key, '1', 'NX', 'PX', entry.ttl], entry.key).then((reply) => {
      if (reply === 'OK') return [1]
      if (reply === null) return [0]
      throw unexpected(reply)
    })
  }

  /**
   * Gives every entry of `batch` its verdict once `replies` (and WAIT, when asked) answered;
   * the promise returned resolves then (never rejects).
   */
  #settle(batch, replies) {
    const replicas = this.options.dpopWaitReplicas
    const written = replicas === 0 ? replies : replies.then((r) => (r.includes(1) ? this.#wait(batch[0].key, replicas).then(() => r) : r))
    return written.then(
      (r) => {
        for (let i = 0; i < batch.length; i++) {
          if (r[i] === 1) {
            this.stats.admitted++
            batch[i].resolve('fresh')
          } else if (r[i] === 0) {
            this.stats.replayed++
            batch[i].resolve('replayed')
          } else {
            this.stats.failed++
            batch[i].reject(unexpected(r[i]))
          }
        }
      },
      (err) => {
        const failure = codedError('ERR_AUTH_SHIELD_STORE_UNAVAILABLE', 'Redis is unreachable: the DPoP proof cannot be checked for replay', err)
        for (const e of batch) {
          this.stats.failed++
          e.reject(failure)
        }
      },
    )
  }

  /** WAIT on the connection (the master) that took `key`'s write; rejects below `replicas`. */
  #wait(key, replicas) {
    const timeout = this.options.dpopWaitTimeoutMs
    return this.#send(['WAIT', String(replicas), String(timeout)], key, timeout).then((acked) => {
      if (typeof acked !== 'number' || !(acked >= replicas)) {
        throw codedError('ERR_AUTH_SHIELD_STORE_UNAVAILABLE', `the DPoP replay entry reached ${String(acked)} of ${replicas} replicas within ${timeout} ms`)
      }
    })
  }

  #send(args, key, extraMs = 0) {
    const ms = this.options.commandTimeoutMs + extraMs
    this.stats.roundTrips++
    return answerWithin(
      () => this.#commands.send(args, key),
      ms,
      () => noAnswerWithin(ms),
    ).catch((err) => {
      // A cluster client may keep sending to a master that died: ask it for a new slot map
      // (lib/store/commands.js); its own API failing is a process warning once, never dropped.
      this.#commands.refresh?.(key)?.catch?.((e) => {
        if (this.#warnedClient) return
        this.#warnedClient = true
        process.emitWarning(e.message, { code: e.code })
      })
      throw err
    })
  }
}

function unexpected(reply) {
  return codedError('ERR_AUTH_SHIELD_STORE_UNAVAILABLE', `unexpected reply to the DPoP replay write: ${String(reply).slice(0, 64)}`)
}

/**
 * `createDpopReplayStore(client, { prefix, commandTimeoutMs, dpopWaitReplicas, dpopWaitTimeoutMs })`
 * over a connected node-redis or ioredis client.
 */
function createDpopReplayStore(client, options) {
  return new DpopReplayStore(client, options)
}

module.exports = { createDpopReplayStore, DpopReplayStore, OPTION_NAMES }
