'use strict'
// CspBuilder: strict defaults, quoting, nonces, hashes, reporting, and header-injection attempts.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const { CspBuilder } = require('../..')

const DEFAULTS = "default-src 'self'; object-src 'none'; base-uri 'self'; frame-ancestors 'none'"

test('starts from strict defaults', () => {
  const csp = new CspBuilder()
  assert.equal(csp.build(), DEFAULTS)
  assert.equal(csp.headerName(), 'Content-Security-Policy')
})

test('directive methods chain, replace sources and quote keywords', () => {
  const value = new CspBuilder()
    .scriptSrc(['self', "'strict-dynamic'", 'https://cdn.example.com'])
    .styleSrc(['self', 'unsafe-inline'])
    .imgSrc(['self', 'data:', 'https://*.example.com'])
    .connectSrc('https://api.example.com:8443/v1/')
    .fontSrc('self')
    .mediaSrc('none')
    .frameSrc('https://youtube.example')
    .workerSrc('blob:')
    .formAction('self')
    .frameAncestors(['self'])
    .directive('manifest-src', 'self')
    .upgradeInsecureRequests()
    .build()
  assert.equal(
    value,
    DEFAULTS.replace("frame-ancestors 'none'", "frame-ancestors 'self'") +
      "; script-src 'self' 'strict-dynamic' https://cdn.example.com; style-src 'self' 'unsafe-inline'" +
      "; img-src 'self' data: https://*.example.com; connect-src https://api.example.com:8443/v1/; font-src 'self'" +
      "; media-src 'none'; frame-src https://youtube.example; worker-src blob:; form-action 'self'" +
      "; manifest-src 'self'; upgrade-insecure-requests",
  )
  assert.equal(new CspBuilder().defaultSrc('none').build().split('; ')[0], "default-src 'none'")
})

test('nonce() returns a fresh base64 nonce and adds it, keeping default-src sources', () => {
  const csp = new CspBuilder()
  const nonce = csp.nonce()
  assert.match(nonce, /^[A-Za-z0-9+/]{22}==$/)
  assert.equal(Buffer.from(nonce, 'base64').length, 16)
  assert.ok(csp.build().endsWith(`script-src 'self' 'nonce-${nonce}'`))
  const styleNonce = csp.nonce('style-src')
  assert.ok(csp.build().includes(`style-src 'self' 'nonce-${styleNonce}'`))
  assert.notEqual(new CspBuilder().nonce(), new CspBuilder().nonce())
})

test('clone() gives independent per-response builders', () => {
  const base = new CspBuilder().scriptSrc('self')
  const a = base.clone()
  const nonce = a.nonce()
  assert.ok(a.build().includes(nonce))
  assert.ok(!base.build().includes(nonce))
})

test('hash() adds quoted hash sources', () => {
  const digest = crypto.createHash('sha256').update("alert('hi')").digest('base64')
  const value = new CspBuilder().scriptSrc('self').hash('sha256', digest).build()
  assert.ok(value.endsWith(`script-src 'self' 'sha256-${digest}'`))
  assert.throws(() => new CspBuilder().hash('md5', digest), TypeError)
  assert.throws(() => new CspBuilder().hash('sha256', "abc' 'unsafe-inline"), (e) => e.code === 'ERR_INVALID_CSP')
})

test('report-uri, report-to and report-only', () => {
  const csp = new CspBuilder().reportUri('https://r.example.com/csp').reportTo('csp-endpoint').reportOnly()
  assert.ok(csp.build().endsWith('; report-uri https://r.example.com/csp; report-to csp-endpoint'))
  assert.equal(csp.headerName(), 'Content-Security-Policy-Report-Only')
  assert.equal(csp.reportOnly(false).headerName(), 'Content-Security-Policy')
  assert.throws(() => csp.reportTo('bad group'), TypeError)
  assert.throws(() => csp.reportOnly('yes'), (e) => e instanceof TypeError && /enabled/.test(e.message))
  assert.throws(() => csp.reportUri('self'), TypeError)
})

test('header-injection attempts are refused and leave the policy unchanged', () => {
  const csp = new CspBuilder()
  const attempts = [
    'https://a.example; script-src *',
    'https://a.example,https://b.example',
    'https://a.example https://evil.example',
    "'self' 'unsafe-eval'",
    "'self",
    "self'",
    "https://a.example'",
    '"https://a.example"',
    'https://a.example\r\nSet-Cookie: x=1',
    'https://a.example\u0000',
    'https://ex\u00e4mple.com',
    "'unsafe-everything'",
    "'nonce-<script>'",
    '',
  ]
  for (const src of attempts) {
    assert.throws(() => csp.scriptSrc(src), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_CSP', JSON.stringify(src))
    assert.throws(() => csp.imgSrc(['self', src]), { code: 'ERR_INVALID_CSP' })
  }
  assert.throws(() => csp.scriptSrc(['none', 'self']), { code: 'ERR_INVALID_CSP' })
  assert.throws(() => csp.scriptSrc([]), { code: 'ERR_INVALID_CSP' })
  assert.throws(() => csp.directive('script-src; img-src', 'self'), { code: 'ERR_INVALID_CSP' })
  assert.throws(() => csp.scriptSrc(42), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_TYPE')
  assert.throws(() => csp.scriptSrc([1]), TypeError)
  assert.throws(() => csp.scriptSrc(new Array(65).fill('self')), RangeError)
  assert.equal(csp.build(), DEFAULTS)
})
