#!/usr/bin/env bash
# Checks a built npm/<platform>/auth-shield.<platform>.node for what its platform package promises:
#   - an ELF shared object for the package's CPU;
#   - linux-*-gnu: needs no glibc symbol version newer than 2.17 (`objdump -T`);
#   - linux-*-musl: no glibc symbol versions at all, no NEEDED entry but musl's `libc.so`
#     (which musl's loader maps to itself), and, for x64 where Debian's `musl` package gives the
#     loader, every symbol resolves against musl (`ld-musl-x86_64.so.1 --list`).
#   scripts/check-binary.sh linux-x64-musl linux-arm64-gnu ...
set -euo pipefail
cd "$(dirname "$0")/.."

check() {
  local platform="$1" file="npm/$1/auth-shield.$1.node" want_machine
  [ -f "$file" ] || { echo "check-binary: $file missing" >&2; return 1; }
  case "$platform" in
    linux-arm64-*) want_machine="ARM aarch64" ;;
    linux-x64-*) want_machine="x86-64" ;;
    *) echo "check-binary: no checks for $platform" >&2; return 1 ;;
  esac
  local desc
  desc="$(file -b "$file")"
  case "$desc" in
    "ELF 64-bit LSB shared object, $want_machine,"*) ;;
    *) echo "check-binary: $file is not an $want_machine shared object: $desc" >&2; return 1 ;;
  esac
  local versions needed
  versions="$(objdump -T "$file" | grep -o 'GLIBC_[0-9.]*' | sort -uV || true)"
  needed="$(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  case "$platform" in
    *-gnu)
      local newest
      newest="$(tail -1 <<<"$versions" | sed 's/GLIBC_//')"
      if [ "$(printf '%s\n2.17\n' "$newest" | sort -V | tail -1)" != 2.17 ]; then
        echo "check-binary: $file needs GLIBC_$newest (> 2.17):" >&2
        objdump -T "$file" | grep -E 'GLIBC_2\.(1[89]|[2-9][0-9])' >&2
        return 1
      fi
      echo "check-binary: $platform: $desc; needs $needed; newest glibc symbol version GLIBC_$newest"
      ;;
    *-musl)
      if [ -n "$versions" ] || readelf -V "$file" | grep -q 'GLIBC'; then
        echo "check-binary: $file (musl) carries glibc symbol versions: $versions" >&2
        return 1
      fi
      if [ "$needed" != "libc.so " ]; then
        echo "check-binary: $file (musl) needs more than musl's libc.so: $needed" >&2
        return 1
      fi
      if [ "$platform" = linux-x64-musl ]; then
        if [ ! -x /lib/ld-musl-x86_64.so.1 ] && [ "$(id -u)" = 0 ]; then
          DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends musl >/dev/null 2>&1 \
            || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends musl >/dev/null; }
        fi
        local listing
        listing="$(/lib/ld-musl-x86_64.so.1 --list "$file" 2>&1)" || {
          echo "check-binary: musl's loader rejects $file:" >&2
          echo "$listing" >&2
          return 1
        }
        if grep -qi 'error\|not found' <<<"$listing"; then
          echo "check-binary: musl's loader cannot resolve $file:" >&2
          echo "$listing" >&2
          return 1
        fi
        desc="$desc; musl loader resolves every symbol"
      fi
      echo "check-binary: $platform: $desc; needs $needed; no glibc symbol versions"
      ;;
  esac
}

status=0
for platform in "$@"; do check "$platform" || status=1; done
exit "$status"
