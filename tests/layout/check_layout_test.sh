#!/usr/bin/env bash
# scripts/check-layout.sh finds what it must: on a small tree made here (not a git checkout) with
# one breach of each kind (base including runtime, capi including its sibling kernels, kernels
# including capi and the umbrella header, perf including probes, analysis including perf, a file of
# 601 lines) it exits 1 naming each, and on the
# same tree without them it exits 0.
# Usage: check_layout_test.sh CHECK_LAYOUT_SH
set -u
check=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
mkdir -p "$dir"/{base,runtime,kernels,capi,perf,probes,analysis}/src
echo '#include "compas/base/env.hpp"' >"$dir/runtime/src/fine.cpp"
echo '#include "compas/runtime/runtime.hpp"' >"$dir/base/src/up.cpp"
echo '#include "compas/kernels/cg.hpp"' >"$dir/capi/src/sibling.cpp"
echo '#include "compas/compas.hpp"' >"$dir/kernels/src/umbrella.cpp"
echo '#include "compas/compas.h"' >"$dir/kernels/src/c_api.cpp"
echo '#include "compas/compas.h"' >"$dir/capi/src/own.cpp"
echo '#include "compas/probes/membw.hpp"' >"$dir/perf/src/probe.cpp"
echo '#include "compas/perf/timer.hpp"' >"$dir/analysis/src/timed.cpp"
echo '#include "compas/perf/region.hpp"' >"$dir/probes/src/fine_too.cpp"
yes '// line' | head -601 >"$dir/kernels/src/long.cpp"
yes '// line' | head -600 >"$dir/kernels/src/just.cpp"
out=$(bash "$check" "$dir" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 1 ]] || fail "exit $rc with breaches planted (want 1)"
for want in "base/src/up.cpp:1: base includes runtime" "capi/src/sibling.cpp:1: capi includes kernels" \
            "kernels/src/umbrella.cpp:1: kernels includes the umbrella header" \
            "kernels/src/c_api.cpp:1: kernels includes capi" "long.cpp:601: 601 lines" \
            "perf/src/probe.cpp:1: perf includes probes" "analysis/src/timed.cpp:1: analysis includes perf"; do
  grep -qF "$want" <<<"$out" || fail "not named: $want"
done
for unwanted in fine.cpp own.cpp just.cpp fine_too.cpp; do
  grep -q "$unwanted" <<<"$out" && fail "named without a breach: $unwanted"
done
rm "$dir/base/src/up.cpp" "$dir/capi/src/sibling.cpp" "$dir/kernels/src/umbrella.cpp" \
   "$dir/kernels/src/c_api.cpp" "$dir/kernels/src/long.cpp" "$dir/perf/src/probe.cpp" \
   "$dir/analysis/src/timed.cpp"
out=$(bash "$check" "$dir" 2>&1) || fail "exit $? on a clean tree: $out"
echo "PASS: every planted breach named, the clean tree passes"
