#!/usr/bin/env bash
# NAS CG of two builds side by side: alternating runs of `compas run cg` from build A (the
# baseline) and build B at each class and job shape; the median Mop/s of each and the median of
# the per-round ratios B / A. For checking that a change costs nothing.
# Usage: perf/bench/cg_ab.sh BIN_A BIN_B   (each a build's bin/ with compas and compas-run; its
#   libraries are taken from BIN/../lib first, so a copied build runs as built)
#   ROUNDS (default 7), CLASSES (default "B"), SHAPES (default "2x1 1x2"), ARGS (extra flags of B)
set -euo pipefail
a=$1 b=$2
rounds=${ROUNDS:-7}
classes=${CLASSES:-B}
shapes=${SHAPES:-"2x1 1x2"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mops() {  # BIN P T CLASS [FLAGS...] -> Mop/s
  local bin=$1 p=$2 t=$3 cls=$4
  shift 4
  LD_LIBRARY_PATH="$bin/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$bin/compas-run" -n "$p" \
    -t "$t" "$bin/compas" run cg --class "$cls" "$@" --json "$tmp/r.json" >/dev/null 2>&1
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['mops'])" \
    "$tmp/r.json"
}
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
echo "cg_ab.sh: A=$a B=$b, $rounds rounds, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '| class | P x T | A Mop/s | B Mop/s | B / A (median of rounds) | rounds B / A |\n'
printf '|---|---|---|---|---|---|\n'
for cls in $classes; do
  for shape in $shapes; do
    p=${shape%x*} t=${shape#*x}
    : >"$tmp/a"
    : >"$tmp/b"
    : >"$tmp/r"
    for ((r = 0; r < rounds; r++)); do
      if ((r % 2 == 0)); then
        x=$(mops "$a" "$p" "$t" "$cls")
        # shellcheck disable=SC2086
        y=$(mops "$b" "$p" "$t" "$cls" ${ARGS:-})
      else
        # shellcheck disable=SC2086
        y=$(mops "$b" "$p" "$t" "$cls" ${ARGS:-})
        x=$(mops "$a" "$p" "$t" "$cls")
      fi
      echo "$x" >>"$tmp/a"
      echo "$y" >>"$tmp/b"
      python3 -c "print($y / $x)" >>"$tmp/r"
    done
    printf '| %s | %s | %.1f | %.1f | %.3f | %s |\n' "$cls" "$shape" "$(median <"$tmp/a")" \
      "$(median <"$tmp/b")" "$(median <"$tmp/r")" \
      "$(python3 -c "import sys; print(' '.join('%.3f' % float(l) for l in sys.stdin))" <"$tmp/r")"
  done
done
