'use strict'

// The one reader of every JS options bag described in contract/options.json (storeOptions,
// middlewareOptions, feedOptions, jwksOptions, introspectionOptions): unknown names, kinds, bounds and defaults come
// from the schema, so every bag refuses a misspelt option with the same TypeError
// (ERR_INVALID_ARG_TYPE, `<where>.<name> is not a known option`) and a wrong value with the same
// words (TypeError for a wrong kind, RangeError ERR_OUT_OF_RANGE past a bound). The Authenticator
// config has its own reader (js/config.js) because it mirrors the native core's messages; the
// helpers' options are read natively (src/binding/args.rs `known_options`) and by the JS engine
// (base/schema.js `checkKnownOptions`) from `callOptions`.

const SCHEMA = require('../../contract/options.json')
const { typeError, rangeError } = require('../../base/error')
const { message } = require('../../contract')
const { renameDeprecated } = require('../../base/deprecation')

/** The entries of one bag by name, read once. */
const BAGS = new Map()
function bagSpec(bag) {
  let specs = BAGS.get(bag)
  if (specs === undefined) {
    specs = new Map(SCHEMA[bag].map((o) => [o.name, o]))
    BAGS.set(bag, specs)
  }
  return specs
}

/** `'a', 'b' or false`: the allowed values of an enum option, as its error message lists them. */
function listValues(values) {
  const shown = values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v)))
  return shown.length === 1 ? shown[0] : `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1]}`
}

function readNumeric(spec, value, name) {
  if (typeof value !== 'number') throw typeError(message('mustBeNumber', { name }))
  const integer = spec.kind === 'integer'
  const low = spec.exclusiveMin ? value > spec.min : value >= spec.min
  if (!((!integer || Number.isInteger(value)) && low && value <= spec.max)) {
    if (integer) throw rangeError(message('integerOutOfRange', { name, min: spec.min, max: spec.max, value }))
    const what = spec.exclusiveMin ? `greater than ${spec.min} and at most ${spec.max}` : `a number from ${spec.min} to ${spec.max}`
    throw rangeError(`${name} must be ${what}, got ${value}`)
  }
  return value
}

/**
 * One option by its schema entry: the default when absent (`undefined`; `null` too where the
 * bag says so), else its checked value. Kinds the schema cannot describe (`custom`, and `limit`
 * through `readers`) go to the reader named for them, or are returned as given for the module
 * named in the entry's `checkedBy` to check. `variant` names the adapter reading the bag, for
 * an enum whose entry lists other values per adapter (`valuesFor`).
 */
function readOption(spec, value, where, readers, variant) {
  if (value === undefined) return spec.default === null ? undefined : spec.default
  const name = `${where}.${spec.name}`
  switch (spec.kind) {
    case 'boolean':
      if (typeof value !== 'boolean') throw typeError(message('mustBeBoolean', { name }))
      return value
    case 'string': {
      const tooLong = spec.max !== undefined && typeof value === 'string' && value.length > spec.max
      if (typeof value !== 'string' || tooLong || (spec.nonEmpty && value === '')) {
        const size = spec.max === undefined ? '' : ` of at most ${spec.max} characters`
        throw typeError(`${name} must be a ${spec.nonEmpty ? 'non-empty ' : ''}string${size}`)
      }
      return value
    }
    case 'integer':
    case 'number':
      return readNumeric(spec, value, name)
    case 'function':
      if (typeof value !== 'function') throw typeError(`${name} must be a function`)
      return value
    case 'enum': {
      // `valuesFor`: the values one adapter takes instead (Koa's errors: 'throw').
      const values = (variant !== undefined && spec.valuesFor?.[variant]) || spec.values
      if (!values.includes(value)) throw typeError(`${name} must be ${listValues(values)}`)
      return value
    }
    default: {
      const read = readers && readers[spec.kind]
      return read === undefined ? value : read(value, name)
    }
  }
}

/**
 * Reads `options` (undefined or null: none given) against the bag `bag` of contract/options.json:
 * renamed options under their new name (base/deprecation.js), unknown names refused (`ignored`:
 * names another layer owns, such as the host framework's), then every option of the bag (or
 * of `only`, a list of its names) read in schema order; `variant`: the adapter reading it (an
 * enum's `valuesFor`). Returns `{ [name]: value }`.
 */
function readOptionBag(options, bag, { where = 'options', ignored, only, readers, variant } = {}) {
  if (options === undefined || options === null) options = {}
  if (typeof options !== 'object' || Array.isArray(options) || ArrayBuffer.isView(options)) throw typeError(message('mustBeObject', { name: where }))
  options = renameDeprecated(options, bag, where)
  const specs = bagSpec(bag)
  const allowed = only === undefined ? null : new Set(only)
  for (const name of Object.keys(options)) {
    const known = specs.has(name) && (allowed === null || allowed.has(name))
    if (!known && !(ignored && ignored.has(name))) throw typeError(message('unknownOption', { name: `${where}.${name}` }))
  }
  const read = {}
  for (const spec of specs.values()) {
    if (allowed === null || allowed.has(spec.name)) read[spec.name] = readOption(spec, options[spec.name], where, readers, variant)
  }
  return read
}

/** The option names of a bag. */
function optionNames(bag) {
  return [...bagSpec(bag).keys()]
}

module.exports = { readOptionBag, readOption, optionNames, listValues }
