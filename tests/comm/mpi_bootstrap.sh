#!/usr/bin/env bash
# bootstrap_probe under mpirun: 2 ranks must form the job through the mpi bootstrap, allgather,
# run their barriers and print "ok rank R of 2 (mpi)". Exits 77 (CTest skip) with the reason
# when mpirun itself cannot start processes here.
# Usage: mpi_bootstrap.sh MPIRUN PROBE
set -u
mpirun=${1:-} probe=${2:-}
if [[ -z "$mpirun" || ! -x "$mpirun" ]]; then
  echo "SKIP: no mpirun found ('$mpirun')"
  exit 77
fi
# Nothing may select another bootstrap; OpenMPI refuses root without these.
unset $(compgen -e | grep -E '^(COMPAS_|OMPI_|PMI_|PMIX_|SLURM_)') 2>/dev/null || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
opts=(--oversubscribe --allow-run-as-root -np 2)

if ! smoke=$(timeout 30 "$mpirun" "${opts[@]}" true 2>&1); then
  echo "SKIP: mpirun cannot start processes in this environment:"
  echo "$smoke" | head -20
  exit 77
fi

out=$(timeout 60 "$mpirun" "${opts[@]}" "$probe" 2>&1)
rc=$?
echo "$out"
if [[ $rc -ne 0 ]]; then
  echo "FAIL: mpirun ... bootstrap_probe exited $rc"
  exit 1
fi
for r in 0 1; do
  if ! grep -q "^ok rank $r of 2 (mpi)$" <<<"$out"; then
    echo "FAIL: no 'ok rank $r of 2 (mpi)' line"
    exit 1
  fi
done
echo "PASS"
