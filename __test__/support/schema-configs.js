'use strict'

// Test support: values and configs drawn from contract/options.json, not from hand-written
// lists, so an option added to the schema reaches the tests that compare the engines
// (__test__/parity/options-contract.test.js, differential.test.js) without anyone editing them.
//
// - `nonDefaultValues(option)`: valid values other than the default, derived from the entry's
//   kind, bounds and default (a boolean flipped; a number at its bounds and next to its default;
//   a string list narrowed, reordered or made up; …); [] for a kind with no generic value (keys,
//   signing keys, issuers, stores, functions): a caller must give those itself.
// - `schemaConfigs(...)`: configs covering every non-default value of every option at least once.

const SCHEMA = require('../../contract/options.json')
const { random } = require('./tokens')

/** The bags of options.json that hold option entries (`callOptions` holds names only). */
const OPTION_BAGS = ['options', 'entryOptions', 'storeOptions', 'middlewareOptions', 'feedOptions', 'jwksOptions', 'introspectionOptions']

/** `option` of `bag` by name, or undefined. */
function optionOf(name, bag = 'options') {
  return SCHEMA[bag].find((o) => o.name === name)
}

// Scope-tokens (RFC 6749 §3.3), valid wherever a string list is read (issuer, audience, scopes,
// acr values): printable ASCII, no space, quote or backslash.
const LIST_ITEMS = ['probe-a', 'probe-b']

function numbersOf({ kind, min, max, exclusiveMin, default: d }) {
  const integer = kind === 'integer'
  const span = max - min
  // The lowest value the bound admits: an exclusive bound is passed by a small step.
  const lo = !exclusiveMin ? min : integer ? min + 1 : min + Math.min(1, span) / 100
  const out = [lo, max]
  if (d === null || d === undefined) out.push(integer ? Math.round((lo + max) / 2) : (lo + max) / 2)
  else {
    const step = integer ? 1 : d === 0 ? 1 : d / 2
    out.push(d - step, d + step)
  }
  return out.filter((v) => v >= lo && v <= max && (!integer || Number.isInteger(v)))
}

const GENERIC = {
  boolean: (o) => [!(o.default ?? false)],
  number: numbersOf,
  integer: numbersOf,
  stringList: (o) => {
    const d = o.default
    if (!Array.isArray(d)) return [LIST_ITEMS.slice(0, 1), LIST_ITEMS.slice()]
    // A narrower list, and the same list in another order (an order may be observable too).
    return [d.slice(0, 1), d.slice().reverse()].filter((l) => l.length > 0)
  },
  // At least 32 bytes (RFC 7518 §3.2), as a string and as a Buffer.
  secret: (o) => [`${o.name}-probe-secret-0123456789abcdef`, Buffer.from(`${o.name}-probe-buffer-0123456789abcdef`)],
  domain: () => ['probe.example', 'Probe.Example.'],
  enum: (o) => o.values.filter((v) => v !== o.default),
  string: (o) => [`probe-${o.name}:`],
}

/**
 * Valid values of `option` (an entry of options.json) other than its default, derived from
 * the entry alone; [] when its kind has none (the caller names them).
 */
function nonDefaultValues(option) {
  const derive = GENERIC[option.kind]
  if (derive === undefined) return []
  const seen = new Set()
  return derive(option).filter((v) => {
    const key = Buffer.isBuffer(v) ? `buffer:${v.toString('hex')}` : JSON.stringify(v)
    if (seen.has(key) || key === JSON.stringify(option.default)) return false
    seen.add(key)
    return true
  })
}

/**
 * Authenticator configs covering every option of contract/options.json: each value of each
 * option appears in at least `times` accepted configs (a number, or `{ [name]: n }`, 1 for the
 * others), mixed with the others' values by a seeded
 * draw. Per option, the values are `values[name]` when given (the caller's requests need these;
 * [] holds the option at its default), else `nonDefaultValues`; `fixed` options take one value
 * in every config; an option of `always` takes one of its values in every config (never its
 * default); `companions[name]` are options drawn with a value whenever `name` has one (the
 * profile needs issuer and audience). An option with neither is an Error naming it, so a new option cannot be
 * skipped silently. `accept(config)` says whether a config is usable (both engines built it);
 * a refused one is redrawn.
 */
function schemaConfigs({ seed, count, times = 1, fixed = {}, values = {}, always = [], companions = {}, accept = () => true }) {
  const rng = random(seed)
  const domains = []
  for (const option of SCHEMA.options) {
    const { name } = option
    if (Object.hasOwn(fixed, name)) continue
    const list = Object.hasOwn(values, name) ? values[name] : nonDefaultValues(option)
    if (list.length === 0 && !Object.hasOwn(values, name)) {
      throw new Error(`schemaConfigs: no values for option ${name} (kind ${option.kind}): give it in values or fixed`)
    }
    domains.push({ name, list, always: always.includes(name) })
  }
  const named = [fixed, values, companions, typeof times === 'number' ? {} : times].flatMap(Object.keys)
  for (const name of [...named, ...always, ...Object.values(companions).flat()]) {
    if (optionOf(name) === undefined) throw new Error(`schemaConfigs: ${name} is not an option of contract/options.json`)
  }
  // How many more configs each value must be in, by `name\0index`; a config draws these first.
  const timesOf = (name) => (typeof times === 'number' ? times : (times[name] ?? 1))
  const pending = new Map(domains.flatMap((d) => d.list.map((_, i) => [`${d.name}\0${i}`, timesOf(d.name)])))
  const configs = []
  for (let tries = 0; configs.length < count || pending.size > 0; tries++) {
    if (tries > count * 50) throw new Error(`schemaConfigs: no accepted config holds ${[...pending.keys()].map((p) => p.replace('\0', ' #'))}`)
    const config = { ...fixed }
    const drawn = []
    for (const { name, list, always } of domains) {
      const open = list.map((_, i) => i).filter((i) => pending.has(`${name}\0${i}`))
      // Mostly the default, so the checks late in the chain are reached too: an undrawn value a
      // quarter of the time, another value a fifth of what is left.
      let i = list.length
      if (open.length > 0 && rng.chance(0.25)) i = rng.pick(open)
      else if (always || rng.chance(0.2)) i = rng.int(list.length)
      if (i < list.length) {
        config[name] = list[i]
        drawn.push(`${name}\0${i}`)
      }
    }
    for (const [name, needed] of Object.entries(companions)) {
      if (!Object.hasOwn(config, name)) continue
      for (const other of needed) {
        const domain = domains.find((d) => d.name === other)
        if (!Object.hasOwn(config, other) && domain !== undefined && domain.list.length > 0) {
          const i = rng.int(domain.list.length)
          config[other] = domain.list[i]
          drawn.push(`${other}\0${i}`)
        }
      }
    }
    if (!accept(config)) continue
    for (const key of drawn) {
      const left = (pending.get(key) ?? 0) - 1
      if (left > 0) pending.set(key, left)
      else pending.delete(key)
    }
    configs.push(config)
  }
  return configs
}

module.exports = { SCHEMA, OPTION_BAGS, optionOf, nonDefaultValues, schemaConfigs }
