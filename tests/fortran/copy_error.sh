#!/usr/bin/env bash
# A non-contiguous array passed through an explicit-shape dummy (tests/fortran/copy_error.f90)
# under compas-run -n 2: with ierr, every process gets COMPAS_ERR_HANDLE (3) three times, the
# messages naming a temporary copy (of a padded array, of a section) and a section, and the job
# exits 0; without ierr, every process prints the message naming the copy and the job ends with
# status 1, within the deadline (no hang).
# Usage: copy_error.sh COMPAS_RUN COPY_ERROR
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
copy='compas_exchange: the array is not one compas_create made, nor inside one: most likely a temporary copy'
[[ $(grep -c "^returned 3: $copy.*padded array of that shape is alive" <<<"$out") -eq 2 ]] ||
  fail "with ierr: not every process named the copy of the padded array"
[[ $(grep -c "^returned 3: $copy" <<<"$out") -eq 4 ]] ||
  fail "with ierr: not every process named the copies"
[[ $(grep -c '^returned 3: compas_exchange: the array is a section' <<<"$out") -eq 2 ]] ||
  fail "with ierr: not every process named the section"

out=$(COMPAS_TIMEOUT=20 timeout 60 "$run" -n 2 -t 1 "$prog" stop 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 1 ]] || fail "without ierr: status $rc (want 1)"
for p in 0 1; do
  grep -q "^compas: process $p: $copy" <<<"$out" ||
    fail "without ierr: process $p did not print the message"
done
grep -q "went on" <<<"$out" && fail "without ierr: a process went on after the failed call"
[[ $status -eq 0 ]] && echo PASS
exit $status
