'use strict'

// Reads a JWT header or payload the way the native core reads it (src/jwt/{json_scan,claims,header}.rs),
// so both engines call the same bytes malformed:
// - the whole header and payload must be valid UTF-8 (RFC 8259 §8.1);
// - known claims (and `alg`) are decoded strictly: valid UTF-8, paired surrogate escapes,
//   numbers that do not overflow to infinity; each known claim may appear only once;
// - everything else is skipped after a grammar check only (serde's IgnoredAny), without
//   building values and without recursion, so deep nesting cannot overflow the stack;
// - a lone surrogate escape is malformed anywhere (keys or values, read or skipped, any depth).
// Each known claim comes back as undefined (absent), a string, a number, an array of strings
// (the only array form `aud` may take), or OTHER (null, booleans, objects, mixed arrays).

const { isUtf8 } = require('#node/buffer')
const { Reader, MALFORMED, OTHER } = require('./json-scan')

/** A known claim's value, decoded as far as validation needs. */
function claimValue(r) {
  r.ws()
  const c = r.b[r.i]
  if (c === 0x7b) {
    r.objectOfIgnored()
    return OTHER
  }
  if (c !== 0x5b) return r.scalar(true)
  r.i++
  r.ws()
  const items = []
  if (r.b[r.i] === 0x5d) {
    r.i++
    return items
  }
  for (;;) {
    const item = arrayItem(r)
    if (item === undefined) return skipRestOfArray(r)
    items.push(item)
    r.ws()
    const next = r.b[r.i++]
    if (next === 0x5d) return items
    if (next !== 0x2c) throw MALFORMED
  }
}

/** An array element: a decoded string, or undefined for anything else (skipped). */
function arrayItem(r) {
  r.ws()
  // Strings are decoded strictly; anything else is skipped unevaluated, as native does.
  if (r.b[r.i] === 0x22) return r.scalar(true)
  r.ignoreValue()
  return undefined
}

function skipRestOfArray(r) {
  for (;;) {
    r.ws()
    const next = r.b[r.i++]
    if (next === 0x5d) return OTHER
    if (next !== 0x2c) throw MALFORMED
    r.ignoreValue()
  }
}

/** `{ alg, hasCrit }` of a JOSE header, or null when serde would refuse it. */
function parseHeader(buf) {
  if (!isUtf8(buf)) return null
  const r = new Reader(buf)
  const header = { alg: undefined, kid: undefined, hasCrit: false, badKid: false, atJwt: false }
  let algSeen = false
  let kidSeen = false
  // src/jwt/header.rs: typ is read for the access-token profile; a second typ is never at+jwt.
  let typ
  let typSeen = false
  let typRepeated = false
  try {
    r.topObject((key) => {
      // A second alg or kid would let two parsers disagree on the key.
      if (key === 'alg') {
        if (algSeen) throw MALFORMED
        algSeen = true
        const v = claimValue(r)
        header.alg = typeof v === 'string' ? v : undefined
      } else if (key === 'kid') {
        if (kidSeen) throw MALFORMED
        kidSeen = true
        const v = claimValue(r)
        // RFC 7515 §4.1.4: a kid is a string.
        if (typeof v === 'string') header.kid = v
        else header.badKid = true
      } else if (key === 'typ') {
        typRepeated = typRepeated || typSeen
        typSeen = true
        typ = claimValue(r)
      } else {
        r.ignoreValue()
        if (key === 'crit') header.hasCrit = true
      }
    })
  } catch (err) {
    if (err === MALFORMED) return null
    throw err
  }
  header.atJwt = !typRepeated && typeof typ === 'string' && AT_JWT.test(typ)
  return header
}

// RFC 9068 §2.1 typ, ASCII case-insensitive (RFC 7515 §4.1.9); without the u flag, /i never
// folds a non-ASCII character onto an ASCII one.
const AT_JWT = /^(?:application\/)?at\+jwt$/i

/** The registered and auth-shield claims a payload may carry; absent ones stay undefined. */
class Claims {
  constructor() {
    this.sub = undefined
    this.exp = undefined
    this.nbf = undefined
    this.iat = undefined
    this.iss = undefined
    this.aud = undefined
    this.jti = undefined
    this.email = undefined
    this.role = undefined
    this.tenant_id = undefined
    this.type = undefined
    // RFC 7800: undefined, OTHER (not an object) or { x5tS256 } (its x5t#S256 member, RFC 8705).
    this.cnf = undefined
    // cnf.jkt (RFC 9449 §6.1): a string, OTHER (not a string), or undefined without it (or
    // without an object cnf) (src/jwt/claims.rs `cnf_jkt`).
    this.cnf_jkt = undefined
    this.scope = undefined
    this.scp = undefined
    this.client_id = undefined
    this.permissions = undefined
    this.acr = undefined
    this.auth_time = undefined
  }

  /**
   * Reads the value of `key` from `r` if it is a known claim, else skips it. Named stores, not
   * `this[key]`: a key sliced from the payload would have to be interned on every lookup.
   */
  read(key, r) {
    switch (key) {
      case 'sub':
        return (this.sub = once(this.sub, r))
      case 'exp':
        return (this.exp = once(this.exp, r))
      case 'nbf':
        return (this.nbf = once(this.nbf, r))
      case 'iat':
        return (this.iat = once(this.iat, r))
      case 'iss':
        return (this.iss = once(this.iss, r))
      case 'aud':
        return (this.aud = once(this.aud, r))
      case 'jti':
        return (this.jti = once(this.jti, r))
      case 'email':
        return (this.email = once(this.email, r))
      case 'role':
        return (this.role = once(this.role, r))
      case 'tenant_id':
        return (this.tenant_id = once(this.tenant_id, r))
      case 'type':
        return (this.type = once(this.type, r))
      case 'cnf':
        if (this.cnf !== undefined) throw MALFORMED
        return this.readConfirmation(r)
      case 'scope':
        return (this.scope = once(this.scope, r))
      case 'scp':
        return (this.scp = once(this.scp, r))
      case 'client_id':
        return (this.client_id = once(this.client_id, r))
      case 'permissions':
        return (this.permissions = once(this.permissions, r))
      case 'acr':
        return (this.acr = once(this.acr, r))
      case 'auth_time':
        return (this.auth_time = once(this.auth_time, r))
      default:
        return r.ignoreValue()
    }
  }
  /**
   * `cnf` (RFC 7800): its known members once each (a repeated one is malformed), the others
   * skipped; `cnf` not an object is OTHER, its `jkt` then undefined (src/jwt/claims.rs
   * `Confirmation::read`).
   */
  readConfirmation(r) {
    r.ws()
    if (r.b[r.i] !== 0x7b) {
      r.ignoreValue()
      // Not an object: no jkt in it, so not bound to a DPoP key (certificate binding, when on,
      // refuses it as malformed).
      return (this.cnf = OTHER)
    }
    const cnf = { x5tS256: undefined }
    let jkt
    r.members((key) => {
      if (key === 'x5t#S256') cnf.x5tS256 = once(cnf.x5tS256, r)
      else if (key === 'jkt') {
        if (jkt !== undefined) throw MALFORMED
        const v = claimValue(r)
        jkt = typeof v === 'string' ? v : OTHER
      } else r.ignoreValue()
    })
    this.cnf_jkt = jkt
    return (this.cnf = cnf)
  }

}

/** Skips the value at the cursor and hands back its bytes (src/jwt/json_scan.rs `raw_value`). */
function rawValue(r) {
  r.ws()
  const start = r.i
  r.ignoreValue()
  return r.b.subarray(start, r.i)
}

/** A known claim's value; a known claim twice is ambiguous (parsers disagree on which wins): refused. */
function once(previous, r) {
  if (previous !== undefined) throw MALFORMED
  return claimValue(r)
}

/** The known claims of a payload, or null when serde would refuse it. */
function parseClaims(buf) {
  if (!isUtf8(buf)) return null
  const r = new Reader(buf)
  const claims = new Claims()
  try {
    r.topObject((key) => claims.read(key, r))
  } catch (err) {
    if (err === MALFORMED) return null
    throw err
  }
  return claims
}

module.exports = { parseHeader, parseClaims, claimValue, rawValue, OTHER }
