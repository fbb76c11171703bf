'use strict'

// Test support: a real redis-server of our own, on a free loopback port with a temporary
// directory, stopped (and its directory removed) by the test. `npm test` skips the Redis suites
// with one line when the binary is missing; `.ci/run` sets AUTH_SHIELD_REQUIRE_REDIS=1, which
// turns that skip into a failure, so CI always runs them.
//
//   const { redisAvailable, startRedis } = require('./support/redis-server')
//   describe('…', { skip: redisSkip() }, () => { let redis; before(async () => (redis = await startRedis())) … })

const { spawn, spawnSync } = require('node:child_process')
const fs = require('node:fs')
const net = require('node:net')
const os = require('node:os')
const path = require('node:path')

const BINARY = process.env.REDIS_SERVER || 'redis-server'
const INSTALL_HINT = 'redis-server not found: install it (Debian/Ubuntu: apt-get install redis-server) or set REDIS_SERVER'

let available
/** Whether a redis-server binary (or a Valkey one, REDIS_SERVER=valkey-server) runs here. */
function redisAvailable() {
  if (available === undefined) {
    const r = spawnSync(BINARY, ['--version'], { encoding: 'utf8' })
    available = r.status === 0 && /(Redis|Valkey) server v=/.test(r.stdout)
  }
  return available
}

/**
 * The `skip` value for a Redis suite: false when redis-server runs, else the one line saying how
 * to install it. Under AUTH_SHIELD_REQUIRE_REDIS=1 a missing binary throws instead.
 */
function redisSkip() {
  if (redisAvailable()) return false
  if (process.env.AUTH_SHIELD_REQUIRE_REDIS === '1') throw new Error(`${INSTALL_HINT} (AUTH_SHIELD_REQUIRE_REDIS=1)`)
  return INSTALL_HINT
}

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

/** Resolves when a PING on `port` answers PONG; rejects after `timeoutMs`. */
function waitForPong(port, timeoutMs) {
  const deadline = Date.now() + timeoutMs
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const sock = net.connect(port, '127.0.0.1')
      let data = ''
      const retry = () => {
        sock.destroy()
        if (Date.now() > deadline) reject(new Error(`redis-server on port ${port} did not answer within ${timeoutMs} ms`))
        else setTimeout(attempt, 25)
      }
      sock.once('error', retry)
      sock.on('data', (chunk) => {
        data += chunk
        if (data.includes('+PONG')) {
          sock.destroy()
          resolve()
        } else if (data.includes('-LOADING') || data.includes('-')) retry()
      })
      sock.once('connect', () => sock.write('PING\r\n'))
    }
    attempt()
  })
}

/**
 * Starts redis-server on a free loopback port in a fresh temporary directory. With
 * `persist: true` every write is fsynced to an append-only file before it is acknowledged, so a
 * SIGKILL and `restart()` lose nothing acknowledged. Resolves to
 * `{ port, url, dir, stop(), kill(), restart() }`: `kill()` sends SIGKILL and waits for the
 * exit; `restart()` starts it again on the same port and directory.
 */
async function startRedis({ persist = false, args = [], sentinelConf } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'auth-shield-redis-'))
  const port = await freePort()
  let argv = [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '',
    '--appendonly', persist ? 'yes' : 'no', '--appendfsync', 'always', '--daemonize', 'no', '--logfile', '',
    ...args,
  ]
  if (sentinelConf !== undefined) {
    // A Sentinel: redis-server <conf> --sentinel (it rewrites its own config file).
    const conf = path.join(dir, 'sentinel.conf')
    fs.writeFileSync(conf, sentinelConf)
    argv = [conf, '--sentinel', '--port', String(port), '--bind', '127.0.0.1', '--daemonize', 'no', '--logfile', '']
  }
  let child = null
  const launch = async () => {
    child = spawn(BINARY, argv, { stdio: ['ignore', 'ignore', 'pipe'] })
    let stderr = ''
    child.stderr.on('data', (c) => (stderr += c))
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.exited = exited
    await Promise.race([
      waitForPong(port, 10_000),
      exited.then((code) => Promise.reject(new Error(`redis-server exited (${code}) before answering: ${stderr}`))),
    ])
  }
  const halt = async (signal) => {
    if (child === null || child.exitCode !== null || child.signalCode !== null) return
    const c = child
    c.kill(signal)
    await c.exited
  }
  await launch()
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    dir,
    kill: () => halt('SIGKILL'),
    restart: async () => {
      await halt('SIGTERM')
      await launch()
    },
    stop: async () => {
      await halt('SIGTERM')
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

module.exports = { redisAvailable, redisSkip, startRedis, freePort }
