#!/usr/bin/env bash
# A version of the sparse CG mini-application (apps/examples/sparse_cg/) against its OpenMP
# original: the original runs alone with one thread, PROGRAM with THREADS OpenMP threads (under
# `MPIRUN --oversubscribe -n PROCS` with --mpirun, its --planes given with --planes). Both must
# exit 0 and print "Verification: PASSED", and PROGRAM's results (its residual history, final
# residuals, error and its bound, and verdict: every line but the header and the times) must be
# the original's character for character. With --fails both must exit 1 and print
# "Verification: FAILED" (the check bites). Exits 77 (CTest skip) with the reason when mpirun cannot start processes here.
# With --run COMPAS_RUN, PROGRAM runs under `COMPAS_RUN -n PROCS -t THREADS` (a compas port).
# Usage: spcg_check.sh [--fails] [--mpirun MPIRUN | --run COMPAS_RUN] [--procs P]
#        [--planes LIST] ORIGINAL PROGRAM THREADS -- ARGS
set -u
fails=0 mpirun= run= procs= planes=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --fails) fails=1; shift ;;
    --mpirun) mpirun=$2; shift 2 ;;
    --run) run=$2; shift 2 ;;
    --procs) procs=$2; shift 2 ;;
    --planes) planes=(--planes "$2"); shift 2 ;;
    *) break ;;
  esac
done
orig=${1:-} prog=${2:-} threads=${3:-}
shift 3 || { echo "usage: spcg_check.sh [--fails] [--mpirun M | --run R] [--procs P] [--planes L] ORIGINAL PROGRAM THREADS -- ARGS"; exit 2; }
[[ "${1:-}" == "--" ]] && shift
args=("$@")
launch=()
if [[ -n "$mpirun" ]]; then
  if [[ "$mpirun" == none || ! -x "$mpirun" ]]; then
    echo "SKIP: no mpirun found ('$mpirun')"
    exit 77
  fi
  # Nothing from an outer launcher may leak into the job; OpenMPI refuses root without these.
  unset $(compgen -e | grep -E '^(COMPAS_|OMPI_|PMI_|PMIX_|SLURM_)') 2>/dev/null || true
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  launch=("$mpirun" --oversubscribe --allow-run-as-root --bind-to none -n "$procs")
  if ! smoke=$(timeout 30 "${launch[@]}" true 2>&1); then
    echo "SKIP: mpirun cannot start processes in this environment:"
    echo "$smoke" | head -20
    exit 77
  fi
fi

if [[ -n "$run" ]]; then
  unset $(compgen -e | grep -E '^(COMPAS_|OMPI_|PMI_|PMIX_|SLURM_)') 2>/dev/null || true
  launch=("$run" -n "${procs:-1}" -t "$threads")
fi

want_rc=0 verdict=PASSED
[[ $fails -eq 1 ]] && want_rc=1 verdict=FAILED
check() {  # WHAT OUTPUT RC
  echo "== $1 (exit $3)"
  echo "$2"
  [[ $3 -eq $want_rc ]] || { echo "FAIL: $1 exited $3, not $want_rc"; exit 1; }
  grep -qx "Verification: $verdict" <<<"$2" || {
    echo "FAIL: $1 printed no 'Verification: $verdict'"; exit 1; }
}
results() { grep -E '^(iter +[0-9]+ residual |relative residual |error |Verification: )'; }

out=$(OMP_NUM_THREADS=1 timeout 120 "$orig" "${args[@]}" 2>&1)
rc=$?  # before any other command
check "${orig##*/} with 1 OpenMP thread" "$out" $rc
want=$(results <<<"$out")
what="${prog##*/} with $threads OpenMP threads${procs:+ under ${run:+compas-run}${mpirun:+mpirun} -n $procs}"
out=$(OMP_NUM_THREADS=$threads timeout 120 "${launch[@]}" "$prog" "${args[@]}" "${planes[@]}" 2>&1)
rc=$?
check "$what" "$out" $rc
got=$(results <<<"$out")
[[ $(grep -c '^iter ' <<<"$want") -ge 2 ]] || { echo "FAIL: the original printed no residual history"; exit 1; }
if [[ "$got" != "$want" ]]; then
  echo "FAIL: $what: its results differ from the original's:"
  diff <(echo "$want") <(echo "$got") | head -20
  exit 1
fi
echo PASS
