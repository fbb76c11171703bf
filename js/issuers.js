'use strict'

// The trusted-issuer registry (`issuers`), as src/issuers.rs: the token's `iss` selects the
// issuer before any key is looked up, then that issuer's own key set by `kid`, so a key of
// issuer A never verifies a token claiming issuer B. An `iss` not configured (absent, not a
// string, another byte anywhere: no trailing-slash or case folding) is untrusted_issuer.
// Bounds: MAX_ISSUERS issuers, MAX_ISSUER_BYTES per identifier, each key set at most 100 keys.

const { typeError, rangeError } = require('../base/error')
const { ALGS, normalizeKeys } = require('../base/keys/normalize')
const { KeySet } = require('./jwt/key-set')

/** Most issuers one authenticator trusts. */
const MAX_ISSUERS = 50
/** Longest issuer identifier accepted, in UTF-8 bytes. */
const MAX_ISSUER_BYTES = 2048
/** Most audiences one issuer may list. */
const MAX_ISSUER_AUDIENCES = 100
const ISSUER_FIELDS = ['issuer', 'keys', 'audience', 'algorithms', 'tenant']
// The same rule as js/tenant.js (src/tenant.rs `is_valid_tenant_id`).
const TENANT_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/

/**
 * The `issuers` option checked, in src/issuers.rs `read_issuers`'s order and words:
 * `[{ issuer, keys, audiences, algorithms, tenant }]` (keys normalised, or null).
 */
function readIssuers(items, allowShortSecret) {
  if (!Array.isArray(items)) throw typeError('config.issuers must be an array of issuers')
  if (items.length === 0 || items.length > MAX_ISSUERS) {
    throw rangeError(`config.issuers must hold 1 to ${MAX_ISSUERS} issuers (got ${items.length})`)
  }
  const out = []
  for (let i = 0; i < items.length; i++) {
    const label = `config.issuers[${i}]`
    const item = items[i]
    if (typeof item !== 'object' || item === null || Array.isArray(item) || ArrayBuffer.isView(item)) {
      throw typeError(`${label} must be an object { issuer, keys?, audience?, algorithms?, tenant? }`)
    }
    for (const name in item) {
      if (!ISSUER_FIELDS.includes(name)) throw typeError(`${label}.${name} is not a known field (issuer, keys, audience, algorithms, tenant)`)
    }
    const spec = { issuer: null, keys: null, audiences: null, algorithms: [], tenant: null }
    const { issuer, keys, audience, algorithms, tenant } = item
    if (issuer !== undefined && issuer !== null) {
      if (typeof issuer !== 'string') throw typeError(`${label}.issuer must be a string`)
      if (issuer === '' || Buffer.byteLength(issuer) > MAX_ISSUER_BYTES) throw rangeError(`${label}.issuer must be 1 to ${MAX_ISSUER_BYTES} bytes`)
      if (out.some((o) => o.issuer === issuer)) throw rangeError(`${label}.issuer ${JSON.stringify(issuer)} is listed twice`)
      spec.issuer = issuer
    }
    if (keys !== undefined && keys !== null) {
      if (!Array.isArray(keys)) throw typeError(`${label}.keys must be an array of keys`)
      spec.keys = normalizeKeys(keys, { label: `${label}.keys`, allowShortSecret })
    }
    if (audience !== undefined && audience !== null) {
      const list = textList(audience, label, 'audience')
      if (list.length > MAX_ISSUER_AUDIENCES) throw rangeError(`${label}.audience holds at most ${MAX_ISSUER_AUDIENCES} audiences`)
      spec.audiences = list
    }
    if (algorithms !== undefined && algorithms !== null) {
      for (const name of textList(algorithms, label, 'algorithms')) {
        if (!Object.hasOwn(ALGS, name)) throw rangeError(`${label}.algorithms: unsupported algorithm ${JSON.stringify(name)}`)
        if (!spec.algorithms.includes(name)) spec.algorithms.push(name)
      }
    }
    if (tenant !== undefined && tenant !== null) {
      if (typeof tenant !== 'string') throw typeError(`${label}.tenant must be a string`)
      if (!TENANT_ID.test(tenant)) throw rangeError(`${label}.tenant must be 1 to 63 of [A-Za-z0-9_-], starting with a letter or digit`)
      spec.tenant = tenant
    }
    if (spec.issuer === null) throw typeError(`${label}.issuer is required (a string)`)
    out.push(spec)
  }
  return out
}

/** A string or a non-empty array of non-empty strings. */
function textList(value, label, field) {
  const wrong = () => typeError(`${label}.${field} must be a string or an array of strings`)
  let list
  if (typeof value === 'string') list = [value]
  else if (Array.isArray(value)) {
    list = []
    for (let i = 0; i < value.length; i++) {
      if (typeof value[i] !== 'string') throw wrong()
      list.push(value[i])
    }
  } else throw wrong()
  if (list.length === 0 || list.some((s) => s === '')) throw rangeError(`${label}.${field} must not be empty`)
  return list
}

/** The issuers and their key sets at one moment; replaced whole when one issuer's set changes. */
class IssuerKeys {
  /**
   * `issuers`: `[{ name, algorithms, tenant, rules }]` (fixed); `sets`: a KeySet per issuer.
   * Use IssuerKeys.create.
   */
  constructor(issuers, sets, generation) {
    this.issuers = issuers
    this.sets = sets
    this.generation = generation
    this.allHmac = sets.every((s) => s.allHmac)
    // Tells js/jwt.js this lookup reads the claims (its header memo is then per issuer).
    this.byIssuer = true
  }

  /** The registry of `specs` (readIssuers) under `rulesOf(audiences)`, the issuer's claim rules. */
  static create(specs, rulesOf) {
    const issuers = specs.map((s) => ({ name: s.issuer, algorithms: s.algorithms, tenant: s.tenant, rules: rulesOf(s.audiences) }))
    return new IssuerKeys(
      issuers,
      specs.map((s) => new KeySet(s.keys === null ? [] : s.keys, 0)),
      0,
    )
  }

  /** The index of the issuer named `iss` (compared exactly), or -1. */
  position(iss) {
    if (typeof iss !== 'string') return -1
    const issuers = this.issuers
    for (let i = 0; i < issuers.length; i++) if (issuers[i].name === iss) return i
    return -1
  }

  /** `iss` first, then the issuer's algorithms, then its own key set: the key or a failure code. */
  select(alg, kid, claims) {
    const at = this.position(claims.iss)
    if (at === -1) return 'untrusted_issuer'
    const { algorithms } = this.issuers[at]
    if (algorithms.length > 0 && !algorithms.includes(alg)) return 'unsupported_algorithm'
    return this.sets[at].select(alg, kid)
  }

  /** The claim rules of the issuer a verified token names (null: none, cannot happen after select). */
  rulesOf(claims) {
    const at = this.position(claims.iss)
    return at === -1 ? null : this.issuers[at].rules
  }

  /** The tenant of the issuer a verified token names, or undefined. */
  tenantOf(claims) {
    const at = this.position(claims.iss)
    const tenant = at === -1 ? null : this.issuers[at].tenant
    return tenant === null ? undefined : tenant
  }

  /** This registry with the set of the issuer named `iss` replaced by `entries`; null for no such issuer. */
  replaced(iss, entries) {
    const at = this.position(iss)
    if (at === -1) return null
    const generation = this.generation + 1
    const sets = this.sets.slice()
    sets[at] = new KeySet(entries, generation)
    return new IssuerKeys(this.issuers, sets, generation)
  }
}

module.exports = { readIssuers, IssuerKeys, MAX_ISSUERS, MAX_ISSUER_BYTES }
