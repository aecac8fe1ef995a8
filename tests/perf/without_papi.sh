#!/usr/bin/env bash
# compas without PAPI: configures the source tree with -DCOMPAS_PAPI=OFF in a scratch directory,
# checks that the configuration says so (nothing links PAPI, no .pc file requires it), builds the perf tests and the CLI, and runs them (every
# counter request is then time only and says why; `compas membw --events ipc` still measures).
# Usage: without_papi.sh SOURCE_DIR MAKE_PROGRAM CXX_COMPILER
set -euo pipefail
src=$1 make_program=$2 cxx=$3
# Two levels under the source tree when it can be written (as build/release is): the project's
# ccache launcher hashes paths relative to the build directory, so the objects this build shares
# with the release build come from the cache (a cold build of the CLI took 160 s of CI's time).
if mkdir -p "$src/build" 2>/dev/null && [[ -w $src/build ]]; then
  dir=$(mktemp -d "$src/build/without-papi.XXXXXX")
else
  dir=$(mktemp -d)
fi
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
cmake -S "$src" -B "$dir" -G Ninja -DCMAKE_MAKE_PROGRAM="$make_program" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=Release -DCOMPAS_PAPI=OFF \
  -DCOMPAS_BUILD_BENCH=OFF -DCOMPAS_BUILD_FORTRAN=OFF >"$dir/configure.log" 2>&1 ||
  { cat "$dir/configure.log"; fail "configure with COMPAS_PAPI=OFF failed"; }
if grep -rq "libpapi\|libsde" "$dir/build.ninja"; then
  fail "a build with COMPAS_PAPI=OFF still links PAPI: $(grep -o '[^ ]*lib\(papi\|sde\)[^ ]*' "$dir/build.ninja" | sort -u | head -3)"
fi
for pc in compas.pc compas-c.pc; do
  if grep -q "papi" "$dir/$pc"; then fail "$pc of a build with COMPAS_PAPI=OFF names PAPI: $(grep papi "$dir/$pc")"; fi
done
cmake --build "$dir" --target test_perf_counters compas >"$dir/build.log" 2>&1 ||
  { tail -40 "$dir/build.log"; fail "build with COMPAS_PAPI=OFF failed"; }
"$dir/bin/test_perf_counters" || fail "the perf tests fail without PAPI"
out=$("$dir/bin/compas" membw --kernels load --threads 1 --size 4M --events ipc 2>&1) ||
  fail "compas membw --events ipc without PAPI: $out"
grep -q "built without PAPI" <<<"$out" || fail "no notice that compas was built without PAPI: $out"
echo "PASS: without PAPI, configured, built, tests pass, counters say why they measure time only"
