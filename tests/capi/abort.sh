#!/usr/bin/env bash
# compas_abort ends the whole job: compas-run exits with the status given and names the aborting
# process, the output holds that process's line, and no process printed that it went on. The
# peers that lose it exit with status 1 at once, and whichever end compas-run reaps first, the
# aborting process is the one named: so each round runs the jobs of every size given at once
# (they share the machine, as under ctest -j), ROUNDS rounds.
# Usage: abort.sh COMPAS_RUN PROGRAM ROUNDS PROCESSES... (a size may come more than once)
set -u
run=$1 prog=$2 rounds=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failed=0
check() {  # check PROCESSES ROUND JOB
  local n=$1 out rc last=$(($1 - 1))
  out=$(cat "$dir/$3.out")
  rc=$(cat "$dir/$3.rc")
  local why=""
  [[ $rc -eq 3 ]] || why="exit status $rc, expected 3"
  grep -q "compas: process $last: the C API ends the job here" <<<"$out" ||
    why+="${why:+; }no line from process $last with the message"
  grep -q "compas-run: rank $last exited with status 3" <<<"$out" ||
    why+="${why:+; }compas-run did not name rank $last"
  ! grep -q "still running" <<<"$out" || why+="${why:+; }a process went on"
  if [[ -n $why ]]; then
    echo "FAIL: round $2, $n processes: $why"
    echo "$out"
    failed=1
  fi
}
for ((round = 1; round <= rounds; ++round)); do
  job=0
  for n in "$@"; do
    ((++job))
    (COMPAS_TIMEOUT=30 timeout 60 "$run" -n "$n" -t 1 "$prog" >"$dir/$job.out" 2>&1
     echo $? >"$dir/$job.rc") &
  done
  wait
  job=0
  for n in "$@"; do check "$n" "$round" $((++job)); done
done
[[ $failed -eq 0 ]] && echo PASS
exit $failed
