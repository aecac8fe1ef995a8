#!/usr/bin/env bash
# A rank killed under srun: `srun -n 2 -c 1 --mpi=pmix compas run cg --class B` (long enough to be
# caught in its solve), rank 1 SIGKILLed two seconds after both ranks are up. Without
# --kill-on-bad-exit srun leaves the other task running, so ending the job is compas's own doing:
# rank 0 must notice the dead peer and exit. The job must end within 30 s of the kill, srun must
# report task 1 killed, compas must name rank 1, and nothing of the job may be left: no process,
# no job in squeue, no SysV segment its ranks created.
# Usage: fault.sh COMPAS
set -u
source "$(dirname "$0")/common.sh"
compas=$1
name=compas-fault-$$
dir=$(mktemp -d)
srun_pid=
cleanup() {
  [[ -n $srun_pid ]] && kill -KILL "$srun_pid" 2>/dev/null
  scancel -n "$name" 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT

COMPAS_TIMEOUT=20 srun -n 2 -c 1 --mpi=pmix -J "$name" -t 3 "$compas" run cg --class B \
  >"$dir/out" 2>&1 &
srun_pid=$!

# The job's id and its two ranks (their SLURM_PROCID), 30 s at most.
jobid='' rank0='' rank1=''
for ((i = 0; i < 150; i++)); do
  [[ -z $jobid ]] && jobid=$(squeue -h -n "$name" -o '%A' 2>/dev/null | head -1)
  if [[ -n $jobid ]]; then
    for pid in $(job_pids "$jobid"); do
      [[ $(cat "/proc/$pid/comm" 2>/dev/null) == compas ]] || continue
      r=$({ tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | sed -n 's/^SLURM_PROCID=//p')
      [[ $r == 0 ]] && rank0=$pid
      [[ $r == 1 ]] && rank1=$pid
    done
    [[ -n $rank0 && -n $rank1 ]] && break
  fi
  kill -0 "$srun_pid" 2>/dev/null || break
  sleep 0.2
done
[[ -n $jobid && -n $rank0 && -n $rank1 ]] || {
  cat "$dir/out"; fail "the job's two ranks never appeared (job '${jobid}', ranks '$rank0' '$rank1')"; }
echo "job $jobid: rank 0 is pid $rank0, rank 1 is pid $rank1"

sleep 2
kill -0 "$rank1" 2>/dev/null || { cat "$dir/out"; fail "rank 1 ended before it could be killed"; }
kill -KILL "$rank1"
killed_at=$(date +%s.%N)
echo "SIGKILL to rank 1 (pid $rank1)"

# Bounded wait for srun.
for ((i = 0; i < 300; i++)); do
  kill -0 "$srun_pid" 2>/dev/null || break
  sleep 0.1
done
if kill -0 "$srun_pid" 2>/dev/null; then
  cat "$dir/out"
  fail "the job still runs 30 s after rank 1 was killed (rank 0 alive: $(kill -0 "$rank0" 2>/dev/null && echo yes || echo no))"
fi
wait "$srun_pid"
rc=$?
srun_pid=
ended=$(awk -v now="$(date +%s.%N)" -v t="$killed_at" 'BEGIN {printf "%.2f", now - t}')
cat "$dir/out"
echo "srun exited $rc, ${ended} s after the kill"
[[ $rc -ne 0 ]] || fail "srun exited 0 although a rank was killed"
grep -qE 'task 1: Killed' "$dir/out" || fail "srun did not report task 1 killed"
grep -qE 'rank 1\b' "$dir/out" || fail "compas named no dead rank 1 (the job ended only through srun)"

# Nothing left: no process of the job, no job in the queue, no segment of its ranks.
for ((i = 0; i < 100; i++)); do
  left=$(job_pids "$jobid")
  queued=$(squeue -h -j "$jobid" -o '%A %T' 2>/dev/null)
  [[ -z $left && -z $queued ]] && break
  sleep 0.1
done
[[ -z $left ]] || { ps -o pid,stat,etime,args -p "$(paste -sd, <<<"$left")"; fail "processes of job $jobid left: ${left//$'\n'/ }"; }
[[ -z $queued ]] || fail "job $jobid is still in the queue: $queued"
segs=$(ipcs -m -p 2>/dev/null | awk -v a="$rank0" -v b="$rank1" '$3 == a || $3 == b {print $1}')
[[ -z $segs ]] || fail "SysV segments created by the ranks are left: ${segs//$'\n'/ }"
echo "PASS: the killed rank ended the job in ${ended} s, named by srun and compas, nothing left"
