#!/usr/bin/env bash
# Fuzz smoke for CI: replays every saved regression input, then fuzzes each target for a few
# seconds. Usage: fuzz/smoke.sh [SECONDS_PER_TARGET] [TARGET...]   (default 5 s, every target)
#
# Needs a nightly toolchain (libFuzzer's instrumentation uses -Z flags). cargo-fuzz is installed
# when missing (about 35 s to compile on the 2-core CI machine).
set -euo pipefail

cd "$(dirname "$0")/.."
seconds="${1:-5}"
shift || true

if ! command -v cargo-fuzz >/dev/null 2>&1; then
  echo "fuzz smoke: installing cargo-fuzz"
  cargo install cargo-fuzz --locked
fi

# Prefer a real nightly; a stable toolchain can build the instrumented targets when told it
# may use unstable flags (RUSTC_BOOTSTRAP), which keeps CI working where nightly is absent.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  fuzz=(cargo +nightly fuzz)
else
  echo "fuzz smoke: no nightly toolchain, using stable with RUSTC_BOOTSTRAP=1"
  export RUSTC_BOOTSTRAP=1
  fuzz=(cargo fuzz)
fi

# Release code with debug assertions on, so integer overflow is a crash, not a silent wrap.
flags=(--release --debug-assertions)

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <("${fuzz[@]}" list)
fi

"${fuzz[@]}" build "${flags[@]}"

passed=0
failed=0
for target in "${targets[@]}"; do
  regressions="fuzz/regressions/$target"
  if compgen -G "$regressions/*" >/dev/null; then
    # Files given to libFuzzer are run once each, no fuzzing.
    if "${fuzz[@]}" run "${flags[@]}" "$target" "$regressions"/* -- -runs=1 >"fuzz/target/smoke-$target-regressions.log" 2>&1; then
      echo "ok   $target: regressions replayed ($(ls "$regressions" | wc -l) inputs)"
    else
      echo "FAIL $target: a saved regression input crashes (see fuzz/target/smoke-$target-regressions.log)"
      failed=$((failed + 1))
      continue
    fi
  fi
  corpus="fuzz/corpus/$target"
  mkdir -p "$corpus"
  # Checked-in seeds are read (never written); a dictionary teaches libFuzzer the grammar.
  inputs=("$corpus")
  [ -d "fuzz/seeds/$target" ] && inputs+=("fuzz/seeds/$target")
  extra=()
  [ -f "fuzz/dicts/$target.dict" ] && extra+=("-dict=fuzz/dicts/$target.dict")
  log="fuzz/target/smoke-$target.log"
  if "${fuzz[@]}" run "${flags[@]}" "$target" "${inputs[@]}" -- \
    -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 "${extra[@]}" >"$log" 2>&1; then
    runs=$(grep -o 'Done [0-9]* runs' "$log" | grep -o '[0-9]*' || echo '?')
    echo "ok   $target: $runs executions in ${seconds}s"
    passed=$((passed + 1))
  else
    echo "FAIL $target: crash found; input saved under fuzz/artifacts/$target/"
    grep -E 'panicked|ERROR: libFuzzer|SUMMARY' "$log" | head -5 || true
    failed=$((failed + 1))
  fi
done

echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
