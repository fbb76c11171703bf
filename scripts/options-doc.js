'use strict'

// Writes docs/options.md, the option reference, from contract/options.json: every options bag with each
// option's name, type, default, bounds and description, the helpers' option names and the
// renamed options. `npm run docs:options` rewrites the file; __test__/package/options-reference.test.js
// fails while the file differs from what this script makes, so the reference cannot drift from
// the schema both engines read.

const fs = require('node:fs')
const path = require('node:path')

const SCHEMA = require('../contract/options.json')
const OUT = path.join(__dirname, '..', 'docs', 'options.md')

// The bags with full entries, in reading order: [schema key(s), heading, where they are used].
const BAGS = [
  [['options', 'entryOptions'], 'Authenticator config', '`new Authenticator(config)`, `Authenticator.shared(config)` and `authenticateRequest(…, config)` of both engines (`store` only with `new`)'],
  [['middlewareOptions'], 'Middleware options', 'the second argument of `authShield` (`auth-shield/express`, `auth-shield/fastify`); Express adds `requestProperty`, Fastify `config`, `authenticator`, `hook` and `formatUser` ([middleware](middleware.md))'],
  [['storeOptions'], 'Store options', '`createRedisStore(client, options)` of `auth-shield/redis`; `store.attach(authenticator, options)` takes `lease`, `strict`, `maxKeys` and `outageShare` ([scale-out](scale-out.md))'],
  [['feedOptions'], 'Revocation feed options', '`new RevocationFeed(client, options)` of `auth-shield/redis` ([revocation](revocation.md))'],
  [['jwksOptions'], 'Remote JWKS options', '`createRemoteJwks(url, options)` of `auth-shield/jwks` ([jwks](jwks.md))'],
  [['introspectionOptions'], 'Introspection options', "a trusted issuer's `introspection` in `createTrustedIssuers([{ issuer, introspection }])` of `auth-shield/jwks` ([resource-server](resource-server.md#opaque-tokens-introspection))"],
]

const TYPES = {
  secret: 'string \\| Buffer',
  keySet: 'array of keys',
  signingKey: '{ kid, alg, privateKey }',
  issuerList: 'array of { issuer, keys?, audience?, algorithms?, tenant? }',
  stringList: 'string \\| string[]',
  domain: 'string (domain name)',
  limit: '{ capacity, refillPerSec }',
  store: 'RedisStore',
  custom: 'see description',
}

/** The type column: the kind, or the values of an enum. */
function typeOf(option) {
  if (option.kind === 'enum') return option.values.map((v) => `\`${JSON.stringify(v).replace(/"/g, "'")}\``).join(', ')
  return TYPES[option.kind] || option.kind
}

function defaultOf(option) {
  if (option.default === undefined) return option.required ? 'required' : '—'
  if (option.default === null) return '—'
  if (Array.isArray(option.default)) return `\`${option.default.join(' ')}\``
  return `\`${JSON.stringify(option.default).replace(/"/g, "'")}\``
}

function boundsOf(option) {
  if (option.kind === 'string' && option.max !== undefined) return `at most ${option.max} characters`
  if (option.kind === 'string' && option.nonEmpty) return 'not empty'
  if (option.min === undefined && option.max === undefined) return ''
  return `${option.exclusiveMin ? `> ${option.min}` : option.min} … ${option.max}`
}

const cell = (text) => String(text).replace(/\|/g, '\\|').replace(/\n/g, ' ')

/** The text of docs/options.md. */
function render() {
  const lines = [
    '# Option reference',
    '',
    '<!-- Generated from contract/options.json by `npm run docs:options` (scripts/options-doc.js); edit the',
    '     schema, not this file. __test__/package/options-reference.test.js holds the two equal. -->',
    '',
    'Every options object of auth-shield, read by one reader per engine from `contract/options.json`. In',
    'every one, an unknown or misspelt name is a `TypeError` with code `ERR_INVALID_ARG_TYPE`',
    '(`options.<name> is not a known option`), a value of the wrong kind a `TypeError`, a value',
    'past its bounds a `RangeError` with code `ERR_OUT_OF_RANGE`. An option left `undefined` (or',
    '`null` in the Authenticator config) takes its default. Bounds are inclusive; `> n` excludes `n`.',
    '',
  ]
  for (const [keys, heading, where] of BAGS) {
    lines.push(`## ${heading}`, '', `Read by ${where}.`, '', '| option | type | default | bounds | description |', '|---|---|---|---|---|')
    for (const option of keys.flatMap((k) => SCHEMA[k])) {
      lines.push(`| \`${option.name}\` | ${typeOf(option)} | ${defaultOf(option)} | ${boundsOf(option)} | ${cell(option.doc)} |`)
    }
    lines.push('')
  }
  lines.push(
    '## Options of the helpers and other calls',
    '',
    'Each accepts only these names, in both engines (the native binding reads them in Rust); the',
    'values are described with each call in [helpers](helpers.md), [api](api.md) and',
    '[revocation](revocation.md).',
    '',
    '| type | used by | names |',
    '|---|---|---|',
  )
  for (const c of SCHEMA.callOptions) {
    lines.push(`| \`${c.type}\` | ${c.usedBy.map((u) => `\`${u}\``).join(', ')} | ${c.names.map((n) => `\`${n}\``).join(', ')} |`)
  }
  lines.push(
    '',
    '## Renamed options',
    '',
    'The old name still works in both engines, with a one-time `DeprecationWarning` carrying the',
    'code below (`process.emitWarning`; `--no-deprecation` silences it); giving the old and the new',
    'name together is a `TypeError`. The old names go at 1.0. An old option whose value became one',
    'value of an enum has its values mapped too (the row says to what); any other value is a `TypeError`.',
    '',
    '| in | old name | new name | warning code | why |',
    '|---|---|---|---|---|',
  )
  for (const r of SCHEMA.renamed) {
    lines.push(`| \`${r.bag}\` | \`${r.name}\` | \`${r.use}\` | \`${r.code}\` | ${cell(r.why)} |`)
  }
  lines.push('')
  return lines.join('\n')
}

if (require.main === module) {
  fs.writeFileSync(OUT, render())
  console.log(`wrote ${path.relative(process.cwd(), OUT)}`)
}

module.exports = { render, OUT, BAGS }
