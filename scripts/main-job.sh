#!/usr/bin/env bash
# Builds compas and runs the main job on this machine: topology, thread barriers, memory
# bandwidth vs threads and the cache curve (COMPaS Fig. 1, Tables 1-3, Fig. 12), with plots.
# Results go to compas-study/ (COMPAS_OUT to change it).
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
"$bin/compas" barrier --json "$out/barrier.json" --csv "$out/barrier.csv" --plot "$out"
echo
"$bin/compas" membw --json "$out/membw.json" --csv "$out/membw.csv" --plot "$out"
echo
"$bin/compas" cache --json "$out/cache.json" --csv "$out/cache.csv" --plot "$out"
echo
echo "results written to $out/"
