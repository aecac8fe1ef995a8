#!/usr/bin/env bash
# NAS CG of two builds side by side (kernels_ab.sh for CG): alternating runs of `compas run cg`
# from build A (the baseline) and build B at each class and job shape; the median Mop/s of each
# and the median of the per-round ratios B / A. For checking that a change costs nothing.
# Usage: bench/cg_ab.sh BIN_A BIN_B
#   ROUNDS (default 7), CLASSES (default "B"), SHAPES (default "2x1 1x2"), ARGS (extra flags of B)
set -euo pipefail
here=$(dirname "$0")
for cls in ${CLASSES:-B}; do
  ROUNDS=${ROUNDS:-7} SHAPES=${SHAPES:-"2x1 1x2"} KERNELS=cg SIZE_cg="--class $cls" \
    ARGS_B=${ARGS:-} "$here/kernels_ab.sh" "$1" "$2"
done
