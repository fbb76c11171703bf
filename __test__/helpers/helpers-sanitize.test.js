'use strict'
// sanitizeHtml (XSS payloads come out harmless, benign HTML survives), sanitizeFilename edge
// cases and validateSqlInterval.
const { test } = require('node:test')
const assert = require('node:assert/strict')
const payloads = require('../fixtures/xss_payloads.json')
const { sanitizeHtml, sanitizeFilename, validateSqlInterval } = require('../..')

const DANGEROUS_TAGS = /^(script|style|iframe|frame|object|embed|svg|math|form|input|button|base|link|meta|body|html|template|noscript|video|source)$/i

// ammonia escapes '<' in text, so every '<' left in the output opens a real tag: inspect each.
function assertHarmless(html, payload) {
  for (const [, name, attrs] of html.matchAll(/<\/?([a-zA-Z][\w-]*)([^>]*)>/g)) {
    assert.doesNotMatch(name, DANGEROUS_TAGS, `tag <${name}> survived ${payload}`)
    for (const [, attr, value = ''] of attrs.matchAll(/([^\s=]+)(?:="([^"]*)")?/g)) {
      assert.doesNotMatch(attr, /^(on|style$|srcdoc$|formaction$)/i, `attribute ${attr} survived ${payload}`)
      const decoded = value.replace(/&#(\d+);?/g, (_, d) => String.fromCharCode(+d)).replace(/&#x([\da-f]+);?/gi, (_, h) => String.fromCharCode(parseInt(h, 16)))
      assert.doesNotMatch(decoded.replace(/[\s\0-\x1f]/g, ''), /^(javascript|vbscript|data):/i, `URL ${value} survived ${payload}`)
    }
  }
}

test('XSS payloads come out harmless', () => {
  assert.ok(payloads.length >= 30)
  for (const p of payloads) assertHarmless(sanitizeHtml(p), p)
})

test('the harmlessness check itself catches dangerous output', () => {
  assert.throws(() => assertHarmless('<img src="x" onerror="alert(1)">', 't'))
  assert.throws(() => assertHarmless('<a href="javascript:alert(1)">', 't'))
  assert.throws(() => assertHarmless('<script>', 't'))
})

test('benign HTML survives and links get rel="noopener noreferrer"', () => {
  const benign = [
    ['<p>Hello <b>world</b> &amp; <i>friends</i></p>', '<p>Hello <b>world</b> &amp; <i>friends</i></p>'],
    ['<ul><li>one</li><li>two</li></ul>', '<ul><li>one</li><li>two</li></ul>'],
    ['<a href="https://example.com/a?b=1&amp;c=2">link</a>', '<a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer">link</a>'],
    ['<img src="https://example.com/cat.png" alt="a cat">', '<img src="https://example.com/cat.png" alt="a cat">'],
    ['<blockquote>quote</blockquote><pre><code>x &lt; y</code></pre>', '<blockquote>quote</blockquote><pre><code>x &lt; y</code></pre>'],
    ['<table><tbody><tr><td>1</td></tr></tbody></table>', '<table><tbody><tr><td>1</td></tr></tbody></table>'],
    ['plain text 2 < 3', 'plain text 2 &lt; 3'],
  ]
  for (const [input, want] of benign) assert.equal(sanitizeHtml(input), want)
  assert.equal(sanitizeHtml('<a href="mailto:a@b.c" rel="opener">m</a>'), '<a href="mailto:a@b.c" rel="noopener noreferrer">m</a>')
})

test('options extend the whitelist but never to dangerous tags or attributes', () => {
  const opts = { allowedTags: ['mark'], allowedAttributes: { mark: ['data-id'], '*': ['title'] }, allowedSchemes: ['ftp'] }
  assert.equal(sanitizeHtml('<mark data-id="7" title="t">m</mark>', opts), '<mark data-id="7" title="t">m</mark>')
  assert.equal(sanitizeHtml('<a href="ftp://x.example/f">f</a>', opts), '<a href="ftp://x.example/f" rel="noopener noreferrer">f</a>')
  assert.equal(sanitizeHtml('<!-- c -->x', { stripComments: false }), '<!-- c -->x')
  const refused = (o) => assert.throws(() => sanitizeHtml('x', o), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_VALUE')
  for (const tag of ['script', 'Style', 'iframe', 'object', 'embed', 'svg', 'form', 'base', 'meta']) refused({ allowedTags: [tag] })
  for (const attr of ['onclick', 'ONLOAD', 'style', 'srcdoc', 'rel']) refused({ allowedAttributes: { '*': [attr] } })
  refused({ allowedAttributes: { script: ['src'] } })
  for (const scheme of ['javascript', 'data', 'vbscript', 'bad scheme']) refused({ allowedSchemes: [scheme] })
})

test('sanitizeHtml refuses wrong types and oversize input', () => {
  assert.throws(() => sanitizeHtml(42), (e) => e instanceof TypeError && /input/.test(e.message))
  assert.throws(() => sanitizeHtml('x', { allowedTags: 'b' }), TypeError)
  assert.throws(() => sanitizeHtml('a'.repeat(8 * 1024 * 1024 + 1)), RangeError)
})

test('sanitizeFilename: separators, traversal and reserved names', () => {
  const cases = [
    ['report.pdf', 'report.pdf'],
    ['../../etc/passwd', '.._.._etc_passwd'],
    ['..\\..\\windows\\system32', '.._.._windows_system32'],
    ['..', 'file'],
    ['.', 'file'],
    ['', 'file'],
    ['   ', 'file'],
    ['...', 'file'],
    ['CON', '_CON'],
    ['con.txt', '_con.txt'],
    ['LPT9.log', '_LPT9.log'],
    ['COM¹', '_COM¹'],
    ['aux ', '_aux'],
    ['a<b>c:d"e|f?g*h', 'a_b_c_d_e_f_g_h'],
    ['trailing. . .', 'trailing'],
    ['tab\tnew\nline\0nul', 'tab_new_line_nul'],
    ['\u202Egnp.exe', '_gnp.exe'],
    ['zero\u200Bwidth', 'zero_width'],
    ['.env', '.env'],
    ['naïve café.txt', 'naïve café.txt'],
  ]
  for (const [input, want] of cases) assert.equal(sanitizeFilename(input), want, JSON.stringify(input))
  assert.equal(sanitizeFilename('a/b', { replacement: '' }), 'ab')
  assert.equal(sanitizeFilename('a/b', { replacement: '-' }), 'a-b')
})

test('sanitizeFilename caps length at 255 bytes on a character boundary', () => {
  for (const name of ['a'.repeat(1000), '€'.repeat(300), '😀'.repeat(100) + '.jpeg', 'x'.repeat(300) + '.tar.gz']) {
    const out = sanitizeFilename(name)
    assert.ok(Buffer.byteLength(out) <= 255, `${Buffer.byteLength(out)} bytes`)
    assert.ok(!out.includes('\uFFFD'))
    assert.ok(name.startsWith(out.slice(0, 10)))
  }
  assert.ok(sanitizeFilename('😀'.repeat(100) + '.jpeg').endsWith('.jpeg'))
  assert.ok(Buffer.byteLength(sanitizeFilename('b'.repeat(100), { maxBytes: 20 })) <= 20)
  assert.throws(() => sanitizeFilename('x', { maxBytes: 300 }), RangeError)
  assert.throws(() => sanitizeFilename('x', { replacement: '/' }), TypeError)
  assert.throws(() => sanitizeFilename(null), TypeError)
})

test('validateSqlInterval returns the canonical form', () => {
  const ok = [['7 days', '7 days'], ['1 day', '1 day'], ['1 days', '1 day'], ['2 HOUR', '2 hours'], ['  30   minutes ', '30 minutes'], ['0 seconds', '0 seconds'], ['012 weeks', '12 weeks'], ['1000000 years', '1000000 years']]
  for (const [input, want] of ok) assert.equal(validateSqlInterval(input), want)
})

test('validateSqlInterval refuses anything else with ERR_INVALID_INTERVAL', () => {
  const bad = ['', '7', 'days', '-1 day', '1.5 days', '1e3 days', '+1 day', '1 fortnight', "7 days'; DROP TABLE users; --", '7 days)', '1 day 2 hours', '1000001 days', '7\u00a0days', '7days']
  for (const input of bad) {
    assert.throws(() => validateSqlInterval(input), (e) => (e instanceof TypeError || e instanceof RangeError) && e.code === 'ERR_INVALID_INTERVAL', JSON.stringify(input))
  }
  assert.throws(() => validateSqlInterval(7), (e) => e instanceof TypeError && e.code === 'ERR_INVALID_ARG_TYPE')
})
