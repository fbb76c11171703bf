#!/usr/bin/env bash
# The runtime acceptance: Bun, Deno and workerd (the real binaries, pinned, from the npm
# registry) serve the Fetch cases of __test__/runtimes/cases.js, every answer compared with
# Node's (scripts/runtimes/acceptance.js says what runs where).
#
#   scripts/runtimes/acceptance.sh                 # everything
#   scripts/runtimes/acceptance.sh bun deno        # some: bun, bun-musl, deno, workerd
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/runtimes/tools.sh
test -f auth-shield.linux-x64-gnu.node || npm run build
# The musl Bun loads the linux-x64-musl binary (.ci/run cross-builds it first).
test -f npm/linux-x64-musl/auth-shield.linux-x64-musl.node || bash scripts/cross-build.sh
node scripts/runtimes/acceptance.js "$@"
