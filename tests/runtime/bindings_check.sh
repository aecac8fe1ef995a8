# Checks on what a job printed with COMPAS_REPORT_BINDING=1, for the launcher tests
# (mpi_bindings.sh, tests/slurm/bindings.sh). Source it, then call
#   check_job WHAT OUTPUT RC P T SPLIT
# WHAT names the job in messages, OUTPUT is everything it printed (stdout and stderr), RC its exit
# status, P x T its shape, SPLIT "yes" when the launcher surely gave every process the same cpus
# (so the processes must split them), "auto" when the printed masks decide. It checks:
#   - the job succeeded (exit 0, compas run's "verified:" line);
#   - one whole binding line per rank, each thread on one cpu inside the process's cpus, those
#     inside its affinity mask;
#   - no cpu holds threads of two processes (unless the processes outnumber the cpus), and, when
#     the job has no more threads than the cpus its processes were given, no cpu holds two
#     threads at all;
#   - the host split's line ("each takes its own share") exactly when the processes of the host
#     were given the same mask;
#   - the oversubscription line ("P processes × T threads on ...: oversubscribed, waits will back
#     off") exactly when the threads outnumber the cpus of the masks, in compas-run's words
#     (compared with what $compas_run says for P x T, when set and the masks cover the machine).
# Adds to $failures; prints what it found.

failures=${failures:-0}
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

# "0-2,5" -> "0 1 2 5"
expand_cpus() {
  local out=() part i
  local -a parts
  IFS=, read -ra parts <<<"$1"
  for part in "${parts[@]}"; do
    if [[ $part == *-* ]]; then
      for ((i = ${part%-*}; i <= ${part#*-}; i++)); do out+=("$i"); done
    else
      out+=("$part")
    fi
  done
  echo "${out[*]}"
}

# The message compas-run prints for P processes x T threads on this machine (after its prefix).
compas_run_note() {  # COMPAS_RUN P T
  "$1" -n "$2" -t "$3" true 2>&1 >/dev/null | sed -n 's/^compas-run: \(.*oversubscribed.*\)$/\1/p'
}

check_job() {  # WHAT OUTPUT RC P T SPLIT
  local what=$1 out=$2 rc=$3 P=$4 T=$5 split=$6
  local before=$failures N
  N=$(nproc)
  [[ $rc -eq 0 ]] || fail "$what: exited $rc"
  grep -q '^verified: ' <<<"$out" || fail "$what: no 'verified:' line"
  local re='^compas: binding rank ([0-9]+) on host ([^ ]+): cpus ([0-9,-]+) \(affinity ([0-9,-]+)\); threads ([^;]+); openmp (.*)$'
  local -A seen_rank=() owner=() threads_on=() mask_of_host=() same_mask=() union=()
  local lines=0 total=0 line r host cpus mask item tid cpu c
  while IFS= read -r line; do
    [[ $line == "compas: binding "* ]] || continue
    if ! [[ $line =~ $re ]]; then
      fail "$what: a binding line that does not parse: '$line'"
      continue
    fi
    lines=$((lines + 1))
    r=${BASH_REMATCH[1]} host=${BASH_REMATCH[2]}
    cpus=" $(expand_cpus "${BASH_REMATCH[3]}") " mask=" $(expand_cpus "${BASH_REMATCH[4]}") "
    local tlist=${BASH_REMATCH[5]}
    [[ -z "${seen_rank[$r]:-}" ]] || fail "$what: rank $r reported twice"
    seen_rank[$r]=1
    for c in $cpus; do
      [[ $mask == *" $c "* ]] || fail "$what: rank $r uses cpu $c outside its affinity$mask"
    done
    for c in $mask; do union[$host:$c]=1; done
    if [[ -z "${mask_of_host[$host]:-}" ]]; then
      mask_of_host[$host]=$mask same_mask[$host]=1
    elif [[ "${mask_of_host[$host]}" != "$mask" ]]; then
      same_mask[$host]=0
    fi
    local n=0
    local -a items
    IFS=';' read -ra items <<<"${tlist//, /;}"
    for item in "${items[@]}"; do
      if ! [[ $item =~ ^([0-9]+)-\>cpu\ ([0-9]+)$ ]]; then
        fail "$what: rank $r thread '$item' is not pinned to one cpu"
        continue
      fi
      tid=${BASH_REMATCH[1]} cpu=${BASH_REMATCH[2]}
      [[ $tid -eq $n ]] || fail "$what: rank $r lists thread $tid in place of $n"
      n=$((n + 1))
      total=$((total + 1))
      [[ $cpus == *" $cpu "* ]] || fail "$what: rank $r thread $tid on cpu $cpu outside its cpus$cpus"
      local key=$host:$cpu
      threads_on[$key]=$((${threads_on[$key]:-0} + 1))
      if [[ $P -le $N && -n "${owner[$key]:-}" && "${owner[$key]}" != "$r" ]]; then
        fail "$what: cpu $cpu on $host holds threads of ranks ${owner[$key]} and $r"
      fi
      owner[$key]=$r
    done
    [[ $n -eq $T ]] || fail "$what: rank $r has $n threads, not $T"
  done <<<"$out"
  [[ $lines -eq $P ]] || fail "$what: $lines binding lines for $P processes"
  for ((r = 0; r < P; r++)); do
    [[ -n "${seen_rank[$r]:-}" ]] || fail "$what: no binding line for rank $r"
  done
  local hosts=${#mask_of_host[@]} ncpus=${#union[@]}
  if [[ $((P * T)) -le $ncpus ]]; then
    local key
    for key in "${!threads_on[@]}"; do
      [[ ${threads_on[$key]} -eq 1 ]] ||
        fail "$what: cpu ${key#*:} holds ${threads_on[$key]} threads (the job fits its $ncpus cpus)"
    done
  fi
  # The host split: said once per host where the processes were given the same mask.
  local want_split=0 h
  for h in "${!same_mask[@]}"; do [[ ${same_mask[$h]} -eq 1 ]] && want_split=$((want_split + 1)); done
  [[ $P -ge 2 ]] || want_split=0
  if [[ $split == yes && $want_split -ne $hosts ]]; then
    fail "$what: the launcher should have given every process the same cpus"
  fi
  local got_split
  got_split=$(grep -c "^compas: the [0-9]* processes on this host were all given cpus .*each takes its own share" <<<"$out")
  [[ $got_split -eq $want_split ]] ||
    fail "$what: $got_split host-split lines, expected $want_split"
  # More threads than the cpus of the masks: compas-run's line, once (one host here).
  local notes want_note=0
  notes=$(sed -En 's/^compas(-run)?: (.*: oversubscribed, waits will back off)$/\2/p' <<<"$out")
  [[ $((P * T)) -gt $ncpus ]] && want_note=1
  [[ $(grep -c . <<<"$notes") -eq $want_note ]] ||
    fail "$what: $(grep -c . <<<"$notes") oversubscription lines, expected $want_note"
  if [[ $want_note -eq 1 && -n "${compas_run:-}" && $ncpus -eq $N ]]; then
    local ref
    ref=$(compas_run_note "$compas_run" "$P" "$T")
    [[ "$notes" == "$ref" ]] || fail "$what: says '$notes' where compas-run says '$ref'"
  fi
  if [[ $failures -eq $before ]]; then
    echo "ok: $what ($lines binding lines, $total threads on $ncpus cpus)"
  else
    echo "--- $what printed:"
    echo "$out"
    echo "---"
  fi
}
