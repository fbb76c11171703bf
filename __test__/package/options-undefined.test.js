'use strict'

// docs/options.md: an option left `undefined` takes its default. The types say so too: every
// option of contract/options.json, given as `undefined`, compiles under strict and
// exactOptionalPropertyTypes in the options type of each entry that takes it (a generated
// module, type-checked like __test__/types; it fails when an option is missing from a type, or
// its type refuses `undefined`).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const contract = require('../../contract/options.json')

const root = path.join(__dirname, '..', '..')
const out = path.join(root, '__test__', 'types', 'options-undefined')

// [contract bag, import, type, names the entry does not take (with why)]
const ENTRIES = [
  ['options', "import type { AuthConfigOptions as T } from 'auth-shield'", 'T', []],
  ['middlewareOptions', "import type { ExpressAuthShieldOptions as T } from 'auth-shield/express'", 'T', []],
  ['middlewareOptions', "import type { FastifyAuthShieldOptions as T } from 'auth-shield/fastify'", 'T', []],
  ['middlewareOptions', "import type { KoaAuthShieldOptions as T } from 'auth-shield/koa'", 'T', []],
  // The Fetch entry answers every refusal itself: no onError, and errors is 'respond' only (options.json valuesFor).
  ['middlewareOptions', "import type { FetchVerifierOptions as T } from 'auth-shield/fetch'", 'T', ['onError']],
  ['jwksOptions', "import type { RemoteJwksOptions as T } from 'auth-shield/jwks'", 'T', []],
  // clientId is required (no default): every other option is tried alone, beside it.
  ['introspectionOptions', "import type { TrustedIssuerIntrospectionOptions as T } from 'auth-shield/jwks'", "Omit<T, 'clientId'>", ['clientId']],
  ['storeOptions', "import type { RedisStoreOptions as T } from 'auth-shield/redis'", 'T', []],
  ['feedOptions', "import type { RevocationFeedOptions as T } from 'auth-shield/redis'", 'T', []],
]

test('every option of contract/options.json may be given as undefined in the types of each entry', () => {
  fs.rmSync(out, { recursive: true, force: true })
  fs.mkdirSync(out, { recursive: true })
  const files = []
  ENTRIES.forEach(([bag, importLine, type, without], i) => {
    const names = contract[bag].map((o) => o.name).filter((n) => !without.includes(n))
    assert.ok(names.length > 0, bag)
    // One declaration per option, so that an error names it.
    const body = names.map((n, k) => `export const option${k}: ${type} = { ${JSON.stringify(n)}: undefined }`).join('\n')
    const file = `entry-${i}.mts`
    fs.writeFileSync(path.join(out, file), `${importLine}\n// ${bag}\n${body}\n`)
    files.push(file)
  })
  fs.writeFileSync(path.join(out, 'tsconfig.json'), JSON.stringify({ extends: '../tsconfig.json', files }, null, 2))
  const tsc = path.join(path.dirname(require.resolve('typescript/package.json', { paths: [root] })), 'bin', 'tsc')
  const run = spawnSync(process.execPath, [tsc, '-p', path.join(out, 'tsconfig.json'), '--pretty', 'false'], { cwd: root, encoding: 'utf8' })
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`)
  fs.rmSync(out, { recursive: true, force: true })
})
