#!/usr/bin/env bash
# Where the threads of a job run under srun's cpu binding, as every process reports them with
# COMPAS_REPORT_BINDING=1: `srun -n 2 --mpi=pmix [--cpu-bind=none|cores] compas run cg --class S`,
# with 1 thread per process, then with as many as the node has cpus under --cpu-bind=none and
# --cpu-bind=cores (oversubscribed: the job must run and say so as compas-run does). Asserted
# from the printed lines (tests/runtime/bindings_check.sh): no cpu holds threads of two
# processes, each thread inside its process's cpus and mask, the host split said exactly where
# srun gave both tasks the same mask (always under --cpu-bind=none).
# Usage: bindings.sh COMPAS COMPAS_RUN
set -u
source "$(dirname "$0")/common.sh"
compas=$1 compas_run=$2
source "$here/../runtime/bindings_check.sh"  # its fail() counts instead of exiting
N=$(nproc)
[[ $N -ge 2 ]] || { echo "SKIP: one cpu: two processes cannot be kept apart"; exit 77; }

run() {  # T SPLIT SRUN-OPTIONS...
  local T=$1 split=$2
  shift 2
  local cmd=(srun -n 2 --mpi=pmix "$@" -J compas-test-bindings -t 2
             "$compas" run cg --class S)
  echo "+ COMPAS_THREADS=$T ${cmd[*]}"
  local out rc
  out=$(COMPAS_TIMEOUT=30 COMPAS_REPORT_BINDING=1 COMPAS_THREADS=$T timeout 120 "${cmd[@]}" 2>&1)
  rc=$?
  check_job "srun -n 2 ${*:-(default binding)}, COMPAS_THREADS=$T" "$out" $rc 2 "$T" "$split"
}
run 1 yes --cpu-bind=none
run 1 auto --cpu-bind=cores
run 1 auto
run "$N" yes --cpu-bind=none
run "$N" auto --cpu-bind=cores
[[ $failures -eq 0 ]] || { echo "FAIL: $failures failed checks"; exit 1; }
echo "PASS: no cpu shared between processes under srun's bindings"
