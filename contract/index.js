'use strict'

// The JS side of the contract (contract/README.md): the limits and the caller-error message
// templates of contract/*.json, filled by the rules written there. The native core derives the
// same from the same files at build time (build.rs, src/contract.rs).

const LIMITS_FILE = require('./limits.json')
const MESSAGES = require('./messages.json')
const OPTIONS = require('./options.json').options

/** `{ name: value }` of contract/limits.json. */
const LIMITS = Object.freeze(
  Object.fromEntries(
    Object.entries(LIMITS_FILE)
      .filter(([name]) => !name.startsWith('$'))
      .map(([name, { value }]) => [name, value]),
  ),
)

const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9_]*)\}/g

/** A number placeholder: ECMAScript Number::toString, with -0 as `0` (which it writes anyway). */
function renderNumber(x) {
  return String(x)
}

const RENDER = {
  text: (v) => v,
  quoted: (v) => JSON.stringify(v),
  number: renderNumber,
}

const KIND_OF = { text: 'string', quoted: 'string', number: 'number' }

/**
 * The message `id` of contract/messages.json with its placeholders filled from `params`. A
 * missing, extra or mistyped param is a bug in the caller, thrown as such.
 */
function message(id, params = {}) {
  const entry = Object.hasOwn(MESSAGES, id) && !id.startsWith('$') ? MESSAGES[id] : undefined
  if (entry === undefined) throw new Error(`contract/messages.json has no message ${id}`)
  const kinds = entry.params ?? {}
  for (const name of Object.keys(params)) {
    if (!Object.hasOwn(kinds, name)) throw new Error(`message ${id} takes no param ${name}`)
  }
  return entry.template.replace(PLACEHOLDER, (whole, name) => {
    const kind = kinds[name]
    if (kind === undefined) throw new Error(`message ${id}: placeholder ${whole} has no param`)
    const value = params[name]
    if (typeof value !== KIND_OF[kind]) throw new Error(`message ${id}: param ${name} must be a ${KIND_OF[kind]}`)
    return RENDER[kind](value)
  })
}

/**
 * One RFC 6749 §3.3 scope-token, `1*( %x21 / %x23-5B / %x5D-7E )`: the rule for required scopes
 * and acr values, and for the entries `AuthResult.scope` keeps (src/config.rs `is_scope_token`).
 */
const NQCHARS = '[\\x21\\x23-\\x5b\\x5d-\\x7e]+'
const SCOPE_TOKEN = new RegExp(`^${NQCHARS}$`)

/** Scope-tokens single-spaced: a space-delimited scope list in its normal form. */
const SCOPE_LIST = new RegExp(`^${NQCHARS}(?: ${NQCHARS})*$`)

/**
 * Whether the space-delimited `list` holds the scope-token `wanted` (never empty) as one of its
 * tokens: a search, no split. Bounded: each search starts past the last match.
 */
function hasScope(list, wanted) {
  for (let at = list.indexOf(wanted); at >= 0; at = list.indexOf(wanted, at + 1)) {
    const end = at + wanted.length
    if ((at === 0 || list.charCodeAt(at - 1) === 0x20) && (end === list.length || list.charCodeAt(end) === 0x20)) return true
  }
  return false
}

/**
 * The default of the Authenticator option `name` (contract/options.json `options`), a copy: the
 * value the engines use when the option is absent or null. An unknown name is a bug in the
 * caller, thrown as such (a misspelt name must not read as "no default").
 */
function defaultOf(name) {
  const option = OPTIONS.find((o) => o.name === name)
  if (option === undefined) throw new Error(`contract/options.json has no option ${name}`)
  return structuredClone(option.default)
}

module.exports = { LIMITS, message, renderNumber, defaultOf, SCOPE_TOKEN, SCOPE_LIST, hasScope }
