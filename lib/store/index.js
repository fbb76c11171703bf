'use strict'

// `require('auth-shield/redis')`: limits shared by every process through Redis (node-redis or
// ioredis, connected by the app), with no I/O on the request path. docs/scale-out.md.
//
//   const { createRedisStore } = require('auth-shield/redis')
//   const store = createRedisStore(redisClient)
//   app.use('/api', authShield({ accessSecret }, { store }))

//   const feed = new RevocationFeed(redisClient)   // revocations shared the same way: docs/revocation.md
//   feed.attach(authenticator); await feed.start()

const { createRedisStore, RedisStore } = require('./redis-store')
const { RevocationFeed } = require('./revocations')
const { createDpopReplayStore, DpopReplayStore } = require('./dpop-replay')

module.exports = { createRedisStore, RedisStore, RevocationFeed, createDpopReplayStore, DpopReplayStore }
