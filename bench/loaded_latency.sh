#!/usr/bin/env bash
# loaded_latency.sh: `compas membw --loaded-latency` checked against the probes it must agree
# with, in rounds of alternating order (the machine's drift hits both sides alike):
#   idle latency   the curve's idle point (params.idle_latency_ns) against `compas cache`'s
#                  dependent-load chase at the same working set (target: within 5%)
#   peak bandwidth each mix at delay 0 against `compas membw` on the same cpus, kernel, stores and
#                  instruction set (read ~ load, rw ~ copy with non-temporal stores, stream ~
#                  store with non-temporal stores; target >= 0.95), alone, and like for like
#                  with a `compas cache` chase running beside it on the chaser's cpu (where two
#                  cpus share a core, anything busy on one can halve the other's bandwidth)
# The table gives medians over rounds of each side and the median of the per-round ratios. A
# measurement, not a test: it never fails on a number.
# Usage:
#   bench/loaded_latency.sh [OUTDIR]
# Environment: BUILD (default build/release), SIZE (256MiB: the chase buffer and the traffic's
# working set), ROUNDS (7), DELAYS (0: the comparisons need only the idle and delay-0 points, and
# a short sweep keeps each round's measurements close in time on a machine that drifts; auto for
# the full curve), REPEATS (5), REPEAT_MS (50).
set -uo pipefail

if [[ $# -gt 1 || "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
bin="${BUILD:-$root/build/release}/bin"
size="${SIZE:-256MiB}" rounds="${ROUNDS:-7}" delays="${DELAYS:-0}"
repeats="${REPEATS:-5}" repeat_ms="${REPEAT_MS:-50}"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
[[ -x "$bin/compas" ]] || { echo "loaded_latency.sh: $bin/compas not found: build first" >&2; exit 2; }

results="$out/results.tsv"  # round, what, key, value
: >"$results"

field() {  # field JSON EXPR: a Python expression over j (the report)
  python3 - "$1" "$2" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
print(eval(sys.argv[2], {"j": j}))
EOF
}

run_curve() {  # run_curve ROUND: the sweep; its idle latency and each mix's delay-0 bandwidth
  local json="$out/curve_r$1.json"
  "$bin/compas" membw --loaded-latency --size "$size" --delays "$delays" --repeats "$repeats" \
    --min-repeat-ms "$repeat_ms" --json "$json" >"$out/curve_r$1.txt" 2>&1 || return 1
  python3 - "$json" "$1" >>"$results" <<'EOF'
import json, sys
j, r = json.load(open(sys.argv[1])), sys.argv[2]
print(f"{r}\tcurve\tidle_ns\t{j['params']['idle_latency_ns']}")
for rec in j["results"]:
    if rec["delay_ns"] == 0:
        print(f"{r}\tcurve\t{rec['mix']}\t{rec['bandwidth_gbs']}")
EOF
}

run_cache() {  # run_cache ROUND: the cache probe's chase at the same working set
  local json="$out/cache_r$1.json"
  "$bin/compas" cache --min "$size" --max "$size" --repeats "$repeats" --repeat-ms "$repeat_ms" \
    --quiet --json "$json" >/dev/null 2>"$out/cache_r$1.err" || return 1
  printf '%s\tcache\tchase_ns\t%s\n' "$1" \
    "$(field "$json" '[r for r in j["results"] if r["pattern"] == "chase"][0]["ns_per_load"]')" \
    >>"$results"
}

run_membw() {  # run_membw ROUND THREADS CPUS ISA: the kernels the mixes match, on the traffic's cpus
  local json="$out/membw_r$1.json"
  "$bin/compas" membw --threads "$2" --bind "$3" --isa "$4" \
    --kernels load,copy,store --stores non-temporal --size "$size" --repeats "$repeats" \
    --quiet --json "$json" >/dev/null 2>"$out/membw_r$1.err" || return 1
  python3 - "$json" "$1" >>"$results" <<'EOF'
import json, sys
j, r = json.load(open(sys.argv[1])), sys.argv[2]
for rec in j["results"]:
    if "bandwidth_gbs" in rec and "threads" in rec:
        print(f"{r}\tmembw\t{rec['kernel']}\t{rec['bandwidth_gbs']}")
EOF
}

run_membw_beside() {  # run_membw_beside ROUND THREADS CPUS ISA CHASER: membw, a chase running
  local json="$out/membw_beside_r$1.json" pid rc=0
  "$bin/compas" cache --cpu "$5" --min "$size" --max "$size" --repeats 1000 --repeat-ms 100 \
    --quiet >/dev/null 2>"$out/chase_beside_r$1.err" &
  pid=$!
  sleep 3  # the probe's buffer is filled and shuffled before it chases
  "$bin/compas" membw --threads "$2" --bind "$3" --isa "$4" --kernels load,copy,store \
    --stores non-temporal --size "$size" --repeats "$repeats" --quiet --json "$json" \
    >/dev/null 2>"$out/membw_beside_r$1.err" || rc=1
  kill "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  ((rc == 0)) || return 1
  python3 - "$json" "$1" >>"$results" <<'EOF'
import json, sys
j, r = json.load(open(sys.argv[1])), sys.argv[2]
for rec in j["results"]:
    if "bandwidth_gbs" in rec and "threads" in rec:
        print(f"{r}\tbeside\t{rec['kernel']}\t{rec['bandwidth_gbs']}")
EOF
}

# The traffic's cpus and kernels, from a short sweep (nothing else is taken from it).
probe="$out/probe.json"
"$bin/compas" membw --loaded-latency --size "$size" --mix read --delays 0 --repeats 1 \
  --min-repeat-ms 1 --quiet --json "$probe" >/dev/null 2>"$out/probe.err" ||
  { cat "$out/probe.err" >&2; exit 1; }
cpus="$(field "$probe" 'j["params"]["traffic_cpus"]')"
threads="$(field "$probe" 'j["params"]["traffic_threads"]')"
isa="$(field "$probe" 'j["params"]["isa"]')"
chaser="$(field "$probe" 'j["params"]["chaser_cpu"]')"
echo "loaded_latency.sh: $threads traffic thread(s) on cpus $cpus, $isa kernels, size $size, $rounds rounds" >&2

for ((r = 1; r <= rounds; r++)); do
  order=(curve cache membw beside)
  ((r % 2 == 0)) && order=(beside membw cache curve)
  for what in "${order[@]}"; do
    case $what in
      curve) run_curve "$r" || echo "round $r: the sweep failed (see $out/curve_r$r.txt)" >&2 ;;
      cache) run_cache "$r" || echo "round $r: compas cache failed" >&2 ;;
      membw) run_membw "$r" "$threads" "$cpus" "$isa" || echo "round $r: compas membw failed" >&2 ;;
      beside)
        run_membw_beside "$r" "$threads" "$cpus" "$isa" "$chaser" ||
          echo "round $r: compas membw beside a chase failed" >&2
        ;;
    esac
  done
  echo "loaded_latency.sh: round $r of $rounds done" >&2
done

python3 - "$results" "$out/summary.json" "$size" <<'EOF'
import json, os, statistics, sys
from collections import defaultdict
val = defaultdict(dict)  # (what, key) -> round -> value
for line in open(sys.argv[1]):
    r, what, key, v = line.rstrip("\n").split("\t")
    val[(what, key)][int(r)] = float(v)

def compare(name, a, b, target):
    rounds = sorted(set(a) & set(b))
    if not rounds:
        return None
    ratios = [a[r] / b[r] for r in rounds]
    rec = {"what": name, "rounds": len(rounds), "loaded_latency": statistics.median(a.values()),
           "reference": statistics.median(b.values()), "ratio_median": statistics.median(ratios),
           "ratio_min": min(ratios), "ratio_max": max(ratios), "target": target}
    print(f"{name:38} {rec['loaded_latency']:10.2f} {rec['reference']:10.2f} "
          f"{rec['ratio_median']:7.3f} [{rec['ratio_min']:.3f}, {rec['ratio_max']:.3f}]  {target}")
    return rec

print(f"size {sys.argv[3]}; medians over rounds, ratio = median of per-round ratios [min, max]")
print(f"{'':38} {'curve':>10} {'reference':>10} {'ratio':>7}")
summary = [compare("idle ns vs compas cache chase ns", val[("curve", "idle_ns")],
                   val[("cache", "chase_ns")], "within 5%")]
for mix, kernel in (("read", "load"), ("rw", "copy"), ("stream", "store")):
    summary.append(compare(f"{mix} GB/s at delay 0 vs membw {kernel}", val[("curve", mix)],
                           val[("membw", kernel)], ">= 0.95"))
    summary.append(compare(f"  vs membw {kernel} beside a chase", val[("curve", mix)],
                           val[("beside", kernel)], ">= 0.95"))
tmp = sys.argv[2] + ".tmp"
json.dump([s for s in summary if s], open(tmp, "w"), indent=2)
os.replace(tmp, sys.argv[2])
EOF
echo "raw: $results; summary: $out/summary.json" >&2
