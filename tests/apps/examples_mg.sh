#!/usr/bin/env bash
# The multigrid mini-application (apps/examples/multigrid/): runs PROGRAM ARGS (OMP_NUM_THREADS
# from the environment) and passes when it exits RC and prints a line that matches PATTERN
# (grep -E). With --mpirun, under MPIRUN -np NP; with --like, its final residual norm (the last
# "residual norm =" line) must also be ORIGINAL's (run with 1 thread, the same ARGS) to 1e-10
# relative. With --compas-run, under COMPAS_RUN -n NP -t NT (compas's launcher; OMP_NUM_THREADS
# unset, compas sets it). Exits 77 (CTest skip) with the reason when mpirun cannot start processes
# here.
# Usage: examples_mg.sh [--mpirun MPIRUN NP | --compas-run COMPAS_RUN NP NT] [--like ORIGINAL]
#                       RC PATTERN PROGRAM ARGS...
set -u
mpirun="" np="" orig="" crun="" nt=""
while [[ "${1:-}" == --* ]]; do
  case $1 in
    --mpirun) mpirun=$2 np=$3; shift 3 ;;
    --compas-run) crun=$2 np=$3 nt=$4; shift 4 ;;
    --like) orig=$2; shift 2 ;;
    *) echo "examples_mg.sh: unknown option '$1'"; exit 2 ;;
  esac
done
(($# >= 3)) || { echo "usage: examples_mg.sh [--mpirun MPIRUN NP | --compas-run COMPAS_RUN NP NT] [--like ORIGINAL] RC PATTERN PROGRAM ARGS..."; exit 2; }
want_rc=$1 pattern=$2 prog=$3
shift 3
args=("$@")
cmd=("$prog" "${args[@]}")
if [[ -n "$mpirun" ]]; then
  if [[ "$mpirun" == none || ! -x "$mpirun" ]]; then
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
  cmd=("$mpirun" "${opts[@]}" -np "$np" "${cmd[@]}")
fi
if [[ -n "$crun" ]]; then
  unset OMP_NUM_THREADS
  cmd=("$crun" -n "$np" -t "$nt" "${cmd[@]}")
fi

norm() { sed -n 's/.*residual norm = *\([^ ]*\).*/\1/p' | tail -1; }
out=$(timeout 240 "${cmd[@]}" 2>&1)
rc=$?
echo "$out"
what="${cmd[*]}"
[[ $rc -eq $want_rc ]] || { echo "FAIL: '$what' exited $rc, not $want_rc"; exit 1; }
grep -qE -- "$pattern" <<<"$out" || { echo "FAIL: '$what' printed no line matching '$pattern'"; exit 1; }
if [[ -n "$orig" ]]; then
  ref_out=$(OMP_NUM_THREADS=1 timeout 240 "$orig" "${args[@]}" 2>&1) || {
    echo "$ref_out"; echo "FAIL: $orig exited non-zero"; exit 1; }
  got=$(norm <<<"$out") ref=$(norm <<<"$ref_out")
  [[ -n "$got" && -n "$ref" ]] || { echo "FAIL: no final residual norm ('$got', '$ref')"; exit 1; }
  awk -v g="$got" -v r="$ref" 'BEGIN { d = g - r; if (d < 0) d = -d; exit !(d <= 1e-10 * r) }' || {
    echo "FAIL: final norm $got, the original's $ref (more than 1e-10 apart)"; exit 1; }
  echo "final norm $got, the original's $ref"
fi
echo PASS
