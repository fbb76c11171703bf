'use strict'
// What the numbers were measured on: printed above the tables and stored in the JSON.

const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')

const LIBRARIES = [
  'jsonwebtoken',
  'fast-jwt',
  'jose',
  '@node-rs/jsonwebtoken',
  'express',
  'express-jwt',
  'passport-jwt',
  'autocannon',
  'argon2',
  '@node-rs/argon2',
]

function versionOf(name, root) {
  try {
    return require(path.join(root, 'node_modules', name, 'package.json')).version
  } catch {
    return 'missing'
  }
}

function gitCommit(root) {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] })
    return `${commit.toString().trim()}${dirty.length ? ' (uncommitted changes)' : ''}`
  } catch {
    return 'unknown'
  }
}

function describeEnvironment({ root, build, addonPath, mode }) {
  const cpus = os.cpus()
  return {
    date: new Date().toISOString(),
    mode,
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpu: cpus.length ? cpus[0].model.trim() : 'unknown',
    cores: cpus.length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverageAtStart: os.loadavg().map((x) => Number(x.toFixed(2))),
    authShield: { version: require(path.join(root, 'package.json')).version, commit: gitCommit(root), build, addon: addonPath && path.relative(root, addonPath) },
    libraries: Object.fromEntries(LIBRARIES.map((name) => [name, versionOf(name, root)])),
  }
}

module.exports = { describeEnvironment }
