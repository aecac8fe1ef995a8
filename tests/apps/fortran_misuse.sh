#!/usr/bin/env bash
# A misused call from Fortran (tests/fortran/misuse.f90: a halo wider than the parts) under
# compas-run -n 2: with ierr, every process gets COMPAS_ERR_COLLECTIVE (2) and a message naming
# the halo, and the job exits 0; without ierr, every process prints the message and the job ends
# with a non-zero status, within the deadline (no hang).
# Usage: fortran_misuse.sh COMPAS_RUN MISUSE
set -u
run=$1 prog=$2
status=0
fail() {
  echo "FAIL: $*"
  status=1
}
out=$(COMPAS_TIMEOUT=20 timeout 60 "$run" -n 2 -t 1 "$prog" ierr 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 0 ]] || fail "with ierr: status $rc (want 0)"
[[ $(grep -c '^returned 2: .*halo 3' <<<"$out") -eq 2 ]] ||
  fail "with ierr: not every process returned code 2 with the halo's message"

out=$(COMPAS_TIMEOUT=20 timeout 60 "$run" -n 2 -t 1 "$prog" stop 2>&1)
rc=$?
echo "$out"
[[ $rc -ne 0 && $rc -ne 124 ]] || fail "without ierr: status $rc (want non-zero, not the deadline's 124)"
for p in 0 1; do
  grep -q "^compas: process $p: compas_array_create_with_layout: .*halo 3" <<<"$out" ||
    fail "without ierr: process $p did not print the message"
done
grep -q "went on" <<<"$out" && fail "without ierr: a process went on after the failed call"
[[ $status -eq 0 ]] && echo PASS
exit $status
