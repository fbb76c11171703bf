'use strict'
// Helpers: Argon2id at the OWASP parameters (m=19456 KiB, t=2, p=1, 16-byte salt, 32-byte tag)
// on every side, each library awaited one call at a time (latency of one hash on the libuv
// pool); and UUID v4 generation when the addon exports a generator.

const crypto = require('node:crypto')
const argon2 = require('argon2')
const nodeRsArgon2 = require('@node-rs/argon2')
const { sanityCheck } = require('../lib/sanity')
const { measureInterleaved } = require('../lib/measure')
const { summarize, pairedRatio } = require('../lib/stats')

const PASSWORD = 'correct horse battery staple'
const PARAMS = { memoryCost: 19456, timeCost: 2, parallelism: 1 }

// PHC string with our parameters; the argon2 package orders them m,p,t, the others m,t,p.
function hasOurParameters(phc) {
  const match = /^\$argon2id\$v=19\$([^$]+)\$[^$]+\$[^$]+$/.exec(phc)
  if (!match) return false
  return match[1].split(',').sort().join(',') === 'm=19456,p=1,t=2'
}

function toRows(contenders, raw, baseline) {
  return contenders.map((c) => ({
    id: c.id,
    label: c.label,
    async: Boolean(c.async),
    nsPerOp: summarize(raw[c.id].nsPerOp),
    baselineId: baseline,
    vsBaseline: pairedRatio(raw[c.id].nsPerOp, raw[baseline].nsPerOp),
    callsPerSample: raw[c.id].callsPerSample,
    samples: raw[c.id].nsPerOp,
  }))
}

async function runArgon2(native, opts) {
  const hashers = [
    { id: 'ours-hash', label: 'auth-shield hashPassword', call: (pw) => native.hashPassword(pw, PARAMS) },
    {
      id: 'argon2-hash',
      label: 'argon2 (npm) hash',
      call: (pw) => argon2.hash(pw, { type: argon2.argon2id, ...PARAMS, hashLength: 32, saltLength: 16 }),
    },
    {
      id: 'node-rs-hash',
      label: '@node-rs/argon2 hash',
      call: (pw) => nodeRsArgon2.hash(pw, { algorithm: 2 /* Argon2id */, ...PARAMS, outputLen: 32 }),
    },
  ]
  for (const c of hashers) c.accept = (phc) => typeof phc === 'string' && hasOurParameters(phc)

  // Each verifier checks a hash made by another library: proves the parameters really match.
  const [oursHash, argon2Hash, nodeRsHash] = await Promise.all(hashers.map((c) => c.call(PASSWORD)))
  const verifiers = [
    { id: 'ours-verify', label: 'auth-shield verifyPassword', call: (pw) => native.verifyPassword(argon2Hash, pw) },
    { id: 'argon2-verify', label: 'argon2 (npm) verify', call: (pw) => argon2.verify(nodeRsHash, pw) },
    { id: 'node-rs-verify', label: '@node-rs/argon2 verify', call: (pw) => nodeRsArgon2.verify(oursHash, pw) },
  ]
  for (const c of verifiers) c.accept = (ok) => ok === true
  const contenders = [...hashers, ...verifiers]
  for (const c of contenders) {
    c.async = true
    c.run = () => c.call(PASSWORD)
  }
  await sanityCheck(hashers, PASSWORD, {})
  await sanityCheck(verifiers, PASSWORD, { wrongPassword: 'correct horse battery stapler' })
  const raw = await measureInterleaved('argon2', contenders, opts)
  return {
    title: 'Argon2id hash / verify (m=19456, t=2, p=1; async, one at a time)',
    unit: 'ns/op',
    baseline: 'ours-hash',
    rows: [...toRows(hashers, raw, 'ours-hash'), ...toRows(verifiers, raw, 'ours-verify')],
  }
}

function findUuidGenerator(native) {
  for (const name of ['randomUuid', 'randomUUID', 'uuidV4', 'generateRequestId', 'requestId']) {
    if (typeof native[name] === 'function') return name
  }
  return undefined
}

async function runUuid(native, opts) {
  const name = findUuidGenerator(native)
  if (!name) return { skipped: 'the addon exports no UUID v4 generator (request ids are made inside authenticate)' }
  const v4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
  const contenders = [
    { id: 'ours-uuid', label: `auth-shield ${name}`, call: () => native[name]() },
    { id: 'crypto-uuid', label: 'crypto.randomUUID', call: () => crypto.randomUUID() },
  ]
  for (const c of contenders) {
    c.accept = (id) => typeof id === 'string' && v4.test(id)
    c.run = c.call
  }
  await sanityCheck(contenders, undefined, {})
  const raw = await measureInterleaved('uuid', contenders, opts)
  return { title: 'UUID v4', unit: 'ns/op', baseline: 'ours-uuid', rows: toRows(contenders, raw, 'ours-uuid') }
}

module.exports = { runArgon2, runUuid }
