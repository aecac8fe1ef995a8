#!/usr/bin/env bash
# Soak: JOBS small compas-run jobs in a row (compas-run -n 4 --timeout S compas run KERNEL at a
# size of a few tenths of a second: laplace, gemm, cg, sort, picked at random), a quarter of them
# with one rank SIGKILLed at a random moment (a random rank among the launcher's children, after a
# random delay between 0 and the kernel's typical duration). Jobs of two more kinds, at random
# places among them (SOAK_DETACHED and SOAK_STALLED of them, one each by default, when JOBS leaves
# room beside the kills):
#   - detached: rank 0 first starts `setsid sleep 1000 &` (a process of its own session, outside
#     the job's process group) and waits until it has left, then runs the kernel: the job must end
#     ok, compas-run saying it ended the one process the job left running;
#   - stalled reader: compas-run -n 4 --timeout 2 yes, its stdout and stderr on a pipe that nobody
#     reads (as `2>&1 | sleep 15`): the ranks fill it, and compas-run's own messages must not
#     stall it: the job must end by its --timeout (exit 124) long before SOAK_GRACE past it.
# After each job, and once more at the end for the whole run, it checks that the job left nothing
# behind:
#   - no process: no descendant of the launcher alive, no process carrying the job's marker (the
#     variable COMPAS_SOAK_MARKER, which every rank inherits);
#   - no SysV shared-memory segment created by one of the job's processes (cpid in
#     /proc/sysvipc/shm) and no new file in /dev/shm;
#   - no new temp file named compas* or ucx* in /tmp (and in $TMPDIR);
#   - no job running past its --timeout plus a grace (the soak kills it and counts a hang).
# A killed job must end with the launcher's status for a rank killed by SIGKILL (137) naming that
# rank (or end ok, when the kill came as the rank was ending); any other job but the stalled
# reader's must end 0 with its result verified.
# Leftovers may take a moment to go (a segment goes at its last detach): each check polls for up to
# SOAK_SETTLE seconds (3) before it counts anything. /dev/shm and temp names carry no pid: a new
# entry counts only when it was created while the job ran and no live process holds it open,
# mapped or as its working directory; jobs of other programs running at the same time could still
# be counted (CTest runs this test alone, RUN_SERIAL).
# What a leftover tells: UCX (1.13) makes its shared memory as SysV segments of key IPC_PRIVATE,
# marked for removal (IPC_RMID) just after they are attached, and as /dev/shm/ucx_shm_posix_<hex>
# files, unlinked once their whole length has been written: a segment of a killed rank not marked
# for removal, or such a file, means the kill landed inside one of those windows (UCX's worker
# creation in compas::comm::Comm, or ucp_mem_map of a window).
#
# Usage: soak.sh BUILD_DIR [JOBS]     (JOBS: 200 by default)
#   BUILD_DIR/bin/compas-run and BUILD_DIR/bin/compas are used, or SOAK_COMPAS_RUN, SOAK_COMPAS.
#   SOAK_SEED=N repeats a run's choices (the seed is printed); SOAK_TIMEOUT (20) is each job's
#   --timeout and SOAK_GRACE (10) the seconds past it after which a job counts as hung.
#   SOAK_KILL_PERCENT (25) of the jobs get a rank killed, within SOAK_KILL_MAX_MS of the start when
#   set (to aim at the job's start-up, when UCX makes its shared memory) instead of the kernel's
#   typical duration. SOAK_DETACHED (1) and SOAK_STALLED (1) jobs leave a detached process and
#   have a stalled reader (as many as the jobs without a kill leave room for).
# Prints one line per job and the counts at the end; exits 0 when every check passed, 1 when one
# failed, 2 on bad usage.
set -u
set -f  # words are split below (fields of /proc files, kernel arguments), never globbed by accident

usage() {
  echo "usage: soak.sh BUILD_DIR [JOBS]" >&2
  exit 2
}
build=${1:-}
[[ -n $build ]] || usage
jobs_total=${2:-200}
[[ $jobs_total =~ ^[1-9][0-9]*$ ]] || {
  echo "soak: JOBS must be a positive integer, not '$jobs_total'" >&2
  exit 2
}
kill_percent=${SOAK_KILL_PERCENT:-25}
kill_max_ms=${SOAK_KILL_MAX_MS:-}
[[ $kill_percent =~ ^[0-9]+$ ]] && ((kill_percent <= 100)) && [[ $kill_max_ms =~ ^[0-9]*$ ]] || {
  echo "soak: SOAK_KILL_PERCENT must be 0..100 and SOAK_KILL_MAX_MS milliseconds" >&2
  exit 2
}
run=${SOAK_COMPAS_RUN:-$build/bin/compas-run}
compas=${SOAK_COMPAS:-$build/bin/compas}
for exe in "$run" "$compas"; do
  [[ -x $exe ]] || {
    echo "soak: $exe is not an executable (build the targets compas and compas-run)" >&2
    exit 2
  }
done
want_detached=${SOAK_DETACHED:-1}
want_stalled=${SOAK_STALLED:-1}
[[ $want_detached =~ ^[0-9]+$ && $want_stalled =~ ^[0-9]+$ ]] || {
  echo "soak: SOAK_DETACHED and SOAK_STALLED must be whole numbers of jobs" >&2
  exit 2
}
timeout_s=${SOAK_TIMEOUT:-20}
grace_s=${SOAK_GRACE:-10}
settle_s=${SOAK_SETTLE:-3}
[[ $timeout_s =~ ^[1-9][0-9]*$ && $grace_s =~ ^[0-9]+$ && $settle_s =~ ^[0-9]+$ ]] || {
  echo "soak: SOAK_TIMEOUT, SOAK_GRACE and SOAK_SETTLE must be whole seconds" >&2
  exit 2
}
seed=${SOAK_SEED:-$(((RANDOM << 15) | RANDOM))}
RANDOM=$seed

# Kernel sizes: 0.15-0.4 s for 4 ranks of 1 thread on 2 cores (about 0.13 s of it is starting the
# job). typical_ms seeds each kernel's typical duration, then follows the jobs that ended ok.
kernels=(laplace gemm cg sort)
declare -A kernel_args=(
  [laplace]="laplace --n 256 --iters 3000 --tol 0"
  [gemm]="gemm --n 512 --iters 2"
  [cg]="cg --class W"
  [sort]="sort --keys 2M --iters 2"
)
declare -A typical_ms=([laplace]=250 [gemm]=200 [cg]=350 [sort]=280)

work=$(mktemp -d "${TMPDIR:-/tmp}/soak-work.XXXXXX") || exit 2
launcher=
declare -A job_pids=() all_pids=()
cleanup() {
  # Interrupted: what is left of the current job goes too.
  if [[ -n $launcher ]]; then
    local p
    for p in "$launcher" "${!job_pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# nap SECONDS: sleeps without starting a process (a read that times out on a pipe nobody writes).
exec {nap_fd}<> <(:)
nap() { read -r -t "$1" -u "$nap_fd" || :; }

# proc_stat PID: sets p_state and p_start (start time, clock ticks since boot: with the pid it
# names one process, never a later one given the same pid). Fails when there is no such process.
proc_stat() {
  local line
  { read -r line <"/proc/$1/stat"; } 2>/dev/null || return 1
  local rest=${line##*") "}  # the command name may hold spaces: the fields after its ')'
  local -a f=($rest)
  p_state=${f[0]}
  p_start=${f[19]}
}

# children PID: the children of process PID (every thread's), in the array kids.
children() {
  kids=()
  local t more
  set +f
  local tasks=(/proc/$1/task/*/children)
  set -f
  for t in "${tasks[@]}"; do
    more=()
    { read -r -a more <"$t"; } 2>/dev/null
    kids+=("${more[@]}")
  done
}

# sample_job: adds the launcher's descendants seen now to job_pids (pid -> start time).
sample_job() {
  local -a todo=("$launcher")
  local p k
  while ((${#todo[@]})); do
    p=${todo[-1]}
    unset 'todo[-1]'
    children "$p"
    for k in "${kids[@]}"; do
      if [[ -z ${job_pids[$k]:-} ]]; then
        proc_stat "$k" || continue
        job_pids[$k]=$p_start
      fi
      todo+=("$k")
    done
  done
}

# rank_of PID: the COMPAS_RANK in the environment of process PID, empty if it has none (yet: a
# child between fork and exec still has the launcher's environment).
rank_of() {
  local -a env=()
  { mapfile -d '' env <"/proc/$1/environ"; } 2>/dev/null
  local e
  for e in "${env[@]}"; do
    [[ $e == COMPAS_RANK=* ]] && {
      echo "${e#COMPAS_RANK=}"
      return
    }
  done
}

# The shared memory and temp names there are now: shmids, and names in /dev/shm and the temp
# directories. Into the arrays named $1 (shmids) and $2 (paths).
tmp_dirs=(/tmp)
[[ -n ${TMPDIR:-} && ${TMPDIR%/} != /tmp && -d $TMPDIR ]] && tmp_dirs+=("${TMPDIR%/}")
snapshot() {
  local -n ids=$1 paths=$2
  ids=() paths=()
  local key shmid rest p list
  while read -r key shmid rest; do
    [[ $shmid =~ ^[0-9]+$ ]] && ids[$shmid]=1
  done </proc/sysvipc/shm
  mapfile -t list < <(list_paths)
  for p in "${list[@]}"; do paths[$p]=1; done
}
list_paths() {
  local dir p
  set +f
  for p in /dev/shm/* /dev/shm/.[!.]*; do [[ -e $p ]] && echo "$p"; done
  for dir in "${tmp_dirs[@]}"; do
    for p in "$dir"/compas* "$dir"/ucx* "$dir"/.compas* "$dir"/.ucx*; do [[ -e $p ]] && echo "$p"; done
  done
  set -f
}

# in_use PATH: a live process holds PATH (or something under it) open, mapped or as its working
# directory.
in_use() {
  set +f
  ls -l /proc/[0-9]*/fd /proc/[0-9]*/cwd 2>/dev/null | grep -qF -- "-> $1" ||
    grep -qsF -- "$1" /proc/[0-9]*/maps
  local used=$?
  set -f
  return $used
}

# leftovers MARKER PIDS_ARRAY SHMIDS_BEFORE PATHS_BEFORE FROM_S TO_S: what the job (processes in
# the associative array PIDS_ARRAY: pid -> start time; environment marker MARKER, a prefix)
# left, one line each, in the array left; FROM_S..TO_S (seconds since the epoch) is when it ran.
leftovers() {
  local marker=$1
  local -n pids=$2 ids_before=$3 paths_before=$4
  local from=$5 to=$6
  left=()
  local p key shmid perms size cpid lpid nattch rest f list
  for p in "${!pids[@]}"; do
    proc_stat "$p" && [[ $p_start == "${pids[$p]}" && $p_state != Z ]] &&
      left+=("process $p still running: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)")
  done
  set +f
  for f in $(grep -lsz "^COMPAS_SOAK_MARKER=$marker" /proc/[0-9]*/environ); do
    p=${f#/proc/}
    p=${p%/environ}
    [[ -n ${pids[$p]:-} ]] && continue  # named above
    left+=("process $p still running with the marker $marker: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)")
  done
  set -f
  while read -r key shmid perms size cpid lpid nattch rest; do
    [[ $shmid =~ ^[0-9]+$ && -n ${pids[$cpid]:-} && -z ${ids_before[$shmid]:-} ]] || continue
    left+=("SysV segment shmid $shmid key $(printf '0x%08x' $((key & 0xffffffff))) size $size created by pid $cpid (nattch $nattch, perms $perms)")
  done </proc/sysvipc/shm
  mapfile -t list < <(list_paths)
  for f in "${list[@]}"; do
    [[ -z ${paths_before[$f]:-} ]] || continue
    local created
    created=$(stat -c %Z -- "$f" 2>/dev/null) || continue
    ((created >= from - 1 && created <= to + 1)) || continue
    in_use "$f" && continue
    left+=("file $f ($(stat -c '%F, %s bytes' -- "$f" 2>/dev/null))")
  done
}

# settle ...: leftovers, polled for up to settle_s seconds until there are none.
settle() {
  local deadline=$((${EPOCHREALTIME/./} + settle_s * 1000000))
  while :; do
    leftovers "$@"
    ((${#left[@]} == 0 || ${EPOCHREALTIME/./} >= deadline)) && return
    nap 0.05
  done
}

# count_leftovers: adds the lines in left (not counted before) to the counters.
declare -A reported=()
n_left_procs=0 n_left_segments=0 n_left_shm=0 n_left_tmp=0
count_leftovers() {
  local line what
  for line in "${left[@]}"; do
    what=${line%% (*}
    what=${what%%:*}
    [[ -n ${reported[$what]:-} ]] && continue
    reported[$what]=1
    echo "  LEFT: $line"
    case $line in
      process*) n_left_procs=$((n_left_procs + 1)) ;;
      SysV*) n_left_segments=$((n_left_segments + 1)) ;;
      "file /dev/shm/"*) n_left_shm=$((n_left_shm + 1)) ;;
      *) n_left_tmp=$((n_left_tmp + 1)) ;;
    esac
  done
}

# The plan: exactly kill_percent of the jobs (rounded) get a rank killed, SOAK_DETACHED jobs (1)
# leave a detached process behind and SOAK_STALLED (1) have a stalled reader, as many as there is
# room for beside the kills, at random places.
n_kill=$(((jobs_total * kill_percent + 50) / 100))
n_detach=0 n_stall=0
room=$((jobs_total - n_kill))
n_detach=$((want_detached < room ? want_detached : room))
room=$((room - n_detach))
n_stall=$((want_stalled < room ? want_stalled : room))
plan=()
for ((i = 0; i < jobs_total; i++)); do
  if ((i < n_kill)); then
    plan[i]=kill
  elif ((i < n_kill + n_detach)); then
    plan[i]=detach
  elif ((i < n_kill + n_detach + n_stall)); then
    plan[i]=stall
  else
    plan[i]=plain
  fi
done
for ((i = jobs_total - 1; i > 0; i--)); do
  j=$((RANDOM % (i + 1)))
  t=${plan[i]}
  plan[i]=${plan[j]}
  plan[j]=$t
done

declare -A soak_ids=() soak_paths=()
snapshot soak_ids soak_paths
soak_start_us=${EPOCHREALTIME/./}
soak_start_s=${EPOCHREALTIME%.*}
echo "soak: $jobs_total jobs of compas-run -n 4 --timeout $timeout_s (seed $seed; $n_kill with a rank killed, $n_detach with a detached process, $n_stall with a stalled reader)"

# The detached job's ranks: rank 0 starts a process in a session of its own and waits until it is
# there, then every rank runs the kernel ("$@").
detach_rank='if [ "$COMPAS_RANK" = 0 ]; then
  setsid sleep 1000 & p=$!
  until [ "$(cut -d" " -f6 /proc/$p/stat 2>/dev/null)" = "$p" ]; do sleep 0.01; done
fi
exec "$@"'
stall_timeout_s=2

n_run=0 n_killed=0 n_ok=0 n_late=0 n_expected=0 n_unexpected=0 n_hang=0 n_timeout=0
for ((i = 1; i <= jobs_total; i++)); do
  kernel=${kernels[RANDOM % ${#kernels[@]}]}
  mode=${plan[i - 1]}
  kill_it=0
  [[ $mode == kill ]] && kill_it=1
  limit_s=$timeout_s
  case $mode in
    detach) cmd=("$run" -n 4 --timeout "$timeout_s" sh -c "$detach_rank" sh "$compas" run) ;;
    stall) cmd=("$run" -n 4 --timeout "$stall_timeout_s" yes) limit_s=$stall_timeout_s ;;
    *) cmd=("$run" -n 4 --timeout "$timeout_s" "$compas" run) ;;
  esac
  [[ $mode == stall ]] || cmd+=(${kernel_args[$kernel]} --quiet)
  kill_at_ms=$((RANDOM % (${kill_max_ms:-${typical_ms[$kernel]}} + 1)))
  marker="soak-$$-$i-"
  declare -A before_ids=() before_paths=()
  snapshot before_ids before_paths
  log=$work/job-$i.log
  job_pids=()
  start_s=${EPOCHREALTIME%.*}
  start_us=${EPOCHREALTIME/./}
  if [[ $mode == stall ]]; then
    # A pipe that nobody reads (opened read-write, so that it has a reader that never reads).
    exec {stall_fd}<> <(:)
    COMPAS_SOAK_MARKER=$marker COMPAS_TIMEOUT=10 "${cmd[@]}" </dev/null >&$stall_fd 2>&1 &
    launcher=$!
    echo "(its output went to a pipe that nobody read)" >"$log"
  else
    COMPAS_SOAK_MARKER=$marker COMPAS_TIMEOUT=10 "${cmd[@]}" </dev/null >"$log" 2>&1 &
    launcher=$!
  fi
  proc_stat "$launcher" && job_pids[$launcher]=$p_start
  victim= victim_rank= kill_note= hung=0
  while :; do
    sample_job
    proc_stat "$launcher" || break
    [[ $p_state == Z ]] && break
    elapsed_ms=$(((${EPOCHREALTIME/./} - start_us) / 1000))
    if ((kill_it && ${#kill_note} == 0 && elapsed_ms >= kill_at_ms)); then
      children "$launcher"
      if ((${#kids[@]})); then
        victim=${kids[RANDOM % ${#kids[@]}]}
        victim_rank=$(rank_of "$victim")
        if proc_stat "$victim" && [[ $p_state != Z ]] && kill -KILL "$victim" 2>/dev/null; then
          kill_note="rank ${victim_rank:-?} (pid $victim) killed at $elapsed_ms ms"
        else
          kill_note="rank ${victim_rank:-?} (pid $victim) had already ended at $elapsed_ms ms"
          victim=
        fi
      fi
    fi
    if ((elapsed_ms > (limit_s + grace_s) * 1000)); then
      hung=1
      for p in "$launcher" "${!job_pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
      break
    fi
    nap 0.005
  done
  wait "$launcher"
  rc=$?
  [[ $mode == stall ]] && exec {stall_fd}>&-
  end_s=${EPOCHREALTIME%.*}
  ms=$(((${EPOCHREALTIME/./} - start_us) / 1000))
  printf -v seconds '%d.%02d' $((ms / 1000)) $(((ms / 10) % 100))
  for p in "${!job_pids[@]}"; do all_pids[$p]=${job_pids[$p]}; done
  launcher=
  n_run=$((n_run + 1))
  [[ -n $victim ]] && n_killed=$((n_killed + 1))

  status=
  if ((hung)); then
    n_hang=$((n_hang + 1))
    status="HUNG: still running after --timeout $limit_s s + $grace_s s"
  elif [[ $mode == stall ]]; then
    if ((rc == 124)); then
      n_expected=$((n_expected + 1))
      status="stopped by --timeout $stall_timeout_s as expected with its reader stalled (exit 124)"
    else
      n_unexpected=$((n_unexpected + 1))
      status="UNEXPECTED: exit $rc with its reader stalled (expected 124)"
    fi
  elif [[ $mode == detach ]]; then
    if ((rc == 0)) && grep -q '^verified' "$log" &&
      grep -qF "compas-run: ended 1 process the job left running: " "$log"; then
      n_ok=$((n_ok + 1))
      status="ok, the detached process ended with the job"
    else
      n_unexpected=$((n_unexpected + 1))
      status="UNEXPECTED: exit $rc, or no word of the detached process ended"
    fi
  elif ((rc == 124)); then
    n_hang=$((n_hang + 1))
    n_timeout=$((n_timeout + 1))
    status="HUNG: stopped by --timeout $timeout_s (exit 124)"
  elif [[ -n $victim ]]; then
    if ((rc == 137)) && { [[ -z $victim_rank ]] ||
      grep -qF "compas-run: rank $victim_rank was killed by signal 9 (Killed)" "$log"; }; then
      n_expected=$((n_expected + 1))
      status="failed as expected (exit 137)"
    elif ((rc == 0)) && grep -q '^verified' "$log"; then
      n_ok=$((n_ok + 1))
      n_late=$((n_late + 1))
      status="ok: the kill came as the rank was ending"
    else
      n_unexpected=$((n_unexpected + 1))
      status="UNEXPECTED: exit $rc after the kill"
    fi
  elif ((rc == 0)) && grep -q '^verified' "$log"; then
    n_ok=$((n_ok + 1))
    status=ok
    # A kill planned for a job whose ranks had all ended: counted as ok, not as killed.
    [[ -n $kill_note ]] && n_late=$((n_late + 1))
    [[ $mode != plain ]] || typical_ms[$kernel]=$(((3 * ${typical_ms[$kernel]} + ms) / 4))
  else
    n_unexpected=$((n_unexpected + 1))
    status="UNEXPECTED: exit $rc"
  fi
  echo "job $i/$jobs_total $kernel${kill_note:+, $kill_note}: $status, $seconds s"
  [[ $status == ok* || $status == failed* || $status == stopped* ]] ||
    sed 's/^/  | /' "$log" | tail -n 20

  settle "$marker" job_pids before_ids before_paths "$start_s" "$end_s"
  count_leftovers
  # Whatever is still running of this job goes now, so that it does not disturb the next one.
  for l in "${left[@]}"; do
    [[ $l == process* ]] && p=${l#process } && kill -KILL "${p%% *}" 2>/dev/null
  done
done

# The whole run: anything new since the start that no job's check saw.
settle "soak-$$-" all_pids soak_ids soak_paths "$soak_start_s" "${EPOCHREALTIME%.*}"
((${#left[@]})) && echo "at the end:"
count_leftovers
wall_us=$((${EPOCHREALTIME/./} - soak_start_us))

fail=$((n_unexpected + n_hang + n_left_procs + n_left_segments + n_left_shm + n_left_tmp))
printf 'soak: %d jobs in %d.%d s (seed %s)\n' "$n_run" $((wall_us / 1000000)) $(((wall_us / 100000) % 10)) "$seed"
printf '  %-42s %d\n' "jobs run" "$n_run" \
  "jobs with a kill planned" "$n_kill" \
  "jobs with a killed rank" "$n_killed" \
  "jobs that ended ok" "$n_ok" \
  "  of them with a kill that came too late" "$n_late" \
  "jobs with a detached process" "$n_detach" \
  "jobs with a stalled reader" "$n_stall" \
  "jobs that failed or stopped as expected" "$n_expected" \
  "unexpected failures" "$n_unexpected" \
  "hangs" "$n_hang" \
  "  of them stopped by --timeout" "$n_timeout" \
  "leftover processes" "$n_left_procs" \
  "leftover SysV segments" "$n_left_segments" \
  "leftover /dev/shm files" "$n_left_shm" \
  "leftover temp files" "$n_left_tmp"
if ((fail)); then
  echo "soak: FAILED"
  exit 1
fi
echo "soak: passed"
