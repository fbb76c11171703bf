'use strict'

// Reads an authenticator config into validated settings, with the same checks, order, error
// classes and messages as the native binding (src/binding/config.rs): a config that one engine
// refuses, the other refuses the same way.

const { typeError, rangeError, rustNumber, rustDebugString } = require('./errors')

// RFC 7518 §3.2: an HS256 key must be at least as long as the hash output.
const MIN_SECRET_BYTES = 32
// Upper bound for maxTokenBytes, so one request can never make us decode megabytes.
const MAX_TOKEN_BYTES_CAP = 1024 * 1024

const KNOWN_FIELDS = new Set([
  'accessSecret',
  'refreshSecret',
  'issuer',
  'audience',
  'clockToleranceSec',
  'rateLimitMax',
  'rateLimitRefill',
  'rateLimitMaxKeys',
  'enforceTenantMatch',
  'baseDomain',
  'accessTtlSec',
  'refreshTtlSec',
  'maxTokenBytes',
  'requireTokenType',
  'requireExpiration',
  'requireSubject',
  'clockTimestamp',
  'allowShortSecret',
])

function defaultSettings() {
  return {
    accessSecret: null,
    refreshSecret: null,
    issuers: [],
    audiences: [],
    clockToleranceSec: 0,
    rateLimitMax: 100,
    rateLimitRefill: 10,
    rateLimitMaxKeys: 100000,
    enforceTenantMatch: false,
    baseDomain: null,
    accessTtlSec: 900,
    refreshTtlSec: 604800,
    maxTokenBytes: 8192,
    requireTokenType: false,
    requireExpiration: true,
    requireSubject: true,
    clockTimestamp: null,
  }
}

function readSettings(config) {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw typeError('config must be an object')
  }
  // A misspelt option (say `acessSecret`) must not silently fall back to a default.
  // `for...in` sees inherited enumerable keys too, as napi_get_property_names does.
  for (const name in config) {
    if (!KNOWN_FIELDS.has(name)) throw typeError(`config.${name} is not a known option`)
  }
  const field = (name) => {
    const value = config[name]
    return value === undefined || value === null ? undefined : value
  }

  const s = defaultSettings()
  const allowShort = readBool(field('allowShortSecret'), 'allowShortSecret') ?? false
  s.accessSecret = readSecret(field('accessSecret'), 'accessSecret', allowShort)
  if (s.accessSecret === undefined) {
    throw typeError('config.accessSecret is required (a string or Buffer)')
  }
  s.refreshSecret = readSecret(field('refreshSecret'), 'refreshSecret', allowShort) ?? null
  s.issuers = readStringList(field('issuer'), 'issuer')
  s.audiences = readStringList(field('audience'), 'audience')
  s.clockToleranceSec = readNumber(field('clockToleranceSec'), 'clockToleranceSec', 0, 86400) ?? s.clockToleranceSec
  s.rateLimitMax = readInteger(field('rateLimitMax'), 'rateLimitMax', 0, 1e9) ?? s.rateLimitMax
  const refill = readNumber(field('rateLimitRefill'), 'rateLimitRefill', 0, 1e9)
  if (refill === 0) {
    throw rangeError('config.rateLimitRefill must be greater than 0 (tokens per second)')
  }
  s.rateLimitRefill = refill ?? s.rateLimitRefill
  s.rateLimitMaxKeys = readInteger(field('rateLimitMaxKeys'), 'rateLimitMaxKeys', 1, 1e8) ?? s.rateLimitMaxKeys
  s.enforceTenantMatch = readBool(field('enforceTenantMatch'), 'enforceTenantMatch') ?? s.enforceTenantMatch
  s.baseDomain = readBaseDomain(field('baseDomain'))
  s.accessTtlSec = readNumber(field('accessTtlSec'), 'accessTtlSec', 1, 3.2e9) ?? s.accessTtlSec
  s.refreshTtlSec = readNumber(field('refreshTtlSec'), 'refreshTtlSec', 1, 3.2e9) ?? s.refreshTtlSec
  s.maxTokenBytes = readInteger(field('maxTokenBytes'), 'maxTokenBytes', 64, MAX_TOKEN_BYTES_CAP) ?? s.maxTokenBytes
  for (const name of ['requireTokenType', 'requireExpiration', 'requireSubject']) {
    s[name] = readBool(field(name), name) ?? s[name]
  }
  s.clockTimestamp = readNumber(field('clockTimestamp'), 'clockTimestamp', 0, 1e13) ?? null
  return s
}

function readSecret(v, name, allowShort) {
  if (v === undefined) return undefined
  let bytes
  if (typeof v === 'string') bytes = Buffer.from(v, 'utf8')
  // Any ArrayBuffer view counts, as napi_is_buffer accepts; copied so later writes cannot change the key.
  else if (ArrayBuffer.isView(v)) bytes = Buffer.from(new Uint8Array(v.buffer, v.byteOffset, v.byteLength))
  else throw typeError(`config.${name} must be a string or Buffer`)
  if (bytes.length === 0) throw rangeError(`config.${name} must not be empty`)
  if (bytes.length < MIN_SECRET_BYTES && !allowShort) {
    throw rangeError(
      `config.${name} must be at least ${MIN_SECRET_BYTES} bytes for HS256 (RFC 7518 §3.2); set allowShortSecret: true to accept a shorter legacy secret`,
    )
  }
  return bytes
}

function readStringList(v, name) {
  if (v === undefined) return []
  const wrongType = () => typeError(`config.${name} must be a string or an array of strings`)
  let list
  if (typeof v === 'string') list = [v]
  else if (Array.isArray(v)) {
    list = []
    for (let i = 0; i < v.length; i++) {
      if (typeof v[i] !== 'string') throw wrongType()
      list.push(v[i])
    }
  } else throw wrongType()
  if (list.length === 0 || list.some((s) => s === '')) throw rangeError(`config.${name} must not be empty`)
  return list
}

function readBool(v, name) {
  if (v === undefined) return undefined
  if (typeof v !== 'boolean') throw typeError(`config.${name} must be a boolean`)
  return v
}

function readNumber(v, name, min, max) {
  if (v === undefined) return undefined
  if (typeof v !== 'number') throw typeError(`config.${name} must be a number`)
  if (!Number.isFinite(v) || v < min || v > max) {
    throw rangeError(
      `config.${name} must be a finite number from ${rustNumber(min)} to ${rustNumber(max)}, got ${rustNumber(v)}`,
    )
  }
  return v
}

function readInteger(v, name, min, max) {
  const n = readNumber(v, name, min, max)
  if (n !== undefined && !Number.isInteger(n)) throw rangeError(`config.${name} must be an integer`)
  return n
}

const DOMAIN_LABEL = /^[A-Za-z0-9-]{1,63}$/

function readBaseDomain(v) {
  if (v === undefined) return null
  if (typeof v !== 'string') throw typeError('config.baseDomain must be a string')
  const domain = asciiLower(v.replace(/\.+$/, ''))
  if (domain.length > 253 || !domain.split('.').every((label) => DOMAIN_LABEL.test(label))) {
    throw rangeError(`config.baseDomain is not a valid domain name: ${rustDebugString(domain)}`)
  }
  return domain
}

/** Lower-cases A-Z only, like Rust's `to_ascii_lowercase` (never folds non-ASCII letters). */
function asciiLower(s) {
  return s.replace(/[A-Z]+/g, (m) => m.toLowerCase())
}

/** A key equal for equal settings, so one-shot calls with the same config share state. */
function fingerprint(s) {
  const num = (n) => (n === null ? 'none' : Object.is(n, -0) ? '-0' : String(n))
  return JSON.stringify([
    s.accessSecret.toString('hex'),
    s.refreshSecret ? s.refreshSecret.toString('hex') : null,
    s.issuers,
    s.audiences,
    s.baseDomain,
    [s.clockToleranceSec, s.rateLimitMax, s.rateLimitRefill, s.rateLimitMaxKeys].map(num),
    [s.accessTtlSec, s.refreshTtlSec, s.maxTokenBytes, s.clockTimestamp].map(num),
    [s.enforceTenantMatch, s.requireTokenType, s.requireExpiration, s.requireSubject],
  ])
}

module.exports = { readSettings, fingerprint, asciiLower, MIN_SECRET_BYTES, MAX_TOKEN_BYTES_CAP }
