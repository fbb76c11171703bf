#!/usr/bin/env bash
# The linux-arm64-gnu platform package as a user gets it: `npm pack` of npm/linux-arm64-gnu (with
# the cross-built binary) and of auth-shield, installed offline from the tarballs (an empty npm
# cache, no registry) into a fresh project, then required, imported and used by the arm64 Node
# under qemu, with no Rust toolchain on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/arm64-env.sh

platform=linux-arm64-gnu
binary="npm/$platform/auth-shield.$platform.node"
[ -f "$binary" ] || bash scripts/cross-build.sh aarch64-unknown-linux-gnu

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
npm pack --silent --ignore-scripts --pack-destination "$work" >/dev/null
(cd "npm/$platform" && npm pack --silent --pack-destination "$work" >/dev/null)
version="$(node -p "require('./package.json').version")"
main_tgz="$work/auth-shield-$version.tgz"
plat_tgz="$work/auth-shield-$platform-$version.tgz"
contents="$(tar -tzf "$plat_tgz" | sort | tr '\n' ' ')"
if [ "$contents" != "package/README.md package/auth-shield.$platform.node package/package.json " ]; then
  echo "arm64 package: unexpected contents: $contents" >&2
  exit 1
fi
echo "arm64 package: $(basename "$plat_tgz") $(stat -c %s "$plat_tgz") bytes: $contents"

app="$work/app"
mkdir -p "$app"
echo '{ "name": "arm64-consumer", "version": "1.0.0", "private": true }' >"$app/package.json"
# --offline with an empty cache: nothing can come from a registry or from a warm cache.
npm_offline=(--offline --cache "$work/empty-cache" --no-audit --no-fund --no-package-lock)

# npm honours the platform fields: on this x64 host it refuses the arm64 package ...
if (cd "$app" && npm install "${npm_offline[@]}" "$plat_tgz" >"$work/refused.log" 2>&1); then
  echo "arm64 package: npm installed it on an x64 host" >&2
  exit 1
fi
grep -q EBADPLATFORM "$work/refused.log" || { cat "$work/refused.log" >&2; exit 1; }
echo "arm64 package: npm refuses it on this x64 host (EBADPLATFORM: cpu arm64 wanted)"

# ... so the install for the emulated arm64 machine overrides that one check (--force), next to
# the main package.
deps="$(node -p "Object.keys(require('./package.json').dependencies || {}).join(' ')")"
if [ -z "$deps" ]; then
  (cd "$app" && npm install "${npm_offline[@]}" --force "$main_tgz" "$plat_tgz" >/dev/null 2>&1)
else
  # An offline install from an empty cache cannot fetch runtime dependencies; the native entry
  # point does not load them, so the main tarball is unpacked as npm would lay it out.
  echo "arm64 package: auth-shield declares runtime dependencies ($deps): npm installs the" \
    "platform tarball, the main tarball is unpacked into node_modules/auth-shield"
  (cd "$app" && npm install "${npm_offline[@]}" --force "$plat_tgz" >/dev/null 2>&1)
  mkdir -p "$app/node_modules/auth-shield"
  tar -xzf "$main_tgz" -C "$app/node_modules/auth-shield" --strip-components=1
fi
test -f "$app/node_modules/auth-shield-$platform/auth-shield.$platform.node"

cat >"$app/check.js" <<'JS'
'use strict'
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const path = require('node:path')
const shield = require('auth-shield')
const loaded = Object.keys(require.cache).filter((f) => f.endsWith('.node'))
const expected = path.join(__dirname, 'node_modules', 'auth-shield-linux-arm64-gnu', 'auth-shield.linux-arm64-gnu.node')
assert.equal(process.arch, 'arm64')
assert.deepEqual(loaded, [expected])
const secret = 'a-secret-of-at-least-32-bytes-length!!'
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url')
const now = Math.floor(Date.now() / 1000)
const unsigned = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub: 'u1', exp: now + 60 })}`
const token = `${unsigned}.${crypto.createHmac('sha256', secret).update(unsigned).digest('base64url')}`
const result = new shield.Authenticator({ accessSecret: secret }).authenticate(`Bearer ${token}`, null, null)
assert.equal(result.authenticated, true)
assert.equal(result.userId, 'u1')
const hash = shield.hashPasswordSync('pw', { memoryCost: 1024, timeCost: 1, parallelism: 1 })
assert.equal(shield.verifyPasswordSync(hash, 'pw'), true)
import('auth-shield').then((esm) => {
  assert.equal(esm.default, shield)
  console.log(`arm64 package: loaded ${path.relative(__dirname, loaded[0])}; JWT, Argon2 and ESM import work`)
})
JS
# No cargo, no rustc, no compiler on PATH; no override of the binary's location.
(cd "$app" && env -i PATH=/usr/bin:/bin HOME="$work" $QEMU_ARM64 "$NODE_ARM64" check.js)
