'use strict'

// Options renamed before 1.0 (`renamed` in contract/options.json, the one list of them): the old
// name still works, with a one-time DeprecationWarning as Node's own deprecations give, and
// giving both names is a TypeError. The one warning helper of both engines: the JS engine reads
// its options through it, the native package's native.js renames the config, the
// `rateLimitRefill` getter and revokeSubject's `before` through it before the binding reads
// them (the binding never warns), so each code warns once per process, whichever engine used
// it, and --throw-deprecation / --no-deprecation act alike (process.emitWarning).
//
// An entry with `values` renames a value too: an option whose value became one value of an
// enum (dpopRequired: true is dpopMode: 'required'). `values` maps the old value's JSON text to
// the new value, null for "no value" (as if neither name were given); any other old value,
// null included, is a TypeError, as the old option's own check was.

const { typeError } = require('./error')
const { message } = require('../contract')

const RENAMED = require('../contract/options.json').renamed

// The deprecation codes already warned about in this process.
const warned = new Set()

/** The renamed options of one bag (`options`, a callOptions type, `storeOptions`, …). */
function renamedIn(bag) {
  return RENAMED.filter((r) => r.bag === bag)
}

/** The entry for the old name `name` in `bag`, or undefined. */
function renamedName(bag, name) {
  return RENAMED.find((r) => r.bag === bag && r.name === name)
}

function warnDeprecated(renamed, label) {
  const use = renamed.values === undefined ? `${label}.${renamed.use} (the same option)` : `${label}.${renamed.use}: ${newValues(renamed)}`
  warnOnce(renamed.code, `${label}.${renamed.name} is deprecated: use ${use}`)
}

/** `'required'`: the new values an entry with `values` maps to, as its warning names them. */
function newValues(renamed) {
  const values = Object.values(renamed.values).filter((v) => v !== null)
  return values.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(' or ')
}

/** The new value of `old` for an entry with `values` (null: none); a value it does not map is a TypeError. */
function mappedValue(renamed, old, label) {
  // Only a boolean, number or string has a JSON text here: nothing of the caller's (toJSON) runs.
  const key = ['boolean', 'number', 'string'].includes(typeof old) ? JSON.stringify(old) : undefined
  if (key !== undefined && Object.hasOwn(renamed.values, key)) return renamed.values[key]
  const texts = Object.keys(renamed.values)
  const name = `${label}.${renamed.name}`
  if (texts.every((t) => t === 'true' || t === 'false')) throw typeError(message('mustBeBoolean', { name }))
  throw typeError(`${name} must be ${texts.join(' or ')}`)
}

/** The one DeprecationWarning `code` of this process: the first call warns, the others do nothing. */
function warnOnce(code, message) {
  if (warned.has(code)) return
  warned.add(code)
  process.emitWarning(message, { type: 'DeprecationWarning', code })
}

const given = (value) => value !== undefined && value !== null

/**
 * `options` with each deprecated name of `bag` read under its new name (`label` names the
 * object in the warning and the error): `options` itself when no old name is present, else a
 * copy of its enumerable keys (own and inherited, as `for...in` and the native reader see them).
 */
function renameDeprecated(options, bag, label) {
  let copy = null
  for (const r of renamedIn(bag)) {
    if (!(r.name in options)) continue
    if (copy === null) {
      copy = {}
      for (const name in options) copy[name] = options[name]
    }
    const old = copy[r.name]
    delete copy[r.name]
    if (r.values === undefined ? !given(old) : old === undefined) continue
    const value = r.values === undefined ? old : mappedValue(r, old, label)
    warnDeprecated(r, label)
    if (given(copy[r.use])) throw typeError(togetherMessage(r, label))
    if (value !== null) copy[r.use] = value
  }
  return copy === null ? options : copy
}

/** Both names given: the same option, or (an entry with `values`) the same setting said twice. */
function togetherMessage(r, label) {
  if (r.values === undefined) return message('renamedTogether', { label, oldName: r.name, newName: r.use })
  return `${label}.${r.name} and ${label}.${r.use} say the same thing (${r.name} is deprecated): give only ${r.use}`
}

module.exports = { RENAMED, renamedIn, renamedName, renameDeprecated, warnDeprecated }
