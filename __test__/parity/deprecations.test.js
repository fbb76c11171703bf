'use strict'

// The renamed options warn through one helper (base/deprecation.js) in both engines:
// each AUTH_SHIELD_DEP_* code once per process, whichever engine used it first, and
// `--throw-deprecation` / `--no-deprecation` act as on Node's own deprecations (process.emitWarning)
// in both. Each case runs in a child process: the record of warned codes and the flags are a
// process's own.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const CHILD = path.join(__dirname, '..', 'support', 'deprecation-child.js')
const CODES = ['AUTH_SHIELD_DEP_RATE_LIMIT_REFILL', 'AUTH_SHIELD_DEP_VERIFIED_TOKEN_CACHE_SIZE', 'AUTH_SHIELD_DEP_REVOKE_BEFORE']

/** What the child printed, run with `flags` and the engines in `engines` order. */
function run(flags, engines) {
  const child = spawnSync(process.execPath, [...flags, CHILD, ...engines], { encoding: 'utf8', timeout: 60_000 })
  assert.equal(child.status, 0, child.stderr)
  return JSON.parse(child.stdout)
}

/** The outcomes without the engine's name, for comparing one engine's run with the other's. */
const outcomes = ({ uses, ...rest }) => ({ uses: uses.map(({ engine, ...use }) => use), ...rest })

test('each engine alone: the same uses, values, warnings and throws under every deprecation flag', () => {
  for (const flags of [[], ['--throw-deprecation'], ['--no-deprecation']]) {
    const [native, js] = [run(flags, ['native']), run(flags, ['js'])]
    assert.deepEqual(outcomes(js), outcomes(native), flags.join(' ') || 'no flag')
    // Every use is honoured; a warning never changes what a call returns.
    assert.deepEqual(native.uses.filter((u) => u.thrown !== undefined), [])
    const codes = (list) => list.map((w) => w.code).sort()
    for (const w of [...native.warnings, ...native.thrownLater]) assert.equal(w.name, 'DeprecationWarning')
    if (flags[0] === '--throw-deprecation') {
      // As Node's own deprecations: thrown on the next tick instead of emitted, once per code.
      assert.deepEqual(codes(native.thrownLater), [...CODES].sort())
      assert.deepEqual(native.warnings, [])
    } else {
      assert.deepEqual(codes(native.warnings), flags[0] === '--no-deprecation' ? [] : [...CODES].sort())
      assert.deepEqual(native.thrownLater, [])
    }
  }
})

test('both engines in one process: each code warns once, whichever engine used it first', () => {
  for (const engines of [['native', 'js'], ['js', 'native']]) {
    const { uses, warnings } = run([], engines)
    assert.deepEqual(warnings.map((w) => w.code).sort(), [...CODES].sort(), engines.join(' then '))
    assert.deepEqual(uses.filter((u) => u.thrown !== undefined), [])
    // The old names are honoured by both engines.
    for (const u of uses.filter((u) => u.use === 'config' || u.use === 'getter')) assert.equal(u.value, u.use === 'config' ? 5 : 3)
    for (const u of uses.filter((u) => u.use === 'revokeBefore')) assert.equal(u.value, 'token_revoked')
  }
  const { thrownLater } = run(['--throw-deprecation'], ['native', 'js'])
  assert.deepEqual(thrownLater.map((w) => w.code).sort(), [...CODES].sort())
})
