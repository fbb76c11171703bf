'use strict'

// The WWW-Authenticate values (lib/http/challenge.js, RFC 6750 §3 and RFC 9728 §5.1) and the
// protected-resource metadata document (lib/http/resource-metadata.js, RFC 9728): built at
// construction from configuration only, quoted safely, refused when the configuration is not
// what the RFCs allow.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { Challenge, bearerError, quoted } = require('../../lib/http/challenge')
const { protectedResourceMetadata, resourceMetadataUrl, metadataUrlOf } = require('../../lib/http/resource-metadata')
const { AuthDecision } = require('../../lib/http/decision')
const { TABLE } = require('../../base/error')
const { token } = require('../support/tokens')

const SECRET = 'resource-server-challenge-secret-0123456789'
const NOW = 1_700_000_000

test('RFC 6750 error codes: invalid_request, insufficient_scope, insufficient_user_authentication (RFC 9470), invalid_token for every other 401, none for the rest', () => {
  const own = new Set(['insufficient_scope', 'insufficient_user_authentication'])
  for (const [code, { status }] of Object.entries(TABLE)) {
    // A DPoP request on a route that refuses DPoP is a malformed request for that route.
    const want = code === 'invalid_authorization_format' || code === 'dpop_not_allowed' ? 'invalid_request' : own.has(code) ? code : status === 401 ? 'invalid_token' : null
    assert.equal(bearerError(code), want, code)
  }
  assert.equal(bearerError('no_such_code'), null)
})

test('quoted-strings escape quotes and backslashes and refuse anything unprintable', () => {
  assert.equal(quoted('a"b\\c', 'x'), '"a\\"b\\\\c"')
  assert.equal(quoted('', 'x'), '""')
  for (const bad of ['a\r\nSet-Cookie: x=1', 'caf\u00e9', '\u0000', '\t', 5, undefined, null]) {
    assert.throws(() => quoted(bad, 'label'), { name: 'TypeError', message: /label must be a string of printable ASCII/ }, String(bad))
  }
})

test('one challenge per failure code, written at construction; the scheme is a parameter (DPoP can reuse it)', () => {
  const c = new Challenge({ realm: 'api', scope: ['read', 'write:x'], resourceMetadata: 'https://api.example/.well-known/oauth-protected-resource' })
  const rm = 'resource_metadata="https://api.example/.well-known/oauth-protected-resource"'
  assert.equal(c.bare, `Bearer realm="api", ${rm}`)
  assert.equal(c.of('token_expired'), `Bearer realm="api", error="invalid_token", error_description="Token has expired", ${rm}`)
  assert.equal(c.of('insufficient_scope'), `Bearer realm="api", error="insufficient_scope", error_description="Token lacks a required scope", scope="read write:x", ${rm}`)
  assert.equal(c.of('rate_limited'), undefined)
  assert.equal(c.of('tenant_mismatch'), undefined)
  assert.equal(new Challenge().bare, 'Bearer')
  assert.equal(new Challenge({}).of('insufficient_scope'), 'Bearer error="insufficient_scope", error_description="Token lacks a required scope"')
  assert.equal(new Challenge({ acrValues: ['mfa', 'urn:x'], maxAge: 0 }).of('insufficient_user_authentication'), 'Bearer error="insufficient_user_authentication", error_description="A stronger or more recent user authentication is required", acr_values="mfa urn:x", max_age="0"')
  assert.equal(new Challenge({ scheme: 'DPoP', realm: 'api' }).of('invalid_signature'), 'DPoP realm="api", error="invalid_token", error_description="Invalid token signature"')
})

test('the metadata URL: the well-known suffix between host and path (RFC 9728 §3.1)', () => {
  const cases = [
    ['https://api.example', 'https://api.example/.well-known/oauth-protected-resource'],
    ['https://api.example/', 'https://api.example/.well-known/oauth-protected-resource'],
    ['https://api.example/v1', 'https://api.example/.well-known/oauth-protected-resource/v1'],
    ['https://api.example/v1/', 'https://api.example/.well-known/oauth-protected-resource/v1'],
    ['https://api.example:8443/a/b?x=1', 'https://api.example:8443/.well-known/oauth-protected-resource/a/b?x=1'],
    ['https://API.Example/caf\u00e9"', 'https://api.example/.well-known/oauth-protected-resource/caf%C3%A9%22'],
  ]
  for (const [resource, url] of cases) {
    assert.equal(metadataUrlOf(new URL(resource)), url, resource)
    assert.equal(protectedResourceMetadata({ resource }).url, url, resource)
  }
  assert.equal(protectedResourceMetadata({ resource: 'https://api.example/v1/' }).path, '/.well-known/oauth-protected-resource/v1')
})

test('the metadata document: only what was configured, checked, frozen, its JSON written once', () => {
  const meta = protectedResourceMetadata({
    resource: 'https://api.example/',
    authorizationServers: ['https://login.example/tenant-1/v2.0', 'http://127.0.0.1:4000'],
    scopesSupported: ['read', 'write'],
    bearerMethodsSupported: ['header'],
    resourceName: 'Example API',
    resourceDocumentation: 'https://docs.example/api',
  })
  assert.deepEqual(JSON.parse(meta.json), {
    resource: 'https://api.example/',
    authorization_servers: ['https://login.example/tenant-1/v2.0', 'http://127.0.0.1:4000'],
    scopes_supported: ['read', 'write'],
    bearer_methods_supported: ['header'],
    resource_name: 'Example API',
    resource_documentation: 'https://docs.example/api',
  })
  assert.ok(Object.isFrozen(meta) && Object.isFrozen(meta.document) && Object.isFrozen(meta.document.scopes_supported))
  assert.deepEqual(JSON.parse(protectedResourceMetadata({ resource: 'https://api.example' }).json), { resource: 'https://api.example', bearer_methods_supported: ['header'] })
  const refused = [
    undefined,
    null,
    'https://api.example',
    [],
    {},
    { resource: '' },
    { resource: 'api.example' },
    { resource: 'http://api.example' },
    { resource: 'ftp://api.example' },
    { resource: 'https://api.example/#frag' },
    { resource: 'https://api.example/#' },
    { resource: 'https://user:pw@api.example' },
    { resource: new URL('https://api.example') },
    { resource: 0 },
    { resource: false },
    { resource: 'https://api.example', authorizationServers: [] },
    { resource: 'https://api.example', authorizationServers: ['not a url'] },
    { resource: 'https://api.example', authorizationServers: 'http://as.example' },
    { resource: 'https://api.example', scopesSupported: ['a b'] },
    { resource: 'https://api.example', scopesSupported: [''] },
    { resource: 'https://api.example', scopesSupported: [1] },
    { resource: 'https://api.example', bearerMethodsSupported: ['cookie'] },
    { resource: 'https://api.example', bearerMethodsSupported: [] },
    { resource: 'https://api.example', resourceName: '' },
    { resource: 'https://api.example', resourceName: 5 },
    { resource: 'https://api.example', resourceDocumentation: 'javascript:alert(1)' },
    { resource: 'https://api.example', jwks_uri: 'https://api.example/jwks' },
  ]
  for (const options of refused) assert.throws(() => protectedResourceMetadata(options), { name: 'TypeError' }, JSON.stringify(options))
})

test('the resourceMetadata option: a metadata object or an https URL; anything else refused when the middleware is made', () => {
  const meta = protectedResourceMetadata({ resource: 'https://api.example/v1' })
  assert.equal(resourceMetadataUrl(meta), 'https://api.example/.well-known/oauth-protected-resource/v1')
  assert.equal(resourceMetadataUrl('https://api.example/.well-known/oauth-protected-resource'), 'https://api.example/.well-known/oauth-protected-resource')
  assert.equal(resourceMetadataUrl(undefined), undefined)
  assert.equal(resourceMetadataUrl(null), undefined)
  for (const bad of ['', 'relative/path', 'http://api.example/m', 'https://api.example/m#x', 0, false, true, {}, [], { url: 'https://x' }]) {
    assert.throws(() => new AuthDecision({ accessSecret: SECRET }, { resourceMetadata: bad }), { name: 'TypeError' }, JSON.stringify(bad))
  }
})

test('the decision: insufficient_scope is a 403 with its challenge; the scopes come from the authenticator of either engine', () => {
  for (const engine of ['native', 'js']) {
    const d = new AuthDecision({ accessSecret: SECRET, clockTimestamp: NOW, requiredScope: ['read', 'write'], rateLimitMax: 0 }, { engine, resourceMetadata: 'https://api.example/.well-known/oauth-protected-resource' })
    const fail = d.decide({ headers: { authorization: `Bearer ${token({ sub: 'u', exp: NOW + 60, scope: 'read' }, SECRET)}` } })
    assert.equal(fail.action, 'fail')
    assert.equal(fail.status, 403)
    const header = new Map(fail.headers).get('WWW-Authenticate')
    assert.equal(header, 'Bearer error="insufficient_scope", error_description="Token lacks a required scope", scope="read write", resource_metadata="https://api.example/.well-known/oauth-protected-resource"')
    const pass = d.decide({ headers: { authorization: `Bearer ${token({ sub: 'u', exp: NOW + 60, scope: 'write read' }, SECRET)}` } })
    assert.equal(pass.action, 'pass', engine)
    assert.equal(new Map(pass.headers).get('WWW-Authenticate'), undefined)
  }
})
