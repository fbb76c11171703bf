'use strict'

// The shared DPoP replay store (RFC 9449 §11.1): a proof accepted by one process is refused by
// every other one sharing the Redis. One `SET <prefix>dpop:<sha256(thumbprint.jti)> 1 NX PX
// <ms>` per DPoP request the engine accepted, kept until the proof's iat window has passed.
// One key per command, so every command touches one hash slot on a Cluster without a hash tag
// (lib/store/key-layout.js `dpopReplayKey`: the entries spread over every master).
// A round trip per DPoP request is the price (docs/dpop.md); it is paid only by requests that
// passed every other check, so a flood of forged proofs costs Redis nothing.
//
//   const { createDpopReplayStore } = require('auth-shield/redis')
//   app.use(authShield({ keys, dpop: true }, { dpopOrigin, dpopReplayStore: createDpopReplayStore(redis) }))

const { commandClient } = require('./commands')
const { answerWithin, noAnswerWithin } = require('./answer-within')
const { readStoreOptions } = require('./options')
const { dpopReplayKey } = require('./key-layout')
const { codedError } = require('../../js/error')

class DpopReplayStore {
  #commands

  constructor(client, options) {
    this.options = readStoreOptions(options, ['prefix', 'commandTimeoutMs'])
    this.#commands = commandClient(client)
    this.stats = { admitted: 0, replayed: 0, failed: 0 }
  }

  /**
   * Records `replayKey` (64 hex characters) for `ttlMs`: resolves to `'fresh'` the first time,
   * `'replayed'` while it is held; rejects (ERR_AUTH_SHIELD_STORE_UNAVAILABLE) when Redis fails,
   * answers anything else, or is later than `commandTimeoutMs`: the caller refuses the request.
   */
  async admit(replayKey, ttlMs) {
    const key = dpopReplayKey(this.options.prefix, replayKey)
    const ms = this.options.commandTimeoutMs
    let reply
    try {
      reply = await answerWithin(
        () => this.#commands.send(['SET', key, '1', 'NX', 'PX', String(Math.max(1, Math.ceil(ttlMs)))], key),
        ms,
        () => noAnswerWithin(ms),
      )
    } catch (err) {
      this.stats.failed++
      throw codedError('ERR_AUTH_SHIELD_STORE_UNAVAILABLE', 'Redis is unreachable: the DPoP proof cannot be checked for replay', err)
    }
    if (reply === 'OK') {
      this.stats.admitted++
      return 'fresh'
    }
    if (reply === null) {
      this.stats.replayed++
      return 'replayed'
    }
    this.stats.failed++
    throw codedError('ERR_AUTH_SHIELD_STORE_UNAVAILABLE', `unexpected reply to SET NX: ${String(reply).slice(0, 64)}`)
  }
}

/** `createDpopReplayStore(client, { prefix, commandTimeoutMs })` over a connected node-redis or ioredis client. */
function createDpopReplayStore(client, options) {
  return new DpopReplayStore(client, options)
}

module.exports = { createDpopReplayStore, DpopReplayStore }
