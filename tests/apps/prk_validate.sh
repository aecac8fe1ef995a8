#!/usr/bin/env bash
# A Parallel Research Kernel (apps/examples/prk/) validates on every job shape: the OpenMP
# original alone (OMP_NUM_THREADS=2), the compas port under compas-run at 1x1, 1x2, 2x1, 2x2 and
# 3x1, and under mpirun -np 2 (one thread each) when mpirun can start processes here. A run passes
# when it exits 0 and prints PRK's "Solution validates" and "Rate (UNIT/s): R  Avg time (s): T"
# (UNIT: MB, MFlops or Mparticles_moved; random: "Rate (GUPS/s): R, Time (s): T") lines. With --perturbed every run gets PRK_PERTURB=1 (one result element changed) and must fail:
# a non-zero exit and no "Solution validates" line, which shows the check bites (the original, the
# port at 2x2 and under mpirun).
# Usage: prk_validate.sh [--perturbed] COMPAS_RUN MPIRUN|none ORIGINAL PORT -- ARGS
set -u
perturbed=0
[[ "${1:-}" == --perturbed ]] && { perturbed=1; shift; }
run=${1:-} mpirun=${2:-} orig=${3:-} port=${4:-}
shift 4 || { echo "usage: prk_validate.sh [--perturbed] COMPAS_RUN MPIRUN ORIGINAL PORT -- ARGS"; exit 2; }
[[ "${1:-}" == "--" ]] && shift
args=("$@")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PRK_PERTURB=$perturbed
rate='^Rate \((MB|MFlops|GUPS|Mparticles_moved)/s\): [0-9]+\.[0-9]+(,| +Avg) [Tt]ime \(s\): [0-9]+\.[0-9]+$'

check() {  # WHAT OUTPUT RC
  echo "== $1 (exit $3)"
  echo "$2"
  if [[ $perturbed -eq 1 ]]; then
    [[ $3 -ne 0 ]] || { echo "FAIL: $1 exited 0 on a perturbed result"; exit 1; }
    ! grep -q '^Solution validates$' <<<"$2" || { echo "FAIL: $1 validated a perturbed result"; exit 1; }
    return
  fi
  [[ $3 -eq 0 ]] || { echo "FAIL: $1 exited $3"; exit 1; }
  grep -q '^Solution validates$' <<<"$2" || { echo "FAIL: $1 printed no 'Solution validates'"; exit 1; }
  grep -Eq "$rate" <<<"$2" || { echo "FAIL: $1 printed no PRK rate line"; exit 1; }
}

out=$(OMP_NUM_THREADS=2 timeout 60 "$orig" "${args[@]}" 2>&1)
rc=$?  # before any other command (a $(...) in check's arguments would reset $?)
check "${orig##*/} with 2 OpenMP threads" "$out" $rc
shapes=("1 1" "1 2" "2 1" "2 2" "3 1")
[[ $perturbed -eq 1 ]] && shapes=("2 2")
for shape in "${shapes[@]}"; do
  set -- $shape
  out=$(COMPAS_TIMEOUT=30 timeout 90 "$run" -n $1 -t $2 "$port" "${args[@]}" 2>&1)
  rc=$?
  check "${port##*/} under compas-run -n $1 -t $2" "$out" $rc
done
if [[ "$mpirun" != none && -x "$mpirun" ]] &&
   timeout 30 "$mpirun" --oversubscribe --allow-run-as-root -np 2 true >/dev/null 2>&1; then
  out=$(env $(compgen -e | grep -E '^COMPAS_' | sed 's/^/-u /') COMPAS_TIMEOUT=30 \
        COMPAS_THREADS=1 COMPAS_OVERSUBSCRIBE=1 timeout 90 "$mpirun" --oversubscribe \
        --allow-run-as-root --bind-to none -np 2 "$port" "${args[@]}" 2>&1)
  rc=$?
  check "${port##*/} under mpirun -np 2 (1 thread)" "$out" $rc
else
  echo "(mpirun not usable here: the compas-run shapes only)"
fi
echo PASS
