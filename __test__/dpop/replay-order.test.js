'use strict'

// DPoP's replay protection must never be turned against legitimate users (issue 34 §2), in both
// engines: a replay entry outlives the acceptance window of every process within the skew
// allowance (docs/sender-constrained.md); a request's own lease retry is never a replay; only a
// request every other check admitted takes room in a replay cache; the proof's signature is the
// last and a bounded check; one HMAC key written two ways keeps one replay cache.

const { describe, it, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { generateKeyPairSync, randomBytes } = require('node:crypto')
const jose = require('jose')
const native = require('../..')
const js = require('../../js')
const expressShield = require('../../adapters/express')
const { expressjwt } = require('../../adapters/express')
const { createDpopReplayStore, createRedisStore } = require('../../lib/store/index')
const { LIMITS } = require('../../contract')
const { request } = require('../support/http')
const express = require('express')
const http = require('node:http')
const fetchAdapter = require('../../adapters/fetch')
const { expressServer, fetchServer } = require('../support/adapter-servers')
const { redisSkip, startRedis } = require('../support/redis-server')
const { connectClient } = require('../support/redis-clients')
const { URL, issuer, clientKey, proof, rawProof, proofClaims, ath } = require('../support/dpop')

const ORIGIN = 'https://api.example.com'
const ENGINES = [
  ['native', native.Authenticator],
  ['js', js.Authenticator],
]
const code = (r) => (r.authenticated ? 'ok' : r.errorCode)
const sender = (dpop) => ({ dpop, method: 'GET', url: URL })
const b64 = (value) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')

describe('DPoP replay entries across processes whose clocks differ', { skip: redisSkip() }, () => {
  let redis
  before(async () => (redis = await startRedis()))
  after(() => redis.stop())

  for (const [engine] of ENGINES) {
    it(`a process 100-3000 ms behind the writer refuses the replay at the last moment it accepts the proof (${engine})`, async () => {
      const iss = await issuer()
      const key = await clientKey('ES256')
      const bound = await iss.sign({ cnf: { jkt: key.jkt } })
      const conn = await connectClient('ioredis', redis.url)
      const window = 60
      try {
        for (const behindMs of [100, 999, 1000, 1500, 3000]) {
          const prefix = `skew:${engine}:${behindMs}:`
          // The writer's clock, to the millisecond (the engines' clock seam, clockTimestamp).
          const writerNow = Date.now() / 1000
          const iat = Math.floor(writerNow)
          const p = rawProof(key, { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }, { ...proofClaims(bound), iat })
          const headers = { authorization: `DPoP ${bound}`, dpop: p }
          const app = (clockTimestamp) =>
            expressServer(
              expressShield(
                { keys: iss.keys, dpop: true, rateLimitMax: 0, dpopIatWindowSec: window, clockTimestamp },
                { engine, dpopOrigin: ORIGIN, dpopReplayStore: createDpopReplayStore(conn.client, { prefix }) },
              ),
            )
          const writer = await app(writerNow)
          try {
            assert.equal((await request(`${writer.base}/orders`, { headers })).status, 200)
          } finally {
            await writer.close()
          }
          // The last instant (writer's time) at which a process `behindMs` behind still accepts
          // the proof: it reads whole seconds, so up to the second after iat + window.
          const lastAccepted = iat + window + 1 + behindMs / 1000 - 0.001
          // Redis lives that long: the entry's time to live shrinks by what elapsed.
          const [entry] = await conn.command(['KEYS', `${prefix}dpop:*`])
          const left = Number(await conn.command(['PTTL', entry])) - Math.round((lastAccepted - writerNow) * 1000)
          if (left > 0) await conn.command(['PEXPIRE', entry, String(left)])
          else await conn.command(['DEL', entry])
          // The reader's engine reads that instant on its own clock, whole seconds.
          const reader = await app(Math.floor(lastAccepted - behindMs / 1000))
          try {
            const replay = await request(`${reader.base}/orders`, { headers })
            assert.equal(replay.status, 401, `${behindMs} ms behind: the replay passed`)
            assert.equal(replay.json.code, 'dpop_proof_replayed')
          } finally {
            await reader.close()
          }
        }
      } finally {
        await conn.close()
      }
    })
  }

  it('the skew allowance is the documented one', () => {
    assert.equal(LIMITS.dpopReplaySkewSec, 5)
  })

  for (const [engine] of ENGINES) {
    it(`the first DPoP request of each new identity passes with a shared store; a burst too (${engine})`, async () => {
      const iss = await issuer()
      const conn = await connectClient('ioredis', redis.url)
      const store = createRedisStore(conn.client, { prefix: `first:${engine}:` })
      const app = await expressServer(
        expressShield({ keys: iss.keys, dpop: true, rateLimitMax: 100 }, { engine, store, dpopOrigin: ORIGIN, dpopReplayStore: store.dpopReplay() }),
      )
      try {
        const send = async (sub) => {
          const key = await clientKey('ES256')
          const bound = await iss.sign({ sub, cnf: { jkt: key.jkt } })
          return request(`${app.base}/orders`, { headers: { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: `${ORIGIN}/orders` }) } })
        }
        for (let i = 0; i < 12; i++) {
          const r = await send(`new-${i}`)
          assert.equal(r.status, 200, `identity ${i}: ${JSON.stringify(r.json)}`)
        }
        const burst = await Promise.all(Array.from({ length: 60 }, (_, i) => send(`burst-${i % 20}`)))
        assert.deepEqual(
          burst.filter((r) => r.status !== 200).map((r) => r.json),
          [],
        )
      } finally {
        await app.close()
        await conn.close()
      }
    })

    it(`a request the isRevoked callback refuses takes no room in the shared store (${engine})`, async () => {
      const iss = await issuer()
      const key = await clientKey('ES256')
      const bound = await iss.sign({ cnf: { jkt: key.jkt } })
      const conn = await connectClient('ioredis', redis.url)
      const store = createDpopReplayStore(conn.client, { prefix: `revoked:${engine}:` })
      const app = await expressServer(
        expressShield({ keys: iss.keys, dpop: true, rateLimitMax: 0 }, { engine, dpopOrigin: ORIGIN, dpopReplayStore: store, isRevoked: () => true }),
      )
      try {
        for (let i = 0; i < 3; i++) {
          const r = await request(`${app.base}/orders`, { headers: { authorization: `DPoP ${bound}`, dpop: await proof(key, { token: bound, url: `${ORIGIN}/orders` }) } })
          assert.equal(r.json.code, 'token_revoked')
        }
        assert.equal(store.stats.admitted, 0)
        assert.deepEqual(await conn.command(['KEYS', `revoked:${engine}:*`]), [])
      } finally {
        await app.close()
        await conn.close()
      }
    })
  }
})

describe('only admitted requests take room in the replay cache', () => {
  for (const [name, Authenticator] of ENGINES) {
    it(`${name}: a rate-limited, revoked or tenant-refused identity does not fill the cache for others`, async () => {
      const iss = await issuer()
      const key = await clientKey('ES256')
      const fresh = (token) => rawProof(key, { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }, proofClaims(token))
      const limited = await iss.sign({ sub: 'limited', cnf: { jkt: key.jkt } })
      const revoked = await iss.sign({ sub: 'revoked', cnf: { jkt: key.jkt } })
      const other = await iss.sign({ sub: 'other', cnf: { jkt: key.jkt } })
      const auth = new Authenticator({ keys: iss.keys, dpop: true, rateLimitMax: 1, rateLimitRefillPerSec: 0.001, dpopMaxReplayEntries: 3 })
      auth.revokeSubject('revoked')
      const send = (token) => code(auth.authenticate(`DPoP ${token}`, null, null, sender(fresh(token))))
      assert.equal(send(limited), 'ok')
      for (let i = 0; i < 5; i++) assert.equal(send(limited), 'rate_limited')
      for (let i = 0; i < 5; i++) assert.equal(send(revoked), 'token_revoked')
      assert.equal(auth.dpopReplayEntries, 1)
      assert.equal(send(other), 'ok')
      assert.equal(auth.dpopReplayEntries, 2)
    })

    it(`${name}: an entry lives until iat + window + the skew allowance and the second the clock reads, no longer`, async () => {
      const iss = await issuer()
      const key = await clientKey('ES256')
      const bound = await iss.sign({ cnf: { jkt: key.jkt } })
      const now = Math.floor(Date.now() / 1000)
      const window = 60
      const skew = LIMITS.dpopReplaySkewSec
      const at = (clockTimestamp) => new Authenticator({ keys: iss.keys, dpop: true, rateLimitMax: 0, dpopIatWindowSec: window, clockTimestamp })
      const auth = at(now)
      const p = rawProof(key, { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }, { ...proofClaims(bound), iat: now })
      const r = auth.authenticate(`DPoP ${bound}`, null, null, sender(p))
      assert.equal(r.dpopReplayUntilSec, now + window + 1 + skew)
    })
  }
})

describe('the proof signature is the last DPoP check, and its key is bounded', () => {
  let fixtures
  before(async () => {
    const iss = await issuer()
    const key = await clientKey('ES256')
    const otherKey = await clientKey('ES256')
    const bound = await iss.sign({ cnf: { jkt: key.jkt } })
    fixtures = { iss, key, otherKey, bound }
  })
  const garbageSigned = (jwk, alg, token, bytes) =>
    `${b64({ alg, typ: 'dpop+jwt', jwk })}.${b64({ htm: 'GET', htu: URL, iat: Math.floor(Date.now() / 1000), jti: randomBytes(8).toString('hex'), ath: ath(token) })}.${randomBytes(bytes).toString('base64url')}`
  // A garbage RSA public key of `bytes` bytes and exponent `e`: costly to check, if checked at all.
  const rsaJwk = (bytes, e) => {
    const n = randomBytes(bytes)
    n[0] |= 0x80
    n[n.length - 1] |= 1
    return { kty: 'RSA', n: n.toString('base64url'), e: Buffer.from(e).toString('base64url') }
  }

  for (const [name, Authenticator] of ENGINES) {
    it(`${name}: a forged token with a garbage-signed proof is refused for the token, as the same token sent as Bearer; a heavy proof key is refused unread`, () => {
      const { iss } = fixtures
      const auth = new Authenticator({ keys: iss.keys, dpop: true, rateLimitMax: 0 })
      for (const forged of ['abc.def.ghi', `${b64({ alg: 'ES256' })}.${b64({ sub: 'x' })}.${randomBytes(64).toString('base64url')}`]) {
        const asBearer = code(auth.authenticate(`Bearer ${forged}`, null, null, null))
        const p = garbageSigned(rsaJwk(512, [1, 0, 1]), 'RS256', forged, 512)
        assert.equal(code(auth.authenticate(`DPoP ${forged}`, null, null, sender(p))), asBearer, forged)
        // RSA-8192 with exponent 2^32 - 1: outside the bounds, refused before any other check.
        const heavy = garbageSigned(rsaJwk(1024, [0xff, 0xff, 0xff, 0xff]), 'RS256', forged, 1024)
        assert.equal(code(auth.authenticate(`DPoP ${forged}`, null, null, sender(heavy))), 'invalid_dpop_proof')
      }
    })

    it(`${name}: a proof of another key than cnf.jkt is a key mismatch before its signature is read`, () => {
      const { iss, key, otherKey, bound } = fixtures
      const auth = new Authenticator({ keys: iss.keys, dpop: true, rateLimitMax: 0 })
      assert.equal(code(auth.authenticate(`DPoP ${bound}`, null, null, sender(garbageSigned(otherKey.jwk, 'ES256', bound, 64)))), 'dpop_key_mismatch')
      assert.equal(code(auth.authenticate(`DPoP ${bound}`, null, null, sender(garbageSigned(key.jwk, 'ES256', bound, 64)))), 'invalid_dpop_proof')
    })

    it(`${name}: proof keys are RSA 2048-4096 bits with an exponent of at most 65537`, async () => {
      const { iss } = fixtures
      const auth = new Authenticator({ keys: iss.keys, dpop: true, rateLimitMax: 0 })
      const keyOf = async (modulusLength, publicExponent) => {
        const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength, publicExponent })
        const jwk = publicKey.export({ format: 'jwk' })
        const jkt = await jose.calculateJwkThumbprint(jwk, 'sha256')
        return { jwk, privateKey, jkt }
      }
      const signed = async (k) => {
        const token = await iss.sign({ cnf: { jkt: k.jkt } })
        const p = await new jose.SignJWT(proofClaims(token)).setProtectedHeader({ alg: 'RS256', typ: 'dpop+jwt', jwk: k.jwk }).sign(k.privateKey)
        return code(auth.authenticate(`DPoP ${token}`, null, null, sender(p)))
      }
      assert.equal(await signed(await keyOf(2048, 65537)), 'ok')
      assert.equal(await signed(await keyOf(4096, 3)), 'ok')
      assert.equal(await signed(await keyOf(2048, 0xffffffff)), 'invalid_dpop_proof')
      assert.equal(await signed(await keyOf(2048, 65539)), 'invalid_dpop_proof')
      assert.equal(await signed(await keyOf(4160, 65537)), 'invalid_dpop_proof')
    })
  }
})

describe('a secret getter that spells one HMAC key two ways keeps one replay cache', () => {
  for (const [engine] of ENGINES) {
    it(`a proof used through one spelling is a replay through the other (${engine})`, async () => {
      const secret = randomBytes(32)
      // HMAC pads a key with zero bytes to its block (RFC 2104 §2): both are one key.
      const spellings = [secret, Buffer.concat([secret, Buffer.alloc(1)])]
      let turn = 0
      const key = await clientKey('ES256')
      const token = await new jose.SignJWT({ sub: 'u', cnf: { jkt: key.jkt } })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuedAt()
        .setExpirationTime('10m')
        .sign(secret)
      const app = await expressServer(expressjwt({ secret: () => spellings[turn++ % 2], algorithms: ['HS256'], dpop: true, rateLimitMax: 0 }, { engine, dpopOrigin: ORIGIN }))
      try {
        const headers = { authorization: `DPoP ${token}`, dpop: await proof(key, { token, url: `${ORIGIN}/orders` }) }
        assert.equal((await request(`${app.base}/orders`, { headers })).status, 200)
        const replay = await request(`${app.base}/orders`, { headers })
        assert.equal(replay.status, 401)
      } finally {
        await app.close()
      }
    })
  }
})

// Issue 34 §2: checks after the engine (isRevoked, route requirements) release the proof the
// engine admitted, so refused requests never fill the in-process cache.
describe('a request refused after the engine takes no room in the in-process replay cache', () => {
  const listen = (server) =>
    new Promise((resolve) => {
      server.listen(0, '127.0.0.1', () => resolve({ base: `http://127.0.0.1:${server.address().port}`, close: () => new Promise((done) => server.close(done)) }))
    })
  // Each adapter with `requireScopes('orders:admin')` on GET /orders, behind the middleware.
  const ADAPTERS = [
    [
      'express',
      (config, options) => {
        const app = express()
        app.use(expressShield(config, options))
        app.get('/orders', expressShield.requireScopes('orders:admin'), (req, res) => res.json({ ok: true }))
        return listen(http.createServer(app))
      },
    ],
    [
      'fetch',
      (config, options) => {
        const verifyRequest = fetchAdapter.createVerifier(config, options)
        const admin = fetchAdapter.requireScopes('orders:admin')
        return fetchServer(async (req) => {
          const auth = admin(await verifyRequest(req))
          return auth.ok ? Response.json({ ok: true }) : auth.response
        })
      },
    ],
  ]

  for (const [engine] of ENGINES) {
    for (const [adapter, start] of ADAPTERS) {
      it(`isRevoked and requireScopes refusals leave a full-size cache for the next proof; an admitted proof stays a replay (${adapter}, ${engine})`, async () => {
        const iss = await issuer()
        const key = await clientKey('ES256')
        const token = (sub, scope) => iss.sign({ sub, scope, cnf: { jkt: key.jkt } })
        const revoked = await token('revoked', 'orders:admin')
        const reader = await token('reader', 'orders:read')
        const admin = await token('admin', 'orders:admin')
        const app = await start(
          { keys: iss.keys, dpop: true, rateLimitMax: 0, dpopMaxReplayEntries: 2 },
          { engine, dpopOrigin: ORIGIN, isRevoked: (req, claims) => claims.sub === 'revoked' },
        )
        try {
          const send = async (bound, p) => request(`${app.base}/orders`, { headers: { authorization: `DPoP ${bound}`, dpop: p ?? (await proof(key, { token: bound, url: `${ORIGIN}/orders` })) } })
          for (let i = 0; i < 3; i++) {
            const r = await send(revoked)
            assert.equal(r.status, 401)
            assert.equal(r.json.code, 'token_revoked')
          }
          for (let i = 0; i < 3; i++) {
            const r = await send(reader)
            assert.equal(r.status, 403)
            assert.equal(r.json.code, 'insufficient_scope')
          }
          // Before the fix: 503 dpop_replay_cache_full, the two entries held by refused requests.
          const admitted = await proof(key, { token: admin, url: `${ORIGIN}/orders` })
          const ok = await send(admin, admitted)
          assert.equal(ok.status, 200, JSON.stringify(ok.json))
          const replay = await send(admin, admitted)
          assert.equal(replay.status, 401)
          assert.equal(replay.json.code, 'dpop_proof_replayed')
          // A refused request's proof replayed meets the same refusal.
          const refusedProof = await proof(key, { token: reader, url: `${ORIGIN}/orders` })
          assert.equal((await send(reader, refusedProof)).status, 403)
          assert.equal((await send(reader, refusedProof)).status, 403)
        } finally {
          await app.close()
        }
      })
    }

    for (const getter of [false, true]) {
      it(`expressjwt's isRevoked refusals leave the caches free (${getter ? 'a secret getter' : 'a secret'}, ${engine})`, async () => {
        const secret = randomBytes(32)
        const key = await clientKey('ES256')
        const signed = (sub) =>
          new jose.SignJWT({ sub, cnf: { jkt: key.jkt } }).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setExpirationTime('10m').sign(secret)
        const revoked = await signed('revoked')
        const good = await signed('good')
        const app = await expressServer(
          expressjwt(
            { secret: getter ? () => secret : secret, algorithms: ['HS256'], dpop: true, rateLimitMax: 0, dpopMaxReplayEntries: 2, isRevoked: (req, t) => t.payload.sub === 'revoked' },
            { engine, dpopOrigin: ORIGIN },
          ),
        )
        try {
          const send = async (t, p) => request(`${app.base}/orders`, { headers: { authorization: `DPoP ${t}`, dpop: p ?? (await proof(key, { token: t, url: `${ORIGIN}/orders` })) } })
          // express-jwt's errors go to the app's error handler (its code: revoked_token).
          for (let i = 0; i < 3; i++) assert.equal((await send(revoked)).json.thrown, 'revoked_token')
          const admitted = await proof(key, { token: good, url: `${ORIGIN}/orders` })
          const ok = await send(good, admitted)
          assert.equal(ok.status, 200, JSON.stringify(ok.json))
          assert.equal((await send(good, admitted)).status, 401)
        } finally {
          await app.close()
        }
      })
    }
  }

  it('in shadow mode the shadow engine releases the proof too (no mismatch once refused requests filled its cache)', async () => {
    const iss = await issuer()
    const key = await clientKey('ES256')
    const revoked = await iss.sign({ sub: 'revoked', cnf: { jkt: key.jkt } })
    const good = await iss.sign({ sub: 'good', cnf: { jkt: key.jkt } })
    const mismatches = []
    const app = await expressServer(
      expressShield(
        { keys: iss.keys, dpop: true, rateLimitMax: 0, dpopMaxReplayEntries: 2 },
        { shadow: true, onMismatch: (m) => mismatches.push(m.fields), dpopOrigin: ORIGIN, isRevoked: (req, claims) => claims.sub === 'revoked' },
      ),
    )
    try {
      const send = async (t) => request(`${app.base}/orders`, { headers: { authorization: `DPoP ${t}`, dpop: await proof(key, { token: t, url: `${ORIGIN}/orders` }) } })
      for (let i = 0; i < 3; i++) assert.equal((await send(revoked)).json.code, 'token_revoked')
      assert.equal((await send(good)).status, 200)
      assert.deepEqual(mismatches, [])
    } finally {
      await app.close()
    }
  })

  it('releaseDpopProof forgets one key only, in both engines, and refuses anything but a replay key alike', async () => {
    const iss = await issuer()
    const key = await clientKey('ES256')
    const bound = await iss.sign({ cnf: { jkt: key.jkt } })
    const messages = new Set()
    for (const [name, Authenticator] of ENGINES) {
      const auth = new Authenticator({ keys: iss.keys, dpop: true, rateLimitMax: 0, dpopMaxReplayEntries: 4 })
      const [a, b] = [await proof(key, { token: bound }), await proof(key, { token: bound })]
      const ra = auth.authenticate(`DPoP ${bound}`, null, null, sender(a))
      const rb = auth.authenticate(`DPoP ${bound}`, null, null, sender(b))
      assert.match(ra.dpopReplayKey, /^[0-9a-f]{64}$/, name)
      assert.equal(auth.dpopReplayEntries, 2)
      assert.equal(auth.releaseDpopProof(ra.dpopReplayKey), true, name)
      assert.equal(auth.releaseDpopProof(ra.dpopReplayKey), false, name)
      assert.equal(auth.dpopReplayEntries, 1)
      assert.equal(code(auth.authenticate(`DPoP ${bound}`, null, null, sender(b))), 'dpop_proof_replayed', name)
      assert.equal(code(auth.authenticate(`DPoP ${bound}`, null, null, sender(a))), 'ok', name)
      assert.equal(new Authenticator({ keys: iss.keys, rateLimitMax: 0 }).releaseDpopProof(ra.dpopReplayKey), false, name)
      for (const bad of [undefined, null, 42, {}, Buffer.alloc(32), '', 'a'.repeat(63), 'a'.repeat(65), 'A'.repeat(64), 'g'.repeat(64), rb.dpopReplayKey + ' ']) {
        assert.throws(
          () => auth.releaseDpopProof(bad),
          (err) => {
            assert.ok(err instanceof TypeError, `${name} ${String(bad)}`)
            assert.equal(err.code, 'ERR_INVALID_ARG_TYPE')
            messages.add(err.message)
            return true
          },
        )
      }
      assert.equal(auth.dpopReplayEntries, 2)
    }
    assert.deepEqual([...messages], ["replayKey must be a string of 64 lowercase hex digits (an AuthResult's dpopReplayKey)"])
  })
})
