'use strict'

// Test support: a connected client of each kind the store accepts (node-redis, ioredis; dev
// dependencies only), to one redis-server (a URL), a cluster (`{ cluster: rootNodes }`) or a
// Sentinel-managed master (`{ sentinel: { name, sentinels } }`). Each swallows its 'error'
// events, as an app must: a dropped connection surfaces to the store as rejected or timed-out
// commands, never as a crash. Reconnection attempts every 50 ms.

const CLIENT_KINDS = ['node-redis', 'ioredis']

// Every client major docs/scale-out.md names, as `<kind>@<major>`, and the package that holds
// it (aliased dev dependencies; `redis` and `ioredis` are the current majors). A plain kind is
// its current major.
const CLIENT_MAJORS = {
  'node-redis@4': 'redis4',
  'node-redis@5': 'redis5',
  'node-redis@6': 'redis',
  'ioredis@5': 'ioredis5',
  'ioredis@6': 'ioredis',
}

/** `{ kind, pkg }` of a client name (`node-redis`, `ioredis` or one of CLIENT_MAJORS). */
function clientPackage(name) {
  const kind = name.split('@')[0]
  if (name in CLIENT_MAJORS) return { kind, pkg: CLIENT_MAJORS[name] }
  if (name === 'node-redis') return { kind, pkg: 'redis' }
  if (name === 'ioredis') return { kind, pkg: 'ioredis' }
  throw new Error(`unknown client kind ${name}`)
}

async function connectClient(name, target) {
  const { kind, pkg } = clientPackage(name)
  if (kind === 'node-redis') {
    const redis = require(pkg)
    const socket = { reconnectStrategy: () => 50 }
    let client
    if (typeof target === 'string') client = redis.createClient({ url: target })
    else if (target.cluster) client = redis.createCluster({ rootNodes: target.cluster.map(({ host, port }) => ({ socket: { host, port } })), defaults: { socket } })
    else client = redis.createSentinel({ name: target.sentinel.name, sentinelRootNodes: target.sentinel.sentinels, nodeClientOptions: { socket } })
    client.on('error', () => {})
    await client.connect()
    // v4 has no destroy(): disconnect() is its immediate close.
    return { client, close: () => (typeof client.destroy === 'function' ? client.destroy() : client.disconnect()), command: (args) => (target.cluster ? client.sendCommand(args[1], false, args) : target.sentinel ? client.sendCommand(false, args) : client.sendCommand(args)) }
  }
  if (kind === 'ioredis') {
    const Redis = require(pkg)
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

module.exports = { CLIENT_KINDS, CLIENT_MAJORS, connectClient }
