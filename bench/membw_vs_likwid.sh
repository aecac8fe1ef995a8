#!/usr/bin/env bash
# membw_vs_likwid.sh: `compas membw` against likwid-bench, the baseline, in one run. Each round
# measures, for every kernel (load, copy, triad) and thread count, compas membw and every
# double-precision likwid-bench variant of the matching likwid families (plain, sse, avx,
# avx512, fma and the non-temporal _mem ones: whatever `likwid-bench -a` lists for this CPU), on
# the same working set (`-w S0:SIZE:T`, compas `--size SIZE`); rounds alternate which goes first.
# Both count bytes the same way (read + written, no write-allocate). compas's triad is STREAM's
# a = b + s*c (2 reads, 1 write: 24 B per element), which likwid calls `stream`; likwid's `triad`
# is A = B*C + D (3 reads, 1 write: 32 B), a different read/write mix, so a triad is compared
# with both families. The table gives, per kernel, thread count and likwid family, medians over
# rounds of compas and of the family's best variant per round, the median of the per-round ratio
# compas / that best (one compas run against the best of several likwid runs: biased towards
# likwid on a noisy machine), and, like for like, the median of the per-round ratio against one
# fixed variant, the one with the best median (column `vs fixed`). A measurement, not a test.
# Usage:
#   bench/membw_vs_likwid.sh [OUTDIR]
# Environment: BUILD (default build/release), THREADS ("1 2"), SIZE (1GB), ROUNDS (5),
# KERNELS ("load copy triad"), FAMILIES_load ("load"), FAMILIES_copy ("copy"),
# FAMILIES_triad ("stream triad").
set -uo pipefail

if [[ $# -gt 1 || "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
bin="${BUILD:-$root/build/release}/bin"
threads="${THREADS:-1 2}" size="${SIZE:-1GB}" rounds="${ROUNDS:-5}"
kernels="${KERNELS:-load copy triad}"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
[[ -x "$bin/compas" ]] || { echo "membw_vs_likwid.sh: $bin/compas not found: build first" >&2; exit 2; }
command -v likwid-bench >/dev/null ||
  { echo "membw_vs_likwid.sh: likwid-bench not found (Debian package likwid)" >&2; exit 2; }

listed="$(likwid-bench -a 2>/dev/null | awk '{print $1}')"
families() {  # families KERNEL: the likwid-bench families compared with this compas kernel
  case $1 in
    load) echo "${FAMILIES_load:-load}" ;;
    copy) echo "${FAMILIES_copy:-copy}" ;;
    triad) echo "${FAMILIES_triad:-stream triad}" ;;
  esac
}
variants() {  # variants KERNEL: the double-precision likwid-bench tests of its families
  local f
  for f in $(families "$1"); do
    grep -E "^$f(_mem)?(_sse|_avx|_avx512)?(_fma)?$" <<<"$listed"
  done | sort -u
}

results="$out/results.tsv"
: >"$results"
compas_gbs() {  # compas_gbs KERNEL T ROUND
  local json="$out/compas_${1}_t${2}_r${3}.json"
  "$bin/compas" membw --kernels "$1" --threads "$2" --size "$size" --quiet --json "$json" \
    >/dev/null 2>"$out/compas_${1}_t${2}_r${3}.err" || return 1
  python3 - "$json" "$1" "$2" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
for r in j["results"]:
    if r.get("kernel") == sys.argv[2] and r.get("threads") == int(sys.argv[3]):
        print(r["bandwidth_gbs"])
EOF
}
likwid_gbs() {  # likwid_gbs VARIANT T ROUND: GB/s (likwid's MByte/s / 1000)
  local log="$out/likwid_${1}_t${2}_r${3}.txt"
  likwid-bench -t "$1" -w "S0:$size:$2" >"$log" 2>&1 || return 1
  awk '/^MByte\/s:/ {printf "%.3f\n", $2 / 1000}' "$log"
}

for ((r = 1; r <= rounds; r++)); do
  for k in $kernels; do
    for t in $threads; do
      order=(compas likwid)
      ((r % 2 == 0)) && order=(likwid compas)
      for who in "${order[@]}"; do
        if [[ $who == compas ]]; then
          v="$(compas_gbs "$k" "$t" "$r")" && [[ -n $v ]] && printf '%s\t%s\t%s\tcompas\t%s\n' "$r" "$k" "$t" "$v" >>"$results"
        else
          for var in $(variants "$k"); do
            v="$(likwid_gbs "$var" "$t" "$r")" && [[ -n $v ]] && printf '%s\t%s\t%s\t%s\t%s\n' "$r" "$k" "$t" "$var" "$v" >>"$results"
          done
        fi
      done
    done
  done
  echo "membw_vs_likwid.sh: round $r of $rounds done" >&2
done

python3 - "$results" "$out/summary.json" <<'EOF'
import json, statistics, sys
from collections import defaultdict
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
by = defaultdict(lambda: defaultdict(dict))  # (kernel, T) -> round -> who -> GB/s
for r, k, t, who, v in rows:
    by[(k, int(t))][int(r)][who] = float(v)
fams = sorted({who.split("_")[0] for r, k, t, who, v in rows if who != "compas"})
summary = []
print(f"{'kernel':8} {'T':>2} {'family':>7} {'compas GB/s':>12} {'likwid best':>12} "
      f"{'best variant':>22} {'ratio':>7} {'vs fixed':>9}")
for ((k, t), rounds), fam in sorted((kv, f) for kv in by.items() for f in fams):
    cs, bs, ratios, names = [], [], [], defaultdict(int)
    for rr, d in rounds.items():
        lk = {w: v for w, v in d.items() if w != "compas" and w.split("_")[0] == fam}
        if "compas" not in d or not lk:
            continue
        best = max(lk, key=lk.get)
        names[best] += 1
        cs.append(d["compas"]); bs.append(lk[best]); ratios.append(d["compas"] / lk[best])
    if not ratios:
        continue
    # Like for like: against the one variant with the best median, round by round.
    per = defaultdict(list)
    for rr, d in rounds.items():
        for w, v in d.items():
            if w != "compas" and w.split("_")[0] == fam:
                per[w].append(v)
    fixed = max(per, key=lambda w: statistics.median(per[w]))
    vs_fixed = [d["compas"] / d[fixed] for d in rounds.values() if "compas" in d and fixed in d]
    rec = {"kernel": k, "threads": t, "likwid_family": fam, "rounds": len(ratios),
           "fixed_variant": fixed, "ratio_vs_fixed_median": statistics.median(vs_fixed),
           "compas_gbs": statistics.median(cs), "likwid_best_gbs": statistics.median(bs),
           "likwid_best_variant": max(names, key=names.get),
           "ratio_median": statistics.median(ratios), "ratio_min": min(ratios), "ratio_max": max(ratios)}
    summary.append(rec)
    print(f"{k:8} {t:>2} {fam:>7} {rec['compas_gbs']:12.2f} {rec['likwid_best_gbs']:12.2f} "
          f"{rec['likwid_best_variant']:>22} {rec['ratio_median']:7.3f} "
          f"{rec['ratio_vs_fixed_median']:9.3f}")
tmp = sys.argv[2] + ".tmp"
json.dump(summary, open(tmp, "w"), indent=2)
import os; os.replace(tmp, sys.argv[2])
EOF
echo "raw: $results; summary: $out/summary.json" >&2
