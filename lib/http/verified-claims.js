'use strict'

// The verified payload behind `req.auth` / `request.auth`, for both engines: a fresh object each
// time, equal to `JSON.parse` of the payload segment (key order, numbers, nested objects and
// arrays, an own `__proto__` key, the last of duplicate keys), at a fraction of its cost when the
// same token comes back, as a client's token does on each of its requests.
//
// Decoding and parsing a payload (about 2 µs) cost as much as the whole decision. So each
// decision keeps the parsed payloads of the last few tokens in a small table: a slot picked by
// two characters of the signature (for a valid token they are as good as random), holding the
// whole Authorization value and the parse result. A hit compares that text with the
// request's (exact: the same header and payload bytes give the same payload) and copies the
// kept object (a spread, plus a copy of each nested object or array), so no request ever sees
// another's object or what an app wrote into it. A miss parses and takes the slot.
//
// Bound: SLOTS entries per decision, each the text of one Authorization value (capped by the
// engine's header limit) and its parsed payload.

const SLOTS = 64

class VerifiedClaims {
  /**
   * `opaqueClaimsOf(authorization)`: the claims JSON of a pass for a token that is not a JWT (an
   * introspected one, lib/introspection/stage.js), or null; undefined when no stage gives them.
   * `everyToken`: JWTs are introspected too, so every pass's claims are that stage's.
   */
  constructor(opaqueClaimsOf, everyToken = false) {
    this.slots = new Array(SLOTS).fill(null)
    this.opaqueClaimsOf = opaqueClaimsOf
    this.everyToken = everyToken
  }

  /** The payload of a verified `Bearer <header>.<payload>.<signature>`, as a fresh object. */
  of(authorization) {
    const entry = this.entryOf(authorization)
    return entry.nested === undefined ? entry.parsed : copyOf(entry)
  }

  /**
   * The kept payload itself, for the route requirements (lib/http/route-requirements.js) that
   * only read it: never handed to the application, so never copied.
   */
  payloadOf(authorization) {
    return this.entryOf(authorization).parsed
  }

  /**
   * The slot entry of a verified Authorization value: `{ authorization, parsed, nested }`.
   * A hit is the same whole header value a client sent before (one string comparison: no scan
   * for the dots); a miss parses the payload and takes the slot.
   */
  entryOf(authorization) {
    const n = authorization.length
    const slot = (authorization.charCodeAt(n - 1) * 31 + authorization.charCodeAt(n - 2)) & (SLOTS - 1)
    const kept = this.slots[slot]
    if (kept !== null && kept.authorization === authorization) return kept
    const start = authorization.indexOf('.') + 1
    const end = authorization.indexOf('.', start)
    if (this.opaqueClaimsOf !== undefined && (this.everyToken || start === 0 || end === -1 || authorization.indexOf('.', end + 1) !== -1)) {
      // An opaque token's pass: the claims the engine holds for it. Gone since (evicted between
      // the decision and this read): no claims at all, so a route requirement refuses.
      // Never kept in a slot: a new answer for the same token (a scope taken away, read again
      // after cacheMaxSec) must be what the route requirements read, as the engine did.
      const json = this.opaqueClaimsOf(authorization)
      return { authorization, parsed: json === null ? {} : JSON.parse(json), nested: undefined }
    }
    const parsed = JSON.parse(Buffer.from(authorization.slice(start, end), 'base64url').toString('utf8'))
    // Only an object is kept (a verified payload always is): anything else is returned as is.
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { authorization, parsed, nested: undefined }
    const entry = { authorization, parsed, nested: nestedKeys(parsed) }
    this.slots[slot] = entry
    return entry
  }
}

/** The keys whose values are objects or arrays (copied one by one: a spread would share them). */
function nestedKeys(object) {
  const keys = []
  for (const key of Object.keys(object)) {
    const value = object[key]
    if (value !== null && typeof value === 'object') keys.push(key)
  }
  return keys
}

function copyOf({ parsed, nested }) {
  // A spread defines own data properties in the source's order, `__proto__` included.
  const object = { ...parsed }
  for (let i = 0; i < nested.length; i++) setOwn(object, nested[i], deepCopy(parsed[nested[i]]))
  return object
}

function deepCopy(value) {
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    const array = new Array(value.length)
    for (let i = 0; i < value.length; i++) array[i] = deepCopy(value[i])
    return array
  }
  const object = {}
  for (const key of Object.keys(value)) setOwn(object, key, deepCopy(value[key]))
  return object
}

/** `object[key] = value` as JSON.parse defines it: an own data property, even for `__proto__`. */
function setOwn(object, key, value) {
  if (key === '__proto__') Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true })
  else object[key] = value
}

module.exports = { VerifiedClaims, SLOTS }
