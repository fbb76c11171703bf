'use strict'

// Reads an authenticator config into validated settings. The options, their kinds, defaults and
// bounds come from contract/options.json; the checks, their order, error classes and messages are the
// native binding's (src/binding/config.rs): a config that one engine refuses, the other
// refuses the same way.

const { OPTIONS, OPTION_BY_NAME } = require('../base/schema')
const { typeError, rangeError } = require('../base/error')
const { message, SCOPE_TOKEN } = require('../contract')
const { normalizeKeys } = require('../base/keys/normalize')
const { checkHmacSecret } = require('../base/keys/hmac-secret')
const { readSigningKey } = require('../base/keys/signing-key')
const { renameDeprecated } = require('../base/deprecation')
const { readIssuers } = require('./issuers')

// RFC 7518 §3.2: an HS256 key must be at least as long as the hash output.
const MIN_SECRET_BYTES = 32
// Upper bound for maxTokenBytes, so one request can never make us decode megabytes.
const MAX_TOKEN_BYTES_CAP = OPTION_BY_NAME.get('maxTokenBytes').max

// What the value of an option with an exclusive lower bound counts, in the native message.
const UNITS = { rateLimitRefillPerSec: 'tokens per second' }

// The secrets are read after allowShortSecret, which decides how long they must be; every other
// option in schema order.
const READ_ORDER = [OPTION_BY_NAME.get('allowShortSecret'), ...OPTIONS.filter((o) => o.name !== 'allowShortSecret')]

/**
 * The settings key of an option: its name, except that a string-list option (`issuer`,
 * `audience`) becomes the plural list (`issuers`, `audiences`), never absent.
 */
function settingName(option) {
  // `issuers` (the trusted-issuer registry) would take the name of `issuer`'s list.
  if (option.kind === 'issuerList') return 'trustedIssuers'
  if (option.kind !== 'stringList') return option.name
  // `dpopAlgorithms` is plural already.
  return option.name.endsWith('s') ? option.name : `${option.name}s`
}

const READERS = {
  secret: (v, name, settings) => readSecret(v, name, settings.allowShortSecret),
  stringList: readStringList,
  number: readNumber,
  integer: readInteger,
  boolean: readBool,
  domain: readBaseDomain,
  signingKey: readSigningKey,
  keySet: (v, { name }, settings) =>
    normalizeKeys(v, { label: `config.${name}`, allowShortSecret: settings.allowShortSecret }),
  issuerList: (v, _option, settings) => readIssuers(v, settings.allowShortSecret),
}


function readSettings(config) {
  if (typeof config !== 'object' || config === null || Array.isArray(config) || ArrayBuffer.isView(config)) {
    throw typeError(message('mustBeObject', { name: 'config' }))
  }
  // A renamed option is read under its new name (base/deprecation.js).
  config = renameDeprecated(config, 'options', 'config')
  // A misspelt option (say `acessSecret`) must not silently fall back to a default.
  // `for...in` sees inherited enumerable keys too, as napi_get_property_names does.
  // Only those keys are options, each read once, as the binding reads them: an inherited
  // member `for...in` does not see (a Map's `keys` method) is not one.
  const given = {}
  for (const name in config) {
    if (!OPTION_BY_NAME.has(name)) throw typeError(message('unknownOption', { name: `config.${name}` }))
    given[name] = config[name]
  }
  config = given
  const settings = {}
  for (const option of READ_ORDER) {
    const { name } = option
    const value = config[name]
    const read = value === undefined || value === null ? undefined : READERS[option.kind](value, option, settings)
    settings[settingName(option)] = read === undefined ? defaultOf(option) : read
  }
  // With trusted issuers, each issuer has its own keys (src/config.rs says the same).
  if (settings.trustedIssuers !== null) {
    const other =
      settings.accessSecret !== null ? 'accessSecret' : settings.keys !== null ? 'keys' : settings.signingKey !== null ? 'signingKey' : settings.issuers.length > 0 ? 'issuer' : null
    if (other !== null) {
      throw typeError(`config.issuers and config.${other} cannot be combined: each issuer has its own keys and the list is the trusted issuers`)
    }
    checkProfile(settings)
    return settings
  }
  // Exactly one source of access-token keys (docs/keys.md).
  if (settings.accessSecret === null && settings.keys === null && settings.signingKey === null) {
    throw typeError(message('accessSecretRequired'))
  }
  if (settings.accessSecret !== null && settings.keys !== null) throw typeError(message('bothKeySources'))
  if (settings.signingKey !== null && settings.keys !== null) checkSigningKid(settings.keys, settings.signingKey.kid, 'config.keys')
  // RFC 9068 §4: a resource server checks `iss` and `aud` of a JWT access token (src/config.rs).
  checkProfile(settings)
  return settings
}

/** RFC 9068 §4: the profile needs an issuer and an audience, or trusted issuers with theirs (src/config.rs). */
function checkProfile(settings) {
  if (!settings.requireAccessTokenProfile) return
  const trusted = settings.trustedIssuers === null ? [] : settings.trustedIssuers
  const hasIssuer = settings.issuers.length > 0 || trusted.length > 0
  const hasAudience = settings.audiences.length > 0 || (trusted.length > 0 && trusted.every((i) => i.audiences !== null && i.audiences.length > 0))
  if (!hasIssuer || !hasAudience) throw typeError(message('profileNeedsIssuerAndAudience'))
}

function defaultOf(option) {
  if (option.kind === 'stringList') return []
  return option.default === undefined ? null : option.default
}

function readSecret(v, { name }, allowShort) {
  let bytes
  if (typeof v === 'string') bytes = Buffer.from(v, 'utf8')
  // Any ArrayBuffer view counts, as napi_is_buffer accepts; copied so later writes cannot change the key.
  else if (ArrayBuffer.isView(v)) bytes = Buffer.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength))
  else throw typeError(message('mustBeSecret', { name: `config.${name}` }))
  if (bytes.length === 0) throw rangeError(message('mustNotBeEmpty', { name: `config.${name}` }))
  if (bytes.length < MIN_SECRET_BYTES && !allowShort) {
    throw rangeError(message('secretTooShort', { name: `config.${name}`, min: MIN_SECRET_BYTES }))
  }
  // A public key's PEM or JWK as an HMAC secret lets anyone holding it sign tokens.
  checkHmacSecret(bytes, `config.${name}`)
  return bytes
}

function readStringList(v, { name }) {
  const wrongType = () => typeError(message('mustBeStringList', { name: `config.${name}` }))
  let list
  if (typeof v === 'string') list = [v]
  else if (Array.isArray(v)) {
    list = []
    for (let i = 0; i < v.length; i++) {
      if (typeof v[i] !== 'string') throw wrongType()
      list.push(v[i])
    }
  } else throw wrongType()
  if (list.length === 0 || list.some((s) => s === '')) throw rangeError(message('mustNotBeEmpty', { name: `config.${name}` }))
  // RFC 6749 §3.3 scope-tokens (src/config.rs `is_scope_token`): a space could never match one
  // token of a claim, and a quote or backslash would need escaping in the challenge.
  if ((name === 'requiredScope' || name === 'requiredAcr') && !list.every((s) => SCOPE_TOKEN.test(s))) {
    throw rangeError(`config.${name} must hold printable ASCII without spaces, quotes or backslashes (RFC 6749 §3.3 scope-tokens)`)
  }
  // RFC 9449 §4.3 step 5: a proof's alg is asymmetric; none or a MAC would prove nothing.
  if (name === 'dpopAlgorithms') {
    const { isProofAlg, DEFAULT_ALGS } = require('./dpop')
    const bad = list.find((s) => !isProofAlg(s))
    if (bad !== undefined) throw typeError(message('dpopAlgorithmRefused', { alg: bad, allowed: DEFAULT_ALGS.join(', ') }))
  }
  return list
}

function readBool(v, { name }) {
  if (typeof v !== 'boolean') throw typeError(message('mustBeBoolean', { name: `config.${name}` }))
  return v
}

function readNumber(v, { name, min, max, exclusiveMin }) {
  if (typeof v !== 'number') throw typeError(message('mustBeNumber', { name: `config.${name}` }))
  if (!Number.isFinite(v) || v < min || v > max) {
    throw rangeError(message('numberOutOfRange', { name: `config.${name}`, min, max, value: v }))
  }
  if (exclusiveMin && v === min) {
    throw rangeError(message('numberNotAboveMin', { name: `config.${name}`, min, unit: ` (${UNITS[name]})` }))
  }
  return v
}

function readInteger(v, option) {
  const n = readNumber(v, option)
  if (!Number.isInteger(n)) throw rangeError(message('mustBeInteger', { name: `config.${option.name}` }))
  return n
}

const DOMAIN_LABEL = /^[A-Za-z0-9-]{1,63}$/

function readBaseDomain(v, { name }) {
  if (typeof v !== 'string') throw typeError(message('mustBeString', { name: `config.${name}` }))
  return normalizeDomain(v, `config.${name}`)
}

/** Lower-cased, without trailing dots, labels of [A-Za-z0-9-]; `label` names it in the error. */
function normalizeDomain(v, label) {
  const domain = asciiLower(v.replace(/\.+$/, ''))
  if (domain.length > 253 || !domain.split('.').every((l) => DOMAIN_LABEL.test(l))) {
    throw rangeError(message('invalidDomain', { name: label, domain }))
  }
  return domain
}

/** Lower-cases A-Z only, like Rust's `to_ascii_lowercase` (never folds non-ASCII letters). */
function asciiLower(s) {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase())
}

/** A key equal for equal settings, so one-shot calls with the same config share state. */
function fingerprint(settings) {
  return JSON.stringify(OPTIONS.map((option) => fingerprintOf(settings[settingName(option)])))
}

function fingerprintOf(value) {
  if (Buffer.isBuffer(value)) return value.toString('hex')
  // trustedIssuers: every part of each issuer, its keys as the keys option's.
  if (Array.isArray(value) && value.length > 0 && typeof value[0] === 'object' && typeof value[0].issuer === 'string') {
    return value.map((i) => [i.issuer, i.keys === null ? null : fingerprintOf(i.keys), i.audiences, i.algorithms, i.tenant])
  }
  // signingKey: its kid, alg and private key bytes.
  if (value !== null && typeof value === 'object' && Buffer.isBuffer(value.pkcs8)) {
    return [value.kid, value.alg, value.pkcs8.toString('hex')]
  }
  // keys: what each key is, not its KeyObject (which JSON would write as {}).
  if (Array.isArray(value) && value.length > 0 && typeof value[0] === 'object') {
    return value.map(({ kid, alg, key }) => [kid === undefined ? null : kid, alg, key.toString('hex')])
  }
  // -0 and 0 are different settings to a strict comparison; JSON would write both as 0.
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value)
  return value
}

/**
 * The signing key's public half joins the verification keys under its kid: no other key may
 * hold that kid (src/authenticator.rs says the same).
 */
function checkSigningKid(entries, kid, label) {
  if (entries.some((entry) => entry.kid === kid)) {
    const err = new RangeError(message('signingKidInKeys', { label, kid }))
    err.code = 'ERR_AUTH_SHIELD_DUPLICATE_KID'
    throw err
  }
}

module.exports = { checkSigningKid, readSettings, fingerprint, asciiLower, normalizeDomain, MIN_SECRET_BYTES, MAX_TOKEN_BYTES_CAP }
