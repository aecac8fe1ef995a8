#!/usr/bin/env bash
# gemm_vs_blas.sh: `compas run gemm` against OpenBLAS's cblas_dgemm on this host, in one run, and
# hybrid against pure processes (COMPaS Table 6: the time split into compute / communicate /
# synchronize). Each round runs, in an order that alternates from round to round:
#
#   blas     bench_gemm's OpenBLAS at n, T threads (one timed benchmark, untimed call first)
#   hybrid   compas run gemm --n N --threads T                   (1 process x T threads)
#   pure     compas-run -n T -t 1 compas run gemm --n N          (T processes x 1 thread)
#
# compas's rate per round is its median iteration (--iters ITERS); the table gives the medians over
# the rounds, compas / OpenBLAS, and the regions' slowest-thread seconds per multiplication.
# OpenBLAS runs with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset (some environments force a slow
# kernel with them). A measurement, not a test. Usage:
#   bench/gemm_vs_blas.sh [OUTDIR]
# Environment: BUILD (default build/release), N (1800), T (2), ROUNDS (5), ITERS (5).
set -uo pipefail

if [[ $# -gt 1 || "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,16p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
bin="${BUILD:-$root/build/release}/bin"
n="${N:-1800}" t="${T:-2}" rounds="${ROUNDS:-5}" iters="${ITERS:-5}"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
for exe in compas compas-run bench_gemm; do
  [[ -x "$bin/$exe" ]] || { echo "gemm_vs_blas.sh: $bin/$exe not found: build first" >&2; exit 2; }
done

run_blas() {
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$bin/bench_gemm" --rounds=1 \
    --benchmark_filter="gemm/blas/n:$n/threads:$t/" --benchmark_out_format=json \
    --benchmark_out="$out/blas_$1.json" >"$out/blas_$1.txt" 2>&1
}
run_hybrid() {
  "$bin/compas" run gemm --n "$n" --iters "$iters" --threads "$t" --quiet \
    --json "$out/hybrid_$1.json" >/dev/null
}
run_pure() {
  "$bin/compas-run" -n "$t" -t 1 "$bin/compas" run gemm --n "$n" --iters "$iters" --quiet \
    --json "$out/pure_$1.json" >/dev/null
}

for ((r = 0; r < rounds; r++)); do
  if ((r % 2 == 0)); then order="blas hybrid pure"; else order="pure hybrid blas"; fi
  for what in $order; do
    "run_$what" "$r" || echo "gemm_vs_blas.sh: $what failed in round $r" >&2
    sleep 0.3  # OpenBLAS's idle workers spin for a while after a call
  done
done

python3 - "$out" "$rounds" "$n" "$t" <<'EOF'
import json, os, statistics, sys
out, rounds, n, t = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def load(name):
    p = os.path.join(out, name)
    return json.load(open(p)) if os.path.exists(p) and os.path.getsize(p) else None
blas, rec = [], {"hybrid": [], "pure": []}
for r in range(rounds):
    b = load(f"blas_{r}.json")
    if b:
        blas += [x["GFLOP"] for x in b["benchmarks"] if "GFLOP" in x]
    for k in rec:
        j = load(f"{k}_{r}.json")
        if j and j["results"][0].get("verified"):
            rec[k].append(j["results"][0])
med = statistics.median
print(f"n = {n}, {rounds} rounds; GFLOP/s medians over rounds")
b = med(blas) if blas else float("nan")
print(f"{'':28s} {'GFLOP/s':>8s} {'vs blas':>8s} {'compute':>8s} {'communicate':>11s} {'synchronize':>11s}  (s per multiplication)")
print(f"{'OpenBLAS ' + str(t) + ' threads':28s} {b:8.1f}")
summary = {"n": n, "threads": t, "rounds": rounds, "blas_gflops": blas}
for k, label in (("hybrid", f"compas 1 x {t} (hybrid)"), ("pure", f"compas {t} x 1 (processes)")):
    rs = rec[k]
    if not rs:
        print(f"{label:28s} no verified run"); continue
    g = med([x["gflops"] for x in rs])
    def region(name):
        return med([x["regions"].get(name, {}).get("max_seconds", 0.0) / x["iters"] for x in rs])
    print(f"{label:28s} {g:8.1f} {g / b:8.3f} {region('compute'):8.4f} {region('communicate'):11.4f} {region('synchronize'):11.4f}   grid {rs[0]['grid']} {rs[0]['algorithm']}")
    summary[k] = {"gflops": [x["gflops"] for x in rs], "median_gflops": g, "ratio_to_blas": g / b,
                  "compute_s": region("compute"), "communicate_s": region("communicate"),
                  "synchronize_s": region("synchronize")}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
print(f"raw results and summary.json in {out}")
EOF
