#!/usr/bin/env bash
# Builds compas and runs the main job on this machine, `compas study`: topology, memory bandwidth
# vs threads, the cache curve, thread and process barriers, put latency and bandwidth, and the
# kernels over processes x threads, reported in compas-study/report.md with the raw JSON and plots
# (COMPAS_OUT to change the directory; extra arguments go to compas study, e.g. --budget 5).
# A rerun finishes an interrupted study instead of starting over (--fresh starts over).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset release >/dev/null
# Only what the study runs: the tests and benchmarks are not needed for it.
cmake --build --preset release --target compas compas-run
out=${COMPAS_OUT:-compas-study}
build/release/bin/compas study --out "$out" "$@"
