'use strict'

// DPoP (RFC 9449 §4.3) in both engines: real proofs from the dpop package and jose, real
// DPoP-bound tokens (cnf.jkt) signed by jose; every check, every attack, the same code from both.

const { test, describe } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { URL, issuer, clientKey, proof, craftedProof, rawProof, proofClaims, symmetricProof } = require('../support/dpop')

const ENGINES = [
  ['native', native.Authenticator],
  ['js', js.Authenticator],
]

let setup
async function fixtures() {
  if (setup === undefined) {
    setup = (async () => {
      const iss = await issuer()
      const key = await clientKey('ES256')
      const other = await clientKey('ES256')
      const bound = await iss.sign({ cnf: { jkt: key.jkt } })
      const unbound = await iss.sign({})
      return { iss, key, other, bound, unbound }
    })()
  }
  return setup
}

const config = (iss, extra = {}) => ({ keys: iss.keys, rateLimitMax: 0, dpop: true, ...extra })
const sender = (dpop, extra = {}) => ({ dpop, method: 'GET', url: `${URL}?page=2#top`, ...extra })
const code = (r) => (r.authenticated ? 'ok' : r.errorCode)

for (const [name, Authenticator] of ENGINES) {
  test(`${name}: a fresh proof from the bound key passes once; its replay is refused`, async () => {
    const { iss, key, bound } = await fixtures()
    const auth = new Authenticator(config(iss))
    const p = await proof(key, { token: bound })
    const first = auth.authenticate(`DPoP ${bound}`, null, null, sender(p))
    assert.equal(code(first), 'ok')
    assert.equal(first.userId, 'user-1')
    assert.equal(code(auth.authenticate(`DPoP ${bound}`, null, null, sender(p))), 'dpop_proof_replayed')
    assert.equal(auth.dpopReplayEntries, 1)
  })

  test(`${name}: twenty requests with one proof: exactly one passes`, async () => {
    const { iss, key, bound } = await fixtures()
    const auth = new Authenticator(config(iss))
    const p = await proof(key, { token: bound })
    const codes = Array.from({ length: 20 }, () => code(auth.authenticate(`dpop   ${bound}`, null, null, sender(p))))
    assert.equal(codes.filter((c) => c === 'ok').length, 1)
    assert.equal(codes.filter((c) => c === 'dpop_proof_replayed').length, 19)
  })

  test(`${name}: RS256, PS256 and Ed25519 proofs of the dpop package pass`, async () => {
    const { iss } = await fixtures()
    const auth = new Authenticator(config(iss))
    for (const alg of ['RS256', 'PS256', 'Ed25519']) {
      const key = await clientKey(alg)
      const token = await iss.sign({ cnf: { jkt: key.jkt } })
      const r = auth.authenticate(`DPoP ${token}`, null, null, sender(await proof(key, { token })))
      assert.equal(code(r), 'ok', alg)
    }
  })

  test(`${name}: htu is compared without query and fragment, scheme, host and default port normalised`, async () => {
    const { iss, key, bound } = await fixtures()
    const auth = new Authenticator(config(iss))
    const p = await proof(key, { token: bound, url: 'HTTPS://API.example.com:443/orders' })
    assert.equal(code(auth.authenticate(`DPoP ${bound}`, null, null, sender(p))), 'ok')
  })

  test(`${name}: htu edge cases: empty path, IPv6, ports; trailing slash, dot segments, percent-encodings and userinfo never match`, async () => {
    const { iss, key, bound } = await fixtures()
    const auth = new Authenticator(config(iss))
    const PAIRS = [
      // [the proof's htu, the request URL, expected]
      ['https://api.example.com', 'https://api.example.com/', 'ok'],
      ['https://api.example.com/orders#f', 'https://api.example.com/orders?page=2', 'ok'],
      ['http://[::1]:3000/orders', 'http://[::1]:3000/orders?x=1', 'ok'],
      ['http://API.example.com:80/orders', 'http://api.example.com/orders', 'ok'],
      ['https://api.example.com/orders', 'https://api.example.com/orders/', 'dpop_proof_mismatch'],
      ['https://api.example.com/a/../orders', 'https://api.example.com/orders', 'dpop_proof_mismatch'],
      ['https://api.example.com/%6Frders', 'https://api.example.com/orders', 'dpop_proof_mismatch'],
      ['https://api.example.com/Orders', 'https://api.example.com/orders', 'dpop_proof_mismatch'],
      ['https://api.example.com:8443/orders', 'https://api.example.com/orders', 'dpop_proof_mismatch'],
      ['http://[::1]/orders', 'http://[::1]:3000/orders', 'dpop_proof_mismatch'],
      ['https://u@api.example.com/orders', 'https://u@api.example.com/orders', 'dpop_proof_mismatch'],
      ['/orders', '/orders', 'dpop_proof_mismatch'],
    ]
    for (const [htu, url, expected] of PAIRS) {
      const p = await craftedProof(key, { token: bound, payload: { htu } })
      assert.equal(code(auth.authenticate(`DPoP ${bound}`, null, null, { dpop: p, method: 'GET', url })), expected, `${htu} vs ${url}`)
    }
  })

  test(`${name}: a proof for another method, URL or token is refused`, async () => {
    const { iss, key, bound, unbound } = await fixtures()
    const auth = new Authenticator(config(iss))
    const cases = [
      [{ token: bound, method: 'POST' }, {}],
      [{ token: bound, url: 'https://api.example.com/orders/1' }, {}],
      [{ token: bound, url: 'https://evil.example.com/orders' }, {}],
      [{ token: bound, url: 'http://api.example.com/orders' }, {}],
      [{ token: bound }, { method: 'get' }],
      [{ token: bound }, { url: undefined }],
      [{ token: bound }, { method: undefined }],
      [{ token: unbound }, {}],
    ]
    for (const [opts, extra] of cases) {
      const r = auth.authenticate(`DPoP ${bound}`, null, null, sender(await proof(key, opts), extra))
      assert.equal(code(r), 'dpop_proof_mismatch', JSON.stringify([opts.method, opts.url, extra]))
    }
    assert.equal(auth.dpopReplayEntries, 0)
  })

  test(`${name}: iat older than the window, or further ahead than the 5 s skew allowance, is stale; at each edge it passes`, async () => {
    const { iss, key, bound } = await fixtures()
    const now = Math.floor(Date.now() / 1000)
    const auth = new Authenticator(config(iss, { clockTimestamp: now, dpopIatWindowSec: 30 }))
    const at = async (iat) => code(auth.authenticate(`DPoP ${bound}`, null, null, sender(await craftedProof(key, { token: bound, payload: { iat } }))))
    assert.equal(await at(now - 31), 'dpop_proof_stale')
    // A proof dated a window ahead would hold its replay entry for twice the window (issue 34).
    assert.equal(await at(now + 30), 'dpop_proof_stale')
    assert.equal(await at(now + 5.001), 'dpop_proof_stale')
    assert.equal(await at(now - 30), 'ok')
    assert.equal(await at(now + 5), 'ok')
    // A window shorter than the allowance bounds the future too.
    const short = new Authenticator(config(iss, { clockTimestamp: now, dpopIatWindowSec: 2 }))
    const shortAt = async (iat) => code(short.authenticate(`DPoP ${bound}`, null, null, sender(await craftedProof(key, { token: bound, payload: { iat } }))))
    assert.equal(await shortAt(now + 3), 'dpop_proof_stale')
    assert.equal(await shortAt(now + 2), 'ok')
  })

  test(`${name}: missing, malformed, unsigned, symmetric, private-key and oversized proofs are refused`, async () => {
    const { iss, key, bound } = await fixtures()
    const auth = new Authenticator(config(iss))
    const run = (p) => code(auth.authenticate(`DPoP ${bound}`, null, null, sender(p)))
    assert.equal(run(undefined), 'missing_dpop_proof')
    assert.equal(run(''), 'missing_dpop_proof')
    assert.equal(code(auth.authenticate(`DPoP ${bound}`)), 'missing_dpop_proof')
    const good = await proof(key, { token: bound })
    const invalid = [
      'not-a-jwt',
      `${good}, ${await proof(key, { token: bound })}`,
      `${good}.x`,
      good.slice(0, -4) + (good.endsWith('AAAA') ? 'BBBB' : 'AAAA'),
      symmetricProof(key, 'none', bound),
      symmetricProof(key, 'HS256', bound),
      await craftedProof(key, { token: bound, header: { typ: 'JWT' } }),
      await craftedProof(key, { token: bound, header: { typ: undefined } }),
      await craftedProof(key, { token: bound, header: { jwk: key.privateJwk } }),
      await craftedProof(key, { token: bound, header: { jwk: { ...key.jwk, k: 'AAAA' } } }),
      await craftedProof(key, { token: bound, header: { jwk: undefined } }),
      rawProof(key, { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk, crit: ['exp'], exp: 1 }, proofClaims(bound)),
      rawProof(key, { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk, alg2: 1, typ2: 2 }, { ...proofClaims(bound), jti: 1 }),
      rawProof(key, { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }, { ...proofClaims(bound), iat: null }),
      rawProof(key, `{"alg":"ES256","typ":"dpop+jwt","typ":"dpop+jwt","jwk":${JSON.stringify(key.jwk)}}`, proofClaims(bound)),
      rawProof(key, { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }, `${JSON.stringify(proofClaims(bound)).slice(0, -1)},"jti":"again"}`),
      rawProof(key, { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }, `${JSON.stringify(proofClaims(bound)).slice(0, -1)},"iat":1e400}`),
      await craftedProof(key, { token: bound, payload: { jti: undefined } }),
      await craftedProof(key, { token: bound, payload: { jti: '' } }),
      await craftedProof(key, { token: bound, payload: { jti: 'j'.repeat(257) } }),
      await craftedProof(key, { token: bound, payload: { iat: String(Math.floor(Date.now() / 1000)) } }),
      await craftedProof(key, { token: bound, payload: { ath: undefined } }),
      await craftedProof(key, { token: bound, payload: { htm: ['GET'] } }),
      await craftedProof(key, { token: bound, payload: { pad: 'x'.repeat(9000) } }),
    ]
    invalid.forEach((p, i) => assert.equal(run(p), 'invalid_dpop_proof', `case ${i}`))
    // A proof key that is another key than the jwk says: signature refused.
    const other = await clientKey('ES256')
    const forged = await craftedProof({ ...other, jwk: key.jwk }, { token: bound })
    assert.equal(run(forged), 'invalid_dpop_proof')
    assert.equal(auth.dpopReplayEntries, 0)
  })

  test(`${name}: the token must be bound to the proof key; a bound token is never a Bearer token`, async () => {
    const { iss, key, other, bound, unbound } = await fixtures()
    const auth = new Authenticator(config(iss))
    assert.equal(code(auth.authenticate(`DPoP ${bound}`, null, null, sender(await proof(other, { token: bound })))), 'dpop_key_mismatch')
    assert.equal(code(auth.authenticate(`DPoP ${unbound}`, null, null, sender(await proof(key, { token: unbound })))), 'dpop_key_mismatch')
    assert.equal(code(auth.authenticate(`Bearer ${bound}`)), 'dpop_bound_token_as_bearer')
    assert.equal(code(auth.authenticate(`Bearer ${bound}`, null, null, sender(await proof(key, { token: bound })))), 'dpop_bound_token_as_bearer')
    assert.equal(code(auth.authenticate(`Bearer ${unbound}`)), 'ok')
    const oddCnf = await iss.sign({ cnf: { jkt: 5 } })
    assert.equal(code(auth.authenticate(`Bearer ${oddCnf}`)), 'dpop_bound_token_as_bearer')
    const twoCnf = (await iss.sign({ cnf: { jkt: key.jkt } }))
    assert.equal(code(auth.authenticate(`DPoP ${twoCnf}`, null, null, sender(await proof(key, { token: twoCnf })))), 'ok')
  })

  test(`${name}: without dpop the scheme is unknown and bound tokens are still refused as Bearer`, async () => {
    const { iss, key, bound, unbound } = await fixtures()
    const auth = new Authenticator({ keys: iss.keys, rateLimitMax: 0 })
    const p = await proof(key, { token: bound })
    assert.equal(code(auth.authenticate(`DPoP ${bound}`, null, null, sender(p))), 'invalid_authorization_format')
    assert.equal(code(auth.authenticate(`Bearer ${bound}`)), 'dpop_bound_token_as_bearer')
    assert.equal(code(auth.authenticate(`Bearer ${unbound}`, null, null, 'ignored when dpop is off')), 'ok')
    assert.equal(auth.dpopReplayEntries, 0)
  })

  test(`${name}: a flood of unique proofs stops at dpopMaxReplayEntries and forgets none`, async () => {
    const { iss, key, bound } = await fixtures()
    const auth = new Authenticator(config(iss, { dpopMaxReplayEntries: 5 }))
    const proofs = await Promise.all(Array.from({ length: 8 }, () => proof(key, { token: bound })))
    const codes = proofs.map((p) => code(auth.authenticate(`DPoP ${bound}`, null, null, sender(p))))
    assert.deepEqual(codes, ['ok', 'ok', 'ok', 'ok', 'ok', 'dpop_replay_cache_full', 'dpop_replay_cache_full', 'dpop_replay_cache_full'])
    assert.equal(auth.dpopReplayEntries, 5)
    assert.equal(code(auth.authenticate(`DPoP ${bound}`, null, null, sender(proofs[0]))), 'dpop_proof_replayed')
  })

  // At a configured bound (100; the same code at every size): a flood ten times its size.
  test(`${name}: a flood of unique jtis ten times dpopMaxReplayEntries holds the bound; no live entry is forgotten, so none is re-admitted`, async () => {
    const { iss, key, bound } = await fixtures()
    const now = Math.floor(Date.now() / 1000)
    const max = 100
    const auth = new Authenticator(config(iss, { clockTimestamp: now, dpopMaxReplayEntries: max }))
    const at = (i) => rawProof(key, { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }, { ...proofClaims(bound), iat: now, jti: `flood-${i}` })
    const run = (p) => code(auth.authenticate(`DPoP ${bound}`, null, null, sender(p)))
    const admitted = Array.from({ length: max }, (_, i) => at(i))
    for (const p of admitted) assert.equal(run(p), 'ok')
    const counts = {}
    for (let i = max; i < 10 * max; i++) {
      const c = run(at(i))
      counts[c] = (counts[c] ?? 0) + 1
    }
    assert.deepEqual(counts, { dpop_replay_cache_full: 9 * max })
    assert.equal(auth.dpopReplayEntries, max)
    // Every admitted proof is still a replay after the flood: nothing was dropped to make room.
    for (const p of admitted) assert.equal(run(p), 'dpop_proof_replayed')
  })

  test(`${name}: with dpopNonceSecret a proof needs the current or the previous slot's nonce`, async () => {
    const { iss, key, bound } = await fixtures()
    const now = Math.floor(Date.now() / 1000)
    const nonceConfig = (t) => config(iss, { clockTimestamp: t, dpopIatWindowSec: 3600, dpopNonceSecret: 'nonce-secret-0123456789abcdef0123', dpopNonceLifetimeSec: 60 })
    const auth = new Authenticator(nonceConfig(now))
    const nonce = auth.dpopNonce()
    assert.match(nonce, /^[A-Za-z0-9_-]{43}$/)
    // Every process with the secret agrees, whichever engine.
    assert.equal(new native.Authenticator(nonceConfig(now)).dpopNonce(), nonce)
    assert.equal(new js.Authenticator(nonceConfig(now)).dpopNonce(), nonce)
    const withNonce = (n) => craftedProof(key, { token: bound, payload: { nonce: n, iat: now } })
    const run = async (p) => code(auth.authenticate(`DPoP ${bound}`, null, null, sender(await p)))
    assert.equal(await run(proof(key, { token: bound })), 'use_dpop_nonce')
    assert.equal(await run(withNonce(nonce)), 'ok')
    assert.equal(await run(withNonce(new Authenticator(nonceConfig(now - 60)).dpopNonce())), 'ok')
    assert.equal(await run(withNonce(new Authenticator(nonceConfig(now - 120)).dpopNonce())), 'use_dpop_nonce')
    assert.equal(await run(withNonce(new Authenticator({ ...nonceConfig(now), dpopNonceSecret: 'another-secret-0123456789abcdef012' }).dpopNonce())), 'use_dpop_nonce')
    assert.equal(await run(withNonce(7)), 'use_dpop_nonce')
    assert.equal(new Authenticator(config(iss)).dpopNonce(), undefined)
    // The dpop package's own nonce argument.
    const { generateProof } = require('dpop')
    const fresh = new Authenticator({ ...nonceConfig(now), clockTimestamp: undefined })
    const p = await generateProof(key.keyPair, URL, 'GET', fresh.dpopNonce(), bound)
    assert.equal(code(fresh.authenticate(`DPoP ${bound}`, null, null, sender(p))), 'ok')
  })

  test(`${name}: signAccessToken binds a token to a DPoP key with cnf.jkt; it passes only with that key's proof`, async () => {
    const { key, other } = await fixtures()
    const auth = new Authenticator({ accessSecret: 'issuing-secret-0123456789abcdef0123', dpop: true, rateLimitMax: 0 })
    const token = auth.signAccessToken({ sub: 'user-9', cnf: { jkt: key.jkt } })
    const r = auth.authenticate(`DPoP ${token}`, null, null, sender(await proof(key, { token })))
    assert.equal(code(r), 'ok')
    assert.equal(r.userId, 'user-9')
    assert.equal(code(auth.authenticate(`DPoP ${token}`, null, null, sender(await proof(other, { token })))), 'dpop_key_mismatch')
    assert.equal(code(auth.authenticate(`Bearer ${token}`)), 'dpop_bound_token_as_bearer')
  })

  test(`${name}: a sender of the wrong type is a TypeError; wrong field types too`, async () => {
    const { iss, bound } = await fixtures()
    const auth = new Authenticator(config(iss))
    assert.throws(() => auth.authenticate(`DPoP ${bound}`, null, null, 'x'), { name: 'TypeError' })
    assert.throws(() => auth.authenticate(`DPoP ${bound}`, null, null, { dpop: 5 }), { name: 'TypeError' })
    assert.throws(() => auth.authenticate(`DPoP ${bound}`, null, null, { dpop: 'a', url: ['x'] }), { name: 'TypeError' })
    assert.equal(code(auth.authenticate(`DPoP ${bound}`, null, null, null)), 'missing_dpop_proof')
    assert.equal(code(auth.authenticate(`DPoP ${bound}`, null, null, [])), 'missing_dpop_proof')
  })
}

test('JS engine: a replay whose request straddles a second boundary is still a replay (one clock read per request, as native)', async () => {
  // The native chain reads its clock once per call (src/authenticator.rs run_chain, one
  // monotonic reading); the JS engine reads Date.now, moved here to tick mid-request.
  const iss = await issuer()
  const key = await clientKey('ES256')
  const bound = await iss.sign({ cnf: { jkt: key.jkt } })
  const realNow = Date.now
  try {
    // The proof's window (iat + 2 s) ends at T: a request that reads T first and T + 1 later
    // must not let the cache drop the entry it is checking.
    const T = Math.floor(realNow() / 1000) + 10
    const auth = new js.Authenticator({ keys: iss.keys, rateLimitMax: 0, dpop: true, dpopIatWindowSec: 2, dpopMaxReplayEntries: 5 })
    const p = rawProof(key, { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }, { ...proofClaims(bound), iat: T - 2 })
    const send = () => auth.authenticate(`DPoP ${bound}`, null, null, { dpop: p, method: 'GET', url: URL })
    Date.now = () => (T - 2) * 1000
    assert.equal(send().authenticated, true)
    let reads = 0
    Date.now = () => (reads++ === 0 ? T * 1000 + 999 : (T + 1) * 1000)
    const replay = send()
    assert.equal(replay.errorCode, 'dpop_proof_replayed')
    assert.ok(reads >= 1)
  } finally {
    Date.now = realNow
  }
})

// Each engine's replay cache waits out its window on its own: the two wait side by side.
describe('a full replay cache in both engines', { concurrency: true }, () => {
  for (const [name, Authenticator] of ENGINES) {
    test(`${name}: a full replay cache makes room only once its entries' window has passed`, async () => {
      const { iss, key, bound } = await fixtures()
      const window = 2
      const auth = new Authenticator(config(iss, { dpopIatWindowSec: window, dpopMaxReplayEntries: 5 }))
      const fresh = () => rawProof(key, { alg: 'ES256', typ: 'dpop+jwt', jwk: key.jwk }, proofClaims(bound))
      const run = (p) => code(auth.authenticate(`DPoP ${bound}`, null, null, sender(p)))
      const first = Array.from({ length: 5 }, fresh)
      for (const p of first) assert.equal(run(p), 'ok')
      // Polled every 100 ms, at most 15 s: full until the window of every entry has passed.
      let passed = false
      for (let i = 0; i < 150 && !passed; i++) {
        for (const p of first) assert.ok(['dpop_proof_replayed', 'dpop_proof_stale'].includes(run(p)))
        const c = run(fresh())
        passed = c === 'ok'
        if (!passed) {
          assert.equal(c, 'dpop_replay_cache_full')
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
        assert.ok(auth.dpopReplayEntries <= 5)
      }
      assert.equal(passed, true, 'the cache never made room')
      // Room was made by expiry only: the entries' windows (iat + window) had passed.
      const oldestIat = Math.min(...first.map((p) => JSON.parse(Buffer.from(p.split('.')[1], 'base64url')).iat))
      assert.ok(Date.now() / 1000 > oldestIat + window)
    })
  }
})
