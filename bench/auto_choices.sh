#!/usr/bin/env bash
# --stores auto against the best fixed choice, the way a study uses it: at each size and job shape,
# rounds of alternating runs of auto, cached and streaming (the order rotates each round), and per
# kind the median time; auto / best is the best fixed kind's median time over auto's (>= 0.95 is
# the target: auto is never much worse than the right fixed choice). What auto chose is counted.
# Laplace at n = 640 .. 8192 (sweeps enough to calibrate), the sort at 4M, 16M and 64M keys.
# Usage: bench/auto_choices.sh BIN     (a build's bin/ with compas and compas-run)
#   ROUNDS (default 5), SHAPES ("1x1 1x2 2x1"), LAPLACE ("640:1000 1024:600 2048:200 4096:60
#   8192:40", n:sweeps), SORT ("4M:5 16M:3 64M:3", keys:iters); an empty list skips the kernel.
set -euo pipefail
bin=$1
rounds=${ROUNDS:-5}
shapes=${SHAPES:-"1x1 1x2 2x1"}
laplace=${LAPLACE-"640:1000 1024:600 2048:200 4096:60 8192:40"}
sorts=${SORT-"4M:5 16M:3 64M:3"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One run: prints "seconds streamed" (the kernel's time, and 1 when it used streaming stores).
run() {  # P T KIND STORES ARGS...
  local p=$1 t=$2 kind=$3 stores=$4
  shift 4
  "$bin/compas-run" -n "$p" -t "$t" "$bin/compas" run "$kind" "$@" --stores "$stores" \
    --json "$tmp/r.json" >"$tmp/log" 2>&1 || {
    echo "auto_choices: failed: compas run $kind $* --stores $stores on $p x $t:" >&2
    cat "$tmp/log" >&2
    return 1
  }
  python3 - "$tmp/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
secs = r.get("median_seconds", r["seconds"])
print(secs, 1 if r.get("streaming_stores", r.get("streaming", False)) else 0)
PY
}
median() { sort -g | awk '{v[NR]=$1} END {print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2)}'; }
kinds=(auto cached streaming)
measure() {  # LABEL P T KIND ARGS...
  local label=$1 p=$2 t=$3 kind=$4
  shift 4
  : >"$tmp/auto" >"$tmp/cached" >"$tmp/streaming" >"$tmp/chose"
  for ((r = 0; r < rounds; r++)); do
    for ((i = 0; i < 3; i++)); do
      local s=${kinds[$(((r + i) % 3))]}
      read -r secs streamed < <(run "$p" "$t" "$kind" "$s" "$@")
      echo "$secs" >>"$tmp/$s"
      [[ $s == auto ]] && echo "$streamed" >>"$tmp/chose"
    done
  done
  local a c s
  a=$(median <"$tmp/auto") c=$(median <"$tmp/cached") s=$(median <"$tmp/streaming")
  awk -v l="$label" -v p="$p" -v t="$t" -v a="$a" -v c="$c" -v s="$s" \
    -v st="$(paste -sd+ "$tmp/chose" | bc)" -v n="$rounds" \
    'BEGIN { best = c < s ? c : s; printf "| %s | %s x %s | %.4g | %.4g | %.4g | %s of %s | %.3f |\n",
             l, p, t, a, c, s, st, n, best / a }'
}
printf '| kernel, size | P x T | auto s | cached s | streaming s | auto streamed | auto / best |\n'
printf '|---|---|---|---|---|---|---|\n'
for size in $laplace; do
  n=${size%%:*} it=${size##*:}
  for shape in $shapes; do
    measure "laplace n=$n" "${shape%x*}" "${shape#*x}" laplace --n "$n" --iters "$it" --tol 0
  done
done
for size in $sorts; do
  keys=${size%%:*} it=${size##*:}
  for shape in $shapes; do
    measure "sort $keys keys" "${shape%x*}" "${shape#*x}" sort --keys "$keys" --iters "$it"
  done
done
