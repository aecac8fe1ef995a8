#!/usr/bin/env bash
# A program's bad compas flag is bad input: alone and under compas-run -n 2, each program given
# here exits with status 2 and says, in one line starting "compas: ", which value is wrong; it
# does not abort (no "terminate called", no status 134). Flags: --threads x, --bind bogus, --wait
# bogus, and --threads with no value.
# Usage: bad_flag.sh COMPAS_RUN PROGRAM...
set -u
compas_run=$1
shift
status=0
fail() {
  echo "FAIL: $*"
  status=1
}
check() {  # check WHAT WANT_TEXT COMMAND...
  local what=$1 want=$2
  shift 2
  local out rc
  out=$(COMPAS_TIMEOUT=20 timeout 60 "$@" 2>&1)
  rc=$?
  local before=$status
  [[ $rc -eq 2 ]] || fail "$what: status $rc (want 2): $out"
  grep -q "^compas: .*$want" <<<"$out" || fail "$what: no line 'compas: ...$want': $out"
  grep -q "terminate called" <<<"$out" && fail "$what: aborted: $out"
  [[ $status -eq $before ]] && echo "ok: $what -> 2"
}
for prog in "$@"; do
  name=$(basename "$prog")
  check "$name --threads x" "--threads='x'" "$prog" --threads x
  check "$name --bind bogus" "bind policy 'bogus'" "$prog" --bind bogus
  check "$name --wait bogus" "wait policy 'bogus'" "$prog" --wait bogus
  check "$name --threads" "--threads needs a value" "$prog" --threads
  check "compas-run -n 2 $name --threads x" "--threads='x'" "$compas_run" -n 2 "$prog" --threads x
done
exit $status
