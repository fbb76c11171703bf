'use strict'

// No panic reaches Node: every export, constructor, method and getter is called with hostile
// values (wrong types, throwing getters and proxies, cycles, huge and detached buffers, lone
// surrogates, 16 MB strings, foreign `this`) in a child process. A Rust panic crossing the
// boundary aborts a process, so the child must exit normally, and every call must either
// return or throw a real Error.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { spawn } = require('node:child_process')
const path = require('node:path')

// Two children side by side, each making half of the groups of calls (support/hostile-calls.js).
const SHARDS = 2

/** Runs one child to its exit: { status, signal, stdout, stderr }; killed after 240 s. */
function runShard(shard) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, '..', 'support', 'hostile-calls.js')], {
      env: { ...process.env, HOSTILE_SHARD: `${shard}/${SHARDS}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 240_000)
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (c) => (stdout += c))
    child.stderr.setEncoding('utf8').on('data', (c) => (stderr += c))
    child.once('error', reject)
    child.once('close', (status, signal) => {
      clearTimeout(timer)
      resolve({ status, signal, stdout, stderr })
    })
  })
}

test('the worst inputs to every export return or throw an Error; the process survives', async (t) => {
  const children = await Promise.all(Array.from({ length: SHARDS }, (_, shard) => runShard(shard)))
  const summary = { returned: 0, threwError: 0, threwOther: [], missing: [], promiseThrew: [], uncoded: [] }
  for (const [shard, child] of children.entries()) {
    assert.equal(child.signal, null, `child ${shard} killed by ${child.signal}: ${child.stderr.slice(-2000)}`)
    assert.equal(child.status, 0, `child ${shard} exited ${child.status}: ${child.stderr.slice(-2000)}`)
    assert.doesNotMatch(child.stderr, /panicked|RUST_BACKTRACE|fatal runtime error/)
    const part = JSON.parse(child.stdout)
    summary.returned += part.returned
    summary.threwError += part.threwError
    for (const list of ['threwOther', 'promiseThrew', 'uncoded']) summary[list].push(...part[list])
    // Every child lists the missing exports the same way (it looks at them all).
    summary.missing = part.missing
  }
  t.diagnostic(`${summary.returned} calls returned, ${summary.threwError} threw an Error`)
  assert.deepEqual(summary.threwOther, [], 'a call threw something that is not an Error')
  assert.deepEqual(summary.missing, [], 'an exported function has no hostile-call entry')
  assert.deepEqual(summary.promiseThrew, [], 'a Promise-returning helper threw instead of rejecting')
  assert.deepEqual(summary.uncoded.slice(0, 20), [], 'an export threw or rejected with an error without an ERR_* code')
  assert.ok(summary.returned + summary.threwError > 10_000)
})
