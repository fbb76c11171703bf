'use strict'

// Revocations shared through a real redis-server (lib/store/revocations.js, docs/revocation.md):
// a revocation made through one feed is enforced by every other feed's authenticator, a feed
// started later loads the current set, and a Redis killed with SIGKILL and restarted loses
// nothing acknowledged, with the staleness behaviour onStale asks for. node-redis and ioredis,
// native and JS engines.

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { createClient } = require('redis')
const IORedis = require('ioredis')
const native = require('../..')
const js = require('../../js')
const { RevocationFeed } = require('../../lib/store/revocations')
const { redisSkip, startRedis } = require('../support/redis-server')

const SECRET = 'revocation-feed-secret-0123456789abcdef'
const CONFIG = { accessSecret: SECRET, rateLimitMax: 0 }

const CLIENTS = {
  'node-redis': async (redis) => {
    const c = createClient({ url: redis.url, socket: { reconnectStrategy: () => 50 } })
    c.on('error', () => {})
    await c.connect()
    return { client: c, close: () => c.destroy() }
  },
  ioredis: async (redis) => {
    const c = new IORedis(redis.port, '127.0.0.1', { retryStrategy: () => 50, maxRetriesPerRequest: null })
    c.on('error', () => {})
    return { client: c, close: () => c.disconnect() }
  },
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Resolves once `check()` is true; fails after `ms`. */
async function eventually(check, ms, what) {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`not within ${ms} ms: ${what}`)
    await sleep(5)
  }
}

const unhandled = []
const onUnhandled = (err) => unhandled.push(err)

describe('revocations shared through Redis', { skip: redisSkip() }, () => {
  let redis
  before(async () => {
    process.on('unhandledRejection', onUnhandled)
    redis = await startRedis({ persist: true })
  })
  after(async () => {
    process.off('unhandledRejection', onUnhandled)
    await redis.stop()
    assert.deepEqual(unhandled, [])
  })

  for (const [clientName, connect] of Object.entries(CLIENTS)) {
    for (const [engineName, engine] of [
      ['native', native],
      ['js', js],
    ]) {
      test(`${clientName}, ${engineName}: a revocation through one feed is enforced by the others; a later feed loads the set`, async () => {
        const prefix = `t:${clientName}:${engineName}`
        const conns = []
        const feeds = []
        const make = async () => {
          const conn = await connect(redis)
          conns.push(conn)
          const auth = new engine.Authenticator(CONFIG)
          const feed = new RevocationFeed(conn.client, { prefix }).attach(auth)
          feeds.push(feed)
          await feed.start()
          return auth
        }
        try {
          const a = await make()
          const b = await make()
          const token = a.signAccessToken({ sub: 'alice' })
          const other = a.signAccessToken({ sub: 'bob' })
          const { jti, expiresAtSec } = a.verifyAccessToken(token)
          assert.equal(b.authenticate(`Bearer ${token}`).authenticated, true)

          // Written through the feed: a Promise, and enforced locally before it resolves.
          const written = a.revokeToken(jti, expiresAtSec)
          assert.ok(written instanceof Promise)
          assert.equal(a.authenticate(`Bearer ${token}`).errorCode, 'token_revoked')
          assert.equal(await written, 'delivered')
          await eventually(() => b.authenticate(`Bearer ${token}`).errorCode === 'token_revoked', 2000, 'b enforces the jti')
          assert.equal(b.authenticate(`Bearer ${other}`).authenticated, true)

          // `before` is exclusive on iat (whole seconds): cut after bob's token was issued.
          const bobIat = JSON.parse(Buffer.from(other.split('.')[1], 'base64url')).iat
          await b.revokeSubject('bob', { issuedBeforeSec: bobIat + 1 })
          await eventually(() => a.authenticate(`Bearer ${other}`).errorCode === 'token_revoked', 2000, 'a enforces the subject')

          // Bad arguments throw the authenticator's own errors at once, and write nothing.
          assert.throws(() => a.revokeToken('', expiresAtSec), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE' })
          assert.throws(() => a.revokeSubject('bob', 7), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' })

          // A process started now loads both from the set.
          const c = await make()
          assert.equal(c.authenticate(`Bearer ${token}`).errorCode, 'token_revoked')
          assert.equal(c.authenticate(`Bearer ${other}`).errorCode, 'token_revoked')
          assert.equal(c.authenticate(`Bearer ${c.signAccessToken({ sub: 'carol' })}`).authenticated, true)
        } finally {
          for (const feed of feeds) await feed.close()
          for (const conn of conns) await conn.close()
        }
      })
    }
  }

  test('4 processes each enforce every revocation made in another (propagation measured)', async (t) => {
    const { measurePropagation } = require('../../bench/revocation-propagation')
    const r = await measurePropagation({ redisUrl: redis.url, processes: 4, revocations: 25, timeoutMs: 5000 })
    assert.equal(r.samples, 100)
    // Figures only (timings are for bench/, never asserted): see docs/revocation.md.
    t.diagnostic(`propagation p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms`)
  })

  test('a follower stopped while its last id is trimmed off the stream reloads the set and misses nothing', async () => {
    const { fork } = require('node:child_process')
    const path = require('node:path')
    const prefix = 'trim'
    const child = fork(path.join(__dirname, '..', 'support', 'revocation-follower.js'), {
      env: { ...process.env, REDIS_URL: redis.url, AUTH_CONFIG: JSON.stringify(CONFIG), FEED_OPTIONS: JSON.stringify({ prefix, commandTimeoutMs: 60_000 }) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    const ask = (token) =>
      new Promise((resolve) => {
        child.once('message', resolve)
        child.send({ check: token })
      })
    const conn = await CLIENTS['node-redis'](redis)
    const writer = new native.Authenticator(CONFIG)
    const feed = new RevocationFeed(conn.client, { prefix, maxLen: 100 }).attach(writer)
    try {
      await new Promise((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`follower exited (${code})`)))
        child.once('message', (m) => m.ready && resolve())
      })
      await feed.start()
      const trimmed = writer.signAccessToken({ sub: 'trimmed' })
      const { jti, expiresAtSec } = writer.verifyAccessToken(trimmed)
      assert.equal((await ask(trimmed)).code, null)

      child.kill('SIGSTOP')
      // The first entry wakes the follower's blocked read (its reply waits in the socket);
      // the revocation after it is trimmed before the follower can ask for it.
      await writer.revokeToken('wake-up', expiresAtSec)
      await writer.revokeToken(jti, expiresAtSec)
      for (let i = 0; i < 400; i++) await writer.revokeToken(`filler-${i}`, expiresAtSec)
      // MAXLEN ~ 100 trimmed the oldest entries, the revocation among them.
      assert.ok((await conn.client.sendCommand(['XLEN', `${prefix}:stream`])) < 400)
      await sleep(2500) // longer than a read blocks plus the stall margin
      child.kill('SIGCONT')

      let answer
      const deadline = Date.now() + 5000
      while ((answer = await ask(trimmed)).code !== 'token_revoked' && Date.now() < deadline) await sleep(20)
      assert.equal(answer.code, 'token_revoked', 'the trimmed revocation came back through a reload')
      assert.ok(answer.stats.reloads >= 2, `reloads: ${answer.stats.reloads}`)
    } finally {
      child.kill('SIGCONT')
      if (child.connected) child.send({ stop: true })
      if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve))
      await feed.close()
      await conn.close()
    }
  })

  for (const [clientName, connect] of Object.entries(CLIENTS)) {
    test(`${clientName}: Redis killed (SIGKILL) and restarted: closed refuses while stale, open admits, nothing acknowledged is lost`, async () => {
      const prefix = `kill:${clientName}`
      const lag = 300
      const conns = [await connect(redis), await connect(redis), await connect(redis)]
      const writer = new native.Authenticator(CONFIG)
      const closed = new native.Authenticator(CONFIG)
      const open = new js.Authenticator(CONFIG)
      const errors = []
      const options = { prefix, maxRevocationLagMs: lag, commandTimeoutMs: 200, onError: (e) => errors.push(e) }
      const feeds = [
        new RevocationFeed(conns[0].client, options).attach(writer),
        new RevocationFeed(conns[1].client, { ...options, onStale: 'closed' }).attach(closed),
        new RevocationFeed(conns[2].client, options).attach(open),
      ]
      let later = null
      try {
        for (const feed of feeds) await feed.start()
        const before = writer.signAccessToken({ sub: 'u1' })
        const during = writer.signAccessToken({ sub: 'u2' })
        const fine = writer.signAccessToken({ sub: 'u3' })
        const jtiOf = (t) => writer.verifyAccessToken(t)
        await writer.revokeToken(jtiOf(before).jti, jtiOf(before).expiresAtSec) // acknowledged
        await eventually(() => closed.authenticate(`Bearer ${before}`).errorCode === 'token_revoked', 2000, 'propagated')
        await eventually(() => open.authenticate(`Bearer ${before}`).errorCode === 'token_revoked', 2000, 'propagated')

        await redis.kill()
        // A write while Redis is gone: enforced locally at once, reported queued (not acknowledged).
        const pending = writer.revokeToken(jtiOf(during).jti, jtiOf(during).expiresAtSec)
        assert.equal(writer.authenticate(`Bearer ${during}`).errorCode, 'token_revoked')
        assert.equal(await pending, 'queued')

        await eventually(() => feeds[1].stale && feeds[2].stale, lag * 10, 'both feeds stale')
        // Known revocations keep being enforced; the rest: refused when closed, admitted when open.
        assert.equal(closed.authenticate(`Bearer ${before}`).errorCode, 'token_revoked')
        assert.equal(open.authenticate(`Bearer ${before}`).errorCode, 'token_revoked')
        const refused = closed.authenticate(`Bearer ${fine}`)
        assert.deepEqual([refused.errorCode, refused.errorStatus], ['revocation_unavailable', 503])
        assert.equal(open.authenticate(`Bearer ${fine}`).authenticated, true)

        await redis.restart()
        await eventually(() => !feeds[1].stale && !feeds[2].stale, 10_000, 'feeds recover')
        assert.equal(closed.authenticate(`Bearer ${fine}`).authenticated, true)
        assert.equal(closed.authenticate(`Bearer ${before}`).errorCode, 'token_revoked')

        // The acknowledged revocation survived the kill: a process started now loads it.
        const conn = await connect(redis)
        conns.push(conn)
        const fresh = new native.Authenticator(CONFIG)
        later = new RevocationFeed(conn.client, options).attach(fresh)
        await later.start()
        assert.equal(fresh.authenticate(`Bearer ${before}`).errorCode, 'token_revoked')

        // And the feeds follow again: a revocation after the restart reaches everyone.
        await writer.revokeSubject('u3', { issuedBeforeSec: Math.floor(Date.now() / 1000) + 1 })
        for (const auth of [closed, open, fresh]) {
          await eventually(() => auth.authenticate(`Bearer ${fine}`).errorCode === 'token_revoked', 3000, 'after restart')
        }
        assert.ok(errors.length > 0, 'the outage was reported to onError')
      } finally {
        for (const feed of [...feeds, later]) if (feed) await feed.close()
        for (const conn of conns) await conn.close()
      }
    })
  }
})

test('RevocationFeed refuses bad options and misuse with typed errors, before any I/O', async () => {
  // A real, unconnected client: nothing is sent before start().
  const client = createClient()
  assert.throws(() => new RevocationFeed({}), { name: 'TypeError' })
  assert.throws(() => new RevocationFeed(client, { onStale: 'maybe' }), { name: 'TypeError', message: /onStale/ })
  assert.throws(() => new RevocationFeed(client, { maxRevocationLagMs: 5 }), { name: 'RangeError', message: /maxRevocationLagMs/ })
  assert.throws(() => new RevocationFeed(client, { maxLen: '10' }), { name: 'TypeError', message: /maxLen/ })
  assert.throws(() => new RevocationFeed(client, { maxLenn: 10 }), { name: 'TypeError', message: /maxLenn/ })
  assert.throws(() => new RevocationFeed(client, { onError: 1 }), { name: 'TypeError', message: /onError/ })
  const feed = new RevocationFeed(client)
  assert.throws(() => feed.attach({}), { name: 'TypeError' })
  assert.throws(() => feed.revokeToken('j', 1), { code: 'ERR_AUTH_SHIELD_NOT_ATTACHED' })
  await assert.rejects(feed.start(), { code: 'ERR_AUTH_SHIELD_NOT_ATTACHED' })
})
