'use strict'

// The one thing auth-shield needs of a Redis client: send a command, get the reply. Users hand
// us the client they already run (node-redis `redis` v4+ or `ioredis`), connected; nothing here
// depends on either package. Replies are RESP2-shaped: strings, numbers, arrays, null.
//
//   const commands = commandClient(client)
//   await commands.send(['SET', 'k', 'v'])
//   const reader = await commands.duplicate()   // a second connection, for blocking reads

const { typeError } = require('../../js/error')

/**
 * Wraps a connected node-redis or ioredis client. Returns
 * `{ kind, send(args), duplicate(), close() }`: `send` takes the command and its arguments as
 * strings (or Buffers) and resolves to the reply; `duplicate()` opens a second connection of the
 * same kind (blocking commands such as XREAD BLOCK need one of their own); `close()` closes a
 * connection this module opened (never the user's own client).
 */
function commandClient(client, owned = false) {
  if (client === null || typeof client !== 'object') {
    throw typeError('store client must be a connected node-redis or ioredis client')
  }
  if (typeof client.sendCommand === 'function' && typeof client.connect === 'function' && !('call' in client)) {
    return {
      kind: 'node-redis',
      send: (args) => client.sendCommand(args.map(String)),
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
  if (typeof client.call === 'function' && typeof client.duplicate === 'function') {
    return {
      kind: 'ioredis',
      send: (args) => client.call(String(args[0]), ...args.slice(1).map(String)),
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
  throw typeError('store client must be a connected node-redis (v4+) or ioredis client')
}

module.exports = { commandClient }
