#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz preset: clang, address + undefined sanitizers) and runs each
# for SECONDS (default 60) from its seed corpus in tests/fuzz/corpus/, on a scratch copy so the
# repository is not written to. A crash or a failed check fails the script and leaves the input
# that caused it in build/fuzz/artifacts/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
./scripts/install-deps.sh
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
mkdir -p build/fuzz/artifacts
for target in wire parsers; do
  corpus=build/fuzz/corpus/$target
  mkdir -p "$corpus"
  cp -n tests/fuzz/corpus/$target/* "$corpus"/
  echo "fuzz_$target: ${seconds} s"
  status=0
  build/fuzz/bin/fuzz_$target -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix=build/fuzz/artifacts/ "$corpus" >build/fuzz/$target.log 2>&1 || status=$?
  grep -E "^(stat::number_of_executed_units|stat::new_units_added)" build/fuzz/$target.log || true
  if [[ $status -ne 0 ]]; then
    tail -40 build/fuzz/$target.log
    echo "fuzz_$target failed (exit $status): see build/fuzz/$target.log and build/fuzz/artifacts/"
    exit 1
  fi
done
