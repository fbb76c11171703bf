'use strict'

// docs/migrating.md against the code (issue 22 §4): integer user ids in `sub`, which
// express-jwt, passport-jwt and @fastify/jwt pass through, are refused here, and the page says so.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const jsonwebtoken = require('jsonwebtoken')

const SECRET = 'migrating-docs-secret-0123456789abcdef'
const ENGINES = [
  ['native', require('../..')],
  ['js', require('../../js')],
]

test('a numeric sub is refused (invalid_claims, even with requireSubject: false) and cannot be signed, as docs/migrating.md says', () => {
  const numeric = jsonwebtoken.sign({ sub: 42 }, SECRET, { expiresIn: 600 })
  assert.equal(jsonwebtoken.verify(numeric, SECRET).sub, 42, 'jsonwebtoken (under express-jwt) passes it through')
  for (const [name, lib] of ENGINES) {
    for (const requireSubject of [true, false]) {
      const result = new lib.Authenticator({ accessSecret: SECRET, requireSubject }).authenticate(`Bearer ${numeric}`)
      assert.equal(result.authenticated, false, name)
      assert.equal(result.errorCode, 'invalid_claims', name)
      assert.equal(result.errorStatus, 401, name)
    }
    const auth = new lib.Authenticator({ accessSecret: SECRET })
    assert.throws(() => auth.signAccessToken({ sub: 42 }), { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE' }, name)
    assert.equal(auth.authenticate(`Bearer ${auth.signAccessToken({ sub: String(42) })}`).userId, '42', name)
  }
  const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'migrating.md'), 'utf8')
  assert.match(doc, /\*\*`sub` must be a string\.\*\*/)
  assert.match(doc, /`invalid_claims`, even with `requireSubject: false`/)
  assert.match(doc, /`sub: String\(user\.id\)`/)
})
