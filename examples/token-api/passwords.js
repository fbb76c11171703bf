'use strict'

// Argon2id hashing through auth-shield's helpers: both calls run on the libuv pool, so a login
// never blocks the event loop.

const crypto = require('node:crypto')
const { hashPassword, verifyPassword, needsRehash } = require('auth-shield')

/**
 * Password hashing with fixed Argon2 costs (`{}` = the library's defaults). `verify` of an
 * unknown user still runs one Argon2 verification against a throwaway hash, so response times
 * do not reveal which user names exist.
 */
async function createPasswords(argon2Options = {}) {
  const decoyHash = await hashPassword(crypto.randomBytes(16).toString('hex'), argon2Options)
  return {
    hash: (password) => hashPassword(password, argon2Options),
    /** True only when `hash` exists and matches; `hash` undefined means "no such user". */
    async verify(hash, password) {
      if (hash === undefined) {
        await verifyPassword(decoyHash, password)
        return false
      }
      return verifyPassword(hash, password)
    },
    /** True when `hash` was made with weaker costs than ours (older settings, seeded users). */
    needsRehash: (hash) => needsRehash(hash, argon2Options),
  }
}

module.exports = { createPasswords }
