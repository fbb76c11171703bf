'use strict'

// One process of the multi-process shared-limit tests (started by ./topology-run.js): once
// connected it prints `ready` and waits for a line on stdin; then for `durationMs` it
// authenticates one identity as fast as it can through a
// store of its own, awaiting `store.flush()` when its lease is pending, as the middleware does.
// Prints one JSON line: admitted (and while Redis was down), refused, waits, outage and recovery
// events, and the first/last attempt times.

const { createRedisStore } = require('../../lib/store/index')
const { connectClient } = require('./redis-clients')

async function main() {
  const o = JSON.parse(process.argv[2])
  const { Authenticator } = o.engine === 'js' ? require('../../js') : require('../..')
  const conn = await connectClient(o.kind, o.url)
  const store = createRedisStore(conn.client, { prefix: o.prefix, lease: o.lease, ...o.storeOptions })
  const auth = new Authenticator({ accessSecret: o.secret, rateLimitMax: o.max, rateLimitRefillPerSec: o.refill })
  store.attach(auth)
  const counts = { admitted: 0, refused: 0, waits: 0, first: 0, last: 0, admittedWhileDown: 0, outages: 0, recoveries: 0 }
  store.on('outage', () => counts.outages++)
  store.on('recovered', () => counts.recoveries++)
  process.stdout.write('ready\n')
  await new Promise((r) => process.stdin.once('data', r))
  process.stdin.pause()
  counts.first = Date.now()
  const end = counts.first + o.durationMs
  while (Date.now() < end) {
    let r = auth.authenticate(o.authorization)
    if (r.errorCode === 'rate_limit_pending') {
      counts.waits++
      await store.flush()
      r = auth.authenticate(o.authorization)
    }
    if (r.authenticated) {
      counts.admitted++
      if (!store.available) counts.admittedWhileDown++
      counts.last = Date.now()
    } else if (r.errorCode === 'rate_limited') counts.refused++
    else if (r.errorCode !== 'rate_limit_pending') throw new Error(`unexpected ${r.errorCode}`)
    await new Promise((r) => setImmediate(r))
  }
  await store.close()
  await conn.close()
  process.stdout.write(`${JSON.stringify(counts)}\n`)
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
