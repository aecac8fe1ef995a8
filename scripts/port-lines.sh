#!/usr/bin/env bash
# Lines of code of each ported example beside its original: non-blank lines that are not only a
# comment (//, /// and /* */ blocks; Fortran's !, its !$omp lines code; scripts/code-lines.sh, the
# one rule of every count), and the port's size over the original's.
# Usage: scripts/port-lines.sh [ORIGINAL PORT ...]   (default: the pairs in apps/examples/,
# apps/examples/prk/, apps/examples/sparse_cg/, apps/examples/c/ and apps/examples/fortran/)
set -euo pipefail
cd "$(dirname "$0")/.."
count() { "$PWD/scripts/code-lines.sh" "$1" | cut -d' ' -f1; }
pairs=("$@")
if [[ ${#pairs[@]} -eq 0 ]]; then
  for port in apps/examples/*_hybrid.cpp; do
    pairs+=("${port%_hybrid.cpp}_openmp.cpp" "$port")
  done
  for port in apps/examples/prk/*_compas.cpp; do
    pairs+=("${port%_compas.cpp}_openmp.cpp" "$port")
  done
  for port in apps/examples/sparse_cg/*_compas.cpp apps/examples/sparse_cg/*_compas.c; do
    pairs+=("${port%_compas.c*}_openmp.${port##*.}" "$port")
  done
  for port in apps/examples/c/*_compas.c; do
    pairs+=("${port%_compas.c}_openmp.c" "$port")
  done
  for port in apps/examples/fortran/*_compas.f90; do
    pairs+=("${port%_compas.f90}_openmp.f90" "$port")
  done
  for port in apps/examples/*_mpi_hybrid.cpp; do
    [[ -f "${port%_hybrid.cpp}.cpp" ]] && pairs+=("${port%_hybrid.cpp}.cpp" "$port")
  done
fi
printf '| original | lines | port | lines | port / original |\n|---|---|---|---|---|\n'
for ((i = 0; i + 1 < ${#pairs[@]}; i += 2)); do
  a=${pairs[i]} b=${pairs[i + 1]}
  [[ -f "$a" && -f "$b" ]] || continue
  la=$(count "$a") lb=$(count "$b")
  printf '| %s | %d | %s | %d | %.2f |\n' "$(basename "$a")" "$la" "$(basename "$b")" "$lb" \
    "$(echo "$lb / $la" | bc -l)"
done
