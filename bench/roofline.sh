#!/usr/bin/env bash
# roofline.sh: the bandwidth-bound kernels against the memory bus, in one run. Each round
# measures `compas membw` (load, copy and triad at 1..T threads, 1 GiB) and then, at every job shape
# P x T' with P * T' <= T (1 x 1, 1 x T, T x 1, ...):
#
#   laplace  compas run laplace --n N --iters ITERS          (N = 8192: 1 GiB of fields)
#   cg       compas run cg --class CLASS                      (class B: about 200 MB of matrix)
#
# and, at 1 x T, Laplace over a ladder of sizes (LADDER) to show where it leaves the caches.
# Each kernel's GB/s comes from its own byte model (`model_gbs` in its JSON); the roofline ratio
# divides it by the triad bandwidth measured at the same total thread count right before that run
# (the machine's bandwidth drifts within minutes; each ratio pairs neighbours in time);
# /copy and /load divide by the stream kernel whose mix is closest (Laplace: one read stream and
# one streaming write, like copy; CG: almost only reads, like load), the ceiling each kernel's
# traffic can reach on this machine. The table gives medians over the rounds. A measurement, not a test. Usage:
#   bench/roofline.sh [OUTDIR]
# Environment: BUILD (default build/release), T (2), ROUNDS (3), N (8192), ITERS (40), CLASS (B),
# LADDER ("640 1024 2048 4096 8192"), KERNELS ("laplace cg").
set -uo pipefail

if [[ $# -gt 1 || "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
bin="${BUILD:-$root/build/release}/bin"
t="${T:-2}" rounds="${ROUNDS:-3}" n="${N:-8192}" iters="${ITERS:-40}" cls="${CLASS:-B}"
ladder="${LADDER:-640 1024 2048 4096 8192}" kernels="${KERNELS:-laplace cg}"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
for exe in compas compas-run; do
  [[ -x "$bin/$exe" ]] || { echo "roofline.sh: $bin/$exe not found: build first" >&2; exit 2; }
done

shapes=()
for ((p = 1; p <= t; p++)); do
  for ((q = 1; p * q <= t; q++)); do
    if ((p == 1 || q == 1 || p * q == t)); then shapes+=("${p}x${q}"); fi
  done
done

job() {  # job P T JSON ARGS...: compas run ARGS on P processes of T threads, after membw at P T
  local p=$1 q=$2 json=$3
  shift 3
  "$bin/compas" membw --threads $((p * q)) --size 1GiB --kernels load,copy,triad --repeats 3 \
    --quiet --json "${json%.json}.membw" >/dev/null || echo "roofline.sh: membw failed" >&2
  if ((p == 1)); then
    "$bin/compas" run "$@" --threads "$q" --quiet --json "$json" >/dev/null
  else
    "$bin/compas-run" -n "$p" -t "$q" "$bin/compas" run "$@" --quiet --json "$json" >/dev/null
  fi
}

threads_list=$(seq -s, 1 "$t")
for ((r = 0; r < rounds; r++)); do
  "$bin/compas" membw --threads "$threads_list" --size 1GiB --kernels load,copy,triad --quiet \
    --json "$out/membw_$r.json" >/dev/null || echo "roofline.sh: membw failed in round $r" >&2
  for s in "${shapes[@]}"; do
    p=${s%x*} q=${s#*x}
    for k in $kernels; do
      case $k in
        laplace) job "$p" "$q" "$out/laplace_${n}_${s}_$r.json" laplace --n "$n" --iters "$iters" ;;
        cg) job "$p" "$q" "$out/cg_${cls}_${s}_$r.json" cg --class "$cls" ;;
      esac || echo "roofline.sh: $k $s failed in round $r" >&2
    done
  done
  if [[ " $kernels " == *" laplace "* ]]; then
    for m in $ladder; do
      [[ "$m" == "$n" ]] && continue
      # About 1 GB of traffic per run whatever the size.
      it=$(((1000000000 / (16 * m * m)) + 10))
      job 1 "$t" "$out/laplace_${m}_1x${t}_$r.json" laplace --n "$m" --iters "$it" ||
        echo "roofline.sh: laplace n=$m failed in round $r" >&2
    done
  fi
done

python3 - "$out" "$rounds" "$t" <<'EOF'
import glob, json, os, re, statistics, sys
out, rounds, t = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
med = statistics.median
def load(p):
    try:
        return json.load(open(p))
    except Exception:
        return None
# Load, copy and triad GB/s per (round, threads).
bw = {}
for r in range(rounds):
    j = load(os.path.join(out, f"membw_{r}.json"))
    if not j:
        continue
    for x in j["results"]:
        if "bandwidth_gbs" in x and "threads" in x and x.get("kernel") in ("triad", "copy", "load"):
            bw[(r, x["kernel"], x["threads"])] = x["bandwidth_gbs"]
for k in ("load", "copy", "triad"):
    vals = {th: med([v for (r, kk, tt), v in bw.items() if kk == k and tt == th])
            for th in range(1, t + 1) if any(kk == k and tt == th for (_, kk, tt) in bw)}
    print(f"membw {k:5s} GB/s: " + ", ".join(f"{th}T {v:.1f}" for th, v in vals.items()))
rows = {}
for path in glob.glob(os.path.join(out, "*_*_*x*_*.json")):
    m = re.match(r"(laplace|cg)_(\w+)_(\d+)x(\d+)_(\d+)\.json$", os.path.basename(path))
    if not m:
        continue
    kernel, size, p, q, r = m.group(1), m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(5))
    j = load(path)
    if not j or not j["results"] or not j["results"][0].get("verified"):
        print(f"{os.path.basename(path)}: no verified result")
        continue
    rec = j["results"][0]
    # The membw run right before this job; the round's first one if it is missing.
    near = {}
    jb = load(path[:-len(".json")] + ".membw")
    for x in (jb or {}).get("results", []):
        if "bandwidth_gbs" in x and x.get("kernel") in ("triad", "copy", "load"):
            near[x["kernel"]] = x["bandwidth_gbs"]
    triad = near.get("triad", bw.get((r, "triad", p * q)))
    copy = near.get("copy", bw.get((r, "copy", p * q)))
    rd = near.get("load", bw.get((r, "load", p * q)))
    g = rec["model_gbs"]
    nan = float("nan")
    rows.setdefault((kernel, size, p, q), []).append(
        (g, g / triad if triad else nan, g / copy if copy else nan, g / rd if rd else nan,
         rec["seconds"]))
print(f"{'kernel':8s} {'size':>6s} {'P x T':>6s} {'GB/s':>7s} {'/triad':>7s} {'/copy':>7s} {'/load':>7s} {'seconds':>8s}  (medians over rounds)")
summary = []
for (kernel, size, p, q), v in sorted(rows.items(), key=lambda kv: (kv[0][0], len(kv[0][1]), kv[0][1], kv[0][2], kv[0][3])):
    g, rt, rc, rl, s = (med([x[i] for x in v]) for i in range(5))
    print(f"{kernel:8s} {size:>6s} {p:>2d} x {q:<2d} {g:7.2f} {rt:7.3f} {rc:7.3f} {rl:7.3f} {s:8.3f}   ({len(v)} rounds)")
    summary.append({"kernel": kernel, "size": size, "procs": p, "threads": q, "model_gbs": g,
                    "ratio_to_triad": rt, "ratio_to_copy": rc, "ratio_to_load": rl,
                    "seconds": s, "rounds": len(v)})
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
print(f"raw results and summary.json in {out}")
EOF
