'use strict'

// Test support for the multi-process store suites (__test__/store/redis-processes.test.js,
// redis-cluster.test.js, redis-sentinel.test.js): processes sharing one identity's limit
// (./shared-limit-worker.js) and processes following the revocations
// (./revocation-follower.js), on any Redis target that ./redis-clients.js connects to.

const assert = require('node:assert/strict')
const { spawn, fork } = require('node:child_process')
const path = require('node:path')

const WORKER = path.join(__dirname, 'shared-limit-worker.js')
const FOLLOWER = path.join(__dirname, 'revocation-follower.js')
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
// For the time limits raced against a child's answer: an unref'd timer, so a limit left running
// after the answer came does not keep the test process alive for its remaining seconds.
const limit = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref())
// A process that has not connected by then will not: fail rather than hang the suite.
const READY_MS = 30_000

/** Starts a limit worker; resolves to `{ go(), result }` once it is connected and ready. */
function startWorker(options) {
  const child = spawn(process.execPath, [WORKER, JSON.stringify(options)], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  child.stderr.on('data', (c) => (stderr += c))
  const exited = new Promise((resolve) => child.once('exit', resolve))
  const ready = new Promise((resolve, reject) => {
    child.stdout.on('data', (c) => {
      stdout += c
      if (stdout.startsWith('ready\n')) resolve()
    })
    exited.then((code) => reject(new Error(`worker exited (${code}) before it was ready: ${stderr}`)))
    setTimeout(() => reject(new Error(`worker not ready within ${READY_MS} ms: ${stderr}`)), READY_MS).unref()
  })
  const result = exited.then((code) => {
    if (code !== 0) throw new Error(`worker failed (${code}): ${stderr}`)
    return JSON.parse(stdout.trim().split('\n').pop())
  })
  result.catch(() => {})
  ready.catch(() => child.kill('SIGKILL'))
  return ready.then(() => ({ go: () => child.stdin.end('go\n'), result, kill: () => child.kill('SIGKILL') }))
}

/**
 * Runs one worker per `{ kind, engine }` of `mix` on one identity for `durationMs`, calling
 * `during()` once they all run. Resolves to `{ results, admitted, elapsedSec }` (elapsed between
 * the first attempt and the last admission of any worker, plus 100 ms for where each read its clock).
 */
async function sharedLimitRun({ mix, during = async () => {}, ...options }) {
  const started = await Promise.allSettled(mix.map(({ kind, engine }) => startWorker({ ...options, kind, engine })))
  const workers = started.filter((s) => s.status === 'fulfilled').map((s) => s.value)
  if (workers.length < mix.length) {
    for (const w of workers) w.kill()
    throw started.find((s) => s.status === 'rejected').reason
  }
  for (const w of workers) w.go()
  let duringError = null
  await during().catch((err) => (duringError = err))
  const results = await Promise.all(workers.map((w) => w.result))
  if (duringError) throw duringError
  const admitted = results.reduce((n, r) => n + r.admitted, 0)
  const first = Math.min(...results.map((r) => r.first))
  const last = Math.max(...results.map((r) => r.last))
  return { results, admitted, elapsedSec: (last - first + 100) / 1000 }
}

/**
 * A follower process on `target`: `check(token)` → `{ code, stats }`, `applied` (entries read
 * so far), `untilApplied(n)` → the time its read reached n entries, `stop()`.
 */
async function follower({ target, kind, engine, config, feedOptions }) {
  const child = fork(FOLLOWER, {
    env: {
      ...process.env,
      REDIS_TARGET: JSON.stringify(target),
      CLIENT: kind,
      ENGINE: engine,
      AUTH_CONFIG: JSON.stringify(config),
      FEED_OPTIONS: JSON.stringify(feedOptions),
      REPORT_APPLIED: '1',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  let notReady
  await new Promise((resolve, reject) => {
    exited.then((code) => reject(new Error(`follower exited (${code}) before it was ready`)))
    child.once('message', (m) => m.ready && resolve())
    notReady = setTimeout(() => {
      child.kill('SIGKILL')
      reject(new Error(`follower (${kind}, ${engine}) not ready within ${READY_MS} ms`))
    }, READY_MS).unref()
  }).finally(() => clearTimeout(notReady)) // else a follower that was ready is killed READY_MS after its start
  const state = { applied: 0, times: [], waiters: [] }
  const answers = []
  child.on('message', (m) => {
    if (m.applied !== undefined) {
      for (let i = 0; i < m.applied; i++) state.times.push(m.at)
      state.applied += m.applied
      state.waiters = state.waiters.filter((w) => (state.applied >= w.n ? (w.resolve(state.times[w.n - 1]), false) : true))
    } else if (m.code !== undefined) answers.shift()?.(m)
  })
  return {
    kind,
    engine,
    get applied() {
      return state.applied
    },
    untilApplied: (n, ms = 10_000) =>
      state.applied >= n
        ? Promise.resolve(state.times[n - 1])
        : Promise.race([
            new Promise((resolve) => state.waiters.push({ n, resolve })),
            limit(ms).then(() => Promise.reject(new Error(`follower (${kind}, ${engine}) read ${state.applied} of ${n} entries within ${ms} ms`))),
          ]),
    check: (token) =>
      new Promise((resolve) => {
        answers.push(resolve)
        child.send({ check: token })
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      if (child.connected) child.send({ stop: true })
      const code = await Promise.race([exited, limit(10_000).then(() => 'timeout')])
      if (code === 'timeout') child.kill('SIGKILL')
      return code
    },
    kill: () => child.kill('SIGKILL'),
  }
}

/** Asks every follower until each answers `token_revoked` for `token` (fails after `ms`). */
async function untilRevokedEverywhere(followers, token, ms, what) {
  await Promise.all(
    followers.map(async (f) => {
      const started = Date.now()
      let answer
      while ((answer = await f.check(token)).code !== 'token_revoked') {
        if (Date.now() - started > ms) assert.fail(`${what} (${f.kind}, ${f.engine}): still ${answer.code} after ${ms} ms (${JSON.stringify(answer.stats)})`)
        await sleep(20)
      }
    }),
  )
}

/**
 * Revokes `count` tokens one after another through `feed` and measures, for each, the time
 * from the call to each follower's read of it. Resolves to the sorted latencies (ms).
 */
async function propagation(feed, followers, count, jtiPrefix) {
  const latencies = []
  const exp = Math.floor(Date.now() / 1000) + 600
  for (let i = 0; i < count; i++) {
    const base = followers.map((f) => f.applied)
    const started = Date.now()
    const outcome = await feed.revokeToken(`${jtiPrefix}-${i}`, exp)
    assert.equal(outcome, 'delivered')
    const times = await Promise.all(followers.map((f, j) => f.untilApplied(base[j] + 1)))
    for (const at of times) latencies.push(at - started)
  }
  return latencies.sort((a, b) => a - b)
}

/** The q-quantile of sorted `values`. */
const quantile = (values, q) => values[Math.min(values.length - 1, Math.ceil(q * values.length) - 1)]

module.exports = { startWorker, sharedLimitRun, follower, untilRevokedEverywhere, propagation, quantile, sleep }
