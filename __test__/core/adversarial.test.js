'use strict'

// The adversarial corpus: what an attacker sends first. Every case runs through the native
// Authenticator and the pure-JS engine, and each must be refused with the code the contract
// names (contract/error-codes.json gives the status). Tokens are built by hand with node:crypto so
// neither engine's signer shapes its own inputs.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { createHmac, generateKeyPairSync, createSign } = require('node:crypto')
const native = require('../..')
const js = require('../../js')
const codes = require('../../contract/error-codes.json')
const { b64url, rawToken, token, HS256 } = require('../support/tokens')

const NOW = 1_700_000_000
const SECRET = 'adversarial-access-secret-0123456789abcdef'
const CLAIMS = { sub: 'alice', exp: NOW + 600 }
const BASE = { accessSecret: SECRET, clockTimestamp: NOW, rateLimitMax: 0 }

const ENGINES = [
  ['native', native],
  ['js', js],
]

function engines(config = {}) {
  return ENGINES.map(([name, lib]) => [name, new lib.Authenticator({ ...BASE, ...config })])
}

/** Asserts that both engines refuse the request with `code` (and the table's status). */
function refuses(code, authorization, { tenant, host, config } = {}) {
  for (const [name, auth] of engines(config)) {
    const r = auth.authenticate(authorization, tenant, host)
    const shown = typeof authorization === 'string' ? JSON.stringify(authorization.slice(0, 120)) : authorization
    assert.equal(r.authenticated, false, `${name} authenticated ${shown}`)
    assert.equal(r.errorCode, code, `${name}: ${shown}`)
    assert.equal(r.errorStatus, codes[code].status, `${name}: status of ${code}`)
    assert.equal(r.userId, undefined)
    assert.equal(r.tenantId, undefined)
  }
}

function accepts(authorization, { tenant, host, config } = {}) {
  return engines(config).map(([name, auth]) => {
    const r = auth.authenticate(authorization, tenant, host)
    assert.equal(r.authenticated, true, `${name}: ${r.errorCode} for ${String(authorization).slice(0, 120)}`)
    return r
  })
}

const bearer = (t) => `Bearer ${t}`
const sign = (input, secret = SECRET) => createHmac('sha256', secret).update(input).digest('base64url')
/** A token whose payload is raw JSON text, signed with the right secret. */
const withPayload = (json, header = HS256) => bearer(rawToken(header, json, SECRET))

/** Every upper/lower-case spelling of `word`. */
function casings(word) {
  let out = ['']
  for (const ch of word) out = out.flatMap((p) => [p + ch.toLowerCase(), p + ch.toUpperCase()])
  return [...new Set(out)]
}

test('a correctly signed token is accepted by both engines (the corpus baseline)', () => {
  const [n, j] = accepts(bearer(token(CLAIMS, SECRET)))
  assert.equal(n.userId, 'alice')
  assert.equal(j.userId, 'alice')
})

test('alg "none" is refused in every casing, with or without a signature', () => {
  const spellings = casings('none')
  assert.equal(spellings.length, 16)
  for (const alg of spellings) {
    const header = JSON.stringify({ alg, typ: 'JWT' })
    const unsigned = `${b64url(header)}.${b64url(JSON.stringify(CLAIMS))}.`
    refuses('unsupported_algorithm', bearer(unsigned))
    refuses('unsupported_algorithm', bearer(rawToken(header, JSON.stringify(CLAIMS), SECRET)))
    // Two segments only: structure fails first.
    refuses('malformed_token', bearer(unsigned.slice(0, -1)))
  }
})

test('near-miss spellings of HS256 are unsupported algorithms', () => {
  for (const alg of ['hs256', 'Hs256', 'HS256 ', ' HS256', 'HS256\u0000', 'HS-256', 'HS2560', 'ＨＳ256', '']) {
    refuses('unsupported_algorithm', bearer(rawToken(JSON.stringify({ alg }), JSON.stringify(CLAIMS), SECRET)))
  }
  for (const header of ['{}', '{"typ":"JWT"}', '{"alg":null}', '{"alg":256}', '{"alg":["HS256"]}', '{"alg":{"name":"HS256"}}']) {
    refuses('unsupported_algorithm', bearer(rawToken(header, JSON.stringify(CLAIMS), SECRET)))
  }
})

test('algorithm confusion: other algorithms in the header are refused even when HMAC-signed with the secret', () => {
  for (const alg of ['HS384', 'HS512', 'RS256', 'RS512', 'PS256', 'ES256', 'ES512', 'EdDSA']) {
    refuses('unsupported_algorithm', bearer(rawToken(JSON.stringify({ alg, typ: 'JWT' }), JSON.stringify(CLAIMS), SECRET)))
  }
})

test('algorithm confusion: a public key used as the HMAC secret does not verify', () => {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const pem = publicKey.export({ type: 'spki', format: 'pem' })
  // The classic attack: HS256 signed with the server's public key as the secret.
  refuses('invalid_signature', bearer(rawToken(HS256, JSON.stringify(CLAIMS), pem)))
  // A genuine RS256 token is refused for its algorithm, not verified with anything.
  const header = b64url(JSON.stringify({ alg: 'RS256', typ: 'JWT' }))
  const input = `${header}.${b64url(JSON.stringify(CLAIMS))}`
  const rs = createSign('RSA-SHA256').update(input).sign(privateKey).toString('base64url')
  refuses('unsupported_algorithm', bearer(`${input}.${rs}`))
  // An RS256 header "verified" with the PEM as an HMAC secret: still an unsupported algorithm.
  refuses('unsupported_algorithm', bearer(`${input}.${sign(input, pem)}`))
  // And an authenticator whose secret is that very PEM is never built (docs/keys.md; every form
  // and place: public-key-secrets.test.js).
  for (const [name, lib] of ENGINES) {
    assert.throws(() => new lib.Authenticator({ ...BASE, accessSecret: pem }), { name: 'TypeError', code: 'ERR_INVALID_ARG_VALUE' }, name)
  }
})

test('header members that point elsewhere (jku, x5u, jwk, kid) are never followed', () => {
  const header = JSON.stringify({ alg: 'HS256', jku: 'https://evil.example/jwks', x5u: 'https://evil.example/c', jwk: { kty: 'oct', k: 'AAAA' } })
  // Signed with our secret: accepted, the extra members ignored.
  accepts(withPayload(JSON.stringify(CLAIMS), header))
  // Signed with the key the header offers: refused.
  refuses('invalid_signature', bearer(rawToken(header, JSON.stringify(CLAIMS), Buffer.alloc(3))))
  // A kid must name one of our keys (docs/keys.md); a path or a query is just no key's name.
  for (const kid of ['../../etc/passwd', "' OR 1=1 --"]) {
    const withKid = JSON.stringify({ ...JSON.parse(header), kid })
    refuses('unknown_key', withPayload(JSON.stringify(CLAIMS), withKid))
    refuses('unknown_key', bearer(rawToken(withKid, JSON.stringify(CLAIMS), Buffer.alloc(3))))
  }
  // A critical extension we do not implement makes the token invalid (RFC 7515 §4.1.11).
  refuses('malformed_token', withPayload(JSON.stringify(CLAIMS), '{"alg":"HS256","crit":["exp"],"exp":1}'))
})

test('stripped, truncated, extended and swapped signatures are refused', () => {
  const good = token(CLAIMS, SECRET)
  const [h, p, s] = good.split('.')
  refuses('invalid_signature', bearer(`${h}.${p}.`))
  refuses('malformed_token', bearer(`${h}.${p}`))
  refuses('malformed_token', bearer(`${h}.${p}.${s}.${s}`))
  refuses('malformed_token', bearer(`${h}..${p}.${s}`))
  // 31 and 33 bytes of MAC.
  const mac = Buffer.from(s, 'base64url')
  refuses('invalid_signature', bearer(`${h}.${p}.${mac.subarray(0, 31).toString('base64url')}`))
  refuses('invalid_signature', bearer(`${h}.${p}.${Buffer.concat([mac, Buffer.from([0])]).toString('base64url')}`))
  refuses('invalid_signature', bearer(`${h}.${p}.${Buffer.alloc(32).toString('base64url')}`))
  // Another valid token's signature on this payload.
  const other = token({ ...CLAIMS, sub: 'mallory' }, SECRET).split('.')
  refuses('invalid_signature', bearer(`${h}.${other[1]}.${s}`))
  refuses('invalid_signature', bearer(`${h}.${p}.${other[2]}`))
  // Signed with another secret, a prefix of it, or its upper-case form. (A secret shorter than
  // 64 bytes plus trailing NULs is the same HMAC key, RFC 2104 §2: see docs/security-model.md.)
  for (const secret of ['wrong-secret-wrong-secret-wrong-secret!', SECRET.slice(0, -1), SECRET.toUpperCase(), SECRET + 'x']) {
    refuses('invalid_signature', bearer(token(CLAIMS, secret)))
  }
})

test('non-canonical base64url is malformed, not an alias of a valid token', () => {
  const good = token(CLAIMS, SECRET)
  const [h, p, s] = good.split('.')
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  // A 32-byte MAC is 43 characters whose last one carries two unused bits: set one of them.
  const last = alphabet.indexOf(s[42])
  const aliased = s.slice(0, 42) + alphabet[last ^ 1]
  assert.deepEqual(Buffer.from(aliased, 'base64url'), Buffer.from(s, 'base64url'), 'a lenient decoder sees the same MAC')
  refuses('malformed_token', bearer(`${h}.${p}.${aliased}`))
  // Padding, standard-alphabet characters and a lone character in any segment.
  refuses('malformed_token', bearer(`${h}.${p}.${s}=`))
  refuses('malformed_token', bearer(`${h}.${p}.${s}==`))
  refuses('invalid_authorization_format', bearer(`${h}=.${p}.${s}`))
  refuses('malformed_token', bearer(`${h}.${p}.${s.replace(/-/g, '+').replace(/_/g, '/')}${/[-_]/.test(s) ? '' : '+'}`))
  refuses('malformed_token', bearer(`${h.replace(/.$/, '+')}.${p}.${s}`))
  refuses('malformed_token', bearer(`A.${p}.${s}`))
  refuses('malformed_token', bearer(`${h}.${p}A.${s}`))
  // Characters outside the b64token grammar never reach the decoder.
  for (const ch of ['!', '*', '%', '\\', '"', ',', ';', '@', '\u00e9']) {
    refuses('invalid_authorization_format', bearer(`${h}.${p}${ch}.${s}`))
  }
})

test('duplicate JSON keys: alg and every known claim, also spelled with escapes', () => {
  refuses('malformed_token', withPayload(JSON.stringify(CLAIMS), '{"alg":"HS256","alg":"HS256"}'))
  refuses('malformed_token', withPayload(JSON.stringify(CLAIMS), '{"alg":"none","alg":"HS256"}'))
  refuses('malformed_token', withPayload(JSON.stringify(CLAIMS), '{"alg":"HS256","\\u0061lg":"none"}'))
  const values = { sub: '"bob"', exp: String(NOW + 60), nbf: String(NOW - 60), iat: String(NOW), iss: '"x"', aud: '"y"', jti: '"j"', email: '"e@x"', role: '"admin"', tenant_id: '"acme"', type: '"access"' }
  for (const [name, value] of Object.entries(values)) {
    const base = { sub: 'alice', exp: NOW + 600 }
    delete base[name]
    refuses('malformed_token', withPayload(`${JSON.stringify(base).slice(0, -1)},"${name}":${value},"${name}":${value}}`))
  }
  // The second spelling of "sub" differs only by an escape: a parser that keeps the last wins would say "admin".
  refuses('malformed_token', withPayload(`{"sub":"alice","s\\u0075b":"admin","exp":${NOW + 600}}`))
  // Unknown members may repeat (as JSON allows): they are ignored.
  accepts(withPayload(`{"sub":"alice","exp":${NOW + 600},"x":1,"x":2}`))
})

test('claims of the wrong JSON type are invalid_claims; non-object payloads are malformed', () => {
  const wrongForString = ['1', 'true', 'null', '{}', '["a"]', '[]']
  for (const name of ['sub', 'iss', 'jti', 'email', 'role', 'tenant_id', 'type']) {
    for (const v of wrongForString) {
      const claims = JSON.stringify({ ...CLAIMS, [name]: undefined }).slice(0, -1)
      refuses('invalid_claims', withPayload(`${claims},"${name}":${v}}`))
    }
  }
  for (const name of ['exp', 'nbf', 'iat']) {
    for (const v of ['"1"', 'true', 'null', '{}', '[1]']) {
      refuses('invalid_claims', withPayload(`{"sub":"alice",${name === 'exp' ? '' : `"exp":${NOW + 600},`}"${name}":${v}}`))
    }
  }
  for (const v of ['1', 'null', 'true', '{}', '[1]', '["api",1]', '[null]']) {
    refuses('invalid_claims', withPayload(`{"sub":"alice","exp":${NOW + 600},"aud":${v}}`))
  }
  for (const payload of ['[]', '"alice"', '1', 'null', 'true', '', ' ', '{', '{"sub":"alice",}', "{'sub':'alice'}", '{"sub":"alice"} {}']) {
    refuses('malformed_token', withPayload(payload))
  }
  for (const header of ['[]', '"HS256"', 'null', '{"alg":"HS256",}', '']) {
    refuses('malformed_token', withPayload(JSON.stringify(CLAIMS), header))
  }
  // Invalid UTF-8 and lone surrogates in a known claim.
  refuses('malformed_token', withPayload(`{"sub":"al\u00ffice","exp":${NOW + 600}}`))
  refuses('malformed_token', withPayload(`{"sub":"\\ud800","exp":${NOW + 600}}`))
})

test('huge numbers: overflow to infinity is malformed, finite extremes are ordinary numbers', () => {
  for (const name of ['exp', 'nbf', 'iat']) {
    for (const n of ['1e400', '-1e400', '9'.repeat(400), `-${'9'.repeat(400)}`, '1.7976931348623159e308']) {
      const others = name === 'exp' ? '' : `"exp":${NOW + 600},`
      refuses('malformed_token', withPayload(`{"sub":"alice",${others}"${name}":${n}}`))
    }
  }
  // Finite but absurd: the far future is not expired, the far past is.
  accepts(withPayload('{"sub":"alice","exp":1e308}'))
  accepts(withPayload(`{"sub":"alice","exp":${'9'.repeat(300)}}`))
  refuses('token_expired', withPayload('{"sub":"alice","exp":-1e308}'))
  refuses('token_expired', withPayload('{"sub":"alice","exp":5e-324}'))
  refuses('token_not_yet_valid', withPayload(`{"sub":"alice","exp":1e308,"nbf":${'9'.repeat(300)}}`))
  accepts(withPayload(`{"sub":"alice","exp":${NOW + 600},"nbf":-1e308,"iat":-0}`))
  // Unknown claims are skipped, whatever their size.
  accepts(withPayload(`{"sub":"alice","exp":${NOW + 600},"x":1e400}`))
})

test('deeply nested JSON is refused or skipped without blowing the stack', () => {
  const config = { maxTokenBytes: 1024 * 1024 }
  const depth = 100_000
  const nested = '['.repeat(depth) + ']'.repeat(depth)
  // In an unknown claim it is only grammar-checked (both engines skip it without recursion).
  accepts(withPayload(`{"sub":"alice","exp":${NOW + 600},"x":${nested}}`), { config })
  // As a known claim it is a value of the wrong type (an array that is not of strings).
  refuses('invalid_claims', withPayload(`{"sub":"alice","exp":${NOW + 600},"aud":${nested}}`), { config })
  refuses('malformed_token', withPayload(`{"sub":"alice","exp":${NOW + 600},"x":${'['.repeat(depth)}}`), { config })
  refuses('malformed_token', withPayload(JSON.stringify(CLAIMS), `{"alg":"HS256","x":${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`), { config })
  const objects = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth)
  accepts(withPayload(`{"sub":"alice","exp":${NOW + 600},"x":${objects}}`), { config })
})

test('tokens of megabytes are refused by size, cheaply', () => {
  for (const size of [8193, 1024 * 1024, 16 * 1024 * 1024]) {
    refuses('token_too_large', bearer('a'.repeat(size)))
  }
  refuses('token_too_large', bearer(`${'a'.repeat(600_000)}.${'b'.repeat(600_000)}.c`), { config: { maxTokenBytes: 1024 * 1024 } })
  // At the 1 MiB cap the whole chain runs on a megabyte of valid base64url.
  const huge = token({ ...CLAIMS, pad: 'x'.repeat(700_000) }, SECRET)
  assert.ok(huge.length > 900_000 && huge.length <= 1024 * 1024)
  accepts(bearer(huge), { config: { maxTokenBytes: 1024 * 1024 } })
  refuses('token_too_large', bearer(huge))
  refuses('invalid_signature', bearer(huge.slice(0, -2) + (huge.endsWith('AA') ? 'BA' : 'AA')), { config: { maxTokenBytes: 1024 * 1024 } })
})

test('control characters and non-ASCII in the Authorization header are format errors', () => {
  const good = token(CLAIMS, SECRET)
  for (const ch of ['\u0000', '\t', '\n', '\r', '\r\n', '\u000b', '\u001f', '\u007f', '\u0085', '\u00a0', '\u2028', '\ufeff', '\ud800']) {
    refuses('invalid_authorization_format', `Bearer ${good.slice(0, 20)}${ch}${good.slice(20)}`)
    refuses('invalid_authorization_format', `Bearer ${good}${ch}`)
    refuses('invalid_authorization_format', `Bearer${ch}${good}`)
  }
  refuses('invalid_authorization_format', `Bearer ${good} `)
  refuses('invalid_authorization_format', ` Bearer ${good}`)
  refuses('invalid_authorization_format', `Bearer\u00a0${good}`)
  refuses('invalid_authorization_format', `Beärer ${good}`)
  refuses('invalid_authorization_format', `Basic ${good}`)
  refuses('invalid_authorization_format', `Bearer ${good}, Bearer ${good}`)
  refuses('missing_authorization', '')
  refuses('missing_authorization', undefined)
  refuses('missing_authorization', null)
})

test('Host headers with ports, IPv6, trailing dots, case and unicode resolve safely', () => {
  const t = bearer(token(CLAIMS, SECRET))
  const tenantOf = (host, config) => accepts(t, { host, config }).map((r) => r.tenantId)
  const same = (host, expected, config) => assert.deepEqual(tenantOf(host, config), [expected, expected], host)
  same('acme.example.com', 'acme')
  same('acme.example.com:8443', 'acme')
  same('ACME.Example.COM.', 'acme')
  same('acme.example.com.:80', 'acme')
  same('xn--bcher-kva.example.com', 'xn--bcher-kva')
  for (const host of ['[::1]', '[::1]:3000', '[2001:db8::1]:443', '[::ffff:10.0.0.1]', '127.0.0.1', '127.0.0.1:8080', '10.0.0.1.', 'localhost', 'localhost:3000', 'acme.localhost', 'example', 'www.example.com', 'WWW.example.com:443', '.', ':80', '']) {
    same(host, undefined)
  }
  // With a base domain only its direct subdomains name a tenant.
  const config = { baseDomain: 'example.com' }
  same('acme.example.com', 'acme', config)
  same('a.b.example.com', undefined, config)
  same('acme.example.org', undefined, config)
  same('acme.example.com.evil.org', undefined, config)
  // A label that is not a safe tenant id is refused, not passed on.
  for (const host of ['exämple.example.com', 'ａｃｍｅ.example.com', 'ac me.example.com', '-acme.example.com', 'acme%0a.example.com', `${'a'.repeat(64)}.example.com`, 'ac\u0000me.example.com', 'acme\r\nx.example.com']) {
    refuses('invalid_tenant', t, { host })
  }
})

test('tenant ids meant for log, header or key injection are refused with invalid_tenant', () => {
  const t = bearer(token(CLAIMS, SECRET))
  const hostile = [
    'acme\nlevel=info msg="admin login"',
    'acme\r\nSet-Cookie: s=1',
    'acme:other',
    'acme:',
    '../etc/passwd',
    "acme' OR '1'='1",
    'acme;drop',
    'acme%0a',
    'acme\u0000',
    ' acme',
    'acme ',
    '_acme',
    '-acme',
    'ａｃｍｅ',
    'acmé',
    'a'.repeat(64),
    '${jndi:ldap://x}',
    '*',
  ]
  for (const tenant of hostile) {
    refuses('invalid_tenant', t, { tenant })
    refuses('invalid_tenant', bearer(token({ ...CLAIMS, tenant_id: tenant }, SECRET)))
  }
  // The longest safe id passes.
  assert.deepEqual(accepts(t, { tenant: 'a'.repeat(63) }).map((r) => r.tenantId), ['a'.repeat(63), 'a'.repeat(63)])
})

test('rate-limit keys cannot be forged across users and tenants', () => {
  // "alice:acme" without a tenant and "alice" in tenant "acme" must not share a bucket, and a
  // tenant only asked for (header, Host) buys no bucket of its own (issue 12).
  for (const [name, lib] of ENGINES) {
    const auth = new lib.Authenticator({ ...BASE, rateLimitMax: 1, rateLimitRefillPerSec: 1e-6 })
    assert.equal(auth.authenticate(bearer(token({ ...CLAIMS, sub: 'alice:acme' }, SECRET))).authenticated, true, name)
    assert.equal(auth.authenticate(bearer(token({ ...CLAIMS, sub: 'alice', tenant_id: 'acme' }, SECRET))).authenticated, true, name)
    assert.equal(auth.authenticate(bearer(token({ ...CLAIMS, sub: 'acme:alice' }, SECRET))).authenticated, true, name)
    const plain = bearer(token({ ...CLAIMS, sub: 'alice' }, SECRET))
    assert.equal(auth.authenticate(plain, 'acme').authenticated, true, `${name}: alice without a tenant claim has her own bucket`)
    assert.equal(auth.authenticate(plain, 'globex').errorCode, 'rate_limited', `${name}: a header tenant is no new bucket`)
    assert.equal(auth.authenticate(plain, undefined, 'initech.example.com').errorCode, 'rate_limited', `${name}: nor a Host tenant`)
    assert.equal(auth.authenticate(bearer(token({ ...CLAIMS, sub: 'alice:acme' }, SECRET))).errorCode, 'rate_limited', name)
  }
})

test('headers are read only up to a cap: padding past it cannot smuggle a token in', () => {
  // Both engines read at most maxTokenBytes + 1024 bytes of Authorization (1024 of the tenant
  // header and Host), so a 16 MB header costs a few KB. A token pushed past the cap by spaces
  // is never seen: the header is a format error rather than the token it ends with.
  const good = token(CLAIMS, SECRET)
  accepts(`Bearer ${' '.repeat(9000)}${good}`)
  refuses('invalid_authorization_format', `Bearer ${' '.repeat(20_000)}${good}`)
  refuses('invalid_tenant', bearer(good), { tenant: `acme${' '.repeat(5000)}` })
  refuses('invalid_tenant', bearer(good), { host: `${'a'.repeat(70)}.example.com` })
  // Cut at 1024 bytes this Host is one label, which names no tenant (as "localhost" would not).
  assert.deepEqual(accepts(bearer(good), { host: `${'a'.repeat(5000)}.example.com` }).map((r) => r.tenantId), [undefined, undefined])
})

test('verifyAccessToken and verifyRefreshToken refuse the same corpus with the same codes', () => {
  const cases = [
    ['unsupported_algorithm', `${b64url('{"alg":"none"}')}.${b64url(JSON.stringify(CLAIMS))}.`],
    ['unsupported_algorithm', rawToken('{"alg":"HS512"}', JSON.stringify(CLAIMS), SECRET)],
    ['malformed_token', rawToken('{"alg":"HS256","alg":"HS256"}', JSON.stringify(CLAIMS), SECRET)],
    ['malformed_token', rawToken(HS256, `{"sub":"a","exp":1e400}`, SECRET)],
    ['malformed_token', 'a.b'],
    ['malformed_token', ''],
    ['invalid_signature', token(CLAIMS, 'another-secret-another-secret-another!')],
    ['invalid_claims', token({ ...CLAIMS, sub: 42 }, SECRET)],
    ['token_too_large', 'a'.repeat(9000)],
  ]
  for (const [name, auth] of engines({ refreshSecret: SECRET })) {
    for (const [code, t] of cases) {
      for (const v of [auth.verifyAccessToken(t), auth.verifyRefreshToken(t)]) {
        assert.equal(v.valid, false, `${name}: ${t.slice(0, 60)}`)
        assert.equal(v.errorCode, code, `${name}: ${t.slice(0, 60)}`)
        assert.equal(v.userId, undefined)
      }
    }
    // An access token is not a refresh token, even under one shared secret.
    assert.equal(auth.verifyRefreshToken(token({ ...CLAIMS, type: 'access' }, SECRET)).errorCode, 'wrong_token_type', name)
    assert.equal(auth.verifyAccessToken(token({ ...CLAIMS, type: 'refresh' }, SECRET)).errorCode, 'wrong_token_type', name)
  }
})
