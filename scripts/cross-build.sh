#!/usr/bin/env bash
# Cross-builds the release .node for Linux arm64 (glibc) and Linux x64 (musl) on a Linux x64
# host, through napi-rs's `--cross-compile` (cargo-zigbuild, with zig as the C compiler and
# linker), and moves each binary into its platform package folder npm/<platform>/.
#
#   scripts/cross-build.sh                       # both targets
#   scripts/cross-build.sh aarch64-unknown-linux-gnu
#   scripts/cross-build.sh --tools-only            # install zig, cargo-zigbuild; build nothing
#
# Installs what it needs when missing: the Rust std for each target (rustup), and zig and
# cargo-zigbuild from PyPI (`pip install ziglang cargo-zigbuild`; `cargo install
# cargo-zigbuild` if pip is not there). The release workflow (.github/workflows/ci.yml) runs
# the same `napi build` command. Builds run under `nice` (shared CI machine) and are timed.
set -euo pipefail
cd "$(dirname "$0")/.."

tools_only=no
if [ "${1:-}" = --tools-only ]; then tools_only=yes; shift; fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(aarch64-unknown-linux-gnu x86_64-unknown-linux-musl)

platform_of() {
  case "$1" in
    aarch64-unknown-linux-gnu) echo linux-arm64-gnu ;;
    aarch64-unknown-linux-musl) echo linux-arm64-musl ;;
    x86_64-unknown-linux-musl) echo linux-x64-musl ;;
    x86_64-unknown-linux-gnu) echo linux-x64-gnu ;;
    *) echo "cross-build: unsupported target $1" >&2; return 1 ;;
  esac
}

# zig: the PyPI wheel ships the binary inside the package; napi-rs wants `zig` on PATH.
if ! command -v zig >/dev/null 2>&1; then
  if ! python3 -c 'import ziglang' 2>/dev/null; then
    python3 -m pip install --quiet ziglang
  fi
  zig_dir="$(python3 -c 'import ziglang, os; print(os.path.dirname(ziglang.__file__))')"
  export PATH="$zig_dir:$PATH"
fi
if ! command -v cargo-zigbuild >/dev/null 2>&1; then
  python3 -m pip install --quiet cargo-zigbuild || cargo install --locked cargo-zigbuild
fi
echo "zig $(zig version), $(cargo-zigbuild --version)"
[ "$tools_only" = no ] || exit 0

installed="$(rustup target list --installed)"
for target in "${targets[@]}"; do
  grep -qx "$target" <<<"$installed" || rustup target add "$target"
done

for target in "${targets[@]}"; do
  platform="$(platform_of "$target")"
  # glibc targets link against glibc 2.17 symbols (zig's default would be newer, e.g. pow@2.29),
  # so one binary loads on every glibc distribution still in use (CentOS 7, Amazon Linux 2).
  # cargo-zigbuild compiles the part before the dot and hands the suffix to zig.
  build_target="$target"
  case "$target" in *-gnu) build_target="$target.2.17" ;; esac
  start=$(date +%s)
  # --no-js and a throwaway .d.ts: the generated loader and types do not depend on the target,
  # and the host build owns the committed binding.js / binding.d.ts.
  nice -n 5 npx napi build --platform --release --target "$build_target" --cross-compile --no-js \
    --dts "target/cross-$platform.d.ts"
  mv "auth-shield.$platform.node" "npm/$platform/"
  end=$(date +%s)
  size=$(stat -c %s "npm/$platform/auth-shield.$platform.node")
  echo "cross-build: $target -> npm/$platform/auth-shield.$platform.node ($size bytes) in $((end - start)) s"
  bash scripts/check-binary.sh "$platform"
done
