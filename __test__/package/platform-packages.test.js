'use strict'

// Each platform package in npm/ against a table written out by hand (not derived from its
// folder name), and each binary scripts/cross-build.sh put there against the CPU its package
// declares, read from the ELF header.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const root = path.join(__dirname, '..', '..')
const pkg = require('../../package.json')

// What npm compares with the installing machine: `os` with process.platform, `cpu` with
// process.arch, `libc` with the detected C library (only meaningful, and only set, on Linux).
const EXPECTED = {
  'linux-x64-gnu': { os: ['linux'], cpu: ['x64'], libc: ['glibc'] },
  'linux-x64-musl': { os: ['linux'], cpu: ['x64'], libc: ['musl'] },
  'linux-arm64-gnu': { os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'linux-arm64-musl': { os: ['linux'], cpu: ['arm64'], libc: ['musl'] },
  'darwin-x64': { os: ['darwin'], cpu: ['x64'] },
  'darwin-arm64': { os: ['darwin'], cpu: ['arm64'] },
  'win32-x64-msvc': { os: ['win32'], cpu: ['x64'] },
}
// ELF e_machine values (System V ABI): the CPU a Linux binary was built for.
const ELF_MACHINE = { x64: 62, arm64: 183 }

test('every platform package declares the os, cpu and libc of its platform, and its binary as main', () => {
  assert.deepEqual(fs.readdirSync(path.join(root, 'npm')).sort(), Object.keys(EXPECTED).sort())
  for (const [platform, want] of Object.entries(EXPECTED)) {
    const platformPkg = require(path.join(root, 'npm', platform, 'package.json'))
    assert.deepEqual(platformPkg.os, want.os, `${platform} os`)
    assert.deepEqual(platformPkg.cpu, want.cpu, `${platform} cpu`)
    assert.deepEqual(platformPkg.libc, want.libc, `${platform} libc`)
    assert.equal(platformPkg.main, `auth-shield.${platform}.node`, `${platform} main`)
    assert.deepEqual(platformPkg.files, [platformPkg.main], `${platform} publishes only its binary`)
    assert.equal(platformPkg.name, `auth-shield-${platform}`)
    assert.equal(platformPkg.version, pkg.version)
    assert.deepEqual(platformPkg.dependencies, undefined, `${platform} has no dependencies`)
    // The same Node.js range and description as the main package (issue 22: `>= 18` and
    // "Bearer JWT (HS256)" outlived the main package's).
    assert.deepEqual(platformPkg.engines, pkg.engines, `${platform} engines`)
    assert.ok(platformPkg.description.endsWith(pkg.description), `${platform} description`)
  }
})

const built = Object.keys(EXPECTED).filter(
  (platform) => platform.startsWith('linux-') && fs.existsSync(path.join(root, 'npm', platform, `auth-shield.${platform}.node`)),
)

test('each Linux binary in npm/ is a 64-bit little-endian ELF shared object for its package cpu', { skip: built.length === 0 && 'no binary in npm/ (run scripts/cross-build.sh)' }, () => {
  for (const platform of built) {
    const header = Buffer.alloc(20)
    const fd = fs.openSync(path.join(root, 'npm', platform, `auth-shield.${platform}.node`), 'r')
    try {
      fs.readSync(fd, header, 0, 20, 0)
    } finally {
      fs.closeSync(fd)
    }
    assert.deepEqual([...header.subarray(0, 4)], [0x7f, 0x45, 0x4c, 0x46], `${platform}: ELF magic`)
    assert.equal(header[4], 2, `${platform}: 64-bit`)
    assert.equal(header[5], 1, `${platform}: little-endian`)
    assert.equal(header.readUInt16LE(16), 3, `${platform}: ET_DYN (a shared object)`)
    const cpu = EXPECTED[platform].cpu[0]
    assert.equal(header.readUInt16LE(18), ELF_MACHINE[cpu], `${platform}: built for ${cpu}`)
  }
})
