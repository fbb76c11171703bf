'use strict'

// Test support: a connected client of each kind the store accepts (node-redis, ioredis; dev
// dependencies only), to one redis-server (a URL), a cluster (`{ cluster: rootNodes }`) or a
// Sentinel-managed master (`{ sentinel: { name, sentinels } }`). Each swallows its 'error'
// events, as an app must: a dropped connection surfaces to the store as rejected or timed-out
// commands, never as a crash. Reconnection attempts every 50 ms.

const CLIENT_KINDS = ['node-redis', 'ioredis']

async function connectClient(kind, target) {
  if (kind === 'node-redis') {
    const redis = require('redis')
    const socket = { reconnectStrategy: () => 50 }
    let client
    if (typeof target === 'string') client = redis.createClient({ url: target })
    else if (target.cluster) client = redis.createCluster({ rootNodes: target.cluster.map(({ host, port }) => ({ socket: { host, port } })), defaults: { socket } })
    else client = redis.createSentinel({ name: target.sentinel.name, sentinelRootNodes: target.sentinel.sentinels, nodeClientOptions: { socket } })
    client.on('error', () => {})
    await client.connect()
    return { client, close: () => client.destroy(), command: (args) => (target.cluster ? client.sendCommand(args[1], false, args) : target.sentinel ? client.sendCommand(false, args) : client.sendCommand(args)) }
  }
  if (kind === 'ioredis') {
    const Redis = require('ioredis')
    let client
    if (typeof target === 'string') client = new Redis(target, { lazyConnect: true })
    else if (target.cluster) client = new Redis.Cluster(target.cluster, { lazyConnect: true, redisOptions: { retryStrategy: () => 50 } })
    else client = new Redis({ sentinels: target.sentinel.sentinels, name: target.sentinel.name, lazyConnect: true, retryStrategy: () => 50 })
    client.on('error', () => {})
    await client.connect()
    return { client, close: () => client.disconnect(), command: (args) => client.call(...args) }
  }
  throw new Error(`unknown client kind ${kind}`)
}

module.exports = { CLIENT_KINDS, connectClient }
