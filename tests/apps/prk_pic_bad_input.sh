#!/usr/bin/env bash
# PRK PIC's bad input: every case exits 2 with a message naming the value and what is allowed,
# the original alone and the port under compas-run; and a grid too small for the processes (2
# cells on 3 processes) is refused by the port on every process with exit 2, naming both.
# Usage: prk_pic_bad_input.sh COMPAS_RUN ORIGINAL PORT
set -u
run=${1:-} orig=${2:-} port=${3:-}
[[ -x "$run" && -x "$orig" && -x "$port" ]] || { echo "usage: prk_pic_bad_input.sh COMPAS_RUN ORIGINAL PORT"; exit 2; }
fail=0
expect() {  # WHAT RC OUTPUT PATTERN
  if [[ $2 -ne 2 ]] || ! grep -Fq -- "$4" <<<"$3"; then
    echo "FAIL: $1: exit $2, wanted 2 and '$4' in:"; echo "$3"; fail=1
  else
    echo "ok: $1: $4"
  fi
}
cases=(
  "10 7 100 1 1 SINUSOIDAL|grid size '7': an even number of cells is needed"
  "10 0 100 1 1 SINUSOIDAL|grid size '0': an integer from 2 to"
  "10 8 '' 1 1 SINUSOIDAL|particles '': an integer from 1 to"
  "10 8 100 -1 1 SINUSOIDAL|k '-1': an integer from 0 to"
  "10 8 100 1 9 SINUSOIDAL|m '9': an integer from -8 to 8 is needed"
  "10 8 100 1 1 ''|mode '': GEOMETRIC, SINUSOIDAL, LINEAR or PATCH is needed"
  "10 8 100 1 1 FOO|mode 'FOO': GEOMETRIC, SINUSOIDAL, LINEAR or PATCH is needed"
  "10 8 100 1 1 GEOMETRIC|RHO (6 arguments given)"
  "10 8 100 1 1 SINUSOIDAL 3|LINEAR|PATCH (7 arguments given)"
  "10 8 100 1 1 GEOMETRIC 1|rho '1': a number > 0 other than 1 is needed"
  "10 8 100 1 1 GEOMETRIC ''|rho '': a number is needed"
  "10 2000 100 1 1 GEOMETRIC 2|rho '2': a number > 0 other than 1 is needed, rho^2000 finite"
  "10 8 100 1 1 LINEAR 3 1|alpha '3', beta '1': beta > 0 and alpha <= beta are needed"
  "10 8 100 1 1 PATCH 3 1 0 2|right '1': an integer from 4 to 7 is needed"
  "10 8 100 1 1 PATCH 0 2 0 8|top '8': an integer from 1 to 7 is needed"
)
for c in "${cases[@]}"; do
  args=${c%%|*} want=${c#*|}
  eval "set -- $args"
  out=$(timeout 30 "$orig" "$@" 2>&1)
  expect "${orig##*/} $args" $? "$out" "$want"
  out=$(COMPAS_TIMEOUT=20 timeout 60 "$run" -n 2 -t 1 "$port" "$@" 2>&1)
  expect "${port##*/} $args" $? "$out" "$want"
done
out=$(COMPAS_TIMEOUT=20 timeout 60 "$run" -n 3 -t 1 "$port" 2 2 100 0 0 SINUSOIDAL 2>&1)
expect "${port##*/} on 3 processes, grid size 2" $? "$out" \
  "2 columns over 3 processes leave some process without any"
[[ $fail -eq 0 ]] && echo PASS
exit $fail
