'use strict'

// The published types and the runtime tables describe the same facts: the ErrorCode union is
// exactly js/error-codes.json (a new code cannot be forgotten in the types), the table is
// importable through package.json "exports", and the type check runs in the strictest mode
// users compile in.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..')
const TABLE = require('../js/error-codes.json')

/** The string literals of `export type <name> =` in a .d.ts text. */
function literalUnion(text, name) {
  const start = text.indexOf(`export type ${name} =`)
  assert.notEqual(start, -1, `${name} is declared`)
  const body = text.slice(start, text.indexOf('\n\n', start))
  return [...body.matchAll(/\|\s*'([a-z_]+)'/g)].map((m) => m[1])
}

test('the ErrorCode type lists exactly the codes of js/error-codes.json, in its order', () => {
  for (const file of ['index.d.ts', 'types/index-header.d.ts']) {
    const text = fs.readFileSync(path.join(root, file), 'utf8')
    assert.deepEqual(literalUnion(text, 'ErrorCode'), Object.keys(TABLE), file)
  }
})

test('the failure-code table is importable as auth-shield/error-codes.json and auth-shield/js/error-codes.json', () => {
  // Resolved through package.json "exports" (the package's self-reference), as a user resolves it.
  assert.deepEqual(require('auth-shield/error-codes.json'), TABLE)
  assert.deepEqual(require('auth-shield/js/error-codes.json'), TABLE)
  for (const [code, { status, message }] of Object.entries(TABLE)) {
    assert.match(code, /^[a-z_]+$/)
    assert.ok([400, 401, 403, 429, 503].includes(status), code)
    assert.equal(typeof message, 'string')
  }
})

test('the type check runs under strict and exactOptionalPropertyTypes, and pins a misspelt code', () => {
  const text = fs.readFileSync(path.join(__dirname, 'types', 'tsconfig.json'), 'utf8')
  const config = JSON.parse(text.replace(/^\s*\/\/.*$/gm, ''))
  assert.equal(config.compilerOptions.strict, true)
  assert.equal(config.compilerOptions.exactOptionalPropertyTypes, true)
  const usage = fs.readFileSync(path.join(__dirname, 'types', 'usage.ts'), 'utf8')
  assert.match(usage, /@ts-expect-error[^\n]*\n[^\n]*errorCode === 'token_expierd'/)
})
