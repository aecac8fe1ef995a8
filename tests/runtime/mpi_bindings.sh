#!/usr/bin/env bash
# Where the threads of a job run under mpirun's bindings (--bind-to none, core, socket, --map-by
# ppr:2:node), as every process reports them with COMPAS_REPORT_BINDING=1: `compas run cg` with 2
# processes of 1 thread, then of as many threads as the machine has cpus (COMPAS_THREADS, or the
# program's --threads): the job must run oversubscribed and say so as compas-run does.
# bindings_check.sh says what is asserted; the same jobs under compas-run come first, as the
# reference. Exits 77 (CTest skip) with the reason when mpirun cannot start processes, or the
# machine has a single cpu.
# Usage: mpi_bindings.sh MPIRUN COMPAS COMPAS_RUN
set -u
mpirun=${1:-} compas=${2:-} compas_run=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/bindings_check.sh"
if [[ -z "$mpirun" || ! -x "$mpirun" ]]; then
  echo "SKIP: no mpirun found ('$mpirun')"
  exit 77
fi
N=$(nproc)
if [[ $N -lt 2 ]]; then
  echo "SKIP: one cpu: two processes cannot be kept apart"
  exit 77
fi
unset $(compgen -e | grep -E '^(COMPAS_|OMPI_|PMI_|PMIX_|SLURM_|OMP_)') 2>/dev/null || true
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
opts=(--oversubscribe --allow-run-as-root)
if ! smoke=$(timeout 30 "$mpirun" "${opts[@]}" -np 2 true 2>&1); then
  echo "SKIP: mpirun cannot start processes in this environment:"
  echo "$smoke" | head -20
  exit 77
fi
job=("$compas" run cg --class S)
for T in 1 "$N"; do
  out=$(COMPAS_TIMEOUT=30 COMPAS_REPORT_BINDING=1 timeout 90 "$compas_run" -n 2 -t "$T" \
        "${job[@]}" 2>&1)
  check_job "compas-run -n 2 -t $T" "$out" $? 2 "$T" auto
  for binding in "--bind-to none" "--bind-to core" "--bind-to socket" "--map-by ppr:2:node"; do
    split=auto
    [[ $binding == "--bind-to none" ]] && split=yes
    out=$(COMPAS_TIMEOUT=30 COMPAS_REPORT_BINDING=1 COMPAS_THREADS=$T timeout 90 \
          "$mpirun" "${opts[@]}" $binding -np 2 "${job[@]}" 2>&1)
    check_job "mpirun -np 2 $binding, COMPAS_THREADS=$T" "$out" $? 2 "$T" "$split"
  done
done
# The program's own --threads counts as the launcher's COMPAS_THREADS does.
out=$(COMPAS_TIMEOUT=30 COMPAS_REPORT_BINDING=1 timeout 90 "$compas_run" -n 2 -t 1 \
      "${job[@]}" --threads "$N" 2>&1)
check_job "compas-run -n 2 -t 1, --threads $N" "$out" $? 2 "$N" auto
out=$(COMPAS_TIMEOUT=30 COMPAS_REPORT_BINDING=1 timeout 90 "$mpirun" "${opts[@]}" --bind-to core \
      -np 2 "${job[@]}" --threads "$N" 2>&1)
check_job "mpirun -np 2 --bind-to core, --threads $N" "$out" $? 2 "$N" auto
[[ $failures -eq 0 ]] || { echo "FAIL: $failures failed checks"; exit 1; }
echo PASS
