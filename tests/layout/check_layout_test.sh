#!/usr/bin/env bash
# scripts/check-layout.sh finds what it must: on a small tree made here (not a git checkout), read
# against the repository's own docs/layers.rules, with one breach of each kind planted it exits 1
# naming each, and on the same tree without them it exits 0. The breaches: base including runtime
# (a back arrow), capi including its sibling kernels, kernels including capi and the umbrella
# header, perf including comm and probes, analysis including base and perf, kernels and capi
# including probes (below them by rank, not allowed by the table), probes including runtime, a
# program (apps) and a benchmark (bench) including kernels' internals by a relative path, bench
# adding kernels/src to a target's include path, a file of 601 lines, a layer with public headers
# and no overview header, an overview that does not open with its layer's name, one that leaves a
# header unnamed. A rules file that cannot be read exits 2.
# Usage: check_layout_test.sh CHECK_LAYOUT_SH RULES
set -u
check=$1
rules=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
mkdir -p "$dir"/{base,runtime,kernels,capi,perf,probes,analysis,comm}/src "$dir"/apps/compas \
  "$dir"/bench "$dir"/kernels/bench
echo '#include "compas/base/env.hpp"' >"$dir/runtime/src/fine.cpp"
echo '#include "compas/runtime/runtime.hpp"' >"$dir/base/src/up.cpp"
echo '#include "compas/kernels/cg.hpp"' >"$dir/capi/src/sibling.cpp"
echo '#include "compas/compas.hpp"' >"$dir/kernels/src/umbrella.cpp"
echo '#include "compas/compas.h"' >"$dir/kernels/src/c_api.cpp"
echo '#include "compas/compas.h"' >"$dir/capi/src/own.cpp"
echo '#include "compas/probes/membw.hpp"' >"$dir/perf/src/probe.cpp"
echo '#include "compas/comm/ucx.hpp"' >"$dir/perf/src/comm.cpp"
echo '#include "compas/perf/timer.hpp"' >"$dir/analysis/src/timed.cpp"
echo '#include "compas/base/number.hpp"' >"$dir/analysis/src/base.cpp"
echo '#include "compas/probes/membw.hpp"' >"$dir/kernels/src/probe.cpp"
echo '#include "compas/probes/pingpong.hpp"' >"$dir/capi/src/probe.cpp"
echo '#include "compas/runtime/runtime.hpp"' >"$dir/probes/src/runtime.cpp"
echo '#include "compas/perf/region.hpp"' >"$dir/probes/src/fine_too.cpp"
echo '#include "../../kernels/src/test_hooks.hpp"' >"$dir/apps/compas/hooks.cpp"
echo '#include "../kernels/src/cg_tree.hpp"' >"$dir/bench/internals.cpp"
echo '#include "../src/cg_tree.hpp"' >"$dir/kernels/bench/own_internals.cpp"
echo '#include "compas/compas.hpp"' >"$dir/apps/compas/program.cpp"
echo 'target_include_directories(x PRIVATE ${PROJECT_SOURCE_DIR}/kernels/src)' \
  >"$dir/bench/CMakeLists.txt"
echo 'target_include_directories(y PRIVATE ${PROJECT_SOURCE_DIR}/kernels/src)' \
  >"$dir/kernels/CMakeLists.txt"
mkdir -p "$dir"/{comm,perf,probes}/include/compas/{comm,perf,probes}
printf '// comm: x\n#include "compas/comm/ucx.hpp"\n' >"$dir/comm/include/compas/comm/comm.hpp"
echo '#pragma once' >"$dir/comm/include/compas/comm/ucx.hpp"
printf '// perf: x\n#pragma once\n' >"$dir/perf/include/compas/perf/perf.hpp"
echo '#pragma once' >"$dir/perf/include/compas/perf/timer.hpp"
echo '#pragma once' >"$dir/probes/include/compas/probes/membw.hpp"
yes '// line' | head -601 >"$dir/kernels/src/long.cpp"
yes '// line' | head -600 >"$dir/kernels/src/just.cpp"
out=$(bash "$check" "$dir" "$rules" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 1 ]] || fail "exit $rc with breaches planted (want 1)"
for want in "base/src/up.cpp:1: base includes runtime" "capi/src/sibling.cpp:1: capi includes kernels" \
            "kernels/src/umbrella.cpp:1: kernels includes the umbrella header" \
            "kernels/src/c_api.cpp:1: kernels includes capi" "long.cpp:601: 601 lines" \
            "perf/src/probe.cpp:1: perf includes probes" "perf/src/comm.cpp:1: perf includes comm" \
            "analysis/src/timed.cpp:1: analysis includes perf" \
            "analysis/src/base.cpp:1: analysis includes base" \
            "kernels/src/probe.cpp:1: kernels includes probes" \
            "capi/src/probe.cpp:1: capi includes probes" \
            "probes/src/runtime.cpp:1: probes includes runtime" \
            "apps/compas/hooks.cpp:1: apps includes kernels's internals" \
            "bench/internals.cpp:1: bench includes kernels's internals" \
            "bench/CMakeLists.txt:1: bench adds kernels's internals" \
            "probes/include/compas/probes: no overview header probes.hpp" \
            "perf/include/compas/perf/perf.hpp: does not name timer.hpp"; do
  grep -qF "$want" <<<"$out" || fail "not named: $want"
done
for unwanted in fine.cpp own.cpp just.cpp fine_too.cpp own_internals.cpp program.cpp \
                kernels/CMakeLists.txt comm.hpp; do
  grep -q "$unwanted" <<<"$out" && fail "named without a breach: $unwanted"
done
rm "$dir/base/src/up.cpp" "$dir/capi/src/sibling.cpp" "$dir/kernels/src/umbrella.cpp" \
   "$dir/kernels/src/c_api.cpp" "$dir/kernels/src/long.cpp" "$dir/perf/src/probe.cpp" \
   "$dir/perf/src/comm.cpp" "$dir/analysis/src/timed.cpp" "$dir/analysis/src/base.cpp" \
   "$dir/kernels/src/probe.cpp" "$dir/capi/src/probe.cpp" "$dir/probes/src/runtime.cpp" \
   "$dir/apps/compas/hooks.cpp" "$dir/bench/internals.cpp" "$dir/bench/CMakeLists.txt" \
   "$dir/perf/include/compas/perf/timer.hpp" "$dir/probes/include/compas/probes/membw.hpp"
out=$(bash "$check" "$dir" "$rules" 2>&1) || fail "exit $? on a clean tree: $out"
bash "$check" "$dir" "$dir/no-such-rules" >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "an unreadable rules file did not exit 2"
echo "PASS: every planted breach named, the clean tree passes"
