'use strict'

// The middleware option `algorithms` (express-jwt's name): an allow-list of token algorithms,
// applied to the keys whatever their source (issue 34, issue 35). Every key is bound to one
// algorithm (docs/keys.md), so a key set holding only allowed keys refuses every other `alg` in
// both engines, on every token, at no cost per request:
// - static keys (`keys`, `accessSecret` as HS256, engine `issuers` with keys): the keys of other
//   algorithms are left out when the engine is built; a set none of whose keys is allowed is a
//   TypeError (the app would refuse every token);
// - a remote JWKS: each key set is filtered as it is installed (none left: the placeholder, which
//   verifies nothing);
// - trusted issuers: each issuer's own `algorithms` becomes its intersection with the list
//   (empty: a TypeError), and its key sets are filtered as they are installed.

const { typeError } = require('../../base/error')

// What an HMAC secret verifies (accessSecret, express-jwt's `secret`).
const SECRET_ALGORITHMS = Object.freeze(['HS256'])
// Every algorithm a verification key can be bound to: the HMAC secret's and a public key's (read
// when a list is given: an app without one loads no JWKS module).
const tokenAlgorithms = () => [...SECRET_ALGORITHMS, ...require('../jwks/document').SUPPORTED_ALGORITHMS]
const REMOTE_KEYS_FIX = 'For an identity provider\'s public keys (jwks-rsa\'s expressJwtSecret, a JWKS URL), use `jwks: createRemoteJwks(url)` from auth-shield/jwks (docs/migrating.md#jwks-rsa-with-express-jwt)'

/** The allow-list of `algorithms` (undefined: none), checked: a non-empty array of names. */
function readAlgorithms(algorithms) {
  if (algorithms === undefined || algorithms === null) return null
  if (!Array.isArray(algorithms) || algorithms.length === 0 || !algorithms.every((a) => typeof a === 'string' && a.length > 0)) {
    throw typeError('options.algorithms must be a non-empty array of algorithm names')
  }
  // A name no key can have (a typo, HS512) would silently allow nothing it names.
  const known = tokenAlgorithms()
  for (const alg of algorithms) {
    if (!known.includes(alg)) throw typeError(`options.algorithms: ${JSON.stringify(alg)} is not one of ${known.join(', ')}`)
  }
  return new AllowList(algorithms)
}

class AllowList {
  constructor(algorithms) {
    this.names = Object.freeze([...new Set(algorithms)])
    this.set = new Set(this.names)
    // Filtered sets by their source set: a source hands every Authenticator the same frozen set.
    this.filtered = new WeakMap()
  }

  allows(alg) {
    return this.set.has(alg)
  }

  /** `keys` without those of other algorithms (frozen; the same array when all are allowed). */
  filter(keys) {
    let kept = this.filtered.get(keys)
    if (kept === undefined) {
      const allowed = keys.filter((k) => k !== null && typeof k === 'object' && this.allows(k.alg))
      kept = allowed.length === keys.length ? keys : Object.freeze(allowed)
      this.filtered.set(keys, kept)
    }
    return kept
  }

  /**
   * The config with its static keys limited to the list; a TypeError when no key remains. An
   * Authenticator (its keys are not readable) only with a key source that feeds it.
   */
  configure(config, hasKeySource) {
    if (typeof config !== 'object' || config === null) return config
    if (typeof config.authenticate === 'function') {
      if (hasKeySource) return config
      throw typeError('options.algorithms applies to the configured keys: pass the config object, not an Authenticator (whose keys cannot be read here)')
    }
    // The signing key's public half verifies too (docs/options.md): its tokens would pass.
    const signing = config.signingKey
    if (signing !== null && typeof signing === 'object' && typeof signing.alg === 'string' && !this.allows(signing.alg)) {
      throw typeError(`options.algorithms ${JSON.stringify(this.names)} leaves out config.signingKey's ${signing.alg}, whose public half verifies the tokens it signs: list it, or sign with a key of a listed algorithm`)
    }
    if (Array.isArray(config.keys)) return { ...config, keys: this.staticKeys(config.keys, 'config.keys') }
    if (config.accessSecret != null) {
      if (!SECRET_ALGORITHMS.some((a) => this.allows(a))) {
        throw typeError(`options.algorithms ${JSON.stringify(this.names)} allows none of the configured key's algorithms: accessSecret (express-jwt's secret, or a secret getter's key) is an HMAC secret, ${SECRET_ALGORITHMS.join(', ')}. ${REMOTE_KEYS_FIX}`)
      }
      return config
    }
    if (Array.isArray(config.issuers)) return { ...config, issuers: this.issuers(config.issuers) }
    return config
  }

  staticKeys(keys, where) {
    const kept = keys.filter((k) => k !== null && typeof k === 'object' && this.allows(k.alg))
    if (kept.length === 0) {
      const have = [...new Set(keys.map((k) => k && k.alg).filter((a) => typeof a === 'string'))]
      throw typeError(`options.algorithms ${JSON.stringify(this.names)} allows none of the algorithms of ${where} ${JSON.stringify(have)}: every token would be refused`)
    }
    return kept
  }

  /** Engine `issuers` items: each one's algorithms limited to the list, its static keys filtered. */
  issuers(items) {
    return items.map((item, i) => {
      if (item === null || typeof item !== 'object') return item
      const own = Array.isArray(item.algorithms) ? item.algorithms.filter((a) => this.allows(a)) : [...this.names]
      if (own.length === 0) {
        throw typeError(`options.algorithms ${JSON.stringify(this.names)} allows none of the algorithms of the issuer ${item.issuer} ${JSON.stringify(item.algorithms)}`)
      }
      const limited = { ...item, algorithms: own }
      if (Array.isArray(item.keys) && item.keys.length > 0) limited.keys = this.staticKeys(item.keys, `the keys of issuer ${item.issuer}`)
      return limited
    })
  }
}

module.exports = { readAlgorithms, AllowList, SECRET_ALGORITHMS, REMOTE_KEYS_FIX }
