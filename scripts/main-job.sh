#!/usr/bin/env bash
# Builds compas and runs the main job on this machine: the topology and the thread barrier
# measurements (COMPaS Fig. 1 and Table 3). Results go to compas-study/.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
out=${COMPAS_OUT:-compas-study}
mkdir -p "$out"
bin=build/release/bin
"$bin/compas" topology --json "$out/topology.json"
echo
"$bin/compas" barrier --json "$out/barrier.json" --csv "$out/barrier.csv"
echo
echo "results written to $out/"
