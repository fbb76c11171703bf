'use strict'

// express-jwt's way of configuring a middleware, understood as written: one options object
// holding the key (`secret`), the accepted `algorithms` and the middleware options together.
// Split here, once, into the Authenticator config and the middleware options, so
// `expressjwt({ secret, algorithms, getToken })` needs only its import changed. `algorithms`
// goes to the middleware options: the allow-list applied to the keys of every key source
// (lib/http/algorithms.js).

const { typeError } = require('../../base/error')
const { REMOTE_KEYS_FIX } = require('./algorithms')

/**
 * `{ config, options }` from the adapters' two arguments. Middleware option names found in a
 * config object move to the options (the same name in both is a TypeError); `secret` becomes
 * `accessSecret`; `algorithms` joins the middleware options. An Authenticator passed as
 * `source` is returned as is.
 */
function splitSource(source, options, middlewareNames) {
  const isConfig = source !== null && typeof source === 'object' && typeof source.authenticate !== 'function'
  if (options === undefined || options === null) options = {}
  if (typeof options !== 'object' || Array.isArray(options)) throw typeError('options must be an object')
  if (!isConfig) return { config: source, options }
  let moved = null
  let config = null
  for (const name of Object.keys(source)) {
    if (!middlewareNames.has(name) && name !== 'secret') continue
    if (config === null) {
      config = { ...source }
      moved = { ...options }
    }
    delete config[name]
    if (name === 'secret') continue
    if (name in options) {
      // One store given in both places is one store (docs/scale-out.md).
      if (name === 'store' && options.store === source.store) continue
      if (name === 'store') throw typeError('config.store and options.store are different stores: give one')
      throw typeError(`options.${name} is given twice: in the config and in the options`)
    }
    moved[name] = source[name]
  }
  if (config === null) return { config: source, options }
  if (source.secret !== undefined) {
    if (source.accessSecret !== undefined) throw typeError('config.secret and config.accessSecret name the same key: give one')
    if (typeof source.secret === 'function') {
      throw typeError(`config.secret must be the shared secret (a string or a Buffer); a key-getter function is not supported here. ${REMOTE_KEYS_FIX}`)
    }
    config.accessSecret = source.secret
  }
  return { config, options: moved }
}

module.exports = { splitSource }
