'use strict'

// Run by __test__/parity/deprecations.test.js in a child process (its own record of warned
// codes, its own flags): uses every renamed option of the Authenticator with each engine named
// on the command line, in order, and prints what each use gave, the DeprecationWarnings emitted
// and the ones thrown (`--throw-deprecation` throws on the next tick, as Node's own), as JSON.

const path = require('node:path')

const ROOT = path.join(__dirname, '..', '..')
const SECRET = 'deprecation-child-secret-0123456789abcdef'
const NOW = Math.floor(Date.now() / 1000)

const USES = {
  getter: (lib) => new lib.Authenticator({ accessSecret: SECRET, rateLimitRefillPerSec: 3 }).rateLimitRefill,
  config: (lib) => new lib.Authenticator({ accessSecret: SECRET, rateLimitRefill: 5 }).rateLimitRefillPerSec,
  shared: (lib) => lib.Authenticator.shared({ accessSecret: SECRET, rateLimitRefill: 6 }).rateLimitRefillPerSec,
  cacheSize: (lib) => new lib.Authenticator({ accessSecret: SECRET, verifiedTokenCacheSize: 2 }).rateLimitMax,
  revokeBefore: (lib) => {
    const auth = new lib.Authenticator({ accessSecret: SECRET })
    const token = auth.signAccessToken({ sub: 'u' })
    auth.revokeSubject('u', { before: NOW + 10 })
    return auth.authenticate(`Bearer ${token}`).errorCode
  },
}

const warnings = []
process.on('warning', (w) => warnings.push({ name: w.name, code: w.code, message: w.message }))
const thrownLater = []
process.on('uncaughtException', (err) => thrownLater.push({ name: err.name, code: err.code, message: err.message }))

const uses = []
for (const engine of process.argv.slice(2)) {
  const lib = require(engine === 'js' ? path.join(ROOT, 'js') : ROOT)
  for (const [use, fn] of Object.entries(USES)) {
    for (const time of [1, 2]) {
      try {
        uses.push({ engine, use, time, value: fn(lib) })
      } catch (err) {
        uses.push({ engine, use, time, thrown: { name: err.name, code: err.code, message: err.message } })
      }
    }
  }
}

// Warnings are emitted on the next tick.
setImmediate(() => process.stdout.write(JSON.stringify({ uses, warnings, thrownLater })))
