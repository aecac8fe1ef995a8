#!/usr/bin/env bash
# A one-node Slurm on this machine, for the tests that launch compas with srun and sbatch.
#
#   slurm_node.sh start    check the Debian packages (scripts/install-deps.sh installs them),
#                          then start munged, slurmctld and slurmd from a private state directory
#                          and wait until the node is idle (30 s at most)
#   slurm_node.sh stop     cancel what is queued, stop exactly the daemons `start` started (pid
#                          files, checked against the process name and a marker in its
#                          environment), remove the state directory
#   slurm_node.sh status   exit 0 when the node answers and is usable, 3 otherwise
#   slurm_node.sh env      print `export SLURM_CONF=...` for the running node (nothing for a
#                          Slurm that was already running here), or exit 3 when none is up
#
# Needs root (slurmd starts job steps as the submitting user, and munged must run as the munge
# user). Exits 77 (CTest's skip) with the reason when not root, when the packages are missing
# (the install step did not run), or when a Slurm already runs here that does not answer or lacks
# PMIx.
# A Slurm that already runs on this machine is used as it is (its own configuration) and never
# stopped; the system's /etc/slurm and /etc/munge are never touched.
# Idempotent: `start` on a running node and `stop` on a stopped one do nothing and exit 0.
#
# State directory: $COMPAS_SLURM_DIR, default /tmp/compas-slurm-<uid>.
set -uo pipefail

state=${COMPAS_SLURM_DIR:-/tmp/compas-slurm-$(id -u)}
conf=$state/slurm.conf
mdir=$state/munge
msock=$mdir/munge.socket.2
# Every daemon started here carries this variable; `stop` kills a pid from a pid file only when
# the process still has it, so a recycled pid never takes an unrelated process down.
marker="COMPAS_SLURM_NODE=$state"
packages=(slurmd slurmctld slurm-client munge
  # Slurm's mpi/pmix plugin dlopen()s .../pmix2/lib/libpmix.so, the unversioned name, which
  # Debian ships only in libpmix-dev; without it `srun --mpi=pmix` fails with "can not load PMIx
  # library" (slurm-wlm-basic-plugins does not depend on it).
  libpmix-dev)
boot_wait=30

say() { echo "slurm_node: $*"; }
skip() { say "SKIP: $*"; exit 77; }

# has_marker PID: the process was started by this script for this state directory.
has_marker() {
  [[ -r /proc/$1/environ ]] && { tr '\0' '\n' <"/proc/$1/environ"; } 2>/dev/null | grep -qxF "$marker"
}

# in_state PID: the process works in the state directory or holds a file in it.
in_state() {
  local f
  local cwd
  cwd=$(readlink "/proc/$1/cwd" 2>/dev/null)
  [[ $cwd == "$state" || $cwd == "$state/"* ]] && return 0
  for f in /proc/"$1"/fd/*; do
    [[ $(readlink "$f" 2>/dev/null) == "$state/"* ]] && return 0
  done
  return 1
}

# ours PIDFILE NAME: print the pid in PIDFILE when that process is NAME and started here.
ours() {
  local pid
  [[ -s $1 ]] || return 1
  pid=$(head -c 32 "$1" | tr -dc '0-9')
  [[ -n $pid && -r /proc/$pid/comm && $(cat "/proc/$pid/comm" 2>/dev/null) == "$2" ]] || return 1
  has_marker "$pid" || return 1
  echo "$pid"
}

# sinfo/squeue/scontrol/srun against our configuration.
sl() { SLURM_CONF=$conf "$@"; }

node_states() {
  if [[ $(cat "$state/mode" 2>/dev/null) == external ]]; then
    env -u SLURM_CONF timeout 10 sinfo -h -o '%T' 2>/dev/null
  else
    sl timeout 10 sinfo -h -o '%T' 2>/dev/null
  fi
}

# usable: a node that can take a job now or soon (idle, mixed or busy with another job).
usable() {
  node_states | grep -qE '^(idle|mixed|allocated|completing)$'
}

is_up() {
  [[ -d $state && ! -L $state ]] || return 1
  case $(cat "$state/mode" 2>/dev/null) in
    external) usable ;;
    own) ours "$mdir/munged.pid" munged >/dev/null && ours "$state/slurmctld.pid" slurmctld >/dev/null &&
         ours "$state/slurmd.pid" slurmd >/dev/null && usable ;;
    *) return 1 ;;
  esac
}

# foreign_daemons: pids of slurmctld / slurmd processes not started by this script. Zombies do
# not count: the parents of daemons that detached may wait a while for init to reap them.
foreign_daemons() {
  local pid
  for pid in $(pgrep -x 'slurmctld|slurmd' 2>/dev/null); do
    [[ $(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null) == Z ]] && continue
    has_marker "$pid" || echo "$pid"
  done
}

port_in_use() {
  local hex
  hex=$(printf '%04X' "$1")
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" {f=1} END {exit !f}'
}

# free_port_pair FROM: the first P >= FROM with P and P+1 both free.
free_port_pair() {
  local p=$1
  while port_in_use "$p" || port_in_use $((p + 1)); do p=$((p + 2)); done
  echo "$p"
}

# The packages come from scripts/install-deps.sh (the build's install step); a missing one is a
# skip with its name, never an install during the tests.
check_packages() {
  local missing=() p status
  for p in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [[ $status == "install ok installed" ]] || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] ||
    skip "missing packages ${missing[*]}: scripts/install-deps.sh installs them"
}

# kill_wait PID...: SIGTERM, up to 10 s, then SIGKILL; returns when all are gone.
kill_wait() {
  local pid i
  [[ $# -eq 0 ]] && return 0
  kill -TERM "$@" 2>/dev/null
  for ((i = 0; i < 100; i++)); do
    local alive=0
    for pid; do [[ -d /proc/$pid ]] && alive=1; done
    [[ $alive -eq 0 ]] && return 0
    sleep 0.1
  done
  kill -KILL "$@" 2>/dev/null
  for ((i = 0; i < 50; i++)); do
    local alive=0
    for pid; do [[ -d /proc/$pid ]] && alive=1; done
    [[ $alive -eq 0 ]] && return 0
    sleep 0.1
  done
}

# descendants PID: every process below PID.
descendants() {
  local kids k
  kids=$(pgrep -P "$1" 2>/dev/null)
  for k in $kids; do
    echo "$k"
    descendants "$k"
  done
}

do_stop() {
  [[ -e $state ]] || { say "not running"; return 0; }
  [[ -L $state ]] && { say "$state is a symbolic link: not touching it"; return 1; }
  if [[ $(cat "$state/mode" 2>/dev/null) == external ]]; then
    rm -rf "$state"
    say "used the Slurm already running here; left it running"
    return 0
  fi
  local ctld slurmd munged i
  ctld=$(ours "$state/slurmctld.pid" slurmctld)
  slurmd=$(ours "$state/slurmd.pid" slurmd)
  munged=$(ours "$mdir/munged.pid" munged)
  # Jobs first, so that slurmstepd ends its tasks before the daemons go.
  if [[ -n $ctld ]]; then
    local jobs
    jobs=$(sl timeout 10 squeue -h -o '%A' 2>/dev/null)
    if [[ -n $jobs ]]; then
      # shellcheck disable=SC2086
      sl timeout 10 scancel $jobs 2>/dev/null
      for ((i = 0; i < 100; i++)); do
        [[ -z $(sl timeout 10 squeue -h -o '%A' 2>/dev/null) ]] && break
        sleep 0.1
      done
    fi
  fi
  kill_wait ${slurmd:+"$slurmd"}
  kill_wait ${ctld:+"$ctld"}
  # A job step that outlived its slurmd: the step daemon and its tasks. slurmd starts slurmstepd
  # with an environment of its own (no marker); ours work in the state directory and hold its log.
  local pid strays=()
  for pid in $(pgrep -x slurmstepd 2>/dev/null); do
    if in_state "$pid"; then
      strays+=("$pid")
      mapfile -t -O "${#strays[@]}" strays < <(descendants "$pid")
    fi
  done
  [[ ${#strays[@]} -gt 0 ]] && { say "ending ${#strays[@]} leftover step process(es)"; kill -KILL "${strays[@]}" 2>/dev/null; }
  kill_wait ${munged:+"$munged"}
  local left
  left=$(for pid in $(pgrep -x 'slurmctld|slurmd|slurmstepd|munged' 2>/dev/null); do
    { has_marker "$pid" || in_state "$pid"; } && echo "$pid"; done)
  if [[ -n $left ]]; then
    say "still running after stop: ${left//$'\n'/ }"
    return 1
  fi
  rm -rf "$state"
  say "stopped"
}

do_start() {
  [[ $(id -u) -eq 0 ]] || skip "needs root: slurmd launches job steps as the submitting user and munged runs as user munge"
  if is_up; then
    say "already running ($(cat "$state/mode"))"
    return 0
  fi
  [[ -L $state ]] && { say "$state is a symbolic link: refusing it"; return 1; }
  # Leftovers of an earlier start that did not finish (or whose daemons died).
  [[ -e $state ]] && { do_stop >/dev/null || return 1; }

  local foreign
  foreign=$(foreign_daemons)
  foreign=${foreign//$'\n'/ }
  if [[ -n $foreign ]]; then
    # Use it when it answers with its own configuration and has PMIx; never start a second one
    # beside it, never stop it.
    env -u SLURM_CONF timeout 10 sinfo -h -o '%T' 2>/dev/null | grep -qE '^(idle|mixed|allocated|completing)$' ||
      skip "a Slurm already runs on this machine (pids $foreign) and sinfo shows no usable node"
    env -u SLURM_CONF timeout 10 srun --mpi=list 2>&1 | grep -qw pmix ||
      skip "a Slurm already runs on this machine (pids $foreign) without the mpi/pmix plugin"
    mkdir -m 711 "$state" || return 1
    echo external >"$state/mode"
    say "using the Slurm already running here (pids $foreign)"
    return 0
  fi

  check_packages
  id munge >/dev/null 2>&1 || skip "no user munge (the munge package creates it)"

  # Root-owned, traversable (munged runs as munge and reaches its own subdirectory), not listable.
  mkdir -m 711 "$state" || return 1
  echo own >"$state/mode"
  mkdir -m 700 "$state/ctld" "$state/spool" || return 1
  mkdir -m 1777 "$state/tmp" || return 1
  # munged wants its socket's directory searchable by all (any user may ask for a credential).
  mkdir -m 711 "$mdir" || return 1
  # munged insists on a key only its user can read.
  if command -v mungekey >/dev/null; then
    mungekey --create --keyfile="$mdir/munge.key" >/dev/null || return 1
  else
    dd if=/dev/urandom of="$mdir/munge.key" bs=1024 count=1 status=none || return 1
  fi
  chmod 400 "$mdir/munge.key"
  chown -R munge:munge "$mdir"
  if ! env "$marker" runuser -u munge -- munged --socket="$msock" --key-file="$mdir/munge.key" \
         --pid-file="$mdir/munged.pid" --log-file="$mdir/munged.log" \
         --seed-file="$mdir/munged.seed"; then
    say "munged did not start:"
    tail -5 "$mdir/munged.log" 2>/dev/null
    do_stop >/dev/null
    return 1
  fi
  if ! munge -n -S "$msock" | unmunge -S "$msock" >/dev/null 2>&1; then
    say "munged started but does not answer a credential round trip"
    do_stop >/dev/null
    return 1
  fi

  # The node as slurmd sees the hardware (sockets x cores x threads must agree with it), memory
  # from /proc/meminfo, ports that are free here.
  local host cpus layout mem port
  host=$(hostname -s)
  cpus=$(nproc --all)
  layout=$(slurmd -C 2>/dev/null | grep -o 'Boards=[0-9]* SocketsPerBoard=[0-9]* CoresPerSocket=[0-9]* ThreadsPerCore=[0-9]*')
  [[ -n $layout ]] && cpus=$(slurmd -C | sed -n 's/.*CPUs=\([0-9]*\).*/\1/p')
  mem=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)
  port=$(free_port_pair 6817)
  cat >"$conf" <<EOF
# One-node Slurm for compas's tests (tests/slurm/slurm_node.sh); removed by \`slurm_node.sh stop\`.
ClusterName=compas-test
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$msock
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
# The pmix plugin's per-step directories (spmix_appdir_*) go here, not to /tmp: job ids start at 1
# again with every new node, and a step whose directory an earlier node left behind (a step
# killed with its slurmd) fails to launch.
TmpFS=$state/tmp
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
MpiDefault=pmix
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
# Cancelled and failed jobs end quickly (SIGTERM, SIGKILL 5 s later) and a down node comes back.
KillWait=5
ReturnToService=2
# sbatch --wait polls every 2 s only while MinJobAge/2 is not above 2 s; with the default (300) it
# backs off to 8 and then 32 s, which added up to half a minute to a 40 s batch job.
MinJobAge=4
SlurmdParameters=config_overrides
NodeName=$host CPUs=$cpus $layout RealMemory=$mem State=UNKNOWN
PartitionName=compas Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

  if ! env "$marker" SLURM_CONF="$conf" slurmctld -i; then
    say "slurmctld did not start:"
    tail -15 "$state/slurmctld.log" 2>/dev/null
    do_stop >/dev/null
    return 1
  fi
  if ! env "$marker" SLURM_CONF="$conf" slurmd; then
    say "slurmd did not start:"
    tail -15 "$state/slurmd.log" 2>/dev/null
    do_stop >/dev/null
    return 1
  fi

  local i st resumed=0
  for ((i = 0; i < boot_wait * 5; i++)); do
    st=$(node_states | head -1)
    [[ $st == idle ]] && break
    # A node that registered as down (e.g. after an unclean stop) is put back once.
    if [[ $st =~ ^(down|drained|draining)$ && $resumed -eq 0 ]]; then
      sl scontrol update nodename="$host" state=resume >/dev/null 2>&1
      resumed=1
    fi
    sleep 0.2
  done
  if [[ $st != idle ]]; then
    say "node $host is '${st:-not reported}' after ${boot_wait} s, not idle:"
    sl sinfo -N -l 2>&1 | tail -3
    tail -10 "$state/slurmctld.log" "$state/slurmd.log" 2>/dev/null
    do_stop >/dev/null
    return 1
  fi
  if ! sl timeout 10 srun --mpi=list 2>&1 | grep -qw pmix; then
    say "srun lists no pmix plugin:"
    sl timeout 10 srun --mpi=list 2>&1 | head -10
    do_stop >/dev/null
    return 1
  fi
  say "node $host idle: $cpus CPUs, ${mem} MB, ports $port-$((port + 1)), state in $state"
}

case ${1:-} in
  start) do_start ;;
  stop) do_stop ;;
  status)
    if is_up; then
      say "up ($(cat "$state/mode")), state in $state"
      node_states | sed 's/^/slurm_node: node /'
      exit 0
    fi
    say "not running"
    exit 3
    ;;
  env)
    is_up || exit 3
    [[ $(cat "$state/mode") == own ]] && echo "export SLURM_CONF=$conf"
    exit 0
    ;;
  *)
    echo "usage: $0 start|stop|status|env" >&2
    exit 2
    ;;
esac
