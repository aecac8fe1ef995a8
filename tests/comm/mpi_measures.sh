#!/usr/bin/env bash
# Under mpirun (MPI bootstrap, UCX data), compas pingpong measures its own operations and the MPI
# baselines in one run, and compas barrier the process barrier beside MPI_Barrier: the JSON must
# hold every op at every size and both barriers, with positive figures.
# Usage: mpi_measures.sh MPIRUN COMPAS. Exits 77 (CTest skip) when mpirun cannot start processes.
set -u
mpirun=${1:-} compas=${2:?usage: mpi_measures.sh MPIRUN COMPAS}
[[ -n "$mpirun" && -x "$mpirun" ]] || { echo "SKIP: no mpirun found ('$mpirun')"; exit 77; }
unset $(compgen -e | grep -E '^(COMPAS_|OMPI_|PMI_|PMIX_|SLURM_)') 2>/dev/null || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
opts=(--oversubscribe --allow-run-as-root -np 2)
if ! smoke=$(timeout 30 "$mpirun" "${opts[@]}" true 2>&1); then
  echo "SKIP: mpirun cannot start processes in this environment:"; echo "$smoke" | head -20
  exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
timeout 120 "$mpirun" "${opts[@]}" "$compas" pingpong --sizes 8,4096 --iters 50 --repeats 1 \
  --json "$dir/p.json" || { echo "FAIL: compas pingpong under mpirun exited $?"; exit 1; }
timeout 120 "$mpirun" "${opts[@]}" "$compas" barrier --repeats 2 --target-ms 2 \
  --json "$dir/b.json" || { echo "FAIL: compas barrier under mpirun exited $?"; exit 1; }
python3 - "$dir/p.json" "$dir/b.json" <<'PY'
import json, sys
p, b = (json.load(open(f)) for f in sys.argv[1:3])
bad = []
assert p["params"]["bootstrap"] == "mpi", p["params"]
seen = {(r["op"], r["bytes"]): r for r in p["results"]}
for op in ["put", "put_signal", "get", "put_flush", "put_bw", "mpi_put_flush", "mpi_sendrecv"]:
    for n in [8, 4096]:
        r = seen.get((op, n))
        if r is None:
            bad.append(f"pingpong: no record for {op} {n} B")
        elif not r["latency_us"] > 0:
            bad.append(f"pingpong: {op} {n} B latency {r['latency_us']}")
algos = {r["algorithm"]: r for r in b["results"]}
if sum(1 for r in b["results"] if r.get("chosen")) != 1:
    bad.append("barrier: not exactly one record of the algorithm the job chose")
for a in ["dissemination", "host", "mpi"]:
    r = algos.get(a)
    if r is None:
        bad.append(f"barrier: no {a} record")
    elif not (r["ns_per_barrier"] > 0 and r["processes"] == 2 and r["scope"] == "process"):
        bad.append(f"barrier: bad {a} record {r}")
print("\n".join(bad) if bad else "PASS")
sys.exit(1 if bad else 0)
PY
