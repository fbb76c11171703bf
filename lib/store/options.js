'use strict'

// The store options of auth-shield/redis (createRedisStore, attach), read once. Their names,
// kinds, defaults and bounds live in contract/options.json (storeOptions).

const { typeError, rangeError } = require('../../base/error')
const { message } = require('../../contract')
const { checkKnownOptions } = require('../../base/schema')
const { readOptionBag } = require('../options/reader')

const ATTACH_OPTIONS = ['lease', 'strict', 'maxKeys', 'outageShare']

function readLimit(limit, name) {
  if (limit === undefined || limit === null) return undefined
  if (typeof limit !== 'object') throw typeError(`${name} must be { capacity, refillPerSec }`)
  checkKnownOptions(limit, 'SharedLimit', name)
  const { capacity, refillPerSec } = limit
  if (typeof capacity !== 'number' || typeof refillPerSec !== 'number') throw typeError(`${name} must be { capacity, refillPerSec } numbers`)
  if (!(Number.isInteger(capacity) && capacity >= 1 && capacity <= 1e9)) throw rangeError(message('integerOutOfRange', { name: `${name}.capacity`, min: 1, max: 1e9, value: capacity }))
  if (!(refillPerSec > 0 && refillPerSec <= 1e9)) throw rangeError(message('refillOutOfRange', { name: `${name}.refillPerSec`, max: 1e9, value: refillPerSec }))
  return { capacity, refillPerSec }
}

/** Store options, validated once by the one option reader (lib/options/reader.js); `only`: a subset. */
function readStoreOptions(options, only, where = 'options') {
  return readOptionBag(options, 'storeOptions', { where, only, readers: { limit: readLimit } })
}

module.exports = { readLimit, readStoreOptions, ATTACH_OPTIONS }
