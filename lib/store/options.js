'use strict'

// The store options of auth-shield/redis (createRedisStore, attach), read once. Their names,
// kinds, defaults and bounds live in contract/options.json (storeOptions).

const { typeError, rangeError } = require('../../js/error')
const { checkKnownOptions } = require('../../js/schema')

const STORE_OPTIONS = require('../../contract/options.json').storeOptions
const SPEC = new Map(STORE_OPTIONS.map((o) => [o.name, o]))
const ATTACH_OPTIONS = ['lease', 'strict', 'maxKeys', 'outageShare']
const ATTACH_SPEC = new Map(ATTACH_OPTIONS.map((n) => [n, SPEC.get(n)]))

function readLimit(limit, name) {
  if (limit === undefined || limit === null) return undefined
  if (typeof limit !== 'object') throw typeError(`${name} must be { capacity, refillPerSec }`)
  checkKnownOptions(limit, 'SharedLimit', name)
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

module.exports = { readLimit, readStoreOptions, SPEC, ATTACH_OPTIONS, ATTACH_SPEC }
