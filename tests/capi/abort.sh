#!/usr/bin/env bash
# compas_abort ends the whole job: compas-run exits with the status given, the output holds the
# aborting process's line, and no process printed that it went on.
# Usage: abort.sh COMPAS_RUN PROGRAM PROCESSES
set -u
out=$(COMPAS_TIMEOUT=30 timeout 60 "$1" -n "$3" -t 1 "$2" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 3 ]] || { echo "FAIL: exit status $rc, expected 3"; exit 1; }
last=$(($3 - 1))
grep -q "compas: process $last: the C API ends the job here" <<<"$out" ||
  { echo "FAIL: no line from process $last with the message"; exit 1; }
! grep -q "still running" <<<"$out" || { echo "FAIL: a process went on"; exit 1; }
echo PASS
