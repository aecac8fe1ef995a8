#!/usr/bin/env bash
# An MPI + OpenMP version of an example must print the same verified result as the OpenMP
# original (bit for bit) on every job shape under mpirun: P = 1, 2, 4 processes x
# OMP_NUM_THREADS = 1 or 2. The programs print one line with "result = VALUE," and exit 0 only
# when their own check against the exact answer holds. Exits 77 (CTest skip) with the reason when
# mpirun itself cannot start processes here.
# Usage: examples_mpi.sh MPIRUN|none ORIGINAL MPI_PROGRAM -- ARGS
set -u
mpirun=${1:-} orig=${2:-} prog=${3:-}
shift 3 || { echo "usage: examples_mpi.sh MPIRUN ORIGINAL MPI_PROGRAM -- ARGS"; exit 2; }
[[ "${1:-}" == "--" ]] && shift
args=("$@")
if [[ -z "$mpirun" || "$mpirun" == none || ! -x "$mpirun" ]]; then
  echo "SKIP: no mpirun found ('$mpirun')"
  exit 77
fi
# Nothing from an outer launcher may leak into these jobs; OpenMPI refuses root without these.
unset $(compgen -e | grep -E '^(COMPAS_|OMPI_|PMI_|PMIX_|SLURM_)') 2>/dev/null || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
opts=(--oversubscribe --allow-run-as-root --bind-to none)

if ! smoke=$(timeout 30 "$mpirun" "${opts[@]}" -np 2 true 2>&1); then
  echo "SKIP: mpirun cannot start processes in this environment:"
  echo "$smoke" | head -20
  exit 77
fi

value() { sed -n 's/.*result = \([^,]*\),.*/\1/p' | head -1; }
want=$(OMP_NUM_THREADS=2 timeout 60 "$orig" "${args[@]}" 2>&1) || {
  echo "FAIL: $orig exited non-zero: $want"; exit 1; }
echo "$want"
ref=$(value <<<"$want")
[[ -n "$ref" ]] || { echo "FAIL: $orig printed no result"; exit 1; }

for shape in "1 1" "1 2" "2 1" "2 2" "4 1"; do
  set -- $shape
  out=$(OMP_NUM_THREADS=$2 timeout 90 "$mpirun" "${opts[@]}" -np $1 "$prog" "${args[@]}" 2>&1)
  rc=$?
  echo "$out"
  what="$(basename "$prog") under mpirun -np $1 (OMP_NUM_THREADS $2)"
  [[ $rc -eq 0 ]] || { echo "FAIL: $what exited $rc"; exit 1; }
  got=$(value <<<"$out")
  [[ "$got" == "$ref" ]] || { echo "FAIL: $what printed '$got', the original '$ref'"; exit 1; }
done
echo PASS
