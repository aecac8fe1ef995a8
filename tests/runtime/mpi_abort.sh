#!/usr/bin/env bash
# abort_probe under mpirun (-np 3): Runtime::abort(3, "x") from a thread of rank 1 ends the job
# through MPI_Abort with status 3, and an uncaught DistArray shape mismatch with status 1; either
# way one "compas: process" line. Exits 77 (CTest skip) when mpirun cannot start processes.
# Usage: mpi_abort.sh MPIRUN ABORT_PROBE
set -u
mpirun=${1:-} prog=${2:-}
if [[ -z "$mpirun" || ! -x "$mpirun" ]]; then
  echo "SKIP: no mpirun found ('$mpirun')"
  exit 77
fi
unset $(compgen -e | grep -E '^(COMPAS_|OMPI_|PMI_|PMIX_|SLURM_)') 2>/dev/null || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
opts=(--oversubscribe --allow-run-as-root --bind-to none)
if ! smoke=$(timeout 30 "$mpirun" "${opts[@]}" -np 2 true 2>&1); then
  echo "SKIP: mpirun cannot start processes in this environment:"
  echo "$smoke" | head -20
  exit 77
fi
fail=0
for case in "abort 3 compas: process 1: x" "shape 1 compas: process 0: DistArray: the processes made different arrays"; do
  read -r mode want line <<<"$case"
  out=$(COMPAS_TIMEOUT=60 COMPAS_THREADS=1 COMPAS_OVERSUBSCRIBE=1 timeout 50 \
        "$mpirun" "${opts[@]}" -np 3 "$prog" "$mode" 2>&1)
  rc=$?
  echo "$out"
  [[ $rc -eq $want ]] || { echo "FAIL: $mode: exit $rc, $want expected"; fail=1; }
  [[ $(grep -c "^compas: process" <<<"$out") -eq 1 ]] || {
    echo "FAIL: $mode: not exactly one 'compas: process' line"; fail=1; }
  grep -q "^$line" <<<"$out" || { echo "FAIL: $mode: no line '$line'"; fail=1; }
  grep -q "terminate called" <<<"$out" && { echo "FAIL: $mode: terminate called"; fail=1; }
done
[[ $fail -eq 0 ]] && echo PASS
exit $fail
