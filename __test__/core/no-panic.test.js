'use strict'

// No panic reaches Node: every export, constructor, method and getter is called with hostile
// values (wrong types, throwing getters and proxies, cycles, huge and detached buffers, lone
// surrogates, 16 MB strings, foreign `this`) in a child process. A Rust panic crossing the
// boundary aborts a process, so the child must exit normally, and every call must either
// return or throw a real Error.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const path = require('node:path')

test('the worst inputs to every export return or throw an Error; the process survives', (t) => {
  const child = spawnSync(process.execPath, [path.join(__dirname, '..', 'support', 'hostile-calls.js')], {
    encoding: 'utf8',
    maxBuffer: 16 * 1024 * 1024,
    timeout: 240_000,
  })
  assert.equal(child.signal, null, `child killed by ${child.signal}: ${child.stderr.slice(-2000)}`)
  assert.equal(child.status, 0, `child exited ${child.status}: ${child.stderr.slice(-2000)}`)
  assert.doesNotMatch(child.stderr, /panicked|RUST_BACKTRACE|fatal runtime error/)
  const summary = JSON.parse(child.stdout)
  t.diagnostic(`${summary.returned} calls returned, ${summary.threwError} threw an Error`)
  assert.deepEqual(summary.threwOther, [], 'a call threw something that is not an Error')
  assert.deepEqual(summary.missing, [], 'an exported function has no hostile-call entry')
  assert.deepEqual(summary.promiseThrew, [], 'a Promise-returning helper threw instead of rejecting')
  assert.deepEqual(summary.uncoded.slice(0, 20), [], 'an export threw or rejected with an error without an ERR_* code')
  assert.ok(summary.returned + summary.threwError > 10_000)
})
