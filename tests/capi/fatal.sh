#!/usr/bin/env bash
# With compas_start's errors, a failing call ends the whole job: compas-run exits with status 2
# for bad input and 1 for a program error, a process prints the call's message, and no process
# printed that it went on.
# Usage: fatal.sh COMPAS_RUN PROGRAM PROCESSES MISTAKE STATUS TEXT
set -u
out=$(COMPAS_TIMEOUT=30 timeout 60 "$1" -n "$3" -t 1 "$2" "$4" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq $5 ]] || { echo "FAIL: exit status $rc, expected $5"; exit 1; }
grep -q "^compas: process [0-9]*: $6" <<<"$out" || { echo "FAIL: no line 'compas: process R: $6'"; exit 1; }
! grep -q "still running" <<<"$out" || { echo "FAIL: a process went on"; exit 1; }
echo PASS
