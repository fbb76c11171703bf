'use strict'

// Test support: a connected client of each kind the store accepts (node-redis, ioredis; dev
// dependencies only). Each swallows its 'error' events, as an app must: a dropped connection
// surfaces to the store as rejected or timed-out commands, never as a crash.

const CLIENT_KINDS = ['node-redis', 'ioredis']

async function connectClient(kind, url) {
  if (kind === 'node-redis') {
    const { createClient } = require('redis')
    const client = createClient({ url })
    client.on('error', () => {})
    await client.connect()
    return { client, close: () => client.destroy(), command: (args) => client.sendCommand(args) }
  }
  if (kind === 'ioredis') {
    const Redis = require('ioredis')
    const client = new Redis(url, { lazyConnect: true })
    client.on('error', () => {})
    await client.connect()
    return { client, close: () => client.disconnect(), command: (args) => client.call(...args) }
  }
  throw new Error(`unknown client kind ${kind}`)
}

module.exports = { CLIENT_KINDS, connectClient }
