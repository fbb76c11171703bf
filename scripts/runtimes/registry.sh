#!/usr/bin/env bash
# `npm install auth-shield` as users get it, through a real registry: Verdaccio on 127.0.0.1
# (no uplink: nothing reaches the public registry), given what the release publishes by the
# release's own script (scripts/release/publish.sh, run in a throwaway copy of the checkout with
# the binaries built here: linux-x64-gnu, and linux-arm64-gnu and linux-x64-musl from
# scripts/cross-build.sh). Then, in fresh projects, each checked by
# __test__/runtimes/installed-check.cjs:
#   npm install, pnpm add, yarn add, bun add     the linux-x64-gnu package loads (Node; Bun for bun add)
#   npm install --cpu=arm64                      the linux-arm64-gnu package loads under qemu
#   npm install --libc=musl                      the linux-x64-musl package loads (Bun's musl build)
#   npm install --os=freebsd                     no binary: the JS engine with the documented warning
#   Deno, from the registry (npm: specifier) and from a local folder (npm install <dir>)
# No install script runs: every installed manifest is checked, and the installs pass
# --ignore-scripts nowhere, so a script would have run.
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
. scripts/runtimes/tools.sh
# qemu-user, Debian's arm64 glibc and the registry's arm64 Node (QEMU_ARM64, NODE_ARM64), fetched
# before npm is pointed at the loopback registry.
. scripts/arm64-env.sh
test -f auth-shield.linux-x64-gnu.node || npm run build
for platform in linux-arm64-gnu linux-x64-musl; do
  test -f "npm/$platform/auth-shield.$platform.node" || { echo "registry: npm/$platform has no binary: run scripts/cross-build.sh first" >&2; exit 1; }
done

work="$(mktemp -d)"
registry_pid=""
cleanup() {
  [ -z "$registry_pid" ] || kill "$registry_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# --- Verdaccio on loopback -----------------------------------------------------------------
port="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
registry="http://127.0.0.1:$port/"
mkdir -p "$work/verdaccio"
cat >"$work/verdaccio/config.yaml" <<YAML
storage: $work/verdaccio/storage
auth:
  htpasswd:
    file: $work/verdaccio/htpasswd
    max_users: -1
uplinks: {}
packages:
  '**':
    access: \$all
    publish: \$all
    unpublish: \$all
max_body_size: 50mb
log: { type: stdout, format: pretty, level: warn }
YAML
"$VERDACCIO" --config "$work/verdaccio/config.yaml" --listen "127.0.0.1:$port" >"$work/verdaccio/log" 2>&1 &
registry_pid=$!
# node's fetch, not curl: nothing the image may lack.
get() { node -e "fetch(process.argv[1]).then(async (r) => { if (!r.ok) process.exit(1); process.stdout.write(await r.text()) }, () => process.exit(1))" "$1"; }
for _ in $(seq 100); do get "${registry}-/ping" >/dev/null && break; sleep 0.2; done
get "${registry}-/ping" >/dev/null || { cat "$work/verdaccio/log"; exit 1; }
echo "registry: Verdaccio $("$VERDACCIO" --version) on $registry"

# npm needs a token to publish even where the registry lets anyone publish: a dummy one, for
# this loopback registry only, in a userconfig of its own (the machine's ~/.npmrc is not read).
cat >"$work/npmrc" <<NPMRC
registry=$registry
//127.0.0.1:$port/:_authToken=loopback-dummy-token
NPMRC
export NPM_CONFIG_USERCONFIG="$work/npmrc" NPM_CONFIG_REGISTRY="$registry" npm_config_registry="$registry"
export NPM_CONFIG_CACHE="$work/npm-cache" NPM_CONFIG_AUDIT=false NPM_CONFIG_FUND=false NPM_CONFIG_UPDATE_NOTIFIER=false

# --- publish what the release would --------------------------------------------------------
# A copy of the tracked files, as the release workflow's checkout, with the binaries where
# `napi artifacts` puts them. The targets this machine cannot build (macOS, Windows, Linux arm64
# musl) are taken out of the copy's napi.targets and npm/: the rest is the release's own script.
release="$work/release"
mkdir -p "$release"
git ls-files -z | xargs -0 cp --parents -t "$release"
ln -s "$root/node_modules" "$release/node_modules"
cp auth-shield.linux-x64-gnu.node "$release/npm/linux-x64-gnu/"
cp npm/linux-arm64-gnu/auth-shield.linux-arm64-gnu.node "$release/npm/linux-arm64-gnu/"
cp npm/linux-x64-musl/auth-shield.linux-x64-musl.node "$release/npm/linux-x64-musl/"
built="linux-x64-gnu linux-arm64-gnu linux-x64-musl"
(cd "$release" && node -e "
  const fs = require('fs'); const built = process.argv[1].split(' ')
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8'))
  const platformOf = { 'x86_64-unknown-linux-gnu': 'linux-x64-gnu', 'aarch64-unknown-linux-gnu': 'linux-arm64-gnu', 'x86_64-unknown-linux-musl': 'linux-x64-musl' }
  pkg.napi.targets = pkg.napi.targets.filter((t) => built.includes(platformOf[t]))
  fs.writeFileSync('package.json', JSON.stringify(pkg, null, 2) + '\n')
  for (const dir of fs.readdirSync('npm')) if (!built.includes(dir)) fs.rmSync('npm/' + dir, { recursive: true })
" "$built")
(cd "$release" && bash scripts/release/publish.sh) 2>&1 | grep -v '^npm notice' | sed 's/^/registry: publish: /'
version="$(node -p "require('./package.json').version")"
published="$(get "${registry}auth-shield" | node -e "const d=JSON.parse(require('fs').readFileSync(0)); console.log(Object.keys(d.versions).join(' '), JSON.stringify(d.versions['$version'].optionalDependencies))")"
echo "registry: auth-shield on the registry: $published"

check() { # project-dir runtime-command... -- args
  (cd "$1" && shift && "$@")
}
project() { # name: a fresh project folder with installed-check.cjs
  mkdir -p "$work/$1"
  echo "{ \"name\": \"$1\", \"version\": \"1.0.0\", \"private\": true }" >"$work/$1/package.json"
  cp "$root/__test__/runtimes/installed-check.cjs" "$work/$1/"
  echo "$work/$1"
}

# --- npm, pnpm, yarn, bun: linux-x64-gnu ------------------------------------------------------
dir="$(project npm-app)"; (cd "$dir" && npm install --loglevel=error auth-shield >/dev/null)
check "$dir" node installed-check.cjs native linux-x64-gnu
dir="$(project pnpm-app)"; (cd "$dir" && "$PNPM" add --registry "$registry" --store-dir "$work/pnpm-store" --config.node-linker=hoisted auth-shield >/dev/null)
check "$dir" node installed-check.cjs native linux-x64-gnu
dir="$(project yarn-app)"; (cd "$dir" && "$YARN" add --registry "$registry" --cache-folder "$work/yarn-cache" --silent --no-progress auth-shield >/dev/null)
# Yarn 1 ignores the libc field: it installs the musl package too, and the loader picks glibc's.
AUTH_SHIELD_ALSO_PRESENT=auth-shield-linux-x64-musl check "$dir" node installed-check.cjs native linux-x64-gnu
dir="$(project bun-app)"; (cd "$dir" && BUN_INSTALL_CACHE_DIR="$work/bun-cache" "$BUN" add --registry "$registry" auth-shield >/dev/null)
check "$dir" "$BUN" installed-check.cjs native linux-x64-gnu

# --- arm64 (glibc) under qemu: npm picks the arm64 package for --cpu=arm64 --------------------
dir="$(project arm64-app)"; (cd "$dir" && npm install --loglevel=error --cpu=arm64 auth-shield >/dev/null)
check "$dir" $QEMU_ARM64 "$NODE_ARM64" installed-check.cjs native linux-arm64-gnu

# --- musl: npm picks the x64 musl package for --libc=musl; Bun's musl build loads it ------------
# Bun's musl build under musl 1.2.5's loader (scripts/runtimes/tools.sh). binding.js reads the
# host's /usr/bin/ldd (glibc's here) to choose, so NAPI_RS_NATIVE_LIBRARY_PATH names the installed
# binary; the musl Bun refuses a glibc one.
dir="$(project musl-app)"; (cd "$dir" && npm install --loglevel=error --libc=musl auth-shield >/dev/null)
musl_binary="$dir/node_modules/auth-shield-linux-x64-musl/auth-shield.linux-x64-musl.node"
check "$dir" env NAPI_RS_NATIVE_LIBRARY_PATH="$musl_binary" "$MUSL_LOADER" --library-path "$MUSL_LIBRARY_PATH" "$BUN_MUSL" installed-check.cjs native linux-x64-musl

# --- a platform without a binary: the JS engine, one warning -----------------------------------
dir="$(project nobinary-app)"; (cd "$dir" && npm install --loglevel=error --os=freebsd auth-shield >/dev/null)
check "$dir" node installed-check.cjs fallback

# --- Deno: from the registry, and from a local folder ------------------------------------------
# From the registry: `deno install` of a package.json dependency, Deno's own npm resolution
# (NPM_CONFIG_REGISTRY) into node_modules.
dir="$(project deno-registry-app)"
# minimumDependencyAge 0: Deno 2.9 holds back versions younger than 24 hours by default, and
# this one was published a minute ago.
echo '{ "nodeModulesDir": "auto", "minimumDependencyAge": 0 }' >"$dir/deno.json"
echo "{ \"name\": \"deno-registry-app\", \"private\": true, \"dependencies\": { \"auth-shield\": \"$version\" } }" >"$dir/package.json"
(cd "$dir" && DENO_DIR="$work/deno-dir" "$DENO" install --quiet)
# Deno, like Yarn 1, installs the musl package beside glibc's.
check "$dir" env AUTH_SHIELD_ALSO_PRESENT=auth-shield-linux-x64-musl DENO_DIR="$work/deno-dir" "$DENO" run --allow-ffi --allow-read --allow-env installed-check.cjs native linux-x64-gnu
# From a local folder (`npm install <folder>`, a symlink outside node_modules, where Deno reads
# the package's "type" to know index.js is CommonJS), with the binary beside binding.js.
local_pkg="$work/local-auth-shield"
mkdir -p "$local_pkg"
tar -xzf "$(cd "$work" && npm pack --silent --ignore-scripts "$release" | tail -1 | sed "s|^|$work/|")" -C "$local_pkg" --strip-components=1
cp auth-shield.linux-x64-gnu.node "$local_pkg/"
dir="$(project deno-local-app)"
(cd "$dir" && npm install --loglevel=error --offline "$local_pkg" >/dev/null)
test -L "$dir/node_modules/auth-shield"
echo '{ "nodeModulesDir": "manual" }' >"$dir/deno.json"
cat >"$dir/local-check.mjs" <<'JS'
import shield from 'auth-shield'
import { Authenticator } from 'auth-shield/js'
if (typeof shield.Authenticator !== 'function' || typeof Authenticator !== 'function') throw new Error('exports missing')
console.log(`registry: Deno ${Deno.version.deno}: auth-shield from a local folder (a symlink): index.mjs and auth-shield/js import`)
JS
check "$dir" "$DENO" run --allow-ffi --allow-read --allow-env local-check.mjs
echo "registry: every install path passed"
