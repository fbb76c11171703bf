#!/usr/bin/env bash
# Publishes a release from a checkout whose npm/<platform>/ folders hold their binaries (the
# release workflow's `napi artifacts` puts them there): each platform package, then auth-shield
# with the matching optionalDependencies. The release workflow (.github/workflows/ci.yml) runs
# this script against the npm registry; .ci/run runs it against a loopback Verdaccio
# (scripts/runtimes/registry.sh), so the steps that only a release ran are exercised every time.
#
#   scripts/release/publish.sh [dist-tag]    # default: latest, or next for a pre-release version
#
# Registry and credentials come from npm's configuration (NPM_CONFIG_REGISTRY,
# NPM_CONFIG_USERCONFIG, NODE_AUTH_TOKEN with setup-node's .npmrc); provenance from
# NPM_CONFIG_PROVENANCE. It changes package.json (optionalDependencies): run it in a throwaway
# checkout, as both callers do.
set -euo pipefail
cd "$(dirname "$0")/../.."

version="$(node -p "require('./package.json').version")"
tag="${1:-latest}"
case "$version" in *-*) [ $# -gt 0 ] || tag=next ;; esac

# Every target in package.json "napi.targets" must have its binary: a release never ships a
# platform package without one.
missing=""
for dir in npm/*/; do
  platform="$(basename "$dir")"
  [ -f "$dir/auth-shield.$platform.node" ] || missing="$missing $platform"
done
if [ -n "$missing" ]; then
  echo "publish: no binary for:$missing" >&2
  exit 1
fi

# Publishes npm/* (one package per target) and writes the matching "optionalDependencies" (same
# version) into package.json.
npx napi pre-publish -t npm --no-gh-release
# --ignore-scripts: the binaries come from the platform packages; the dev/ workspace's
# `prepare` (a source build) must not run here.
npm publish --ignore-scripts --access public --tag "$tag"
echo "publish: auth-shield@$version and $(ls npm | wc -l) platform packages under the '$tag' tag"
