'use strict'

// resolveTenant(tenantHeader, host, options): the tenant of a request without a token, by the
// fused call's rules, identical in both engines; a bad id is a result, never a throw.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const native = require('../..')
const js = require('../../js')
const { random } = require('../support/tokens')

const ENGINES = [
  ['native', native],
  ['js', js],
]

for (const [name, engine] of ENGINES) {
  test(`${name}: the header wins over the Host, baseDomain limits Host tenants, bad ids are a result`, () => {
    const { resolveTenant } = engine
    const none = { tenantId: undefined, tenantSource: undefined, error: undefined, errorCode: undefined }
    const invalid = { tenantId: undefined, tenantSource: undefined, error: 'Invalid tenant id', errorCode: 'invalid_tenant' }
    assert.deepEqual(resolveTenant('globex', 'acme.example.com'), { ...none, tenantId: 'globex', tenantSource: 'header' })
    assert.deepEqual(resolveTenant(undefined, 'ACME.example.com:8443'), { ...none, tenantId: 'acme', tenantSource: 'host' })
    assert.deepEqual(resolveTenant('', 'acme.example.com'), { ...none, tenantId: 'acme', tenantSource: 'host' })
    assert.deepEqual(resolveTenant(null, 'localhost:3000'), none)
    assert.deepEqual(resolveTenant(undefined, undefined), none)
    assert.deepEqual(resolveTenant(undefined, 'www.example.com'), none)
    const base = { baseDomain: 'Example.COM.' }
    assert.deepEqual(resolveTenant(null, 'acme.example.com', base), { ...none, tenantId: 'acme', tenantSource: 'host' })
    assert.deepEqual(resolveTenant(null, 'a.b.example.com', base), none)
    assert.deepEqual(resolveTenant(null, 'acme.other.org', base), none)
    assert.deepEqual(resolveTenant('bad:id', 'acme.example.com'), invalid)
    assert.deepEqual(resolveTenant(undefined, 'bad_%.example.com'), invalid)
    assert.deepEqual(resolveTenant(undefined, `${'x'.repeat(64)}.example.com`), invalid)
    assert.deepEqual(Object.keys(resolveTenant(null, 'acme.example.com')), ['tenantId', 'tenantSource', 'error', 'errorCode'])
  })

  test(`${name}: resolveTenant throws coded errors only for arguments of the wrong type`, () => {
    const { resolveTenant } = engine
    assert.throws(() => resolveTenant(null, 5), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'host must be a string, null or undefined' })
    assert.throws(() => resolveTenant({}, null), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'tenantHeader must be a string, null or undefined' })
    assert.throws(() => resolveTenant(null, null, 'example.com'), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'options must be an object' })
    assert.throws(() => resolveTenant(null, null, { baseDomain: 5 }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'options.baseDomain must be a string' })
    assert.throws(() => resolveTenant(null, null, { baseDomain: 'a b' }), { name: 'RangeError', code: 'ERR_OUT_OF_RANGE', message: 'options.baseDomain is not a valid domain name: "a b"' })
  })
}

test('resolveTenant agrees with the fused call of a token without tenant_id', () => {
  const secret = 'resolve-tenant-access-secret-0123456789'
  for (const engine of [native, js]) {
    const auth = new engine.Authenticator({ accessSecret: secret, baseDomain: 'example.com', rateLimitMax: 0 })
    const bearer = `Bearer ${auth.signAccessToken({ sub: 'u' })}`
    for (const [host, header] of [['acme.example.com', null], ['x.example.com', 'beta'], ['example.com', null], ['acme.example.com', 'bad:id']]) {
      const fused = auth.authenticate(bearer, header, host)
      const alone = engine.resolveTenant(header, host, { baseDomain: 'example.com' })
      assert.deepEqual([alone.tenantId, alone.tenantSource, alone.errorCode], [fused.tenantId, fused.tenantSource, fused.errorCode])
    }
  }
})

test('both engines resolve the same tenant for 20,000 random hosts and headers', () => {
  const rng = random(0x7e4a47)
  const pieces = ['acme', 'ACME', 'www', 'example', 'com', 'localhost', '127', '0', '1', '', 'a_b', '-x', 'bad:id', 'é', 'x'.repeat(64), '[::1]', ':', ':80', '.', '\u0000', ' ']
  const text = () => {
    if (rng.chance(0.1)) return rng.pick([undefined, null, ''])
    let s = ''
    const n = 1 + rng.int(5)
    for (let i = 0; i < n; i++) s += (i > 0 && rng.chance(0.7) ? '.' : '') + rng.pick(pieces)
    return s
  }
  const optionsList = [undefined, null, {}, { baseDomain: 'example.com' }, { baseDomain: 'EXAMPLE.com.' }, { baseDomain: null }, { baseDomain: 'localhost' }]
  const codes = new Map()
  for (let i = 0; i < 20_000; i++) {
    const args = [rng.chance(0.6) ? undefined : text(), text(), rng.pick(optionsList)]
    const a = native.resolveTenant(...args)
    const b = js.resolveTenant(...args)
    assert.deepStrictEqual(b, a, JSON.stringify(args))
    const key = a.errorCode || a.tenantSource || 'none'
    codes.set(key, (codes.get(key) || 0) + 1)
  }
  // The generator reaches every outcome.
  for (const key of ['header', 'host', 'none', 'invalid_tenant']) assert.ok(codes.get(key) > 100, `${key}: ${codes.get(key)}`)
})
