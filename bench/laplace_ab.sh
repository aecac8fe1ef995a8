#!/usr/bin/env bash
# Laplace of two builds side by side: alternating runs of `compas run laplace` from build A (the
# baseline) and build B at each size and job shape, and the median MLUP/s of each and the median
# of the per-round ratios B / A. For checking that a change costs nothing (issue target >= 0.98).
# Usage: bench/laplace_ab.sh BIN_A BIN_B      (each a build's bin/ with compas and compas-run)
#   ROUNDS (default 7), SIZES ("640:1000 8192:40": n:sweeps), SHAPES ("1x2 2x1")
set -euo pipefail
a=$1 b=$2
rounds=${ROUNDS:-7}
sizes=${SIZES:-"640:1000 8192:40"}
shapes=${SHAPES:-"1x2 2x1"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mlups() {  # BIN P T N ITERS -> MLUP/s
  local bin=$1 p=$2 t=$3 n=$4 it=$5
  "$bin/compas-run" -n "$p" -t "$t" "$bin/compas" run laplace --n "$n" --iters "$it" \
    --json "$tmp/r.json" >/dev/null 2>&1
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results'][0]['mlups'])" \
    "$tmp/r.json"
}
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
printf '| n | sweeps | P x T | A MLUP/s | B MLUP/s | B / A (median of rounds) | rounds B / A |\n'
printf '|---|---|---|---|---|---|---|\n'
for size in $sizes; do
  n=${size%%:*} it=${size##*:}
  for shape in $shapes; do
    p=${shape%x*} t=${shape#*x}
    : >"$tmp/a" >"$tmp/b" >"$tmp/r"
    for ((r = 0; r < rounds; r++)); do
      if ((r % 2 == 0)); then
        x=$(mlups "$a" $p $t $n $it); y=$(mlups "$b" $p $t $n $it)
      else
        y=$(mlups "$b" $p $t $n $it); x=$(mlups "$a" $p $t $n $it)
      fi
      echo "$x" >>"$tmp/a"; echo "$y" >>"$tmp/b"
      echo "$y $x" | awk '{printf "%.4f\n", $1 / $2}' >>"$tmp/r"
    done
    printf '| %s | %s | %s x %s | %.1f | %.1f | %.3f | %s |\n' "$n" "$it" "$p" "$t" \
      "$(median <"$tmp/a")" "$(median <"$tmp/b")" "$(median <"$tmp/r")" "$(tr '\n' ' ' <"$tmp/r")"
  done
done
