#!/usr/bin/env bash
# A C program on the C API gets OpenMP's threads pinned as a C++ one does: heat_compas under
# compas-run -n 1 -t 2 with COMPAS_REPORT_BINDING=1 reports OpenMP threads 0 and 1 on two
# different cpus, and prints its result. Exits 77 (skip) on a machine of one cpu.
# Usage: openmp_pinned.sh COMPAS_RUN HEAT_COMPAS
set -u
(($(nproc) >= 2)) || { echo "SKIP: one cpu: two threads cannot be on two cpus"; exit 77; }
out=$(COMPAS_REPORT_BINDING=1 COMPAS_TIMEOUT=30 timeout 60 "$1" -n 1 -t 2 "$2" 10001 20 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 0 && "$out" == *"result = "* ]] || { echo "FAIL: exit status $rc"; exit 1; }
re='openmp 0->cpu ([0-9]+), 1->cpu ([0-9]+)'
[[ "$out" =~ $re ]] || { echo "FAIL: no OpenMP binding in the report"; exit 1; }
[[ "${BASH_REMATCH[1]}" != "${BASH_REMATCH[2]}" ]] ||
  { echo "FAIL: OpenMP threads 0 and 1 share cpu ${BASH_REMATCH[1]}"; exit 1; }
echo PASS
