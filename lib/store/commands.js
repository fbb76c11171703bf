'use strict'

// The one thing auth-shield needs of a Redis client: send a command, get the reply. Users hand
// us the client they already run, connected; nothing here depends on either package. Replies
// are RESP2-shaped: strings, numbers, arrays, null. Recognised (docs/scale-out.md, "Topologies"):
//   node-redis (`redis` v4+): createClient (single), createCluster (cluster), createSentinel (sentinel)
//   ioredis: new Redis (single, or sentinel with the `sentinels` option), new Cluster (cluster)
//
//   const commands = commandClient(client)
//   await commands.send(['SET', 'k', 'v'], 'k')  // the routing key: the command's first key
//   const reader = await commands.duplicate()    // a second connection, for blocking reads

const { typeError } = require('../../js/error')

// Least time between two slot-map refreshes asked by failed commands (cluster clients only).
const REFRESH_MS = 250

/**
 * A slot-map refresh for `refresh()` of a cluster client: `rediscover()` at most every
 * REFRESH_MS, errors swallowed. node-redis' cluster client refreshes its map on a MOVED reply
 * and (v6) a few seconds into reconnecting to a node; until then it keeps queueing commands
 * for a dead master, well after its replica was promoted. A failed command asks for one now.
 */
function throttled(rediscover) {
  let last = 0
  return () => {
    const now = Date.now()
    if (now - last < REFRESH_MS) return
    last = now
    try {
      Promise.resolve(rediscover()).catch(() => {})
    } catch {
      // a refresh is a hint: the next failure asks again
    }
  }
}

/** node-redis: createClient, createCluster or createSentinel. */
function nodeRedis(client, owned) {
  let topology = 'single'
  let send = (args) => client.sendCommand(args.map(String))
  let refresh = () => {}
  if (typeof client.getSlotMaster === 'function' && typeof client.getMasters === 'function') {
    topology = 'cluster'
    // (firstKey, isReadonly, args): routed to the master of the key's slot; no key: any node.
    send = (args, key) => client.sendCommand(key === undefined ? undefined : String(key), false, args.map(String))
    const slots = client._slots
    if (slots && typeof slots.rediscover === 'function') refresh = throttled(() => slots.rediscover())
  } else if (typeof client.getMasterNode === 'function' && typeof client.acquire === 'function') {
    topology = 'sentinel'
    send = (args) => client.sendCommand(false, args.map(String))
  }
  return {
    kind: 'node-redis',
    topology,
    send,
    refresh,
    duplicate: async () => {
      const copy = client.duplicate()
      copy.on('error', () => {}) // reconnects on its own; failures surface as rejected commands
      await copy.connect()
      return commandClient(copy, true)
    },
    close: async () => {
      if (owned) await (typeof client.destroy === 'function' ? client.destroy() : client.disconnect())
    },
    client,
  }
}

/** ioredis: new Redis (with or without `sentinels`) or new Cluster. */
function ioredis(client, owned) {
  const cluster = client.isCluster === true
  const sentinel = !cluster && Array.isArray(client.options && client.options.sentinels) && client.options.sentinels.length > 0
  return {
    kind: 'ioredis',
    topology: cluster ? 'cluster' : sentinel ? 'sentinel' : 'single',
    // ioredis routes by the keys it finds in the command itself.
    send: (args) => client.call(String(args[0]), ...args.slice(1).map(String)),
    refresh: cluster && typeof client.refreshSlotsCache === 'function' ? throttled(() => client.refreshSlotsCache()) : () => {},
    duplicate: async () => {
      const copy = client.duplicate()
      copy.on('error', () => {})
      return commandClient(copy, true)
    },
    close: async () => {
      if (owned) client.disconnect()
    },
    client,
  }
}

/**
 * Wraps a connected node-redis or ioredis client. Returns
 * `{ kind, topology, send(args, key), refresh(), duplicate(), close() }`: `send` takes the
 * command and its arguments as strings (or Buffers) and the key that routes it on a cluster (its
 * first key; absent: any node), and resolves to the reply; `topology` is `'single'`,
 * `'sentinel'` or `'cluster'`; `refresh()` asks a cluster client for a new slot map after a
 * failed command (a no-op elsewhere); `duplicate()` opens a second connection of the same kind
 * (blocking commands such as XREAD BLOCK need one of their own); `close()` closes a connection
 * this module opened (never the user's own client).
 */
function commandClient(client, owned = false) {
  if (client === null || typeof client !== 'object') {
    throw typeError('store client must be a connected node-redis or ioredis client')
  }
  if (typeof client.sendCommand === 'function' && typeof client.connect === 'function' && !('call' in client)) return nodeRedis(client, owned)
  if (typeof client.call === 'function' && typeof client.duplicate === 'function') return ioredis(client, owned)
  throw typeError('store client must be a connected node-redis (v4+) or ioredis client')
}

module.exports = { commandClient }
