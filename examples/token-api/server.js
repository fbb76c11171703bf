#!/usr/bin/env node
'use strict'

// `npm start` entry point: `node examples/token-api/server.js [--workers N]`.

const cluster = require('node:cluster')
const { loadConfig, fillMissingSecrets } = require('./config')

const USAGE =
  'usage: node examples/token-api/server.js [--workers N]\n' +
  '  env: PORT, HOST, DATA_DIR, ACCESS_SECRET, REFRESH_SECRET, API_KEY_SECRET, REDIS_URL, TOKEN_SIGNING_ALG, PUBLIC_ORIGIN (see examples/token-api/README.md)'

function parseArgs(argv) {
  let workers = 1
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--help' || arg === '-h') return { help: true }
    const value = arg === '--workers' ? argv[++i] : arg.startsWith('--workers=') ? arg.slice(10) : null
    if (value === null) throw new Error(`unknown argument ${JSON.stringify(arg)}`)
    workers = Number(value)
    if (!Number.isInteger(workers) || workers < 1 || workers > 256) {
      throw new Error(`--workers must be an integer from 1 to 256, got ${JSON.stringify(value)}`)
    }
  }
  return { workers }
}

const tag = () => (cluster.isWorker ? `[token-api worker ${process.pid}]` : `[token-api ${process.pid}]`)
const log = {
  info: (msg) => console.log(`${tag()} ${msg}`),
  warn: (msg) => console.warn(`${tag()} ${msg}`),
  error: (msg) => console.error(`${tag()} ${msg}`),
}

/** Generated secrets are shared with workers through the environment they inherit. */
function ensureSecrets() {
  const generated = fillMissingSecrets(process.env)
  if (generated.length > 0) {
    const lost = [
      generated.some((name) => name !== 'API_KEY_SECRET') && 'tokens',
      generated.includes('API_KEY_SECRET') && 'API keys',
    ].filter(Boolean)
    const what = lost.join(' and ')
    log.warn(
      `${generated.join(', ')} not set: generated random ${generated.length > 1 ? 'values' : 'value'} for this run. ` +
        `${what[0].toUpperCase()}${what.slice(1)} issued now will NOT survive a restart; set them in the environment to keep them.`,
    )
  }
}

/** Runs one server in this process until SIGINT/SIGTERM. */
async function serve() {
  const { startService } = require('./app')
  const config = loadConfig(process.env)
  const service = await startService(config, log)
  log.info(`listening on ${service.url} (data in ${config.dataDir})`)
  const stop = (signal) => {
    // A client that keeps a request open (a slow upload, a half-sent request) would hold the
    // close forever: after the timeout, or at a second signal, exit anyway.
    const force = () => {
      log.error(`open requests still running ${config.shutdownTimeoutMs} ms after ${signal}: forcing exit`)
      process.exit(1)
    }
    setTimeout(force, config.shutdownTimeoutMs).unref()
    process.once('SIGINT', force)
    process.once('SIGTERM', force)
    service.close().then(() => process.exit(0))
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

/** Forks `workers` processes that share the listening socket and the database file. */
function runPrimary(workers) {
  const config = loadConfig(process.env)
  // Create the schema once, before several processes race to do it.
  require('./database').openDatabase(config.dataDir).close()
  const limits = config.redisUrl === null ? 'rate limits and OTP codes are per worker' : 'rate limits are shared through Redis, OTP codes are per worker'
  log.info(`starting ${workers} workers; ${limits}, the database is shared`)
  let stopping = false
  const started = new Set()
  const fork = () => cluster.fork().on('listening', function () {
    started.add(this.id)
  })
  for (let i = 0; i < workers; i++) fork()
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      if (Object.keys(cluster.workers).length === 0) process.exit(0)
      return
    }
    if (!started.has(worker.id)) {
      // It died before listening (port taken, bad config): forking again would only loop.
      log.error(`worker ${worker.process.pid} failed to start (exit ${signal || code}); stopping`)
      stopping = true
      for (const w of Object.values(cluster.workers)) w.kill()
      process.exitCode = 1
      if (Object.keys(cluster.workers).length === 0) process.exit(1)
      return
    }
    log.warn(`worker ${worker.process.pid} exited (${signal || code}); starting a new one`)
    fork()
  })
  const stop = () => {
    stopping = true
    for (const w of Object.values(cluster.workers)) w.process.kill('SIGTERM')
    // Each worker forces its own exit after shutdownTimeoutMs; this is the backstop for one
    // that cannot (stuck in native code, say).
    setTimeout(() => {
      log.error('workers still running after the shutdown timeout: killing them')
      for (const w of Object.values(cluster.workers)) w.process.kill('SIGKILL')
      process.exit(1)
    }, config.shutdownTimeoutMs + 2000).unref()
  }
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

function main() {
  let args
  try {
    args = parseArgs(process.argv.slice(2))
  } catch (err) {
    console.error(`${err.message}\n${USAGE}`)
    process.exit(2)
  }
  if (args.help) return console.log(USAGE)
  if (cluster.isPrimary) ensureSecrets()
  const run = cluster.isPrimary && args.workers > 1 ? async () => runPrimary(args.workers) : serve
  run().catch((err) => {
    log.error(`cannot start: ${err.message}`)
    process.exit(1)
  })
}

main()
