'use strict'
// The benchmark harness must stay honest: equal work on every side, failures never timed,
// ratios taken per round. These tests pin that behaviour (never timings).

const test = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const native = require('../..')
const { createFixtures } = require('../../bench/lib/fixtures')
const { createChain } = require('../../bench/lib/chain')
const { createSyncVerifiers, codeOf } = require('../../bench/lib/verifiers')
const { sanityCheck } = require('../../bench/lib/sanity')
const { measureInterleaved } = require('../../bench/lib/measure')
const { median, pairedRatio } = require('../../bench/lib/stats')
const { renderChart } = require('../../bench/lib/svg')
const { createServer } = require('../../bench/http/apps')

const fx = createFixtures(native)

function fastJwtChain() {
  return createChain({
    verify: createSyncVerifiers(fx).fastJwt,
    codeOf,
    rateLimitMax: fx.config.rateLimitMax,
    rateLimitRefillPerSec: fx.config.rateLimitRefillPerSec,
  })
}

test('paired ratios are taken round by round before the median', () => {
  // Round 1: 2 vs 1, round 2: 8 vs 8 → ratios 2 and 1; a ratio of medians would say 8/4.5.
  const r = pairedRatio([2, 8], [1, 8])
  assert.equal(r.median, 1.5)
  assert.equal(r.min, 1)
  assert.equal(r.max, 2)
  assert.equal(median([3, 1, 2]), 2)
})

test('the JS chain returns the same result shape and outcome as the native call', () => {
  const chain = fastJwtChain()
  const authenticator = new native.Authenticator(fx.config)
  const cases = [
    fx.authorization,
    undefined,
    'Basic abc',
    `Bearer ${fx.rejects.tampered}`,
    `Bearer ${fx.rejects.expired}`,
    `Bearer ${fx.rejects.refreshType}`,
  ]
  for (const authorization of cases) {
    const ours = authenticator.authenticate(authorization, fx.tenantHeader, fx.host)
    const theirs = chain(authorization, fx.tenantHeader, fx.host)
    assert.deepEqual(Object.keys(theirs), Object.keys(ours), String(authorization))
    assert.equal(theirs.authenticated, ours.authenticated, String(authorization))
    assert.equal(theirs.userId, ours.userId)
    assert.equal(theirs.tenantId, ours.tenantId)
    assert.equal(theirs.errorStatus, ours.errorStatus)
  }
})

test('every verifier accepts the valid token and rejects each probe', async () => {
  const contenders = Object.entries(createSyncVerifiers(fx)).map(([id, verify]) => ({
    label: id,
    call: verify,
    accept: (payload) => payload.sub === fx.expected.userId,
  }))
  await sanityCheck(contenders, fx.token, fx.rejects)
})

test('the keys section gives every contender row for RS256, PS256, ES256 and EdDSA, each sane before it is timed', async () => {
  const { runKeys, KEY_ALGS } = require('../../bench/sections/keys')
  const { loadJsEngine } = require('../../bench/lib/ours')
  // One tiny round: the section's wiring and sanity checks, not its numbers.
  const sections = await runKeys({ native, jsEngine: loadJsEngine() }, fx, { rounds: 1, sampleMs: 1, warmupMs: 0 })
  assert.deepEqual(KEY_ALGS, ['RS256', 'PS256', 'ES256', 'EdDSA'])
  assert.deepEqual(
    sections.map((s) => s.alg),
    KEY_ALGS,
  )
  for (const { alg, authenticate, verify } of sections) {
    assert.deepEqual(
      authenticate.rows.map((r) => r.id),
      ['native-uncached', 'native-cached', 'chain-fast-jwt', 'chain-jose', 'js-engine', 'native-hs256'],
      alg,
    )
    assert.deepEqual(
      verify.rows.map((r) => r.id),
      ['native-verify', 'native-verify-cached', 'fast-jwt', 'fast-jwt-cached', 'jose'],
      alg,
    )
    assert.ok(['chain-fast-jwt', 'chain-jose'].includes(authenticate.fastestJs))
    for (const ratio of [authenticate.fastestJsVsUncached, authenticate.cachedVsHs256]) assert.ok(Number.isFinite(ratio.median) && ratio.median > 0)
    for (const row of [...authenticate.rows, ...verify.rows]) assert.ok(Number.isFinite(row.nsPerOp.median) && row.nsPerOp.median > 0, `${alg} ${row.id}`)
  }
})

test('the sanity check refuses a contender that accepts a tampered token', async () => {
  const lax = { label: 'lax', call: () => ({ ok: true }), accept: (r) => r.ok === true }
  await assert.rejects(sanityCheck([lax], 'valid', { tampered: 'bad' }), /lax accepts the tampered input/)
})

test('timing aborts when a contender drifts onto its failure path', async () => {
  let calls = 0
  const drifting = { id: 'd', label: 'drifting', run: () => ++calls < 5, accept: (ok) => ok === true }
  await assert.rejects(
    measureInterleaved('test', [drifting], { rounds: 10, sampleMs: 1, warmupMs: 0 }),
    /drifting returned a rejection while being timed/,
  )
})

test('the chart escapes labels and draws one bar per contender', () => {
  const row = (id, label, ns) => ({ id, label, nsPerOp: { median: ns, min: ns, max: ns * 1.1 } })
  const svg = renderChart({
    env: { date: '2026-01-01T00:00:00Z', node: 'v20', cpu: 'cpu', cores: 2, mode: 'quick', authShield: { build: 'release' } },
    sections: { perCall: { title: 'Per call', rows: [row('native-authenticate', 'ours', 1500), row('x', 'a <b> & "c"', 9000)] } },
  })
  assert.match(svg, /^<svg [^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/)
  assert.ok(svg.includes('a &lt;b&gt; &amp; &quot;c&quot;'))
  assert.equal(svg.match(/<rect x=/g).length, 2)
})

function request(port, authorization) {
  return new Promise((resolve, reject) => {
    const headers = { authorization, 'x-tenant-id': fx.tenantHeader }
    http
      .get({ host: '127.0.0.1', port, path: '/', headers, agent: false }, (res) => {
        let body = ''
        res.on('data', (chunk) => (body += chunk))
        res.on('end', () => resolve({ status: res.statusCode, body }))
      })
      .on('error', reject)
  })
}

for (const [framework, auth] of [
  ['node', 'auth-shield'],
  ['express', 'auth-shield'],
  ['express', 'passport-jwt-keyobject'],
  ['express', 'express-jwt-string'],
]) {
  test(`the ${framework} + ${auth} bench server admits the valid token and refuses a tampered one`, async () => {
    const server = createServer({ framework, auth }, fx)
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const { port } = server.address()
      const ok = await request(port, fx.authorization)
      assert.equal(ok.status, 200)
      assert.equal(JSON.parse(ok.body).user, fx.expected.userId)
      const bad = await request(port, `Bearer ${fx.rejects.tampered}`)
      assert.equal(bad.status, 401)
    } finally {
      server.close()
    }
  })
}
