'use strict'

// `req.auth` / `request.auth` from the kept payloads (lib/http/verified-claims.js): every read, first
// or repeated, equals JSON.parse of the payload (key order, numbers, nested values, an own
// __proto__, the last of duplicate keys), is a fresh object, and carries nothing an app wrote
// into an earlier one; both engines, both adapters, over real HTTP.

const { describe, it } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const express = require('express')
const fastify = require('fastify')
const authShield = require('../../adapters/express')
const { VerifiedClaims, SLOTS } = require('../../lib/http/verified-claims')
const { rawToken, HS256, SECRET, NOW } = require('../support/tokens')
const { listen, get } = require('../support/http')

const EXP = NOW + 3600
const CONFIG = { accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 0 }

// Payload texts as an issuer may write them (the engines accept every one).
const PAYLOADS = [
  `{"sub":"u1","exp":${EXP},"email":"a@example.com","role":"admin","tenant_id":"acme"}`,
  `{"sub":"u1","exp":${EXP},"__proto__":{"sub":"x","polluted":true},"role":"r"}`,
  `{"z":1,"2":"two","sub":"u1","1":"one","exp":${EXP},"a":-0,"big":1e300,"f":0.1,"i":12345678901234567890}`,
  `{"sub":"u1","exp":${EXP},"aud":["api","web"],"ext":{"k":"x","deep":[{"a":[null,true,{"__proto__":1}]}]},"e":{},"l":[]}`,
  `{"sub":"\\u00e9t\\u00e9 \\ud83d\\ude00","exp":${EXP},"name":"caf\u00e9 \ud83d\ude00","s":"a\\"b\\\\c\\n"}`,
]

function bearer(payload, secret = SECRET) {
  return `Bearer ${rawToken(HS256, Buffer.from(payload).toString('latin1'), secret)}`
}

/** Every own key (in order) and value, recursively, with each object's prototype. */
function anatomy(value) {
  if (value === null || typeof value !== 'object') return Object.is(value, -0) ? '-0' : value
  return {
    proto: Object.getPrototypeOf(value) === Object.prototype ? 'Object' : Array.isArray(value) ? 'Array' : 'other',
    own: Reflect.ownKeys(value).map((k) => [String(k), Object.getOwnPropertyDescriptor(value, k).enumerable, anatomy(value[k])]),
  }
}

describe('VerifiedClaims', () => {
  it('gives what JSON.parse gives, on a miss and on every hit, as a fresh object each time', () => {
    const claims = new VerifiedClaims()
    // Duplicate keys: both engines refuse them (malformed_token), but the table parses as
    // JSON.parse does (the last value, at the first key's place).
    const duplicates = `{"sub":"u1","exp":${EXP},"role":"first","role":"second","b":1,"b":{"n":[1,2]}}`
    for (const payload of [...PAYLOADS, duplicates]) {
      const authorization = bearer(payload)
      const wanted = anatomy(JSON.parse(payload))
      const reads = [claims.of(authorization), claims.of(authorization), claims.of(authorization)]
      for (const read of reads) assert.deepEqual(anatomy(read), wanted, payload)
      assert.notEqual(reads[0], reads[1])
      assert.equal(Object.getPrototypeOf(reads[1]), Object.prototype)
    }
  })

  it('keeps no change an app makes to a returned object, nested values included', () => {
    const claims = new VerifiedClaims()
    const nested = PAYLOADS.find((p) => p.includes('"ext"'))
    const authorization = bearer(nested)
    const first = claims.of(authorization)
    first.sub = 'changed'
    first.aud.push('evil')
    first.ext.deep[0].a[2].x = 1
    delete first.exp
    assert.deepEqual(anatomy(claims.of(authorization)), anatomy(JSON.parse(nested)))
  })

  it('gives each token its own payload when tokens share a slot, and stays within its slots', () => {
    const claims = new VerifiedClaims()
    // More tokens than slots, read in turns: every slot is taken and retaken.
    const tokens = []
    for (let i = 0; i < SLOTS * 4; i++) tokens.push([bearer(`{"sub":"user-${i}","exp":${EXP}}`), `user-${i}`])
    for (let round = 0; round < 3; round++) {
      for (const [authorization, sub] of tokens) assert.equal(claims.of(authorization).sub, sub)
    }
    assert.equal(claims.slots.length, SLOTS)
    // Same signature, another payload (only a forged token could do that; the engine refuses it
    // before any claims are read, but the table must not be fooled either).
    const [a] = tokens
    const signature = a[0].slice(a[0].lastIndexOf('.'))
    const other = bearer(`{"sub":"other","exp":${EXP}}`)
    const forged = other.slice(0, other.lastIndexOf('.')) + signature
    assert.equal(claims.of(a[0]).sub, 'user-0')
    assert.equal(claims.of(forged).sub, 'other')
    assert.equal(claims.of(a[0]).sub, 'user-0')
  })
})

// The route answers what it saw, then changes the object: the next request must not see that.
function describeAuth(auth) {
  const seen = JSON.stringify(anatomy(auth))
  auth.sub = 'changed by the app'
  if (Array.isArray(auth.aud)) auth.aud.push('changed')
  return seen
}

for (const engine of ['native', 'js']) {
  describe(`req.auth over HTTP, ${engine} engine`, () => {
    it('Express: each request reads what JSON.parse gives, however often the token comes back', async () => {
      const app = express()
      app.get('/', authShield(CONFIG, { engine }), (req, res) => res.json({ seen: describeAuth(req.auth) }))
      const server = await listen(http.createServer(app))
      try {
        for (let round = 0; round < 3; round++) {
          for (const payload of PAYLOADS) {
            const res = await get(`${server.base}/`, { authorization: bearer(payload) })
            assert.equal(res.status, 200, payload)
            assert.equal(res.json.seen, JSON.stringify(anatomy(JSON.parse(payload))), payload)
          }
        }
      } finally {
        await server.close()
      }
    })

    it('Fastify: the same', async () => {
      const app = fastify()
      await app.register(require('../../adapters/fastify'), { config: CONFIG, engine })
      app.get('/', async (request) => ({ seen: describeAuth(request.auth) }))
      await app.ready()
      try {
        for (let round = 0; round < 3; round++) {
          for (const payload of PAYLOADS) {
            const res = await app.inject({ url: '/', headers: { authorization: bearer(payload) } })
            assert.equal(res.statusCode, 200, payload)
            assert.equal(res.json().seen, JSON.stringify(anatomy(JSON.parse(payload))), payload)
          }
        }
      } finally {
        await app.close()
      }
    })
  })
}
