#!/usr/bin/env bash
# Every kernel of two builds side by side: alternating runs of `compas run KERNEL` from build A
# (the baseline) and build B at each job shape; the median rate of each (the field `compas run
# --list` of build B names) and the median of the per-round ratios B / A. For checking that a
# change leaves the kernels' speed alone.
# Usage: bench/kernels_ab.sh BIN_A BIN_B   (each a build's bin/ with compas and compas-run;
#   its libraries are taken from BIN/../lib first, so a copied build runs as built)
#   ROUNDS (default 5), SHAPES (default "2x1 1x2"), KERNELS (default: all of B's table),
#   SIZE_<kernel> (flags of that kernel's size; defaults below: beyond the caches, ~1 s a run),
#   ARGS_B (extra flags for build B's runs only: the variant under test)
set -euo pipefail
a=$1 b=$2
rounds=${ROUNDS:-5}
shapes=${SHAPES:-"2x1 1x2"}
declare -A size=(
  [laplace]="${SIZE_laplace:---n 2048 --iters 60}"
  [gemm]="${SIZE_gemm:---n 1200 --iters 3}"
  [cg]="${SIZE_cg:---class A}"
  [sort]="${SIZE_sort:---keys 32M --iters 3}"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
libs() { echo "$1/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; }
# The table of build B: "name rate".
LD_LIBRARY_PATH=$(libs "$b") "$b/compas" run --list | awk '{print $1, $3}' >"$tmp/table"
kernels=${KERNELS:-$(awk '{print $1}' "$tmp/table" | tr '\n' ' ')}
rate() {  # BIN P T KERNEL FIELD [FLAGS...] -> the rate
  local bin=$1 p=$2 t=$3 k=$4 field=$5
  shift 5
  # shellcheck disable=SC2086
  LD_LIBRARY_PATH=$(libs "$bin") "$bin/compas-run" -n "$p" -t "$t" "$bin/compas" run "$k" \
    ${size[$k]:-} "$@" --quiet --json "$tmp/r.json" >/dev/null 2>&1
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0][sys.argv[2]])" \
    "$tmp/r.json" "$field"
}
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
echo "kernels_ab.sh: A=$a B=$b, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| kernel | size | P x T | rate | A | B | B / A (median of rounds) | rounds B / A |\n'
printf '|---|---|---|---|---|---|---|---|\n'
for k in $kernels; do
  field=$(awk -v k="$k" '$1 == k {print $2}' "$tmp/table")
  for shape in $shapes; do
    p=${shape%x*} t=${shape#*x}
    : >"$tmp/a"
    : >"$tmp/b"
    : >"$tmp/r"
    for ((r = 0; r < rounds; r++)); do
      if ((r % 2 == 0)); then
        x=$(rate "$a" "$p" "$t" "$k" "$field")
        # shellcheck disable=SC2086
        y=$(rate "$b" "$p" "$t" "$k" "$field" ${ARGS_B:-})
      else
        # shellcheck disable=SC2086
        y=$(rate "$b" "$p" "$t" "$k" "$field" ${ARGS_B:-})
        x=$(rate "$a" "$p" "$t" "$k" "$field")
      fi
      echo "$x" >>"$tmp/a"
      echo "$y" >>"$tmp/b"
      python3 -c "print($y / $x)" >>"$tmp/r"
    done
    printf '| %s | %s | %s | %s | %.1f | %.1f | %.3f | %s |\n' "$k" "${size[$k]:-}" "$shape" \
      "$field" "$(median <"$tmp/a")" "$(median <"$tmp/b")" "$(median <"$tmp/r")" \
      "$(python3 -c "import sys; print(' '.join('%.3f' % float(l) for l in sys.stdin))" <"$tmp/r")"
  done
done
