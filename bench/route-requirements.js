'use strict'

// Per-route requirements (issue 25, target: a scope check ≤ 0.2 µs): the cost of
// `requireScopes(...)` / `requireAnyScope(...)` / `requireClaims(...)` on a request the
// adapter decision already passed, for an Auth0-shaped token (`scope` and `permissions`). The
// scope checks search the engine's `AuthResult.scope` (no JSON parse, no split in JS);
// `requireClaims` reads the payload the decision keeps per token (lib/http/verified-claims.js).
// Then what `AuthResult.scope` costs the engine itself: `authenticate` of that token against
// the same token with its scope claims renamed (same size, same parse, no list to build), for
// the native engine and the JS one, interleaved in the same run.
//
//   node bench/route-requirements.js [--n=200000]

const { performance } = require('node:perf_hooks')
const js = require('../js')
const native = require('..')
const { AuthDecision } = require('../lib/http/decision')
const { requireScopes, requireAnyScope, requireClaims } = require('../lib/http/route-requirements')
const { token } = require('../__test__/support/tokens')

const N = Number((process.argv.find((a) => a.startsWith('--n=')) || '--n=200000').slice(4))
const ROUNDS = 7
const SECRET = 'bench-route-requirements-secret-0123456789'

function main() {
  const now = Math.floor(Date.now() / 1000)
  const claims = {
    iss: 'https://dev-orders.us.auth0.com/',
    sub: 'auth0|64f1c2a7e1b2c3d4e5f60718',
    aud: ['https://orders.example.com/', 'https://dev-orders.us.auth0.com/userinfo'],
    iat: now,
    exp: now + 3600,
    azp: 'Xq9wE1vYkP3tR7uZ',
    scope: 'openid profile email read:orders',
    permissions: ['read:orders', 'write:orders', 'read:invoices', 'write:invoices'],
    'https://orders.example.com/roles': ['admin', 'support'],
  }
  const authorization = `Bearer ${token(claims, SECRET)}`
  const decision = new AuthDecision(new js.Authenticator({ accessSecret: SECRET, rateLimitMax: 0 }))
  const pass = decision.decide({ method: 'GET', headers: { authorization } }, '/orders')
  if (pass.action !== 'pass') throw new Error(`the token did not pass: ${JSON.stringify(pass.result)}`)
  // Each request brings its own string of the same header value (as a server reads it from the
  // socket): the per-token table compares contents, not identities.
  const copies = Array.from({ length: 64 }, () => Buffer.from(authorization).toString('latin1'))
  let i = 0
  const fresh = () => {
    pass.authorization = copies[i++ & 63]
    pass.kept = undefined
  }
  const all = requireScopes('read:orders', 'write:orders')
  const any = requireAnyScope('admin:all', 'write:orders')
  const roles = requireClaims({ 'https://orders.example.com/roles': 'admin', azp: 'Xq9wE1vYkP3tR7uZ' })
  const cases = [
    // Searches AuthResult.scope (8 granted): the same on every request.
    ['requireScopes (2 scopes)', () => all.refusal(pass)],
    ['requireAnyScope (2 scopes)', () => any.refusal(pass)],
    ['requireClaims (2 claims), first check of a request', () => {
      fresh()
      return roles.refusal(pass)
    }],
  ]
  const rows = []
  for (const [label, fn] of cases) {
    if (fn() !== null) throw new Error(`${label}: refused`)
    let best = Infinity
    for (let r = 0; r < ROUNDS; r++) {
      let refused = 0
      const start = performance.now()
      for (let i = 0; i < N; i++) if (fn() !== null) refused++
      const ns = ((performance.now() - start) * 1e6) / N
      if (refused !== 0) throw new Error(`${label}: refused ${refused} times`)
      best = Math.min(best, ns)
    }
    rows.push({ label, nsPerOp: Math.round(best * 10) / 10 })
  }
  console.log(`node ${process.version}, ${N} calls per round, best of ${ROUNDS} rounds`)
  for (const { label, nsPerOp } of rows) console.log(`${label.padEnd(56)} ${String(nsPerOp).padStart(7)} ns`)
  scopesInTheResult(claims)
}

/**
 * `authenticate` of the scoped token (AuthResult.scope of 8 entries) and of the same token
 * with `scope` / `permissions` renamed (`scope` undefined): rounds interleaved, medians.
 */
function scopesInTheResult(claims) {
  const { scope, permissions, ...rest } = claims
  const scoped = `Bearer ${token(claims, SECRET)}`
  const plain = `Bearer ${token({ ...rest, scopx: scope, permissionx: permissions }, SECRET)}`
  if (scoped.length !== plain.length) throw new Error('the two tokens differ in size')
  const calls = Math.max(1000, Math.floor(N / 4))
  console.log(`\nauthenticate, ${calls} calls per round, median of ${ROUNDS * 3} interleaved rounds`)
  for (const [name, engine] of [['native', native], ['js', js]]) {
    const auth = new engine.Authenticator({ accessSecret: SECRET, rateLimitMax: 0 })
    if (auth.authenticate(scoped).scope.split(' ').length !== 8 || auth.authenticate(plain).scope !== undefined) throw new Error(`${name}: unexpected scope`)
    const times = { scoped: [], plain: [] }
    for (let r = 0; r < ROUNDS * 3; r++) {
      for (const [label, authorization] of r % 2 ? [['plain', plain], ['scoped', scoped]] : [['scoped', scoped], ['plain', plain]]) {
        const start = performance.now()
        for (let k = 0; k < calls; k++) auth.authenticate(authorization)
        times[label].push(((performance.now() - start) * 1e6) / calls)
      }
    }
    const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1]
    const [p, q] = [median(times.plain), median(times.scoped)]
    console.log(`${name.padEnd(7)} no scope claims ${p.toFixed(0)} ns, 8 scopes ${q.toFixed(0)} ns: +${(q - p).toFixed(0)} ns (${((q / p - 1) * 100).toFixed(1)} %)`)
  }
}

main()
