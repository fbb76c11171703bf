'use strict'

// Every function of the application that the adapters call (getToken, isRevoked, the skip /
// unless predicates, onError, formatUser, onMismatch, and the recoveries registered through
// AuthDecision#recover) is called through one CallbackFence. Express reads
// `next(undefined | null | 0 | '' | false)` as "continue" and `next('route')` as "go to the next
// route": a callback that threw or rejected with such a value let the request through. Here,
// whatever a callback throws or rejects with becomes a real Error (an Error it threw is kept
// as is, the way express-jwt hands it on), and a Promise that has not settled after
// `callbackTimeoutMs` is given up: the request is refused either way, never passed.

const { types } = require('node:util')
const { typeError, rangeError } = require('../../base/error')

const DEFAULT_CALLBACK_TIMEOUT_MS = 10000
// setTimeout's own bound: a longer delay would fire at once.
const MAX_CALLBACK_TIMEOUT_MS = 2 ** 31 - 1

const CALLBACK_CODE = 'ERR_AUTH_SHIELD_CALLBACK'
const TIMEOUT_CODE = 'ERR_AUTH_SHIELD_CALLBACK_TIMEOUT'

class CallbackFence {
  /** `timeoutMs`: the `callbackTimeoutMs` option (validated here; undefined for the default). */
  constructor(timeoutMs = DEFAULT_CALLBACK_TIMEOUT_MS) {
    if (typeof timeoutMs !== 'number') throw typeError('options.callbackTimeoutMs must be a number')
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_CALLBACK_TIMEOUT_MS) {
      throw rangeError(`options.callbackTimeoutMs must be a whole number of milliseconds from 1 to ${MAX_CALLBACK_TIMEOUT_MS}`)
    }
    this.timeoutMs = timeoutMs
  }

  /**
   * `fn` fenced, for calling on every request: `(...args)` gives fn's value, or a Promise when
   * fn returned a thenable (its value, or a rejection with `callbackError`, or after
   * `timeoutMs` a rejection with ERR_AUTH_SHIELD_CALLBACK_TIMEOUT); a throw is rethrown as
   * `callbackError`. `name` names the callback in messages (`options.getToken`).
   */
  wrap(name, fn) {
    const fence = this
    // `apply(undefined, arguments)` passes exactly the adapter's arguments without building an
    // array per call (a rest parameter and a spread cost about twice as much on the hot path).
    return function fenced() {
      let answer
      try {
        answer = fn.apply(undefined, arguments)
        // Reading `then` runs code of the application too (a getter).
        if (!isThenable(answer)) return answer
      } catch (err) {
        throw callbackError(name, err, 'threw')
      }
      return fence.settle(name, answer)
    }
  }

  /**
   * `fn` fenced where its answer is a yes or a no (a skip predicate, isRevoked): `(...args)`
   * gives `true` or `false`, or a Promise of one (a Promise fn answered is awaited within
   * `timeoutMs`, never read as truthy). Any other answer (`undefined`, `1`, `'yes'`, a Promise
   * of one) is an ERR_AUTH_SHIELD_CALLBACK error, as a throw or a rejection is: the request is
   * refused, never let through on a guess.
   */
  predicate(name, fn) {
    const fenced = this.wrap(name, fn)
    const check = (answer) => {
      if (answer === true || answer === false) return answer
      throw unexpectedAnswer(name, answer, 'true or false')
    }
    return function fencedPredicate() {
      const answer = fenced.apply(undefined, arguments)
      if (answer === true || answer === false) return answer
      // wrap() turned any thenable into a Promise of its own.
      return answer instanceof Promise ? answer.then(check) : check(answer)
    }
  }

  settle(name, thenable) {
    return new Promise((resolve, reject) => {
      // Not unref'd: a request still waiting is work in progress, answered within timeoutMs.
      const timer = setTimeout(() => reject(timeoutError(name, this.timeoutMs)), this.timeoutMs)
      const fail = (err) => {
        clearTimeout(timer)
        reject(callbackError(name, err, 'rejected with'))
      }
      try {
        // Promise.resolve follows a thenable that resolves with another thenable to the end, so
        // the rejection seen here is the last one, whatever kind of thenable started it. (It
        // reads a Promise's `constructor`, which may throw.)
        Promise.resolve(thenable).then((value) => {
          clearTimeout(timer)
          resolve(value)
        }, fail)
      } catch (err) {
        fail(err)
      }
    })
  }
}

function isThenable(value) {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof value.then === 'function'
}

/**
 * An Error for what a callback threw or rejected with: a real Error (any realm, any subclass)
 * as it is, anything else (`undefined`, `null`, `0`, `''`, `false`, a string such as `'route'`,
 * a plain object) wrapped in an ERR_AUTH_SHIELD_CALLBACK Error with the value as `cause`.
 */
function callbackError(name, value, how = 'threw') {
  if (types.isNativeError(value)) return value
  return fenceError(CALLBACK_CODE, `${name} ${how} ${describe(value)}, not an Error: the request is refused`, 500, { cause: value })
}

/** A callback answered something it may not (isRevoked neither true nor false): `cause` is the answer. */
function unexpectedAnswer(name, value, expected) {
  return fenceError(CALLBACK_CODE, `${name} answered ${describe(value)}, not ${expected}: the request is refused`, 500, { cause: value })
}

function timeoutError(name, timeoutMs) {
  return fenceError(TIMEOUT_CODE, `${name} did not settle within callbackTimeoutMs (${timeoutMs} ms): the request is refused`, 503)
}

function fenceError(code, message, status, options) {
  const err = new Error(message, options)
  err.code = code
  // http-errors' names: Express's final handler and Fastify's default handler answer with it.
  err.status = status
  err.statusCode = status
  return err
}

/** The kind of a value, never its text: a thrown string may hold anything. */
function describe(value) {
  if (value === undefined || value === null || typeof value === 'boolean' || typeof value === 'number') return String(value)
  if (typeof value === 'string') return value === '' ? "''" : 'a string'
  if (typeof value === 'object') return 'an object'
  return `a ${typeof value}`
}

module.exports = { CallbackFence, callbackError, unexpectedAnswer, DEFAULT_CALLBACK_TIMEOUT_MS, MAX_CALLBACK_TIMEOUT_MS }
