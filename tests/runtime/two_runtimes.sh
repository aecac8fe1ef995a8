#!/usr/bin/env bash
# A second Runtime in the processes of a compas-run job (two_runtimes.cpp): every process gets
# comm::SecondJobError at once, while the first Runtime lives and after it ended, and the job ends
# with status 0 (no process waits for a rendezvous that never comes); uncaught, every process
# prints "compas: MESSAGE" and the job ends with status 1, not SIGABRT.
# Usage: two_runtimes.sh COMPAS_RUN PROGRAM PROCESSES
set -u
run=$1 prog=$2 n=$3
message="a second Runtime in this process"
failed=0
fail() { echo "FAIL: $*"; failed=1; }

out=$("$run" -n "$n" -t 1 "$prog" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 0 ]] || fail "exit status $rc, expected 0"
for ((r = 0; r < n; ++r)); do
  for when in "while the first lives" "after the first ended"; do
    grep -q "two_runtimes: rank $r: $when: SecondJobError: $message" <<<"$out" ||
      fail "rank $r, $when: no SecondJobError saying '$message'"
  done
done

out=$("$run" -n "$n" -t 1 "$prog" uncaught 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 1 ]] || fail "uncaught: exit status $rc, expected 1"
grep -q "^compas: $message" <<<"$out" || fail "uncaught: no line 'compas: $message'"
! grep -qE "terminate called|Aborted|SIGABRT|killed by" <<<"$out" || fail "uncaught: an abort"
! grep -q "a second Runtime was made" <<<"$out" || fail "uncaught: a second Runtime was made"
[[ $failed -eq 0 ]] && echo PASS
exit $failed
