'use strict'

// Test support: a Redis Cluster (3 masters + 3 replicas) and a Sentinel setup (1 master,
// 1 replica, 3 sentinels) of our own on free loopback ports, built from ./redis-server.js and
// redis-cli. Every process is stopped by `stop()`, which the suites call in `after` (and which
// the starters call themselves when the setup fails half-way).
//
//   const cluster = await startCluster()   // { nodes, rootNodes, cli, masterOf(key), kill…, stop() }
//   const sentinel = await startSentinel() // { master, replica, sentinels, failover(), stop() }

const { execFile, spawnSync } = require('node:child_process')
const { startRedis, redisSkip } = require('./redis-server')

const CLI = process.env.REDIS_CLI || 'redis-cli'
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The `skip` value for a Cluster or Sentinel suite: redis-server's (./redis-server.js), or one
 * line when redis-cli is missing; under AUTH_SHIELD_REQUIRE_REDIS=1 a missing binary throws.
 */
function topologySkip() {
  const skip = redisSkip()
  if (skip) return skip
  if (spawnSync(CLI, ['--version']).status === 0) return false
  const hint = 'redis-cli not found: install it (Debian/Ubuntu: apt-get install redis-tools) or set REDIS_CLI'
  if (process.env.AUTH_SHIELD_REQUIRE_REDIS === '1') throw new Error(`${hint} (AUTH_SHIELD_REQUIRE_REDIS=1)`)
  return hint
}

/** `redis-cli -p <port> <args…>`: its standard output, trimmed. */
function cli(port, ...args) {
  return new Promise((resolve, reject) => {
    execFile(CLI, ['-h', '127.0.0.1', '-p', String(port), ...args.map(String)], { timeout: 20_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`redis-cli -p ${port} ${args.join(' ')}: ${err.message} ${stderr}`))
      else resolve(stdout.trim())
    })
  })
}

/** Polls `check()` every 50 ms until it returns a truthy value; rejects after `ms`. */
async function until(check, ms, what) {
  const deadline = Date.now() + ms
  for (;;) {
    let value
    try {
      value = await check()
    } catch {
      value = undefined
    }
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`)
    await sleep(50)
  }
}

async function stopAll(servers) {
  await Promise.all(servers.map((s) => s.stop().catch(() => {})))
}

/** `CLUSTER NODES` of `port`, parsed: [{ id, port, master, failed, slots: [[lo, hi]] }]. */
async function clusterNodes(port) {
  const out = await cli(port, 'CLUSTER', 'NODES')
  return out.split('\n').filter(Boolean).map((line) => {
    const [id, addr, flags, , , , , link, ...ranges] = line.split(' ')
    return {
      id,
      port: Number(addr.split(':')[1].split('@')[0]),
      master: flags.includes('master'),
      failed: flags.includes('fail') || link !== 'connected',
      slots: ranges.filter((r) => !r.startsWith('[')).map((r) => r.split('-').map(Number)).map(([lo, hi]) => [lo, hi ?? lo]),
    }
  })
}

/**
 * Starts `masters` × (1 + `replicas`) cluster nodes and joins them with `redis-cli --cluster
 * create`; resolves once every node sees every slot served and every replica in sync.
 */
async function startCluster({ masters = 3, replicas = 1, nodeTimeoutMs = 1000 } = {}) {
  const count = masters * (1 + replicas)
  const nodes = []
  try {
    // No diskless-sync delay (5 s by default): a replica's first full sync starts at once.
    const args = ['--cluster-enabled', 'yes', '--cluster-config-file', 'nodes.conf', '--cluster-node-timeout', String(nodeTimeoutMs), '--repl-diskless-sync-delay', '0']
    nodes.push(...(await Promise.all(Array.from({ length: count }, () => startRedis({ args })))))
    await cli(nodes[0].port, '--cluster', 'create', ...nodes.map((n) => `127.0.0.1:${n.port}`), '--cluster-replicas', replicas, '--cluster-yes')
    const cluster = clusterHandle(nodes)
    await cluster.settled(30_000)
    return cluster
  } catch (err) {
    await stopAll(nodes)
    throw err
  }
}

function clusterHandle(nodes) {
  const alive = () => nodes.filter((n) => !n.dead)
  const handle = {
    nodes,
    // The live nodes only: node-redis' cluster client, given a dead root node first and a
    // reconnection strategy that never gives up, retries it forever instead of the next one.
    get rootNodes() {
      return alive().map((n) => ({ host: '127.0.0.1', port: n.port }))
    },
    cli,
    /** The hash slot of `key`. */
    slotOf: async (key) => Number(await cli(nodes[0].port, 'CLUSTER', 'KEYSLOT', key)),
    /** The port of the master that serves `slot`, as a live node sees it. */
    async masterOf(slot) {
      const view = await clusterNodes(alive()[0].port)
      const owner = view.find((n) => n.master && !n.failed && n.slots.some(([lo, hi]) => slot >= lo && slot <= hi))
      return owner && owner.port
    },
    /** Resolves once every live node reports cluster_state:ok and every live replica's link is up. */
    async settled(ms) {
      await until(async () => {
        for (const n of alive()) {
          if (!(await cli(n.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false
          const info = await cli(n.port, 'INFO', 'replication')
          if (info.includes('role:slave') && !info.includes('master_link_status:up')) return false
        }
        return true
      }, ms, 'the cluster to settle')
    },
    /** SIGKILLs the master serving `slot`; resolves to its port once another node serves the slot. */
    async killMasterOf(slot, ms = 30_000) {
      const port = await handle.masterOf(slot)
      const node = nodes.find((n) => n.port === port)
      node.dead = true
      await node.kill()
      await until(async () => {
        const owner = await handle.masterOf(slot)
        return owner !== undefined && owner !== port && (await cli(owner, 'CLUSTER', 'INFO')).includes('cluster_state:ok')
      }, ms, `a replica to take over slot ${slot}`)
      return port
    },
    /**
     * Moves `slot` to another master (CLUSTER SETSLOT IMPORTING/MIGRATING, MIGRATE key by key,
     * SETSLOT NODE everywhere), as `redis-cli --cluster reshard` does. Resolves to the new port.
     */
    async migrateSlot(slot) {
      const view = await clusterNodes(alive()[0].port)
      const from = view.find((n) => n.master && !n.failed && n.slots.some(([lo, hi]) => slot >= lo && slot <= hi))
      const to = view.find((n) => n.master && !n.failed && n.port !== from.port && n.slots.length > 0)
      await cli(to.port, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', from.id)
      await cli(from.port, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', to.id)
      for (let round = 0; round < 1000; round++) {
        const keys = (await cli(from.port, 'CLUSTER', 'GETKEYSINSLOT', slot, 100)).split('\n').filter(Boolean)
        if (keys.length === 0) break
        await cli(from.port, 'MIGRATE', '127.0.0.1', to.port, '', 0, 5000, 'REPLACE', 'KEYS', ...keys)
      }
      await cli(to.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', to.id)
      await cli(from.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', to.id)
      for (const n of view) if (n.master && !n.failed && n.port !== to.port && n.port !== from.port) await cli(n.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', to.id)
      return to.port
    },
    stop: () => stopAll(nodes),
  }
  return handle
}

/**
 * Starts a master, a replica of it and 3 sentinels watching `mymaster` (quorum 2, down after
 * 1 s); resolves once the sentinels know the replica and each other.
 */
async function startSentinel({ name = 'mymaster' } = {}) {
  const servers = []
  try {
    // No diskless-sync delay (5 s by default) on either: the first sync, and the one after the
    // failover (the old master becomes a replica of the new one), start at once.
    const noDelay = ['--repl-diskless-sync-delay', '0']
    const master = await startRedis({ args: noDelay })
    servers.push(master)
    const replica = await startRedis({ args: [...noDelay, '--replicaof', '127.0.0.1', String(master.port)] })
    servers.push(replica)
    const conf = [
      `sentinel monitor ${name} 127.0.0.1 ${master.port} 2`,
      `sentinel down-after-milliseconds ${name} 1000`,
      `sentinel failover-timeout ${name} 5000`,
      `sentinel parallel-syncs ${name} 1`,
      '',
    ].join('\n')
    const sentinels = await Promise.all([0, 1, 2].map(() => startRedis({ sentinelConf: conf })))
    servers.push(...sentinels)
    const masterPort = async () => Number((await cli(sentinels[0].port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)).split('\n')[1])
    await until(async () => {
      for (const s of sentinels) {
        const replicas = await cli(s.port, 'SENTINEL', 'REPLICAS', name)
        const others = await cli(s.port, 'SENTINEL', 'SENTINELS', name)
        if (!replicas.includes(String(replica.port)) || others.split('\n').filter((l) => l === 'name').length < 2) return false
      }
      return (await cli(replica.port, 'INFO', 'replication')).includes('master_link_status:up')
    }, 30_000, 'the sentinels to know the replica and each other')
    return {
      name,
      master,
      replica,
      sentinels,
      sentinelNodes: sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })),
      cli,
      masterPort,
      /** SENTINEL FAILOVER; resolves to the new master's port once the sentinels name it and it accepts writes. */
      async failover(ms = 30_000) {
        const before = await masterPort()
        await until(async () => (await cli(sentinels[0].port, 'SENTINEL', 'FAILOVER', name)) === 'OK', ms, 'SENTINEL FAILOVER to be accepted')
        const after = await until(async () => {
          const port = await masterPort()
          return port !== before && (await cli(port, 'INFO', 'replication')).includes('role:master') && port
        }, ms, 'the sentinels to promote the replica')
        return after
      },
      stop: () => stopAll(servers),
    }
  } catch (err) {
    await stopAll(servers)
    throw err
  }
}

module.exports = { startCluster, startSentinel, topologySkip, cli, until }
