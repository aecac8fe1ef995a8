#!/usr/bin/env bash
# comm_scale.sh: the per-process cost of joining a compas job as it grows. Runs comm_scale under
# compas-run for P = 2, 8, 32, 64 processes of 1 thread each (on a small machine the larger jobs
# oversubscribe the cores; compas waits back off then) and prints one summary table:
#   P, main -> bootstrap + Comm + first window (median and max over ranks, ms), bootstrap alone
#   (max), the process age at main() (max: exec and loading, before the timed steps),
#   RSS per process after the first window and with every peer connected (median, KiB),
#   endpoints before the first put (lazy: only the process barrier's partners),
#   KiB per peer put to (median slope of RSS against peers), first put+flush per peer (ms).
# Every P runs RUNS times (P interleaved); each figure is the median over the runs of the
# per-run figure (itself a median or max over ranks). Each run's own table is kept in OUTDIR.
# A measurement, not a test. Usage:
#   bench/comm_scale.sh [OUTDIR]        (default: comm-scale-results/)
# Environment: BUILD (default build/release), PROCS (default "2 8 32 64"), RUNS (default 5),
# COMPAS_TIMEOUT (default 300 s per wait).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="${BUILD:-$root/build/release}"
out="${1:-comm-scale-results}"
procs="${PROCS:-2 8 32 64}"
runs="${RUNS:-5}"
[[ "$runs" =~ ^[1-9][0-9]*$ ]] || { echo "comm_scale.sh: RUNS=$runs" >&2; exit 2; }
bin="$build/bin"
for exe in compas-run comm_scale; do
  [[ -x "$bin/$exe" ]] || {
    echo "comm_scale.sh: $bin/$exe not found: build it first (cmake --build $build)" >&2
    exit 2
  }
done
mkdir -p "$out"
export COMPAS_TIMEOUT="${COMPAS_TIMEOUT:-300}"

echo "comm_scale.sh: P = $procs, $runs runs each, load $(cut -d' ' -f1-3 /proc/loadavg)"
files=()
for ((i = 1; i <= runs; ++i)); do
  for p in $procs; do
    f="$out/comm_scale_p${p}_run$i.json"
    rm -f "$f"
    if "$bin/compas-run" -n "$p" -t 1 --timeout 900 "$bin/comm_scale" --json "$f" \
      >"${f%.json}.txt" 2>"${f%.json}.err"; then
      files+=("$f")
      echo "run $i, P = $p: $(sed -n 's/^main -> first window (ms) *//p' "${f%.json}.txt" |
        awk '{print "main -> first window median " $1 " ms, max " $3 " ms"}')"
    else
      echo "run $i, P = $p: FAILED (exit $?), see ${f%.json}.err" >&2
    fi
  done
done

python3 - "$out/summary.json" "${files[@]}" <<'EOF'
import json, sys

summary_path, files = sys.argv[1], sys.argv[2:]
per_run = {}
for f in files:
    with open(f) as fh:
        doc = json.load(fh)
    m = {r["metric"]: r for r in doc["results"]}
    p = doc["params"]["processes"]
    last_k = doc["params"]["peer_counts"][-1]
    get = lambda name, key="median": m[name][key] if name in m else None
    per_run.setdefault(p, []).append({
        "processes": p,
        "transport": doc["params"]["transport"],
        "startup_ms_median": get("bootstrap+comm+window"),
        "startup_ms_max": get("bootstrap+comm+window", "max"),
        "bootstrap_ms_median": get("bootstrap"),
        "bootstrap_ms_max": get("bootstrap", "max"),
        "age_at_main_ms_max": get("age_at_main", "max"),
        "rss_window_kib_median": get("rss_window"),
        "rss_all_peers_kib_median": get(f"rss_k{last_k}"),
        "rss_all_peers_kib_max": get(f"rss_k{last_k}", "max"),
        "endpoints_before_put_median": get("peers_after_window"),
        "endpoints_all_peers_median": get(f"peers_k{last_k}"),
        "kib_per_peer_median": get("kib_per_peer"),
        "kib_per_peer_max": get("kib_per_peer", "max"),
        "kib_per_endpoint_median": get("kib_per_endpoint"),
        "connect_ms_per_peer_median": get("connect_per_peer"),
    })

def median(v):
    v = sorted(x for x in v if x is not None)
    if not v:
        return None
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2

rows = []
for p in sorted(per_run):
    runs = per_run[p]
    row = {"processes": p, "runs": len(runs), "transport": runs[0]["transport"]}
    for key in runs[0]:
        if key not in row:
            row[key] = median([r[key] for r in runs])
    row["per_run"] = runs
    rows.append(row)

def f(v, spec):
    return format(v, spec) if v is not None else "n/a"

print()
print("comm_scale summary: median over runs of (median over ranks, or max where marked); "
      "times from main() entry")
head = (f"{'P':>4} {'runs':>4} {'boot+win med ms':>15} {'boot+win max ms':>15} {'boot max ms':>11} "
        f"{'age@main max ms':>15} {'RSS win KiB':>11} {'RSS all KiB':>11} {'ep before put':>13} {'ep all':>6} "
        f"{'KiB/peer':>8} {'KiB/peer max':>12} {'KiB/endpoint':>12} {'put1 ms/peer':>12}")
print(head)
print("-" * len(head))
for r in rows:
    print(f"{r['processes']:>4} {r['runs']:>4} {f(r['startup_ms_median'], '.1f'):>15} "
          f"{f(r['startup_ms_max'], '.1f'):>15} {f(r['bootstrap_ms_max'], '.1f'):>11} "
          f"{f(r['age_at_main_ms_max'], '.0f'):>15} {f(r['rss_window_kib_median'], '.0f'):>11} {f(r['rss_all_peers_kib_median'], '.0f'):>11} "
          f"{f(r['endpoints_before_put_median'], '.0f'):>13} "
          f"{f(r['endpoints_all_peers_median'], '.0f'):>6} {f(r['kib_per_peer_median'], '.1f'):>8} "
          f"{f(r['kib_per_peer_max'], '.1f'):>12} {f(r['kib_per_endpoint_median'], '.1f'):>12} "
          f"{f(r['connect_ms_per_peer_median'], '.3f'):>12}")
print("KiB/peer: slope of VmRSS against peers put to (k >= 1; P = 2: the step from 0 to 1 peer, "
      "which holds one-time costs of the first put). ep: Comm::connected_peers(). age@main: "
      "process age when main() started (exec, loading; 10 ms resolution).")
with open(summary_path, "w") as fh:
    json.dump({"command": "comm_scale.sh", "rows": rows}, fh, indent=2)
print(f"summary written to {summary_path}")
EOF
