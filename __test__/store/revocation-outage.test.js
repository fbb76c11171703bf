'use strict'

// Revocations and Redis outages (lib/store/revocations.js, docs/revocation.md "Outages"), with a
// real redis-server killed and restarted, node-redis and ioredis, native and JS engines:
// - a revoke that is not awaited while Redis is down leaves no unhandled rejection, and a bad
//   argument still throws at once;
// - a revocation made during the outage reaches another process once Redis is back;
// - after Redis restarts empty (no RDB, no AOF), a process started afterwards refuses a token
//   revoked before the restart, because a live process that knew it re-published it.
// The times from Redis's return to delivery are printed as diagnostics, never asserted.

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { fork } = require('node:child_process')
const { createClient } = require('redis')
const IORedis = require('ioredis')
const native = require('../..')
const js = require('../../js')
const { RevocationFeed } = require('../../lib/store/revocations')
const { redisSkip, startRedis } = require('../support/redis-server')

const SECRET = 'revocation-outage-secret-0123456789abcdef'
const CONFIG = { accessSecret: SECRET, rateLimitMax: 0 }
const ENGINES = { native, js }

// `failFast`: the client gives up a command at once while disconnected (node-redis
// `disableOfflineQueue`), or after one reconnection (ioredis `maxRetriesPerRequest: 1`), rather
// than holding it until Redis is back: then only the feed's own queue can deliver it.
const CLIENTS = {
  'node-redis': async (redis, { failFast = false } = {}) => {
    const c = createClient({ url: redis.url, disableOfflineQueue: failFast, socket: { reconnectStrategy: () => 50 } })
    c.on('error', () => {})
    await c.connect()
    return { client: c, close: () => c.destroy(), command: (args) => c.sendCommand(args) }
  },
  ioredis: async (redis, { failFast = false } = {}) => {
    const c = new IORedis(redis.port, '127.0.0.1', { retryStrategy: () => 50, maxRetriesPerRequest: failFast ? 1 : null })
    c.on('error', () => {})
    return { client: c, close: () => c.disconnect(), command: (args) => c.call(...args) }
  },
}

/** A token's `iat` (whole seconds): a subject cut-off one second later covers it. */
const iatOf = (token) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url')).iat

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
// A time limit raced against a child's exit: unref'd, so it does not hold the process open after.
const limit = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref())

const unhandled = []
const onUnhandled = (err) => unhandled.push(err)

/** A follower process (__test__/support/revocation-follower.js) with `check(token)` and `stop()`. */
async function follower(redis, clientName, engineName, prefix) {
  const child = fork(path.join(__dirname, '..', 'support', 'revocation-follower.js'), {
    env: {
      ...process.env,
      REDIS_URL: redis.url,
      CLIENT: clientName,
      ENGINE: engineName,
      AUTH_CONFIG: JSON.stringify(CONFIG),
      FEED_OPTIONS: JSON.stringify({ prefix, commandTimeoutMs: 300, maxRevocationLagMs: 1000 }),
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`follower exited (${code}) before it was ready`)))
    child.once('message', (m) => m.ready && resolve())
  })
  const check = (token) =>
    new Promise((resolve) => {
      child.once('message', resolve)
      child.send({ check: token })
    })
  const revoke = (what) =>
    new Promise((resolve) => {
      child.once('message', resolve)
      child.send({ revoke: what })
    })
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    if (child.connected) child.send({ stop: true })
    const code = await Promise.race([exited, limit(10_000).then(() => 'timeout')])
    if (code === 'timeout') child.kill('SIGKILL')
    assert.equal(code, 0, 'the follower exits cleanly')
  }
  return { check, revoke, stop, child }
}

/** Asks `check()` until it answers `token_revoked`; returns the ms that took (fails after `ms`). */
async function untilRefused(check, token, ms, what) {
  const started = Date.now()
  let answer
  while ((answer = await check(token)).code !== 'token_revoked') {
    if (Date.now() - started > ms) assert.fail(`${what}: still ${answer.code} after ${ms} ms (${JSON.stringify(answer.stats)})`)
    await sleep(10)
  }
  return Date.now() - started
}

// Every case has a redis-server, connections and followers of its own: four run at once, their
// outages and waits side by side (the diagnostics' times include the neighbours' load).
describe('revocations across Redis outages', { skip: redisSkip(), concurrency: 4 }, () => {
  before(() => process.on('unhandledRejection', onUnhandled))
  after(() => {
    process.off('unhandledRejection', onUnhandled)
    assert.deepEqual(unhandled, [])
  })

  for (const [clientName, connect] of Object.entries(CLIENTS)) {
    for (const [engineName, engine] of Object.entries(ENGINES)) {
      test(`${clientName}, ${engineName}: revokes not awaited while Redis is down leave no unhandled rejection; bad arguments throw at once`, async () => {
        const redis = await startRedis()
        const conn = await connect(redis)
        const auth = new engine.Authenticator(CONFIG)
        const feed = new RevocationFeed(conn.client, { prefix: 'unawaited', commandTimeoutMs: 100, maxRevocationLagMs: 200 }).attach(auth)
        const seen = unhandled.length
        try {
          await feed.start()
          const token = auth.signAccessToken({ sub: 'alice' })
          const { jti, expiresAtSec } = auth.verifyAccessToken(token)
          const other = auth.signAccessToken({ sub: 'bob' })
          await redis.kill()

          // Not awaited, as a logout handler might: enforced here at once.
          auth.revokeToken(jti, expiresAtSec)
          auth.revokeSubject('bob', { issuedBeforeSec: iatOf(other) + 1 })
          assert.equal(auth.authenticate(`Bearer ${token}`).errorCode, 'token_revoked')
          assert.equal(auth.authenticate(`Bearer ${other}`).errorCode, 'token_revoked')

          // Argument errors are thrown before anything is queued, as without a feed.
          assert.throws(() => auth.revokeSubject(123), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })
          assert.throws(() => auth.revokeToken('', expiresAtSec), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' })
          assert.throws(() => feed.revokeToken(jti, 'soon'), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })

          // One awaited: it resolves (never rejects) once its wait for Redis is over.
          assert.equal(await auth.revokeToken('awaited', expiresAtSec), 'queued')
          assert.equal(feed.stats().queued, 3)
          // Long enough for every write and retry of the outage to have failed at least twice.
          await sleep(600)
          await new Promise((resolve) => setImmediate(resolve))
          assert.deepEqual(unhandled.slice(seen), [])
          assert.ok(feed.stats().writeErrors >= 1)
        } finally {
          await feed.close()
          await conn.close()
          await redis.stop()
        }
        assert.deepEqual(unhandled.slice(seen), [])
      })
    }
  }

  for (const clientName of Object.keys(CLIENTS)) {
    for (const engineName of Object.keys(ENGINES)) {
      test(`${clientName}, ${engineName}: a process that does not await its revokes while Redis is down keeps running (no unhandled rejection)`, async () => {
        const redis = await startRedis()
        let a = null
        try {
          a = await follower(redis, clientName, engineName, 'survives')
          const exits = []
          a.child.once('exit', (code, signal) => exits.push({ code, signal }))
          await redis.kill()
          const writer = new ENGINES[engineName].Authenticator(CONFIG)
          const token = writer.signAccessToken({ sub: 'alice' })
          const { jti, expiresAtSec } = writer.verifyAccessToken(token)
          assert.deepEqual(await a.revoke({ jti, expiresAtSec, sub: 'bob' }), { revoked: true })
          // Several write time-outs (300 ms each) and retries later, the process still answers.
          await sleep(1500)
          assert.deepEqual(exits, [])
          const answer = await a.check(token)
          assert.equal(answer.code, 'token_revoked')
          assert.equal(answer.stats.queued, 2)
        } finally {
          if (a) await a.stop()
          await redis.stop()
        }
      })
    }
  }

  for (const [engineName, engine] of Object.entries(ENGINES)) {
    test(`${engineName}: at maxQueued a new revocation is refused whole, with a typed error; the queue drains once Redis is back`, async () => {
      const redis = await startRedis()
      const conn = await CLIENTS['node-redis'](redis)
      const auth = new engine.Authenticator(CONFIG)
      const feed = new RevocationFeed(conn.client, { prefix: 'bounded', commandTimeoutMs: 1000, maxQueued: 2 }).attach(auth)
      try {
        await feed.start()
        const tokens = ['t1', 't2', 't3'].map((sub) => auth.signAccessToken({ sub }))
        const [a, b, c] = tokens.map((t) => auth.verifyAccessToken(t))
        await redis.kill()
        const queued = [auth.revokeToken(a.jti, a.expiresAtSec), auth.revokeToken(b.jti, b.expiresAtSec)]
        // Refused whole: not enforced here either, so the caller knows it did not happen.
        assert.throws(() => auth.revokeToken(c.jti, c.expiresAtSec), { name: 'Error', code: 'ERR_AUTH_SHIELD_REVOCATION_QUEUE_FULL' })
        assert.equal(auth.authenticate(`Bearer ${tokens[2]}`).authenticated, true)
        // Revoking a queued one again takes no room.
        assert.equal(await auth.revokeToken(a.jti, a.expiresAtSec + 1), 'queued')
        assert.deepEqual(await Promise.all(queued), ['queued', 'queued'])
        assert.equal(feed.stats().queued, 2)

        await redis.restart()
        const deadline = Date.now() + 15_000
        while (feed.stats().queued > 0 && Date.now() < deadline) await sleep(20)
        assert.equal(feed.stats().queued, 0, 'the queue drained')
        assert.equal(await auth.revokeToken(c.jti, c.expiresAtSec), 'delivered')
        assert.equal(Number(await conn.command(['ZCARD', 'bounded:tokens'])), 3)
        // The later expiry given while queued is the one Redis holds.
        assert.equal(Number(await conn.command(['ZSCORE', 'bounded:tokens', JSON.stringify([null, a.jti])])), a.expiresAtSec + 1)
      } finally {
        await feed.close()
        await conn.close()
        await redis.stop()
      }
    })

    test(`${engineName}: a FLUSHALL with no reconnection is found by the periodic check, and the set rebuilt`, async () => {
      const redis = await startRedis()
      const conn = await CLIENTS['node-redis'](redis)
      const auth = new engine.Authenticator(CONFIG)
      const feed = new RevocationFeed(conn.client, { prefix: 'flushed' }).attach(auth)
      try {
        await feed.start()
        const exp = Math.floor(Date.now() / 1000) + 600
        assert.equal(await auth.revokeToken('before-the-flush', exp), 'delivered')
        await conn.command(['FLUSHALL'])
        const deadline = Date.now() + 10_000
        while (feed.stats().rebuilds === 0 && Date.now() < deadline) await sleep(20)
        assert.equal(Number(await conn.command(['ZSCORE', 'flushed:tokens', JSON.stringify([null, 'before-the-flush'])])), exp)
        assert.equal(feed.stats().rebuilds, 1)
      } finally {
        await feed.close()
        await conn.close()
        await redis.stop()
      }
    })

    test(`${engineName}: at maxKnown a new revocation is refused with ERR_AUTH_SHIELD_REVOCATION_LIMIT`, async () => {
      const redis = await startRedis()
      const conn = await CLIENTS['ioredis'](redis)
      const auth = new engine.Authenticator(CONFIG)
      const feed = new RevocationFeed(conn.client, { prefix: 'known', maxKnown: 2 }).attach(auth)
      try {
        await feed.start()
        const exp = Math.floor(Date.now() / 1000) + 600
        assert.equal(await auth.revokeToken('k1', exp), 'delivered')
        assert.equal(await auth.revokeSubject('s1'), 'delivered')
        assert.throws(() => auth.revokeToken('k3', exp), { name: 'RangeError', code: 'ERR_AUTH_SHIELD_REVOCATION_LIMIT' })
        assert.equal(await auth.revokeToken('k1', exp + 5), 'delivered')
        assert.equal(feed.stats().known, 2)
      } finally {
        await feed.close()
        await conn.close()
        await redis.stop()
      }
    })
  }

  for (const [clientName, connect] of Object.entries(CLIENTS)) {
    for (const [engineName, failFast] of [
      ['native', true],
      ['js', true],
      ['native', false],
    ]) {
      const kind = failFast ? 'a client that gives up commands while disconnected' : 'a client that holds them'
      test(`${clientName}, ${engineName}, ${kind}: a revocation made while Redis is down reaches another process once it is back`, async (t) => {
        const redis = await startRedis({ persist: true })
        const prefix = 'outage'
        const conn = await connect(redis, { failFast })
        const a = new ENGINES[engineName].Authenticator(CONFIG)
        const feed = new RevocationFeed(conn.client, { prefix, commandTimeoutMs: 300 }).attach(a)
        let b = null
        try {
          await feed.start()
          b = await follower(redis, clientName, engineName, prefix)
          const token = a.signAccessToken({ sub: 'alice' })
          const { jti, expiresAtSec } = a.verifyAccessToken(token)
          assert.equal((await b.check(token)).code, null)

          await redis.kill()
          assert.equal(await a.revokeToken(jti, expiresAtSec), 'queued')
          assert.equal(a.authenticate(`Bearer ${token}`).errorCode, 'token_revoked')
          await sleep(1000) // an outage longer than the write's time-out and a few retries
          assert.equal((await b.check(token)).code, null, 'b cannot know yet')

          await redis.restart()
          const ms = await untilRefused(b.check, token, 15_000, 'b refuses the token revoked during the outage')
          // a learns of the acknowledgement on its own connection: soon, not necessarily first.
          for (const deadline = Date.now() + 5000; feed.stats().queued > 0 && Date.now() < deadline; ) await sleep(10)
          assert.equal(feed.stats().queued, 0)
          t.diagnostic(`${clientName}, ${engineName}, failFast ${failFast}: Redis back -> other process refuses: ${ms} ms`)
        } finally {
          if (b) await b.stop()
          await feed.close()
          await conn.close()
          await redis.stop()
        }
      })
    }
  }

  for (const [clientName, connect] of Object.entries(CLIENTS)) {
    for (const engineName of Object.keys(ENGINES)) {
      test(`${clientName}, ${engineName}: Redis restarted empty: a process started afterwards refuses what a live process knew`, async (t) => {
        // No RDB, no AOF: the restart loses every key.
        const redis = await startRedis({ persist: false })
        const prefix = 'empty'
        const conn = await connect(redis)
        const writer = new ENGINES[engineName].Authenticator(CONFIG)
        const feed = new RevocationFeed(conn.client, { prefix }).attach(writer)
        const followers = []
        try {
          await feed.start()
          const b = await follower(redis, clientName, engineName, prefix)
          followers.push(b)
          const token = writer.signAccessToken({ sub: 'alice' })
          const other = writer.signAccessToken({ sub: 'bob' })
          const { jti, expiresAtSec } = writer.verifyAccessToken(token)
          assert.equal(await writer.revokeToken(jti, expiresAtSec), 'delivered')
          assert.equal(await writer.revokeSubject('bob', { issuedBeforeSec: iatOf(other) + 1 }), 'delivered')
          await untilRefused(b.check, token, 5000, 'b learns the token')
          await untilRefused(b.check, other, 5000, 'b learns the subject')
          // The writer leaves: only b, which learnt them from Redis, still knows.
          await feed.close()

          await redis.kill()
          await redis.restart()
          const back = Date.now()
          // (No DBSIZE check here: b may have re-published already. Its `rebuilds`, checked
          // below, counts only a changed epoch marker, that is a data set lost.)
          // Watched from here while c starts: when the shared set holds the token again.
          const rebuilt = (async () => {
            while (Number(await conn.command(['ZCARD', `${prefix}:tokens`])) !== 1) {
              if (Date.now() - back > 15_000) return null
              await sleep(5)
            }
            return Date.now() - back
          })()
          const c = await follower(redis, clientName, engineName, prefix)
          followers.push(c)
          const started = Date.now() - back
          const ms = started + (await untilRefused(c.check, token, 15_000, 'c refuses the token revoked before the restart'))
          await untilRefused(c.check, other, 5000, 'c refuses the subject revoked before the restart')
          const setMs = await rebuilt
          assert.notEqual(setMs, null, 'the set holds the token again')
          const { stats } = await b.check(token)
          assert.ok(stats.rebuilds >= 1 && stats.republished >= 2, JSON.stringify(stats))
          t.diagnostic(`${clientName}, ${engineName}: Redis back empty -> set rebuilt: ${setMs} ms; new process refuses: ${ms} ms (its start-up: ${started} ms)`)
        } finally {
          for (const f of followers) await f.stop()
          await feed.close()
          await conn.close()
          await redis.stop()
        }
      })
    }
  }
})
