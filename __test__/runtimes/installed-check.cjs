'use strict'

// Run inside a project that installed auth-shield from the loopback registry
// (scripts/runtimes/registry.sh), by Node, Bun or Deno:
//   installed-check.cjs native <platform>   the native engine loads, from exactly that platform
//                                           package, and authenticates; the ESM entry is the same
//   installed-check.cjs fallback            no binary: require('auth-shield') throws
//                                           ERR_AUTH_SHIELD_NO_BINARY and auth-shield/fetch warns
//                                           once and serves the JS engine
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')

const [mode, platform] = process.argv.slice(2)
const secret = 'registry-acceptance-secret-of-32-bytes!'
const b64 = (value) => Buffer.from(JSON.stringify(value)).toString('base64url')
const unsigned = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: 'u1', exp: Math.floor(Date.now() / 1000) + 60 })}`
const token = `${unsigned}.${crypto.createHmac('sha256', secret).update(unsigned).digest('base64url')}`
const runtime = globalThis.Bun ? `Bun ${Bun.version}` : globalThis.Deno ? `Deno ${Deno.version.deno}` : `Node ${process.version}`

// The platform packages present: exactly the expected one (or none).
const modules = path.join(process.cwd(), 'node_modules')
// Deno keeps the packages an npm: specifier brings in node_modules/.deno/<name>@<version>/.
const denoDir = path.join(modules, '.deno')
const present = [
  ...fs.readdirSync(modules).filter((name) => name.startsWith('auth-shield-')),
  ...(fs.existsSync(denoDir) ? fs.readdirSync(denoDir).map((name) => /^(auth-shield-[^@]+)@/.exec(name)?.[1]).filter(Boolean) : []),
]
const packageDir = (name) => path.dirname(require.resolve(`${name}/package.json`, { paths: [path.dirname(require.resolve('auth-shield/package.json'))] }))
// No package of the install declares an install-time script (npm 11, pnpm and Bun would not run
// a dependency's without approval; auth-shield has none to approve).
for (const name of ['auth-shield', ...present]) {
  const manifest = JSON.parse(fs.readFileSync(path.join(packageDir(name), 'package.json'), 'utf8'))
  for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) {
    assert.equal(manifest.scripts?.[script], undefined, `${name} declares a ${script} script`)
  }
}

async function main() {
  if (mode === 'native') {
    // AUTH_SHIELD_ALSO_PRESENT: platform packages a package manager installs beside it (Yarn 1
    // ignores the libc field and installs the musl package on glibc too); the loader must still
    // pick the right one.
    const also = (process.env.AUTH_SHIELD_ALSO_PRESENT || '').split(',').filter(Boolean)
    assert.deepEqual(present.sort(), [`auth-shield-${platform}`, ...also].sort())
    const binary = path.join(packageDir(`auth-shield-${platform}`), `auth-shield.${platform}.node`)
    assert.ok(fs.statSync(binary).size > 1e6, `${binary} is the binary`)
    const shield = require('auth-shield')
    const loaded = Object.keys(require.cache).filter((file) => file.endsWith('.node'))
    // Node lists the addon it loaded; Bun and Deno may not, and then the one binary present is it.
    if (loaded.length > 0) assert.deepEqual(loaded.map((file) => fs.realpathSync(file)), [fs.realpathSync(binary)])
    const result = new shield.Authenticator({ accessSecret: secret }).authenticate(`Bearer ${token}`, null, null)
    assert.equal(result.authenticated, true)
    assert.equal(result.userId, 'u1')
    const esm = await import('auth-shield')
    assert.equal(esm.Authenticator, shield.Authenticator)
    console.log(`registry: ${runtime} (${process.arch}): auth-shield-${platform} loaded, a token verified, require and import agree`)
  } else {
    assert.deepEqual(present, [])
    assert.throws(() => require('auth-shield'), { code: 'ERR_AUTH_SHIELD_NO_BINARY' })
    const warnings = []
    process.on('warning', (warning) => warnings.push(warning))
    const { createVerifier } = require('auth-shield/fetch')
    const verify = createVerifier({ accessSecret: secret })
    const ok = await verify(new Request('http://127.0.0.1/', { headers: { authorization: `Bearer ${token}` } }))
    const refused = await verify(new Request('http://127.0.0.1/'))
    await new Promise((resolve) => setTimeout(resolve, 10))
    assert.equal(ok.ok, true)
    assert.equal(refused.status, 401)
    assert.equal(warnings.length, 1, `one warning, got ${warnings.map(String)}`)
    console.log(`registry: ${runtime}: no binary installed; auth-shield/fetch warned once ("${warnings[0].message.split('\n')[0]}") and serves the JS engine`)
  }
}

main().catch((error) => {
  console.error(error)
  process.exitCode = 1
})
