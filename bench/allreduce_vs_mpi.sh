#!/usr/bin/env bash
# allreduce_vs_mpi.sh: the latency of Runtime::allreduce of one double (1 thread per process)
# against MPI_Allreduce in the same mpirun job, for P = 2, 4, 8, 16 processes. allreduce_latency
# measures, interleaved, `runtime` (recursive doubling), `fold` (an allgather of the P values and
# a left fold: the Runtime's node step before), `builtin` (NodeCollectives::allreduce with
# Op::sum) and `mpi`; each figure is the median over REPEATS repeats of the slowest rank's mean
# time per call. With more processes than cpus the job is oversubscribed (every wait then has
# to hand its cpu over), which the table says. Not a test: it prints measurements.
#
#   bench/allreduce_vs_mpi.sh [OUTDIR]     (default allreduce-vs-mpi/; one JSON per P there)
#   BUILD (build/release), PROCS ("2 4 8 16"), REPEATS (9), TARGET_MS (50: one repeat of one
#   variant), MPIRUN_OPTS ("--oversubscribe --allow-run-as-root --bind-to none")
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${BUILD:-$here/../build/release}
exe=$build/bin/allreduce_latency
out=${1:-allreduce-vs-mpi}
procs=${PROCS:-2 4 8 16}
repeats=${REPEATS:-9}
target=${TARGET_MS:-50}
read -r -a mpirun_opts <<<"${MPIRUN_OPTS:---oversubscribe --allow-run-as-root --bind-to none}"
[[ -x $exe ]] || { echo "allreduce_vs_mpi.sh: $exe not found: build it first" >&2; exit 2; }
command -v mpirun >/dev/null || { echo "allreduce_vs_mpi.sh: mpirun not found" >&2; exit 2; }
[[ "$repeats" =~ ^[1-9][0-9]*$ ]] || { echo "allreduce_vs_mpi.sh: REPEATS='$repeats'" >&2; exit 2; }
mkdir -p "$out"

while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(COMPAS_|UCX_TLS$)')
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 COMPAS_THREADS=1
export COMPAS_TIMEOUT=${COMPAS_TIMEOUT:-300}
cpus=$(nproc)

echo "allreduce_vs_mpi.sh: P = $procs, $repeats repeats of ${target} ms, $cpus cpus," \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
files=()
for p in $procs; do
  f=$out/allreduce_p$p.json
  rm -f "$f"
  if timeout -k 5 900 mpirun "${mpirun_opts[@]}" -x COMPAS_THREADS -x COMPAS_TIMEOUT -np "$p" \
    "$exe" --threads 1 --repeats "$repeats" --target-ms "$target" --json "$f" \
    >"$out/allreduce_p$p.txt" 2>"$out/allreduce_p$p.err"; then
    files+=("$f")
    sed -n 1p "$out/allreduce_p$p.txt"
  else
    echo "P = $p: FAILED (exit $?), see $out/allreduce_p$p.err" >&2
  fi
done
((${#files[@]})) || exit 1

python3 - "$cpus" "${files[@]}" <<'EOF'
import json, sys

cpus, files = int(sys.argv[1]), sys.argv[2:]
rows = {}
for f in files:
    doc = json.load(open(f))
    rows[doc["params"]["processes"]] = {r["variant"]: r for r in doc["results"]}
names = ["runtime", "fold", "builtin", "mpi"]
print("\nmedian latency of one allreduce of a double, us (min-max over repeats); T = 1")
print(f"{'P':>3} {'cpus':>10} " + " ".join(f"{n:>22}" for n in names) +
      f" {'runtime/mpi':>12} {'fold/mpi':>9}")
for p in sorted(rows):
    r = rows[p]
    cell = lambda n: (f"{r[n]['median_us']:.2f} ({r[n]['min_us']:.2f}-{r[n]['max_us']:.2f})"
                      if n in r else "-")
    ratio = lambda n: (f"{r[n]['median_us'] / r['mpi']['median_us']:.2f}"
                       if n in r and "mpi" in r else "-")
    load = f"{cpus} (over)" if p > cpus else str(cpus)
    print(f"{p:>3} {load:>10} " + " ".join(f"{cell(n):>22}" for n in names) +
          f" {ratio('runtime'):>12} {ratio('fold'):>9}")
if any(p > cpus for p in rows):
    print(f"(over): more processes than the {cpus} cpus of this machine: oversubscribed, so the "
          "figures measure how waits hand the cpus over as much as the algorithms")
EOF
