#!/usr/bin/env bash
# Bad input to the sparse CG mini-application (apps/examples/sparse_cg/): every version exits 2
# with one message that names the value given and what is allowed (the MPI version's --planes
# too, under mpirun -n 2 and 3 when mpirun can start processes here; with --compas, each compas
# port's under compas-run -n 2 and 3: spcg_compas and spcg_compas_c alike).
# Usage: spcg_bad_input.sh [--compas COMPAS_RUN PORT]... MPIRUN|none SPCG_MPI|none PROGRAM...
set -u
crun= cprogs=()
while [[ "${1:-}" == --compas ]]; do crun=$2 cprogs+=("$3"); shift 3; done
mpirun=${1:-} mpiprog=${2:-}
shift 2 || { echo "usage: spcg_bad_input.sh MPIRUN SPCG_MPI PROGRAM..."; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
expect() {  # WHAT WANTED_TEXT COMMAND...
  local what=$1 text=$2
  shift 2
  local out rc
  out=$(timeout 60 "$@" 2>&1 >/dev/null)
  rc=$?
  if [[ $rc -ne 2 ]] || ! grep -qF -- "$text" <<<"$out" || ! grep -q 'allowed\|needed' <<<"$out"; then
    echo "FAIL: $what: exit $rc (not 2) or no message naming '$text' and what is allowed: $out"
    status=1
  else
    echo "ok: $what: $(head -1 <<<"$out")"
  fi
}
cases=("--nx abc:'abc'" "--ny 0:'0'" "--nz 1025:'1025'" "--iters -3:'-3'" "--tol 2:'2'"
       "--tol 1e-3x:'1e-3x'" "--what 1:'--what'" "--iters:--iters" "--nx 1024 --ny 1024 --nz 100:1024 x 1024 x 100")
for prog in "$@"; do
  for c in "${cases[@]}"; do
    read -ra args <<<"${c%%:*}"
    expect "${prog##*/} ${c%%:*}" "${c#*:}" env OMP_NUM_THREADS=1 "$prog" "${args[@]}"
  done
done
if [[ "$mpirun" != none && -x "$mpirun" && "$mpiprog" != none ]] &&
   timeout 30 "$mpirun" --oversubscribe --allow-run-as-root -n 2 true >/dev/null 2>&1; then
  run=("$mpirun" --oversubscribe --allow-run-as-root --bind-to none)
  mpi_cases=("2:--nz 16 --planes 10,x:'x'" "2:--nz 16 --planes 16:'16'"
             "3:--nz 16 --planes 8,8,0:'0'" "2:--nz 16 --planes 4,13:'4,13'" "3:--nz 2:--nz 2"
             "2:--nx abc:'abc'")
  for c in "${mpi_cases[@]}"; do
    procs=${c%%:*} rest=${c#*:}
    read -ra args <<<"${rest%%:*}"
    expect "${mpiprog##*/} -n $procs ${rest%%:*}" "${rest#*:}" \
      env OMP_NUM_THREADS=1 "${run[@]}" -n "$procs" "$mpiprog" "${args[@]}"
  done
else
  echo "(mpirun not usable here: the OpenMP versions only)"
fi
# The ports' --planes: a count that is no integer (junk after a long run of zeros, an empty count),
# below 1, not P counts, not summing to nz.
compas_cases=("2:--nz 16 --planes 10,x:'x'" "2:--nz 16 --planes 16:'16'"
              "3:--nz 16 --planes 8,8,0:'0'" "2:--nz 16 --planes 4,13:'4,13'" "3:--nz 2:'2'"
              "2:--nx abc:'abc'" "2:--nz 16 --planes 4,,12:''" "2:--nz 16 --planes 16,:''"
              "2:--nz 16 --planes 0000000000000000000000000000000000000005x,11:'0000000000000000000000000000000000000005x'"
              "3:--nz 16 --planes 4,12:'4,12': 3 counts" "2:--nz 16 --planes 5,6,5:'5,6,5'")
for cprog in "${cprogs[@]}"; do
  for c in "${compas_cases[@]}"; do
    procs=${c%%:*} rest=${c#*:}
    read -ra args <<<"${rest%%:*}"
    expect "${cprog##*/} under compas-run -n $procs ${rest%%:*}" "${rest#*:}" \
      env OMP_NUM_THREADS=1 COMPAS_TIMEOUT=30 "$crun" -n "$procs" -t 1 "$cprog" "${args[@]}"
  done
done
[[ $status -eq 0 ]] && echo PASS
exit $status
