#!/usr/bin/env bash
# The suite on Linux arm64, emulated by qemu-user on an x64 host, with the registry's arm64 Node
# and the cross-built release binary (scripts/cross-build.sh):
#   1. the JavaScript suites, one file per emulated Node process;
#   2. `cargo test` built for aarch64-unknown-linux-gnu (cargo-zigbuild) and run under qemu,
#      including tests/argon2_differential.rs with the NEON backend required;
#   3. the packed arm64 platform package, installed offline from its tarball next to the packed
#      main package, loaded and used by the emulated Node.
#
#   scripts/test-arm64.sh          # the named subset CI runs (see SUBSET)
#   scripts/test-arm64.sh --all    # every __test__ file (those that start child Node
#                                  # processes need binfmt_misc for qemu-aarch64; see below)
#
# Prints "arm64: N passed, N failed" for the JavaScript part and exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=subset
case "${1:-}" in
  --all) mode=all ;;
  '') ;;
  *) echo "usage: $0 [--all]" >&2; exit 2 ;;
esac

# The suites issue 16 names: the core, the engine differential, the helpers (Argon2 interop with
# the C reference and @node-rs/argon2 both ways, OTP vectors, sanitizers) and the adversarial
# inputs, plus the other cheap pure-helper suites.
SUBSET=(core/core parity/differential helpers/helpers-password helpers/helpers-otp helpers/helpers-sanitize
  helpers/helpers-apikey helpers/helpers-csp core/adversarial core/tokens core/config core/keys)
# These start child Node processes through process.execPath. Under qemu-user without a
# binfmt_misc entry the kernel cannot execute that arm64 binary, so they run only where one is
# registered (e.g. `update-binfmts --enable qemu-aarch64` on a host that allows it).
SPAWNS_NODE=(example express loader no-panic pack)

. scripts/arm64-env.sh
"$NODE_ARM64" --version >/dev/null 2>&1 && binfmt=yes || binfmt=no

binary="npm/linux-arm64-gnu/auth-shield.linux-arm64-gnu.node"
[ -f "$binary" ] || bash scripts/cross-build.sh aarch64-unknown-linux-gnu

# The interop test compares against two npm packages with native code. `argon2` ships an arm64
# prebuild, found by node-gyp-build once it stops preferring the x64 build/Release
# (PREBUILDS_ONLY). The napi-rs packages (@node-rs/argon2; @node-rs/jsonwebtoken, a benchmark
# contender the bench-harness suite loads) keep their binary in per-platform packages: fetch the
# arm64 ones at the installed versions into node_modules (not in package-lock: test-only extras).
missing_peers=""
for peer in @node-rs/argon2 @node-rs/jsonwebtoken; do
  [ -f "node_modules/$peer/package.json" ] || continue
  peer_version="$(node -p "require('$peer/package.json').version")"
  peer_dir="node_modules/$peer-linux-arm64-gnu"
  if [ ! -f "$peer_dir/package.json" ] || \
    [ "$(node -p "require('./$peer_dir/package.json').version")" != "$peer_version" ]; then
    echo "arm64: fetching $peer-linux-arm64-gnu@$peer_version"
    mkdir -p "$ARM64_CACHE"
    if tgz="$(cd "$ARM64_CACHE" && npm pack --silent "$peer-linux-arm64-gnu@$peer_version" 2>/dev/null | tail -1)" \
      && [ -n "$tgz" ]; then
      mkdir -p "$peer_dir"
      tar -xzf "$ARM64_CACHE/$tgz" -C "$peer_dir" --strip-components=1
      rm -f "$ARM64_CACHE/$tgz"
    else
      echo "arm64: $peer-linux-arm64-gnu@$peer_version is not in the registry"
      missing_peers="$missing_peers $peer"
    fi
  fi
done

# Probe each interop peer in its own emulated process: a native binary that crashes on load
# would otherwise take a whole test file down with it. A peer that crashes is made unloadable
# (scripts/unloadable-modules.js) so its half of the interop test skips with the reason.
unloadable=""
for peer in argon2 @node-rs/argon2; do
  if out="$(PREBUILDS_ONLY=1 $QEMU_ARM64 "$NODE_ARM64" -e "require('$peer')" 2>&1)"; then
    echo "arm64: interop peer $peer loads its arm64 build"
  else
    rc=$?
    reason="its arm64 build fails to load under qemu-user (exit $rc: $(grep -m1 -o 'uncaught target signal [0-9]* ([A-Za-z ]*)\|Error: [^\n]*' <<<"$out" || echo error))"
    echo "arm64: interop peer $peer: $reason; its half of the interop test is skipped"
    unloadable="${unloadable:+$unloadable;}$peer: $reason"
  fi
done

# The generated loader finds the binary as an installed user's does, through the platform
# package: node_modules/auth-shield-linux-arm64-gnu links to npm/linux-arm64-gnu for this run.
# (NAPI_RS_NATIVE_LIBRARY_PATH would not do: every napi-rs loader in the process honours it,
# @node-rs/argon2's too.)
link="node_modules/auth-shield-linux-arm64-gnu"
if [ ! -e "$link" ]; then
  ln -s ../npm/linux-arm64-gnu "$link"
  trap 'rm -f "$link"' EXIT
fi

run_node() {
  env PREBUILDS_ONLY=1 AUTH_SHIELD_UNLOADABLE="$unloadable" \
    $QEMU_ARM64 "$NODE_ARM64" -r "$PWD/scripts/unloadable-modules.js" "$@"
}

echo "arm64: $($QEMU_ARM64 --version | head -1); node $(run_node -p 'process.version + " " + process.arch')"
run_node -e "
  const b = require('./index.js')
  const loaded = Object.keys(require.cache).filter((f) => f.endsWith('.node'))
  if (process.arch !== 'arm64' || !loaded.some((f) => f.endsWith('linux-arm64-gnu.node'))) {
    console.error('not the arm64 binary:', process.arch, loaded); process.exit(1)
  }
  console.log('arm64: loaded', loaded.join(', '), '(' + Object.keys(b).length + ' exports)')"

# --- 1. JavaScript suites ------------------------------------------------------------------
files=()
if [ "$mode" = all ]; then
  for f in __test__/*/*.test.js; do
    name="$(basename "$f" .test.js)"
    if [ "$binfmt" = no ] && printf '%s\n' "${SPAWNS_NODE[@]}" | grep -qx "$name"; then
      echo "arm64: skipping $name (starts child Node processes; no binfmt_misc entry for qemu-aarch64)"
      continue
    fi
    if [ "$name" = bench-harness ] && [[ "$missing_peers" == *@node-rs/jsonwebtoken* ]]; then
      echo "arm64: skipping $name (loads @node-rs/jsonwebtoken, whose arm64 binary the registry lacks)"
      continue
    fi
    files+=("$f")
  done
else
  for name in "${SUBSET[@]}"; do files+=("__test__/$name.test.js"); done
fi

log="$(mktemp)"
trap 'rm -f "$log" "$link"' EXIT
pass=0 fail=0 skip=0 status=0
js_start=$(date +%s)
for f in "${files[@]}"; do
  start=$(date +%s)
  # One emulated process per file, as `node --test` isolates them (its own runner would
  # re-execute process.execPath, which needs binfmt_misc).
  if run_node --test-reporter=spec "$f" >"$log" 2>&1; then rc=0; else rc=$?; status=1; fi
  p=$(sed -n 's/^ℹ pass \([0-9]*\)$/\1/p' "$log" | tail -1)
  x=$(sed -n 's/^ℹ fail \([0-9]*\)$/\1/p' "$log" | tail -1)
  s=$(sed -n 's/^ℹ skipped \([0-9]*\)$/\1/p' "$log" | tail -1)
  pass=$((pass + ${p:-0})) fail=$((fail + ${x:-0})) skip=$((skip + ${s:-0}))
  printf 'arm64: %-34s %3s passed, %s failed, %s skipped, %4d s\n' "$f" "${p:-?}" "${x:-?}" "${s:-0}" $(($(date +%s) - start))
  if [ "$rc" != 0 ] || [ "${x:-1}" != 0 ]; then
    status=1
    cat "$log"
  elif [ "${s:-0}" != 0 ]; then
    grep -E '^\s*﹣|# SKIP' "$log" || true
  fi
done
echo "arm64: JavaScript suites ($mode, ${#files[@]} files) in $(($(date +%s) - js_start)) s"

# --- 2. cargo test for aarch64 under qemu ----------------------------------------------------
if ! command -v cargo-zigbuild >/dev/null 2>&1 || ! command -v zig >/dev/null 2>&1; then
  # Installs zig and cargo-zigbuild as the cross build does (and puts zig on PATH).
  bash scripts/cross-build.sh --tools-only
fi
command -v zig >/dev/null 2>&1 || PATH="$(python3 -c 'import ziglang, os; print(os.path.dirname(ziglang.__file__))'):$PATH"
rust_start=$(date +%s)
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="$QEMU_ARM64"
# NEON must really run (not be skipped as unavailable); 64 random cases per Argon2 backend keep
# the emulated debug build near a minute. --show-output prints the per-backend counts.
if ! ARGON2_REQUIRE_BACKENDS=neon ARGON2_DIFF_CASES="${ARGON2_DIFF_CASES:-64}" \
  nice -n 5 cargo-zigbuild test --target aarch64-unknown-linux-gnu -- --show-output; then
  status=1
fi
echo "arm64: cargo test (aarch64, qemu) in $(($(date +%s) - rust_start)) s"

# --- 3. the packed platform package, installed offline, loaded without Rust ------------------
pack_start=$(date +%s)
if ! bash scripts/test-arm64-package.sh; then status=1; fi
echo "arm64: package install and load in $(($(date +%s) - pack_start)) s"

echo "arm64: $pass passed, $fail failed, $skip skipped"
exit "$status"
