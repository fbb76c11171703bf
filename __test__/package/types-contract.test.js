'use strict'

// The published types and the runtime tables describe the same facts: the ErrorCode union is
// exactly contract/error-codes.json (a new code cannot be forgotten in the types), the table is
// importable through package.json "exports", and the type check runs in the strictest mode
// users compile in.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '../..')
const TABLE = require('../../contract/error-codes.json')

/** The string literals of `export type <name> =` in a .d.ts text. */
function literalUnion(text, name) {
  const start = text.indexOf(`export type ${name} =`)
  assert.notEqual(start, -1, `${name} is declared`)
  const body = text.slice(start, text.indexOf('\n\n', start))
  return [...body.matchAll(/\|\s*'([a-z_]+)'/g)].map((m) => m[1])
}

test('the ErrorCode type lists exactly the codes of contract/error-codes.json, in its order', () => {
  for (const file of ['binding.d.ts', 'types/index-header.d.ts']) {
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
  const text = fs.readFileSync(path.join(__dirname, '..', 'types', 'tsconfig.json'), 'utf8')
  const config = JSON.parse(text.replace(/^\s*\/\/.*$/gm, ''))
  assert.equal(config.compilerOptions.strict, true)
  assert.equal(config.compilerOptions.exactOptionalPropertyTypes, true)
  const usage = fs.readFileSync(path.join(__dirname, '..', 'types', 'usage.ts'), 'utf8')
  assert.match(usage, /@ts-expect-error[^\n]*\n[^\n]*errorCode === 'token_expierd'/)
})

test('the type check refuses every name renamed in CHANGELOG.md, and compiles the names that replaced them', () => {
  const text = fs.readFileSync(path.join(__dirname, '..', 'types', 'tsconfig.json'), 'utf8')
  const config = JSON.parse(text.replace(/^\s*\/\/.*$/gm, ''))
  assert.ok(config.files.includes('vocabulary.ts'), 'vocabulary.ts is type-checked')
  assert.ok(config.files.includes('readme-express.mts'), 'the README example is type-checked')
  const file = fs.readFileSync(path.join(__dirname, '..', 'types', 'vocabulary.ts'), 'utf8')
  // Each old form sits on the line after an @ts-expect-error: tsc fails if that line compiles.
  const expected = (pattern) => assert.match(file, new RegExp(`@ts-expect-error[^\\n]*\\n[^\\n]*${pattern}`), pattern)
  expected('v\\.expiresAt\\b')
  expected('check\\.reason\\b')
  expected("parsed\\.error === 'malformed'")
  expected('verifyApiKey\\(row\\.hash, row\\.key, secret\\)')
  expected('hashApiKey\\(row\\.key, secret\\)')
  expected('okStatus: 200 = v\\.errorStatus')
  expected("r\\.errorCode === 'token_expierd'")
  // …and the new names compile (no directive on their lines).
  for (const name of ['v.expiresAtSec', 'check.errorCode', 'parsed.errorCode', 'verifyApiKey(row.hash, row.key, { secret })', 'req.requestId']) {
    const line = file.split('\n').findIndex((l) => l.includes(name))
    assert.ok(line > 0, name)
    assert.doesNotMatch(file.split('\n')[line - 1], /@ts-expect-error/, name)
  }
  const changelog = fs.readFileSync(path.join(root, 'CHANGELOG.md'), 'utf8')
  for (const old of ['expiresAt', 'reason', 'verifyApiKey(key, storedHash, secret)', 'hashApiKey(key, secret)', 'errorStatus: 200', 'resolveTenant(host, tenantHeader']) {
    assert.ok(changelog.includes(old), `CHANGELOG.md lists ${old}`)
  }
})

// Issue 22 §4: the Express onError's `res`, the Redis examples and revokeToken(v.jti, …).
const tsc = (args) =>
  require('node:child_process').spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), ...args], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })

test('the strict type check covers Express onError, the Redis examples of the docs and revokeToken(v.jti, v.expiresAtSec)', () => {
  const text = fs.readFileSync(path.join(__dirname, '..', 'types', 'tsconfig.json'), 'utf8')
  const config = JSON.parse(text.replace(/^\s*\/\/.*$/gm, ''))
  for (const file of ['express-on-error.mts', 'redis-examples.mts']) assert.ok(config.files.includes(file), file)
  const onError = fs.readFileSync(path.join(__dirname, '..', 'types', 'express-on-error.mts'), 'utf8')
  assert.match(onError, /onError: \(err, req, res, next\) => \{[\s\S]*?res\.status\(err\.status\)\.json\(/)
  assert.match(onError, /req: Request, res: Response, next: NextFunction/)
  const examples = fs.readFileSync(path.join(__dirname, '..', 'types', 'redis-examples.mts'), 'utf8')
  assert.match(examples, /revokeToken\(v\.jti, v\.expiresAtSec\)/)
  // The docs' lines as compiled (keep the two in step).
  const inBoth = (doc, line) => {
    assert.ok(fs.readFileSync(path.join(root, 'docs', doc), 'utf8').includes(line), `docs/${doc}: ${line}`)
    assert.ok(examples.includes(line), `redis-examples.mts: ${line}`)
  }
  inBoth('scale-out.md', "const client = createClient({ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' })")
  inBoth('scale-out.md', "if (!accessSecret) throw new Error('JWT_SECRET is not set')")
  inBoth('scale-out.md', "app.use('/api', authShield({ accessSecret }, { store }))")
  inBoth('revocation.md', "const feed = new RevocationFeed(client, { onStale: 'open' }).attach(authenticator)")
  inBoth('revocation.md', 'await authenticator.revokeToken(v.jti, v.expiresAtSec)')
})

test('auth-shield/express compiles without @types/express, and onError still has res.status()', () => {
  const project = path.join(__dirname, '..', 'types', 'without-express')
  const listed = tsc(['-p', project, '--listFilesOnly'])
  assert.equal(listed.status, 0, listed.stdout + listed.stderr)
  const files = listed.stdout.split('\n').filter(Boolean)
  assert.ok(files.some((f) => f.endsWith(`${path.sep}express.d.ts`) && !f.includes('node_modules')), 'express.d.ts is in the program')
  assert.deepEqual(files.filter((f) => /@types[\\/]express/.test(f)), [], 'no @types/express file is loaded')
  const checked = tsc(['-p', project])
  assert.equal(checked.status, 0, checked.stdout + checked.stderr)
  assert.match(fs.readFileSync(path.join(project, 'usage.mts'), 'utf8'), /res\.status\(err\.status\)\.json\(/)
})

test('revokeToken takes a verified token as it is, and one without jti or exp throws a TypeError (both engines)', () => {
  const secret = 'types-contract-secret-of-32-bytes-or-more'
  for (const lib of [require('../..'), require('../../js')]) {
    const auth = new lib.Authenticator({ accessSecret: secret })
    const v = auth.verifyAccessToken(auth.signAccessToken({ sub: 'u' }))
    assert.equal(v.valid, true)
    assert.equal(typeof v.jti, 'string', 'tokens this library signs carry a jti')
    auth.revokeToken(v.jti, v.expiresAtSec)
    assert.equal(auth.verifyAccessToken(auth.signAccessToken({ sub: 'u' })).valid, true)
    const noJti = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'jti must be a string' }
    assert.throws(() => auth.revokeToken(undefined, v.expiresAtSec), noJti)
    const noExp = { name: 'TypeError', code: 'ERR_INVALID_ARG_TYPE', message: 'expiresAtSec must be a number' }
    assert.throws(() => auth.revokeToken(v.jti, undefined), noExp)
  }
})
