'use strict'

// A cluster client call that fails because of the client's own API (a method another major
// lacks or calls differently: node-redis 5's `rediscover()` threw a TypeError without its
// argument) is never taken for a Redis failure and dropped: the store emits 'clientError' (or,
// with no listener, a process warning once), the revocation feed calls `onError`, with the
// code ERR_AUTH_SHIELD_STORE_CLIENT and the original error in `cause`. A Redis failure of the
// refresh itself stays silent (the next failed command asks again). No Redis needed: a stand-in
// of a node-redis cluster client.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const { once } = require('node:events')
const { createRedisStore } = require('../../lib/store/index')
const { commandClient } = require('../../lib/store/commands')

const LIMIT = { capacity: 1, refillPerSec: 1 }

/** A node-redis-5-shaped cluster client: every command fails as Redis down; `refreshFails(firstKey, args)` decides the refresh's fate. */
function fakeCluster(refreshFails) {
  const a = { host: '127.0.0.1', port: 1, client: { isReady: true } }
  const b = { host: '127.0.0.1', port: 2, client: { isReady: true } }
  const slots = Array.from({ length: 16384 }, (_, i) => ({ master: i % 2 ? a : b }))
  return {
    slots,
    masters: [a, b],
    // node-redis 5: `rediscover(startWith)` reads startWith.options.
    _slots: { rediscover: async (startWith) => startWith.options },
    getSlotMaster: (slot) => slots[slot].master,
    getMasters: () => [a, b],
    connect: async () => {},
    duplicate() {
      return this
    },
    on() {},
    sendCommand(firstKey, isReadonly, args) {
      if (args[0] === 'EXISTS' && String(firstKey).startsWith('{auth-shield-route-')) return refreshFails(firstKey, args)
      return Promise.reject(new Error('Connection is closed'))
    },
  }
}

describe('a cluster client whose refresh call fails', () => {
  it('a TypeError (the client API) reaches the store\'s clientError listener, with the code and the cause', async () => {
    const store = createRedisStore(fakeCluster(() => Promise.reject(new TypeError("Cannot read properties of undefined (reading 'options')"))))
    assert.equal(store.topology, 'cluster')
    const reported = once(store, 'clientError')
    await assert.rejects(store.consume('k', 1, LIMIT), { code: 'ERR_AUTH_SHIELD_STORE_UNAVAILABLE' })
    const [err] = await reported
    assert.equal(err.code, 'ERR_AUTH_SHIELD_STORE_CLIENT')
    assert.ok(err.cause instanceof TypeError)
    assert.match(err.message, /node-redis cluster client cannot refresh its slot map/)
    await store.close()
  })

  it('a synchronous TypeError is reported as well; without a listener, a process warning once', async () => {
    const store = createRedisStore(fakeCluster(() => {
      throw new TypeError('sendCommand is not a function of this major')
    }))
    const warned = []
    const onWarning = (w) => w.code === 'ERR_AUTH_SHIELD_STORE_CLIENT' && warned.push(w)
    process.on('warning', onWarning)
    try {
      await assert.rejects(store.consume('k', 1, LIMIT), { code: 'ERR_AUTH_SHIELD_STORE_UNAVAILABLE' })
      await new Promise((resolve) => setTimeout(resolve, 300)) // past the refresh spacing
      await assert.rejects(store.consume('k2', 1, LIMIT), { code: 'ERR_AUTH_SHIELD_STORE_UNAVAILABLE' })
      await new Promise((resolve) => setImmediate(resolve))
      assert.equal(warned.length, 1)
      assert.match(warned[0].message, /sendCommand is not a function of this major/)
    } finally {
      process.off('warning', onWarning)
      await store.close()
    }
  })

  it('a Redis failure of the refresh is no client error; a client without a slot map is one', async () => {
    const down = commandClient(fakeCluster(() => Promise.reject(new Error('MOVED 1 127.0.0.1:2'))))
    await down.refresh('k') // resolves: the next failed command asks again
    const noMap = fakeCluster(() => Promise.resolve(0))
    noMap.slots = undefined
    await assert.rejects(commandClient(noMap).refresh('k'), { code: 'ERR_AUTH_SHIELD_STORE_CLIENT', message: /no `slots` map/ })
  })
})
