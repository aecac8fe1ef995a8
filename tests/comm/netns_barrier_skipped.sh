#!/usr/bin/env bash
# Judges a two-host run of `fault_probe host-barrier-skipped SKIPPER` (netns_two_hosts.sh with
# RANKS_PER_HOST=2: ranks 0, 1 on host a, 2, 3 on host b; NETNS_CHECK names this script):
# the host the skipper is missing from names it first. Of the survivors that end by a timeout of
# their own, the first is on the skipper's host and says "rank SKIPPER did not arrive" (the
# others end because a process they waited for ended, milliseconds later, so only timeouts are
# ordered by their end times). When the skipper is not its host's leader (rank 3), the other
# host's ranks do not time out at all: they wait one COMPAS_TIMEOUT more while every process of
# their host arrived, and end when the skipper's host has ended. Every survivor exits 1.
# Usage: netns_barrier_skipped.sh OUT_DIR PROGRAM_ARGS... (host-barrier-skipped SKIPPER)
set -u
out=$1 skipper=${3:?usage: netns_barrier_skipped.sh OUT_DIR host-barrier-skipped SKIPPER}
status=0
fail() { echo "FAIL: $*"; status=1; }
first= first_end=
for r in 0 1 2 3; do
  echo "---- rank $r (exit $(cat "$out/rank$r.rc"), ended $(cat "$out/rank$r.end"))"
  grep "fault_probe: rank $r: " "$out/rank$r.out" | tail -n 3
  ((r == skipper)) && continue
  [[ $(cat "$out/rank$r.rc") == 1 ]] || fail "rank $r exited $(cat "$out/rank$r.rc"), not 1"
  grep -q "fault_probe: rank $r: timed out after" "$out/rank$r.out" || continue
  end=$(cat "$out/rank$r.end")
  if [[ -z $first ]] || awk -v a="$end" -v b="$first_end" 'BEGIN { exit !(a < b) }'; then
    first=$r first_end=$end
  fi
done
host_of() { (($1 < 2)) && echo a || echo b; }
[[ -n $first ]] || { fail "no survivor timed out"; first=$skipper; }
[[ $(host_of "$first") == $(host_of "$skipper") ]] ||
  fail "rank $first, on the other host than rank $skipper, timed out first"
grep -q "fault_probe: rank $first: .*rank $skipper did not arrive, on host '" "$out/rank$first.out" ||
  fail "rank $first, the first to time out, does not name rank $skipper"
if ((skipper == 3)); then
  for r in 0 1; do
    ! grep -q "fault_probe: rank $r: timed out after" "$out/rank$r.out" ||
      fail "rank $r (host a, every process of which arrived) timed out instead of waiting longer"
  done
fi
[[ $status == 0 ]] && echo PASS || echo FAIL
exit $status
