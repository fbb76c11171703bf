'use strict'

// auth-shield/mcp's types with the MCP SDK's own (docs/mcp.md's code, __test__/types/mcp/):
// the verifier is an OAuthTokenVerifier and the AuthInfo the SDK's, without a cast, under
// `strict` and `exactOptionalPropertyTypes`; and adapters/mcp.d.ts never brings in
// auth-shield/express's declaration of `req.auth` (the verified payload), which would clash
// with the SDK's (its AuthInfo, what mcpAuth sets).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const root = path.join(__dirname, '..', '..')
const project = path.join(root, '__test__', 'types', 'mcp')
const tsc = (args) => spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), ...args], { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })

test("auth-shield/mcp type-checks with the MCP SDK's types; auth-shield/express's req.auth stays out", () => {
  const listed = tsc(['-p', project, '--listFilesOnly'])
  assert.equal(listed.status, 0, listed.stdout + listed.stderr)
  const files = listed.stdout.split('\n').filter(Boolean).map((f) => path.relative(root, f))
  assert.ok(files.includes(path.join('adapters', 'mcp.d.ts')), 'adapters/mcp.d.ts is in the program')
  assert.deepEqual(files.filter((f) => f === path.join('adapters', 'express.d.ts')), [], 'auth-shield/express is not')
  const checked = tsc(['-p', project])
  assert.equal(checked.status, 0, checked.stdout + checked.stderr)
})
