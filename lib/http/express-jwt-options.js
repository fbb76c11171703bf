'use strict'

// express-jwt's way of configuring a middleware, understood as written: one options object
// holding the key (`secret`), the accepted `algorithms` and the middleware options together.
// Split here, once, into the Authenticator config and the middleware options, so
// `expressjwt({ secret, algorithms, getToken })` needs only its import changed.

const { typeError } = require('../../js/error')

/**
 * `{ config, options }` from the adapters' two arguments. Middleware option names found in a
 * config object move to the options (the same name in both is a TypeError); `secret` becomes
 * `accessSecret`; `algorithms` is checked against the algorithms of the configured keys and
 * dropped. An Authenticator passed as `source` is returned as is.
 */
function splitSource(source, options, middlewareNames) {
  const isConfig = source !== null && typeof source === 'object' && typeof source.authenticate !== 'function'
  if (options === undefined || options === null) options = {}
  if (typeof options !== 'object' || Array.isArray(options)) throw typeError('options must be an object')
  if (!isConfig) {
    if (options.algorithms !== undefined) checkAlgorithms(options.algorithms, ['HS256'])
    return { config: source, options: withoutAlgorithms(options) }
  }
  let moved = null
  let config = null
  for (const name of Object.keys(source)) {
    if (!middlewareNames.has(name) && name !== 'secret' && name !== 'algorithms') continue
    if (config === null) {
      config = { ...source }
      moved = { ...options }
    }
    delete config[name]
    if (name === 'secret' || name === 'algorithms') continue
    if (name in options) {
      // One store given in both places is one store (docs/scale-out.md).
      if (name === 'store' && options.store === source.store) continue
      if (name === 'store') throw typeError('config.store and options.store are different stores: give one')
      throw typeError(`options.${name} is given twice: in the config and in the options`)
    }
    moved[name] = source[name]
  }
  if (config === null) return { config: source, options: withoutAlgorithms(checkedOptions(source, options)) }
  if (source.secret !== undefined) {
    if (source.accessSecret !== undefined) throw typeError('config.secret and config.accessSecret name the same key: give one')
    if (typeof source.secret === 'function') {
      throw typeError('config.secret must be the shared secret (a string or a Buffer); a key-getter function is not supported')
    }
    config.accessSecret = source.secret
  }
  const algorithms = source.algorithms !== undefined ? source.algorithms : moved.algorithms
  if (algorithms !== undefined) checkAlgorithms(algorithms, configuredAlgorithms(config))
  return { config, options: withoutAlgorithms(moved) }
}

function checkedOptions(config, options) {
  if (options.algorithms !== undefined) checkAlgorithms(options.algorithms, configuredAlgorithms(config))
  return options
}

function withoutAlgorithms(options) {
  if (options.algorithms === undefined) return options
  const { algorithms, ...rest } = options
  return rest
}

/** The algorithms the config's keys verify: each key's `alg` when `keys` is given, else HS256. */
function configuredAlgorithms(config) {
  if (Array.isArray(config.keys)) return [...new Set(config.keys.map((k) => k && k.alg).filter((a) => typeof a === 'string'))]
  return ['HS256']
}

/**
 * `algorithms` is an allow-list in express-jwt. It must name exactly the configured keys'
 * algorithms: a missing one would let through tokens the app meant to refuse, an extra one
 * promises tokens that no configured key can verify.
 */
function checkAlgorithms(algorithms, configured) {
  if (!Array.isArray(algorithms) || algorithms.length === 0 || !algorithms.every((a) => typeof a === 'string')) {
    throw typeError('options.algorithms must be a non-empty array of algorithm names')
  }
  const wanted = new Set(algorithms)
  const have = new Set(configured)
  const agree = wanted.size === have.size && [...wanted].every((a) => have.has(a))
  if (!agree) {
    throw typeError(
      `options.algorithms ${JSON.stringify([...wanted])} must match the configured keys' algorithms ${JSON.stringify([...have])}`,
    )
  }
}

module.exports = { splitSource, configuredAlgorithms }
