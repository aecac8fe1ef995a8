#!/usr/bin/env bash
# The heat example, OpenMP original and hybrid port, must print the same maximum (bit for bit:
# every point is updated by the same expression) on every job shape, and match the exact value.
# Usage: examples_heat.sh COMPAS_RUN HEAT_OPENMP HEAT_HYBRID
set -u
run=$1 omp=$2 hybrid=$3
n=10001 steps=60
value() { sed -n 's/.*max u = \([^,]*\),.*/\1/p'; }
want=$(OMP_NUM_THREADS=2 "$omp" $n $steps) || { echo "FAIL: heat_openmp: $want"; exit 1; }
echo "$want"
ref=$(value <<<"$want")
[[ -n "$ref" ]] || { echo "FAIL: no value printed"; exit 1; }
for shape in "1 1" "1 2" "2 1" "3 1" "2 2"; do
  set -- $shape
  out=$(COMPAS_TIMEOUT=30 timeout 60 "$run" -n $1 -t $2 "$hybrid" $n $steps 2>&1) || {
    echo "FAIL: heat_hybrid on $1 x $2 exited non-zero:"; echo "$out"; exit 1; }
  echo "$out"
  got=$(value <<<"$out")
  [[ "$got" == "$ref" ]] || { echo "FAIL: $1 x $2 printed $got, OpenMP printed $ref"; exit 1; }
done
echo PASS
