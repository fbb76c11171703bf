'use strict'

// contract/options.json and contract/results.json read once: the Authenticator options (names,
// kinds, defaults, bounds), and the AuthResult and TokenVerification fields in order. js/config.js
// validates against the first, and every engine that builds an AuthResult or a TokenVerification
// in JS (the JS engine, shadow mode's comparison, the benchmark's reference chain) takes its keys
// and their order from the templates below, so a field added to the contract reaches them all.

const SCHEMA = require('../contract/options.json')
const RESULTS = require('../contract/results.json')
const { typeError } = require('./error')
const { message } = require('../contract')
const { renamedName } = require('./deprecation')

/** The options in schema order; `default` is the value when the option is absent or null. */
const OPTIONS = SCHEMA.options
const OPTION_BY_NAME = new Map(OPTIONS.map((o) => [o.name, o]))

/** The names each options object of `callOptions` accepts, by its .d.ts interface name. */
const CALL_OPTION_NAMES = new Map(SCHEMA.callOptions.map((c) => [c.type, new Set(c.names)]))

/**
 * Refuses a name of `options` (an object) that `callOptions` does not list for `typeName`, as the
 * native binding does (src/binding/args.rs `known_options`): a misspelt option must not fall
 * back to its default. `for...in` sees inherited enumerable keys too, as napi_get_property_names.
 */
function checkKnownOptions(options, typeName, label = 'options') {
  // A typed array (a Buffer) is a list, not a bag of options (src/binding/args.rs).
  if (ArrayBuffer.isView(options)) throw typeError(message('mustBeObject', { name: label }))
  const known = CALL_OPTION_NAMES.get(typeName)
  for (const name in options) {
    // A renamed option's old name is still known (base/deprecation.js reads it).
    if (!known.has(name) && renamedName(typeName, name) === undefined) throw typeError(message('unknownOption', { name: `${label}.${name}` }))
  }
}

/** The AuthResult field names, in the order every result lists them. */
const RESULT_FIELDS = RESULTS.AuthResult.map((f) => f.name)

/** A field's value that the schema fixes for one outcome ("undefined" stands for undefined). */
function fixedValue(field, key) {
  const v = field[key]
  return v === 'undefined' ? undefined : v
}

/**
 * `{ success, failure }`: an AuthResult object per outcome with every field, in schema order,
 * holding the values the schema fixes for that outcome (`undefined` for the rest). Copied per
 * result with `{ ...template }`, which V8 does with the template's shape in one step, then the
 * varying fields are assigned by name: the object keeps one shape and the schema's key order.
 */
function resultTemplates() {
  return templates(RESULTS.AuthResult, 'authenticated')
}

/** As `resultTemplates`, for the TokenVerification (`valid` in place of `authenticated`). */
function verificationTemplates() {
  return templates(RESULTS.TokenVerification, 'valid')
}

function templates(fields, verdict) {
  const success = {}
  const failure = {}
  for (const field of fields) {
    success[field.name] = fixedValue(field, 'onSuccess')
    failure[field.name] = fixedValue(field, 'onFailure')
  }
  success[verdict] = true
  failure[verdict] = false
  return { success, failure }
}

module.exports = { SCHEMA, RESULTS, OPTIONS, OPTION_BY_NAME, RESULT_FIELDS, resultTemplates, verificationTemplates, CALL_OPTION_NAMES, checkKnownOptions }
