#!/usr/bin/env bash
# Two "hosts" on one machine: two network namespaces joined by a veth pair, each rank in its own
# namespace and UTS namespace (its own hostname), UCX over tcp only, the job formed by hand with
# an explicit rendezvous address on rank 0's side. Every rank runs test_comm_rma (puts, gets,
# put_signal, atomics, barrier) and must pass, seeing 2 hosts.
# Usage: netns_two_hosts.sh TEST_COMM_RMA
#        netns_two_hosts.sh PROGRAM ARGS...   (any program, e.g. compas pingpong: must exit 0)
# RANKS_PER_HOST=2 starts two ranks in each namespace (ranks 0,1 on host a; 2,3 on host b), with
# UCX's shared-memory transports on, and forces the two-level process barrier
# (COMPAS_PROCESS_BARRIER=host): each host's ranks meet in shared memory, the leaders across the veth.
# NETNS_ENV adds VAR=VALUE words to every rank's environment (COMPAS_TIMEOUT=60 unless it sets
# it). NETNS_CHECK=SCRIPT judges a run that is meant to fail: instead of the checks below, the
# test's status is `bash SCRIPT OUT_DIR ARGS...`, OUT_DIR holding each rank's rankR.out, its exit
# code rankR.rc and the time it ended rankR.end (seconds, date +%s.%N).
# Exits 77 (CTest skip) with the reason when namespaces cannot be made here.
set -u
prog=${1:?usage: netns_two_hosts.sh TEST_COMM_RMA | PROGRAM ARGS...}
shift
args=("$@")
skip() { echo "SKIP: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "needs root to create network namespaces"
command -v ip >/dev/null || skip "no 'ip' command (iproute2)"
command -v unshare >/dev/null || skip "no 'unshare' command (util-linux)"

tag=c$$
a=${tag}a b=${tag}b
net=$((100 + $$ % 150))
addr_a=10.233.$net.1 addr_b=10.233.$net.2
out=
cleanup() {
  for ns in "$a" "$b"; do  # ranks still running (the script was interrupted): only ours live there
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [[ -n $pids ]] && kill -9 $pids 2>/dev/null
    ip netns del "$ns" 2>/dev/null
  done
  ip link del "v${tag}a" 2>/dev/null
  [[ -n $out ]] && rm -rf "$out"
}
trap cleanup EXIT
ip netns add "$a" 2>/dev/null || skip "cannot create a network namespace ('ip netns add' failed)"
ip netns add "$b" || skip "cannot create a second network namespace"
ip link add "v${tag}a" type veth peer name "v${tag}b" || skip "cannot create a veth pair"
ip link set "v${tag}a" netns "$a"
ip link set "v${tag}b" netns "$b"
ip -n "$a" addr add "$addr_a/24" dev "v${tag}a"
ip -n "$b" addr add "$addr_b/24" dev "v${tag}b"
for ns in "$a" "$b"; do
  ip -n "$ns" link set lo up
done
ip -n "$a" link set "v${tag}a" up
ip -n "$b" link set "v${tag}b" up

token=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
port=$((20000 + $$ % 20000))
per=${RANKS_PER_HOST:-1}
[[ $per == 1 || $per == 2 ]] || { echo "RANKS_PER_HOST='$per': 1 or 2 allowed"; exit 2; }
size=$((2 * per))
common=(COMPAS_SIZE=$size "COMPAS_RENDEZVOUS=$addr_a:$port" "COMPAS_JOB_TOKEN=$token"
        COMPAS_TIMEOUT=60 COMPAS_TEST_HOSTS=2)
read -r -a extra <<<"${NETNS_ENV:-}"
common+=("${extra[@]}")
if [[ $per == 1 ]]; then
  common+=(UCX_TLS=tcp,self)
else
  # The namespaces share the kernel, so UCX may also reach the other "host" through shared
  # memory; compas still treats it as remote (no load/store across hosts).
  # Four busy ranks on a 2-core machine: one may go unscheduled for longer than compas's 1 s
  # keepalive, and UCX then ends the job with "Endpoint timeout" although every rank is alive
  # (seen here on every run). This test is about RMA across hosts, not about noticing a dead one
  # (the comm.TcpRanks tests are): a keepalive that tolerates oversubscription.
  common+=(UCX_TLS=tcp,self,sm COMPAS_TEST_RANKS_PER_HOST=2 COMPAS_PROCESS_BARRIER=host
           COMPAS_TEST_EXPECT_BARRIER=host UCX_KEEPALIVE_INTERVAL=10s)
fi
out=$(mktemp -d)
run_rank() {  # rank namespace hostname device
  ip netns exec "$2" unshare --uts sh -c "hostname $3 && exec env $(printf '%q ' "${common[@]}") \
    COMPAS_RANK=$1 UCX_NET_DEVICES=$4 timeout 200 $(printf '%q ' "$prog" "${args[@]}")" \
    >"$out/rank$1.out" 2>&1
  echo $? >"$out/rank$1.rc"
  date +%s.%N >"$out/rank$1.end"
}
run_rank 0 "$a" "${tag}-host-a" "v${tag}a" &
sleep 0.2
for ((r = 1; r < size; ++r)); do
  if ((r < per)); then
    run_rank $r "$a" "${tag}-host-a" "v${tag}a" &
  else
    run_rank $r "$b" "${tag}-host-b" "v${tag}b" &
  fi
done
wait
if [[ -n ${NETNS_CHECK:-} ]]; then
  bash "$NETNS_CHECK" "$out" "${args[@]}"
  exit $?
fi
status=0
for ((r = 0; r < size; ++r)); do
  echo "---- rank $r (exit $(cat "$out/rank$r.rc"))"
  tail -n 40 "$out/rank$r.out"
  [[ $(cat "$out/rank$r.rc") == 0 ]] || status=1
  [[ ${#args[@]} -eq 0 ]] || continue
  grep -q "^\[  PASSED  \] [1-9][0-9]* tests\." "$out/rank$r.out" || status=1
  # The data moved between the hosts, and each rank saw 2 hosts (COMPAS_TEST_HOSTS).
  expected=(Rma.PutManySizesAndOffsets Rma.GetManySizesAndOffsets
            Rma.PutSignalDataVisibleWhenSignalIs Comm.HostsAndLazyEndpoints)
  [[ $per == 2 ]] && expected+=(Rma.BarrierOrdersPhases Comm.ProcessBarrierAlgorithmIsTheOneExpected)
  for t in "${expected[@]}"; do
    grep -q "^\[       OK \] $t " "$out/rank$r.out" || { echo "rank $r: $t did not pass"; status=1; }
  done
done
[[ $status == 0 ]] && echo PASS || echo FAIL
exit $status
