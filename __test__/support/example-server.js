'use strict'

// Test support: the example service (examples/token-api/server.js) as a child process, with the
// service's own environment variables cleared (the tests set what they need), a cheap Argon2,
// and a free port.

const { spawn } = require('node:child_process')
const path = require('node:path')

const SERVER = path.join(__dirname, '..', '..', 'examples', 'token-api', 'server.js')
// Argon2 at its smallest: the service's password hashing is tested elsewhere.
const FAST_ARGON2 = { ARGON2_MEMORY_KIB: '64', ARGON2_TIME_COST: '1' }
const SERVICE_ENV = ['ACCESS_SECRET', 'REFRESH_SECRET', 'API_KEY_SECRET', 'DATA_DIR', 'HOST', 'PORT', 'REDIS_URL', 'TOKEN_SIGNING_ALG', 'TOKEN_SIGNING_KEY', 'PUBLIC_ORIGIN']

/**
 * Starts server.js with `args` and `env`; `ready` resolves to the URLs once `expectedListening`
 * workers said where they listen, and rejects if the process exits first.
 */
function startServer(args, env, expectedListening = 1) {
  const inherited = { ...process.env }
  for (const name of SERVICE_ENV) delete inherited[name]
  const child = spawn(process.execPath, [SERVER, ...args], {
    env: { ...inherited, ...FAST_ARGON2, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const onData = (d) => (output += d)
  child.stdout.on('data', onData)
  child.stderr.on('data', onData)
  const ready = new Promise((resolve, reject) => {
    const check = () => {
      const urls = [...output.matchAll(/listening on (http:\/\/\S+)/g)].map((m) => m[1])
      if (urls.length >= expectedListening) resolve(urls)
    }
    child.stdout.on('data', check)
    child.stderr.on('data', check)
    child.once('exit', (code) => reject(new Error(`server exited (${code}) before listening:\n${output}`)))
  })
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  return { child, ready, exited, output: () => output }
}

module.exports = { startServer, FAST_ARGON2, SERVER }
