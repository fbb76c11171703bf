'use strict'
// Config is validated once, at construction, with errors that name the field.
const test = require('node:test')
const assert = require('node:assert/strict')
const { Authenticator, authenticateRequest } = require('../..')
const { SECRET, REFRESH_SECRET } = require('../support/tokens')

const build = (config) => () => new Authenticator(config)

test('a missing or empty secret is refused, naming the field', () => {
  assert.throws(build({}), { name: 'TypeError', message: /accessSecret/ })
  assert.throws(build({ accessSecret: '' }), { name: 'RangeError', message: /accessSecret/ })
  assert.throws(build({ accessSecret: Buffer.alloc(0) }), { name: 'RangeError', message: /accessSecret/ })
  assert.throws(build({ accessSecret: 42 }), { name: 'TypeError', message: /accessSecret/ })
  assert.throws(build({ accessSecret: SECRET, refreshSecret: '' }), { name: 'RangeError', message: /refreshSecret/ })
})

test('secrets shorter than 32 bytes need allowShortSecret (RFC 7518 §3.2)', () => {
  assert.throws(build({ accessSecret: 'short' }), { name: 'RangeError', message: /32 bytes/ })
  assert.ok(new Authenticator({ accessSecret: 'short', allowShortSecret: true }))
})

test('rate numbers must be finite and non-negative', () => {
  for (const [field, value] of [['rateLimitMax', -1], ['rateLimitMax', Infinity], ['rateLimitMax', NaN], ['rateLimitMax', 1.5],
    ['rateLimitRefillPerSec', -1], ['rateLimitRefillPerSec', 0], ['rateLimitRefillPerSec', Infinity], ['clockToleranceSec', -5],
    ['maxTokenBytes', 10], ['maxTokenBytes', 2 ** 30], ['accessTtlSec', 0], ['rateLimitMaxKeys', 0]]) {
    assert.throws(build({ accessSecret: SECRET, [field]: value }), { name: 'RangeError', message: new RegExp(field) }, `${field}=${value}`)
  }
})

test('options of the wrong type are a TypeError naming the field', () => {
  for (const [field, value] of [['rateLimitMax', '100'], ['enforceTenantMatch', 'yes'], ['issuer', 5], ['audience', [1]],
    ['baseDomain', {}], ['requireTokenType', 1], ['clockToleranceSec', '5']]) {
    assert.throws(build({ accessSecret: SECRET, [field]: value }), { name: 'TypeError', message: new RegExp(field) }, field)
  }
  assert.throws(build({ accessSecret: SECRET, acessSecret: SECRET }), { name: 'TypeError', message: /acessSecret/ })
  assert.throws(build(null), TypeError)
  assert.throws(build('secret'), TypeError)
  assert.throws(() => new Authenticator(), TypeError)
})

test('baseDomain must be a domain name', () => {
  assert.throws(build({ accessSecret: SECRET, baseDomain: 'exa mple.com' }), { name: 'RangeError', message: /baseDomain/ })
  assert.ok(new Authenticator({ accessSecret: SECRET, baseDomain: 'Example.COM.' }))
})

test('null and undefined fields take their defaults', () => {
  const auth = new Authenticator({ accessSecret: SECRET, issuer: null, rateLimitMax: undefined })
  assert.equal(auth.rateLimitMax, 100)
  assert.equal(auth.rateLimitRefillPerSec, 10)
  assert.equal(auth.accessTtlSec, 900)
  assert.equal(auth.refreshTtlSec, 604800)
})

test('authenticateRequest validates the config and shares state between calls with equal configs', () => {
  const config = { accessSecret: SECRET, rateLimitMax: 2, refreshSecret: REFRESH_SECRET }
  const token = new Authenticator(config).signAccessToken({ sub: 'one-shot-user' })
  const call = (cfg) => authenticateRequest(`Bearer ${token}`, null, null, cfg)
  assert.equal(call(config).rateLimitRemaining, 1)
  assert.equal(call({ ...config }).rateLimitRemaining, 0) // an equal config object shares the bucket
  assert.equal(call(config).errorCode, 'rate_limited')
  assert.equal(call({ ...config, rateLimitMax: 3 }).rateLimitRemaining, 2) // a different config has its own
  assert.throws(() => authenticateRequest(null, null, null, { accessSecret: '' }), RangeError)
  assert.equal(authenticateRequest(undefined, undefined, undefined, config).errorCode, 'missing_authorization')
})
