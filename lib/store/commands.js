'use strict'

// The one thing auth-shield needs of a Redis client: send a command, get the reply. Users hand
// us the client they already run, connected; nothing here depends on either package. Replies
// are RESP2-shaped: strings, numbers, arrays, null. Recognised (docs/scale-out.md, "Topologies"):
//   node-redis (`redis` 4, 5, 6): createClient (single), createCluster (cluster), createSentinel (sentinel)
//   ioredis (5, 6): new Redis (single, or sentinel with the `sentinels` option), new Cluster (cluster)
//
//   const commands = commandClient(client)
//   await commands.send(['SET', 'k', 'v'], 'k')  // the routing key: the command's first key
//   const reader = await commands.duplicate()    // a second connection, for blocking reads

const { typeError, codedError } = require('../../base/error')
const { slotOf } = require('./key-layout')

// Least time between two slot-map refreshes asked by failed commands (cluster clients only).
const REFRESH_MS = 250
// A refresh that has not settled by then no longer holds the next one back (it may be waiting
// on a node that just died).
const REFRESH_GIVE_UP_MS = 2000

/**
 * Whether `err`, thrown or rejected by a client call, says the call itself is wrong for this
 * client (a method missing or with another signature in this major, a bug) rather than that
 * Redis failed: those must reach the app, never be taken for an outage and dropped.
 */
function isApiError(err) {
  return err instanceof TypeError || err instanceof ReferenceError || err instanceof SyntaxError || err instanceof RangeError
}

function clientApiError(kind, what, cause) {
  const message = `the ${kind} cluster client cannot refresh its slot map (${what}): after a failover it keeps sending to the dead master until it refreshes by itself`
  return codedError('ERR_AUTH_SHIELD_STORE_CLIENT', message, cause)
}

/**
 * The `refresh(key)` of a cluster client: `ask(key)` at most every REFRESH_MS, one at a time.
 * Resolves once it settled or was skipped; a Redis failure resolves too (the next failed
 * command asks again); rejects only with an ERR_AUTH_SHIELD_STORE_CLIENT error when the client
 * call itself is wrong (see isApiError), the original in `cause`.
 */
function throttled(kind, ask) {
  let last = -Infinity
  let inFlight = false
  return (key) => {
    const now = Date.now()
    if (now - last < REFRESH_MS || (inFlight && now - last < REFRESH_GIVE_UP_MS)) return Promise.resolve()
    last = now
    inFlight = true
    let asked
    try {
      asked = Promise.resolve(ask(key))
    } catch (err) {
      asked = Promise.reject(err)
    }
    return asked.then(
      () => {
        inFlight = false
      },
      (err) => {
        inFlight = false
        if (err && err.code === 'ERR_AUTH_SHIELD_STORE_CLIENT') throw err
        if (isApiError(err)) throw clientApiError(kind, String(err.message), err)
      },
    )
  }
}

// Keys used only to route a refresh to a chosen master, and their slots, computed once.
const ROUTES = Array.from({ length: 64 }, (_, i) => `{auth-shield-route-${i}}`).map((key) => ({ key, slot: slotOf(key) }))

/**
 * node-redis (every major, 4 to 6): makes the cluster client refresh its slot map from a live
 * master. Its public surface for a refresh differs by major (v4 keeps the slot map private; v5's
 * internal `rediscover(startWith)` requires the node to start from; v6 also refreshes a few
 * seconds into reconnecting), but every major answers a `MOVED` reply by refreshing its map from
 * the node that sent it (the Redis Cluster specification asks clients to). So `key`'s slot is
 * asked of a connected master that the client's map does not hold responsible for it: it
 * answers `MOVED` to the slot's current owner (a promoted replica once the cluster elected one)
 * and the client reloads its map from there. Uses only `slots` (public in every major) and
 * `sendCommand(firstKey, isReadonly, args)`. Without a key: any connected master is asked for
 * a route key, which only confirms the map.
 */
function nodeRedisRefresh(client) {
  return (key) => {
    const slots = client.slots
    if (slots === null || typeof slots !== 'object' || typeof slots.length !== 'number' || slots.length !== 16384) {
      throw clientApiError('node-redis', 'it has no `slots` map of 16384 slots', undefined)
    }
    const failed = key === undefined ? undefined : slots[slotOf(String(key))]
    const failedMaster = failed && failed.master
    for (const route of ROUTES) {
      const master = slots[route.slot] && slots[route.slot].master
      if (!master || master === failedMaster || !master.client || master.client.isReady !== true) continue
      return client.sendCommand(route.key, false, ['EXISTS', key === undefined ? route.key : String(key)])
    }
    return undefined // no other connected master: the next failure asks again
  }
}

/** node-redis: createClient, createCluster or createSentinel. */
function nodeRedis(client, owned) {
  let topology = 'single'
  let send = (args) => client.sendCommand(args.map(String))
  let refresh = () => Promise.resolve()
  if (typeof client.getSlotMaster === 'function' && typeof client.getMasters === 'function') {
    topology = 'cluster'
    // (firstKey, isReadonly, args): routed to the master of the key's slot; no key: any node.
    send = (args, key) => client.sendCommand(key === undefined ? undefined : String(key), false, args.map(String))
    refresh = throttled('node-redis', nodeRedisRefresh(client))
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

/**
 * ioredis (5 and 6): `refreshSlotsCache(callback)` asks the nodes it knows for the slot map; its
 * errors (every node failed) come through the callback only, as a Redis failure.
 */
function ioredisRefresh(client) {
  if (typeof client.refreshSlotsCache !== 'function') throw clientApiError('ioredis', 'it has no refreshSlotsCache()', undefined)
  return new Promise((resolve) => client.refreshSlotsCache(() => resolve()))
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
    refresh: cluster ? throttled('ioredis', () => ioredisRefresh(client)) : () => Promise.resolve(),
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
 * `'sentinel'` or `'cluster'`; `refresh(key)` asks a cluster client for a new slot map after a
 * command for `key` failed (a no-op elsewhere; at most every 250 ms), resolving once done, and
 * rejects only with ERR_AUTH_SHIELD_STORE_CLIENT when the client's own API failed (the caller
 * reports it: an event or `onError`, never dropped); `duplicate()` opens a second connection of the same kind
 * (blocking commands such as XREAD BLOCK need one of their own); `close()` closes a connection
 * this module opened (never the user's own client).
 */
function commandClient(client, owned = false) {
  if (client === null || typeof client !== 'object') {
    throw typeError('store client must be a connected node-redis or ioredis client')
  }
  if (typeof client.sendCommand === 'function' && typeof client.connect === 'function' && !('call' in client)) return nodeRedis(client, owned)
  if (typeof client.call === 'function' && typeof client.duplicate === 'function') return ioredis(client, owned)
  throw typeError('store client must be a connected node-redis (4 to 6) or ioredis (5, 6) client')
}

module.exports = { commandClient }
