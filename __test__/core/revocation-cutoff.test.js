'use strict'

// "Log out everywhere" at its boundary (docs/revocation.md): every token issued before the call
// to revokeSubject is refused, even one issued in the same second; the token of the next login
// is accepted. Tokens this library signs carry a millisecond iat; the default cut-off is the
// millisecond after the call. Both engines, the real clock, the verified-token cache, and a
// revocation feed on a real redis-server.

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { createClient } = require('redis')
const native = require('../..')
const js = require('../../js')
const { RevocationFeed } = require('../../lib/store/revocations')
const { redisSkip, startRedis } = require('../support/redis-server')
const { token, NOW } = require('../support/tokens')

const ACCESS = 'revocation-cutoff-access-secret-012345'
const REFRESH = 'revocation-cutoff-refresh-secret-01234'
const ENGINES = [
  ['native', native],
  ['js', js],
]

const payloadOf = (t) => JSON.parse(Buffer.from(t.split('.')[1], 'base64url').toString())

for (const [name, engine] of ENGINES) {
  test(`${name}: sign, revokeSubject, authenticate is refused and revokeSubject, sign, authenticate accepted, 1,000 times`, () => {
    for (const cache of [{}, { verifiedTokenCacheMaxEntries: 4096 }]) {
      const auth = new engine.Authenticator({ accessSecret: ACCESS, refreshSecret: REFRESH, rateLimitMax: 0, ...cache })
      let sameSecond = 0
      for (let i = 0; i < 1000; i++) {
        const sub = `user-${i}`
        const earlier = auth.signAccessToken({ sub })
        const earlierRefresh = auth.signRefreshToken({ sub })
        // A live session: verified (and cached) before the call.
        assert.equal(auth.authenticate(`Bearer ${earlier}`).authenticated, true)
        const called = Date.now()
        auth.revokeSubject(sub)
        assert.equal(auth.authenticate(`Bearer ${earlier}`).errorCode, 'token_revoked', `#${i}: a token issued before the call`)
        assert.equal(auth.verifyRefreshToken(earlierRefresh).errorCode, 'token_revoked', `#${i}: a refresh token issued before the call`)
        const later = auth.signAccessToken({ sub })
        const laterRefresh = auth.signRefreshToken({ sub })
        assert.equal(auth.authenticate(`Bearer ${later}`).authenticated, true, `#${i}: the next login`)
        assert.equal(auth.verifyRefreshToken(laterRefresh).valid, true, `#${i}: the next login's refresh token`)
        if (Math.floor(payloadOf(earlier).iat) === Math.floor(called / 1000)) sameSecond++
      }
      // Nearly every pair falls in one second: the boundary was really crossed.
      assert.ok(sameSecond > 900, `${sameSecond} of 1000 in the same second`)
    }
  })

  test(`${name}: signed tokens carry a millisecond iat and a whole-second exp`, () => {
    const auth = new engine.Authenticator({ accessSecret: ACCESS, rateLimitMax: 0, accessTtlSec: 60 })
    const lo = Date.now()
    const p = payloadOf(auth.signAccessToken({ sub: 'u' }))
    const hi = Date.now()
    assert.ok(p.iat * 1000 >= lo && p.iat * 1000 <= hi + 1, `iat ${p.iat} within [${lo}, ${hi}] ms`)
    assert.equal(Math.round(p.iat * 1000) / 1000, p.iat, 'millisecond precision')
    assert.equal(p.exp, Math.floor(p.iat + 60))
    const fixed = new engine.Authenticator({ accessSecret: ACCESS, rateLimitMax: 0, clockTimestamp: NOW + 0.25 })
    assert.equal(payloadOf(fixed.signAccessToken({ sub: 'u' })).iat, NOW + 0.25)
  })

  test(`${name}: an integer iat in the second of the call is refused (fail closed), the next second accepted`, () => {
    const auth = new engine.Authenticator({ accessSecret: ACCESS, clockTimestamp: NOW, rateLimitMax: 0 })
    const at = (iat) => auth.authenticate(`Bearer ${token({ sub: 'u', exp: NOW + 60, iat }, ACCESS)}`)
    auth.revokeSubject('u')
    assert.equal(at(NOW).errorCode, 'token_revoked', 'another issuer, whole seconds, the same second')
    assert.equal(at(NOW + 0.0005).errorCode, 'token_revoked')
    assert.equal(at(NOW + 0.001).authenticated, true, 'the millisecond after the call')
    assert.equal(at(NOW + 0.999).authenticated, true)
    // The next second is in this fixed clock's future (issue 34): not yet valid, revoked or not.
    assert.equal(at(NOW + 1).errorCode, 'token_not_yet_valid')
    // Our own next login, on the same fixed clock: issued at the cut-off.
    const next = auth.signAccessToken({ sub: 'u' })
    assert.equal(payloadOf(next).iat, NOW + 0.001)
    assert.equal(auth.authenticate(`Bearer ${next}`).authenticated, true)
    // An explicit cut-off keeps its meaning: tokens issued before it.
    auth.revokeSubject('v', { issuedBeforeSec: NOW - 10 })
    assert.equal(auth.authenticate(`Bearer ${token({ sub: 'v', exp: NOW + 60, iat: NOW - 10 }, ACCESS)}`).authenticated, true)
    assert.equal(auth.authenticate(`Bearer ${token({ sub: 'v', exp: NOW + 60, iat: NOW - 10.001 }, ACCESS)}`).errorCode, 'token_revoked')
    // A cut-off in the future never moves the signing time.
    auth.revokeSubject('w', { issuedBeforeSec: NOW + 3600 })
    assert.equal(payloadOf(auth.signAccessToken({ sub: 'x' })).iat, NOW + 0.001)
  })
}

test('both engines read fractional iat, exp and nbf alike, at the cut-off and at the expiry', () => {
  assert.equal(NOW, 1_800_000_000, 'the spellings below are written out for this NOW')
  const config = { accessSecret: ACCESS, clockTimestamp: NOW + 0.5, rateLimitMax: 0 }
  const pair = [new native.Authenticator(config), new js.Authenticator(config)]
  for (const auth of pair) auth.revokeSubject('u', { issuedBeforeSec: NOW + 0.123 })
  const payloads = []
  for (const iat of [NOW + 0.122, NOW + 0.122999, NOW + 0.123, NOW + 0.123001, '1800000000.1230', '1.800000000123e9', '18000000001.23e-1']) {
    payloads.push(`{"sub":"u","exp":${NOW + 60},"iat":${iat}}`)
  }
  for (const exp of [NOW + 0.4, NOW + 0.5, NOW + 0.500001, '1.8000000005e9']) payloads.push(`{"sub":"v","exp":${exp},"iat":${NOW}}`)
  for (const nbf of [NOW + 0.5, NOW + 0.500001, NOW + 0.499999]) payloads.push(`{"sub":"v","exp":${NOW + 60},"nbf":${nbf}}`)
  const { rawToken, HS256 } = require('../support/tokens')
  const codes = []
  for (const payload of payloads) {
    const t = rawToken(HS256, payload, ACCESS)
    const [a, b] = pair.map((auth) => auth.authenticate(`Bearer ${t}`).errorCode ?? 'ok')
    assert.equal(b, a, payload)
    codes.push(a)
  }
  assert.deepEqual(codes, [
    'token_revoked',
    'token_revoked',
    'ok',
    'ok',
    'ok',
    'ok',
    'ok',
    'token_expired',
    'token_expired',
    'ok',
    'token_expired',
    'ok',
    'token_not_yet_valid',
    'ok',
  ])
})

describe('the cut-off through a revocation feed', { skip: redisSkip() }, () => {
  let redis
  before(async () => {
    redis = await startRedis()
  })
  after(async () => {
    await redis.stop()
  })

  for (const [name, engine] of ENGINES) {
    test(`${name}: a feed's default cut-off refuses the token signed just before and accepts the one just after, here and in a follower`, async () => {
      const clients = []
      const feeds = []
      const connect = async () => {
        const c = createClient({ url: redis.url })
        c.on('error', () => {})
        await c.connect()
        clients.push(c)
        return c
      }
      try {
        const prefix = `cutoff:${name}`
        const auth = new engine.Authenticator({ accessSecret: ACCESS, rateLimitMax: 0 })
        const follower = new engine.Authenticator({ accessSecret: ACCESS, rateLimitMax: 0 })
        for (const a of [auth, follower]) {
          const feed = new RevocationFeed(await connect(), { prefix }).attach(a)
          feeds.push(feed)
          await feed.start()
        }
        const pairs = []
        for (let i = 0; i < 100; i++) {
          const sub = `user-${i}`
          const earlier = auth.signAccessToken({ sub })
          await auth.revokeSubject(sub)
          const later = auth.signAccessToken({ sub })
          assert.equal(auth.authenticate(`Bearer ${earlier}`).errorCode, 'token_revoked', `#${i}`)
          assert.equal(auth.authenticate(`Bearer ${later}`).authenticated, true, `#${i}`)
          pairs.push([earlier, later])
        }
        // The follower applies the same cut-off, read back from Redis.
        const deadline = Date.now() + 10_000
        while (follower.revocationCount < 100 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10))
        for (const [earlier, later] of pairs) {
          assert.equal(follower.authenticate(`Bearer ${earlier}`).errorCode, 'token_revoked')
          assert.equal(follower.authenticate(`Bearer ${later}`).authenticated, true)
        }
        // And so does a process started afterwards, from the stored set.
        const late = new engine.Authenticator({ accessSecret: ACCESS, rateLimitMax: 0 })
        const feed = new RevocationFeed(await connect(), { prefix }).attach(late)
        feeds.push(feed)
        await feed.start()
        for (const [earlier, later] of pairs) {
          assert.equal(late.authenticate(`Bearer ${earlier}`).errorCode, 'token_revoked')
          assert.equal(late.authenticate(`Bearer ${later}`).authenticated, true)
        }
      } finally {
        for (const feed of feeds) await feed.close()
        for (const c of clients) await c.quit().catch(() => {})
      }
    })
  }
})
