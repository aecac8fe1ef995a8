#!/usr/bin/env bash
# A ported example must print the same verified result as its original (bit for bit: every value
# is computed by the same expression) on every job shape, under compas-run and, when MPI is
# there, under mpirun. The programs print one line with "result = VALUE," and exit 0 only when
# their own check against the exact answer holds.
# Usage: examples_port.sh COMPAS_RUN MPIRUN|none ORIGINAL "ORIGINAL ARGS" PORT [PORT...] -- ARGS
#   ORIGINAL runs with OMP_NUM_THREADS=2 (or as a single MPI process when it is an MPI program:
#   ORIGINAL ARGS may start with "mpi:").
set -u
run=$1 mpirun=$2 orig=$3
shift 3
ports=()
while [[ $# -gt 0 && "$1" != "--" ]]; do ports+=("$1"); shift; done
shift
args=("$@")
value() { sed -n 's/.*result = \([^,]*\),.*/\1/p' | head -1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
want=$(OMP_NUM_THREADS=2 timeout 60 "$orig" "${args[@]}" 2>&1) || {
  echo "FAIL: $orig exited non-zero: $want"; exit 1; }
echo "$want"
ref=$(value <<<"$want")
[[ -n "$ref" ]] || { echo "FAIL: $orig printed no result"; exit 1; }
check() {  # WHAT OUTPUT RC
  echo "$2"
  [[ $3 -eq 0 ]] || { echo "FAIL: $1 exited $3"; exit 1; }
  got=$(value <<<"$2")
  [[ "$got" == "$ref" ]] || { echo "FAIL: $1 printed '$got', the original '$ref'"; exit 1; }
}
for port in "${ports[@]}"; do
  for shape in "1 1" "1 2" "2 1" "3 1" "2 2" "4 1"; do
    set -- $shape
    out=$(COMPAS_TIMEOUT=30 timeout 90 "$run" -n $1 -t $2 "$port" "${args[@]}" 2>&1)
    rc=$?  # before any other command: a $(...) in check's arguments would reset $? to 0
    check "${port##*/} under compas-run -n $1 -t $2" "$out" $rc
  done
  if [[ "$mpirun" != none && -x "$mpirun" ]] &&
     timeout 30 "$mpirun" --oversubscribe --allow-run-as-root -np 2 true >/dev/null 2>&1; then
    for shape in "2 1" "3 2"; do
      set -- $shape
      out=$(env $(compgen -e | grep -E '^(COMPAS_)' | sed 's/^/-u /') COMPAS_TIMEOUT=30 \
            COMPAS_THREADS=$2 COMPAS_OVERSUBSCRIBE=1 timeout 90 "$mpirun" --oversubscribe \
            --allow-run-as-root --bind-to none -np $1 "$port" "${args[@]}" 2>&1)
      rc=$?
      check "${port##*/} under mpirun -np $1 (threads $2)" "$out" $rc
    done
  else
    echo "(mpirun not usable here: the compas-run shapes only)"
  fi
done
echo PASS
