#!/usr/bin/env bash
# Builds compas and runs the whole test suite with CTest.
#   ./scripts/test.sh            release preset (build/release)
#   ./scripts/test.sh asan       AddressSanitizer + UndefinedBehaviorSanitizer (build/asan)
# COMPAS_WERROR=ON turns compiler warnings into errors (CI does this).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
./scripts/install-deps.sh
cmake --preset "$preset" -DCOMPAS_WERROR="${COMPAS_WERROR:-OFF}" >/dev/null
start=$SECONDS
cmake --build --preset "$preset"
echo "compas: $preset build took $((SECONDS - start)) s"
start=$SECONDS
status=0
ctest --preset "$preset" || status=$?
echo "compas: $preset tests took $((SECONDS - start)) s"
exit $status
