'use strict'

// Options renamed before 1.0 (`renamed` in contract/options.json, the one list of them): the old
// name still works, with a one-time DeprecationWarning as Node's own deprecations give, and
// giving both names is a TypeError. The one warning helper of both engines: the JS engine reads
// its options through it, the native package's native.js renames the config, the
// `rateLimitRefill` getter and revokeSubject's `before` through it before the binding reads
// them (the binding never warns), so each code warns once per process, whichever engine used
// it, and --throw-deprecation / --no-deprecation act alike (process.emitWarning).

const { typeError } = require('../../js/error')
const { message } = require('../../contract')

const RENAMED = require('../../contract/options.json').renamed

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
  warnOnce(renamed.code, `${label}.${renamed.name} is deprecated: use ${label}.${renamed.use} (the same option)`)
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
    if (!given(old)) continue
    warnDeprecated(r, label)
    if (given(copy[r.use])) {
      throw typeError(message('renamedTogether', { label, oldName: r.name, newName: r.use }))
    }
    copy[r.use] = old
  }
  return copy === null ? options : copy
}

module.exports = { RENAMED, renamedIn, renamedName, renameDeprecated, warnDeprecated, warnOnce }
