'use strict'

// The adapters' decision and `authenticate` of two checkouts of auth-shield, loaded side by side
// in one process and measured in interleaved rounds (the order alternates each round): the
// same-process A/B asked for a change on the request path (issue 35). Time is this process's CPU
// time (user + system), so a busy machine's preemptions count against neither side; the ratio
// is taken per round, and `authenticate` (the same native code on both sides when only JS
// changed) is the A/A control of the noise.
//
//   node bench/adapter-ab.js <before checkout> [<after checkout>, default this one]
//   ROUNDS=41 ONLY=decide node bench/adapter-ab.js ../main

const path = require('node:path')
const jose = require('jose')
const { startJwksServer } = require('../__test__/support/jwks-server')
const { token } = require('../__test__/support/tokens')
const SECRET = 'bench-secret-0123456789abcdefghijklmnop'
const NOW = Math.floor(Date.now() / 1000)
const ISS = 'https://idp.bench/'

function load(root) {
  return {
    root,
    express: require(path.join(root, 'adapters/express')),
    koa: require(path.join(root, 'adapters/koa')),
    fetch: require(path.join(root, 'adapters/fetch')),
    native: require(root),
    jwks: require(path.join(root, 'lib/jwks/index')),
  }
}

async function main() {
  const [beforeRoot, afterRoot = path.join(__dirname, '..')] = process.argv.slice(2)
  if (beforeRoot === undefined) throw new Error('usage: node bench/adapter-ab.js <before checkout> [<after checkout>]')
  const trees = { before: load(path.resolve(beforeRoot)), after: load(path.resolve(afterRoot)) }
  const server = await startJwksServer()
  const { publicKey, privateKey } = await jose.generateKeyPair('ES256', { extractable: true })
  server.serve({ keys: [{ ...(await jose.exportJWK(publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] })
  const es = await new jose.SignJWT({}).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setSubject('u1').setIssuer(ISS).setIssuedAt().setExpirationTime('1h').sign(privateKey)
  const hs = `Bearer ${token({ sub: 'u1', exp: NOW + 3600 }, SECRET)}`
  const config = { accessSecret: SECRET, rateLimitMax: 0 }
  const cases = {}
  for (const [name, t] of Object.entries(trees)) {
    const auth = new t.native.Authenticator(config)
    const mw = t.express(config)
    const koa = t.koa(config)
    const verify = t.fetch.createVerifier(config)
    const source = t.jwks.createRemoteJwks(server.url)
    await source.ready()
    const mwJwks = t.express({ issuer: ISS }, { jwks: source })
    const mwJs = t.express(config, { engine: 'js' })
    const mwJwksJs = t.express({ issuer: ISS }, { jwks: source, engine: 'js' })
    const req = { method: 'GET', url: '/x', headers: { authorization: hs, host: 'api.example.com' } }
    const reqJwks = { method: 'GET', url: '/x', headers: { authorization: `Bearer ${es}`, host: 'api.example.com' } }
    const res = { setHeader() {}, end() {} }
    const next = (e) => { if (e) throw e }
    const request = new Request('https://api.example.com/x', { headers: { authorization: hs } })
    cases[name] = {
      authenticate: () => auth.authenticate(hs, undefined, 'api.example.com'),
      'decision.decide': () => mw.decision.decide({ method: 'GET', url: '/x', headers: req.headers }),
      'express middleware': () => mw({ method: 'GET', url: '/x', headers: req.headers }, res, next),
      'koa middleware': () => koa({ method: 'GET', path: '/x', url: '/x', originalUrl: '/x', headers: req.headers, req: { headers: req.headers, method: 'GET', url: '/x' }, state: {}, set() {}, request: { headers: req.headers } }, async () => {}),
      'decide, remote JWKS (ES256)': () => mwJwks.decision.decide({ method: 'GET', url: '/x', headers: reqJwks.headers }),
      'fetch verifyRequest (async)': () => verify(request),
      'decision.decide, JS engine': () => mwJs.decision.decide({ method: 'GET', url: '/x', headers: req.headers }),
      'decide, remote JWKS (ES256), JS engine': () => mwJwksJs.decision.decide({ method: 'GET', url: '/x', headers: reqJwks.headers }),
    }
    cases[name].close = () => source.close()
  }
  const names = Object.keys(cases.before).filter((n) => n !== 'close' && (!process.env.ONLY || n.includes(process.env.ONLY)))
  const ROUNDS = Number(process.env.ROUNDS || 15)
  const samples = {}
  for (const n of names) samples[n] = { before: [], after: [] }
  for (let r = 0; r < ROUNDS; r++) {
    for (const n of names) {
      const order = r % 2 === 0 ? ['before', 'after'] : ['after', 'before']
      for (const side of order) {
        const fn = cases[side][n]
        const async_ = n.includes('async') || n.includes('koa')
        const iters = async_ ? 5000 : 20000
        // CPU time of this process (user + system), not wall time: on a loaded machine the
        // scheduler's preemptions are not counted against either side.
        const c0 = process.cpuUsage()
        if (async_) for (let i = 0; i < iters; i++) await fn()
        else for (let i = 0; i < iters; i++) fn()
        const c = process.cpuUsage(c0)
        samples[n][side].push(((c.user + c.system) * 1e3) / iters)
      }
    }
  }
  const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)] }
  console.log(`node ${process.version}; ${ROUNDS} rounds (the first 2 dropped); before ${trees.before.root}, after ${trees.after.root}; CPU ns per call`)
  console.log(`| case | before median ns | after median ns | median of per-round after/before | 10th-90th percentile of the ratios |`)
  console.log(`|---|---|---|---|---|`)
  for (const n of names) {
    const B = samples[n].before.slice(2), A = samples[n].after.slice(2)
    const ratios = A.map((a, i) => a / B[i]).sort((x, y) => x - y)
    console.log(`| ${n} | ${med(B).toFixed(0)} | ${med(A).toFixed(0)} | ${med(ratios).toFixed(3)} | ${ratios[Math.floor(ratios.length * 0.1)].toFixed(2)}-${ratios[Math.floor(ratios.length * 0.9)].toFixed(2)} |`)
  }
  cases.before.close(); cases.after.close(); await server.close()
}
main().catch((e) => { console.error(e); process.exit(1) })
