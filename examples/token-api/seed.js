#!/usr/bin/env node
'use strict'

// `npm run seed [-- --count N --password P --prefix user]`: creates load-test users
// user1..userN. One Argon2id hash is computed and shared by all of them (same salt): fine for
// throwaway test accounts, never for real ones. 10,000 users take well under a second.

const { hashPassword } = require('auth-shield')
const { loadStorageConfig } = require('./config')
const { openDatabase } = require('./database')

const USAGE = 'usage: node examples/token-api/seed.js [--count N] [--password P] [--prefix NAME]'
const DEFAULTS = { count: 10000, password: 'seed-password', prefix: 'user' }

function parseArgs(argv) {
  const args = { ...DEFAULTS }
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]]
    if (value === undefined) throw new Error(`missing value after ${flag}`)
    if (flag === '--count') {
      args.count = Number(value)
      if (!Number.isInteger(args.count) || args.count < 1 || args.count > 1e7) {
        throw new Error('--count must be an integer from 1 to 10000000')
      }
    } else if (flag === '--password') {
      if (value.length < 8 || value.length > 1024) throw new Error('--password must be 8 to 1024 characters')
      args.password = value
    } else if (flag === '--prefix') {
      if (!/^[A-Za-z][A-Za-z0-9._-]{1,40}$/.test(value)) {
        throw new Error('--prefix must be 2 to 41 letters, digits or . _ -, starting with a letter')
      }
      args.prefix = value
    } else {
      throw new Error(`unknown argument ${JSON.stringify(flag)}`)
    }
  }
  return args
}

async function seed({ count, password, prefix }, env = process.env) {
  const config = loadStorageConfig(env)
  const started = Date.now()
  const hash = await hashPassword(password, config.argon2)
  const db = openDatabase(config.dataDir)
  try {
    const added = db.users.seed(prefix, count, hash)
    return { added, existing: count - added, total: db.users.count(), ms: Date.now() - started, dataDir: config.dataDir }
  } finally {
    db.close()
  }
}

if (require.main === module) {
  let args
  try {
    args = parseArgs(process.argv.slice(2))
  } catch (err) {
    console.error(`${err.message}\n${USAGE}`)
    process.exit(2)
  }
  seed(args).then(
    (r) => {
      console.log(
        `seeded ${r.added} users (${r.existing} already there) as ${args.prefix}1..${args.prefix}${args.count} ` +
          `with password "${args.password}" in ${r.ms} ms; ${r.total} users in ${r.dataDir}`,
      )
    },
    (err) => {
      console.error(`seed failed: ${err.message}`)
      process.exit(1)
    },
  )
}

module.exports = { seed, parseArgs }
