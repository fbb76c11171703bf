'use strict'

// The options of `new RevocationFeed(client, options)` (docs/revocation.md), read once: names,
// defaults and bounds.

const { typeError, rangeError } = require('../../js/error')

const DEFAULTS = {
  prefix: 'auth-shield:revocations',
  maxLen: 100_000,
  maxRevocationLagMs: 5_000,
  onStale: 'open',
  commandTimeoutMs: 2_000,
  maxQueued: 10_000,
  maxKnown: 1_000_000,
}

/** The options, checked once: unknown names, wrong types and values out of bounds throw. */
function readFeedOptions(options) {
  if (options === undefined || options === null) options = {}
  if (typeof options !== 'object') throw typeError('options must be an object')
  const o = { ...DEFAULTS }
  for (const key of Object.keys(options)) {
    if (options[key] === undefined) continue
    if (!(key in DEFAULTS) && key !== 'subjectRetentionSec' && key !== 'onApplied' && key !== 'onError') {
      throw typeError(`options.${key} is not a known option`)
    }
    o[key] = options[key]
  }
  if (typeof o.prefix !== 'string' || o.prefix === '') throw typeError('options.prefix must be a non-empty string')
  const int = (name, min, max) => {
    if (typeof o[name] !== 'number') throw typeError(`options.${name} must be a number`)
    if (!Number.isInteger(o[name]) || o[name] < min || o[name] > max) {
      throw rangeError(`options.${name} must be an integer from ${min} to ${max}`)
    }
  }
  int('maxLen', 100, 1e8)
  int('maxRevocationLagMs', 100, 86_400_000)
  int('commandTimeoutMs', 10, 600_000)
  int('maxQueued', 1, 10_000_000)
  int('maxKnown', 1, 100_000_000)
  if (o.subjectRetentionSec !== undefined) int('subjectRetentionSec', 1, 3.2e9)
  if (o.onStale !== 'open' && o.onStale !== 'closed') throw typeError("options.onStale must be 'open' or 'closed'")
  for (const name of ['onApplied', 'onError']) {
    if (o[name] !== undefined && typeof o[name] !== 'function') throw typeError(`options.${name} must be a function`)
  }
  return o
}

module.exports = { readFeedOptions, DEFAULTS }
