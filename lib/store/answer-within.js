'use strict'

// The time-out of one Redis round trip, measured so that only Redis can miss it.
//
// A plain `setTimeout` next to the command also counts time that is ours: node-redis writes
// commands in a `setImmediate`, and a burst of requests (5,000 new identities at once) can keep
// the event loop busy past the time-out, after which the timer runs before the poll phase that
// would read the reply already waiting in the socket. So the clock starts in the check phase
// after the send (node-redis's write, queued first, has run by then; ioredis writes at once),
// and when it runs out the verdict waits for one more poll phase: a reply that arrived while the
// loop was busy is read first. What is left is Redis, or the network, not answering.

const { codedError } = require('../../base/error')

/**
 * Resolves or rejects like `send()` (called at once; a synchronous throw rejects), or rejects
 * with `onTimeout()` when no answer came within `ms` of the command being written.
 */
function answerWithin(send, ms, onTimeout) {
  return new Promise((resolve, reject) => {
    let settled = false
    let timer = null
    const settle = (done, value) => {
      if (settled) return
      settled = true
      if (timer !== null) clearTimeout(timer)
      done(value)
    }
    let reply
    try {
      reply = send()
    } catch (err) {
      return settle(reject, err)
    }
    Promise.resolve(reply).then(
      (value) => settle(resolve, value),
      (err) => settle(reject, err),
    )
    setImmediate(() => {
      if (settled) return
      timer = setTimeout(() => setImmediate(() => settle(reject, onTimeout())), ms)
      timer.unref()
    })
  })
}

/** What a command of a store that got no answer within `ms` rejects with (`onTimeout`). */
function noAnswerWithin(ms) {
  return codedError('ERR_AUTH_SHIELD_STORE_TIMEOUT', `Redis did not answer within ${ms} ms`)
}

module.exports = { answerWithin, noAnswerWithin }
