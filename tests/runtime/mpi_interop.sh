#!/usr/bin/env bash
# mpi_interop under mpirun: P = 1, 2, 3 processes x COMPAS_THREADS 1 or 2; rank 0 must print
# "mpi interop: ok". Exits 77 (CTest skip) with the reason when mpirun cannot start processes.
# Usage: mpi_interop.sh MPIRUN PROGRAM
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
for shape in "1 1" "2 1" "3 1" "2 2"; do
  set -- $shape
  out=$(COMPAS_TIMEOUT=30 COMPAS_THREADS=$2 COMPAS_OVERSUBSCRIBE=1 timeout 90 \
        "$mpirun" "${opts[@]}" -np $1 "$prog" 2>&1)
  rc=$?
  echo "$out"
  [[ $rc -eq 0 ]] || { echo "FAIL: $1 processes x $2 threads exited $rc"; exit 1; }
  grep -q "^mpi interop: ok ($1 processes)$" <<<"$out" || {
    echo "FAIL: no 'mpi interop: ok' line for $1 processes"; exit 1; }
done
echo PASS
