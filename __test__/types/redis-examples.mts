// The Redis examples of docs/scale-out.md and docs/revocation.md, as written there (keep them in
// step), with node-redis and ioredis: they must compile under strict and
// exactOptionalPropertyTypes with no cast (issue 22 §4). Type-checked only, never run.
import express from 'express'
import { createClient } from 'redis'
import { Redis } from 'ioredis'
import { Authenticator } from 'auth-shield'
import * as jsEngine from 'auth-shield/js'
import { createRedisStore, RevocationFeed } from 'auth-shield/redis'
import authShield from 'auth-shield/express'

const app = express()
const handler = (_req: express.Request, res: express.Response) => void res.end()

// docs/scale-out.md
const accessSecret = process.env.JWT_SECRET
if (!accessSecret) throw new Error('JWT_SECRET is not set')
const client = createClient({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' })
client.on('error', () => {}) // it reconnects on its own; an unhandled 'error' event crashes Node
await client.connect()
const store = createRedisStore(client)

app.use('/api', authShield({ accessSecret }, { store }))

const authenticator = new Authenticator({ accessSecret, store })
let result = authenticator.authenticate('Bearer x')
if (result.errorCode === store.pendingCode) {
  await store.flush()
  result = authenticator.authenticate('Bearer x')
}

const loginAuth = new Authenticator({ accessSecret, rateLimitMax: 5, rateLimitRefillPerSec: 5 / 900 })
store.attach(loginAuth, { strict: true, name: 'login' })
app.post('/step-up', authShield(loginAuth, { store }), handler)

const account = 'ada'
const { allowed, retryAfterMs } = await store.consume(`login:${account}`, 1, { capacity: 10, refillPerSec: 10 / 900 })
if (!allowed) console.log(retryAfterMs)

// The same with ioredis.
const ioredis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')
ioredis.on('error', () => {})
const ioStore = createRedisStore(ioredis, { prefix: 'app:' })
app.use('/v2', authShield({ accessSecret }, { store: ioStore }))

// docs/revocation.md, either engine.
const feed = new RevocationFeed(client, { onStale: 'open' }).attach(authenticator)
await feed.start()
const jsAuthenticator = new jsEngine.Authenticator({ accessSecret })
new RevocationFeed(ioredis).attach(jsAuthenticator)

// Logging out the token just verified: `jti` and `expiresAtSec` straight from the result.
const v = authenticator.verifyAccessToken('token')
if (v.valid) {
  await authenticator.revokeToken(v.jti, v.expiresAtSec)
  authenticator.revokeSubject(v.userId ?? '')
}
const r = jsAuthenticator.verifyRefreshToken('token')
if (r.valid) await jsAuthenticator.revokeToken(r.jti, r.expiresAtSec)
await feed.revokeToken(v.jti, v.expiresAtSec)
