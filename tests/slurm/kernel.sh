#!/usr/bin/env bash
# One kernel under srun: `srun -n P -c T --mpi=pmix compas run KERNEL ARGS --json F` must exit 0,
# print its "verified:" line, and its JSON must show a P x T job formed through the MPI bootstrap
# (P processes, each with the T threads srun's -c gave it) whose every result verified.
# Usage: kernel.sh COMPAS P T KERNEL [ARGS...]
set -u
source "$(dirname "$0")/common.sh"
compas=$1 P=$2 T=$3 kernel=$4
shift 4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cmd=(srun -n "$P" -c "$T" --mpi=pmix -J "compas-test-$kernel" -t 2
     "$compas" run "$kernel" "$@" --json "$dir/result.json")
echo "+ ${cmd[*]}"
out=$(COMPAS_TIMEOUT=30 timeout 120 "${cmd[@]}" 2>&1)
rc=$?
echo "$out"
[[ $rc -eq 0 ]] || fail "$kernel on $P x $T exited $rc"
grep -q '^verified: ' <<<"$out" || fail "no 'verified:' line in the output"
json_check "$dir/result.json" \
  "d['params']['bootstrap'] == 'mpi' and d['params']['processes'] == $P and d['params']['threads'] == $T" ||
  fail "the job was not $P processes x $T threads over the mpi bootstrap: $(python3 -c \
       "import json,sys; print(json.load(open(sys.argv[1]))['params'])" "$dir/result.json" 2>&1)"
json_check "$dir/result.json" "len(d['results']) > 0 and all(r['verified'] is True for r in d['results'])" ||
  fail "a result in the JSON is not verified"
echo "PASS: $kernel verified on $P x $T under srun"
