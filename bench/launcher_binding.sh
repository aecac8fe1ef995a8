#!/usr/bin/env bash
# launcher_binding.sh: the same job under another launcher against compas-run, now that the
# Runtime splits the cores of processes the launcher did not bind apart. Each launcher's run and
# compas-run's ALTERNATE (the order flips every round), ROUNDS rounds:
#
#   mpirun    mpirun -np P --bind-to none compas run cg --class A   (COMPAS_THREADS=T)
#   srun      srun -n P --mpi=pmix --cpu-bind=none compas run cg --class A, when a Slurm answers
#             here (sinfo) or SRUN=1; SRUN=0 leaves it out
#   against   compas-run -n P -t T compas run cg --class A
#
# Every run has COMPAS_REPORT_BINDING=1: its binding lines stay in its log, and a run whose
# processes put two threads on one cpu (when the job fits the cpus) is counted as failed, as is
# one that does not exit 0 with a "verified:" line. Per launcher: the median wall time (the whole
# process, launcher included, with bash's monotonic EPOCHREALTIME), the median kernel time and
# Mop/s from compas's JSON, and the medians of the per-round ratios against compas-run (wall
# time launcher / compas-run, and Mop/s launcher / compas-run). A measurement, not a test: it
# never fails on a number. Usage:
#   bench/launcher_binding.sh [OUTDIR]     # about 1 minute with ROUNDS=5 on 2 cores
# Environment: BUILD (default build/release), ROUNDS (5), P (2), T (1), CLASS (A), MPIRUN
# (mpirun), MPIRUN_OPTS ("--oversubscribe --allow-run-as-root"), SRUN (auto: 1 or 0).
set -uo pipefail

if [[ $# -gt 1 || "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,21p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="${BUILD:-build/release}"
[[ "$build" = /* ]] || build="$root/$build"
bin="$build/bin"
rounds="${ROUNDS:-5}"
procs="${P:-2}" threads="${T:-1}" class="${CLASS:-A}"
mpirun="${MPIRUN:-$(command -v mpirun || true)}"
read -r -a mpi_opts <<<"${MPIRUN_OPTS:---oversubscribe --allow-run-as-root}"
for v in "$rounds" "$procs" "$threads"; do
  [[ "$v" =~ ^[1-9][0-9]*$ ]] ||
    { echo "launcher_binding.sh: '$v' is not allowed: ROUNDS, P and T are integers >= 1" >&2; exit 2; }
done
[[ "$class" =~ ^[SWABCT]$ ]] ||
  { echo "launcher_binding.sh: CLASS='$class' is not allowed: expected S, W, A, B, C or T" >&2; exit 2; }
srun_mode="${SRUN-auto}"
[[ "$srun_mode" == auto || "$srun_mode" == 0 || "$srun_mode" == 1 ]] ||
  { echo "launcher_binding.sh: SRUN='$srun_mode' is not allowed: expected 0 or 1" >&2; exit 2; }
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
for exe in compas compas-run; do
  [[ -x "$bin/$exe" ]] || { echo "launcher_binding.sh: $bin/$exe not found: build first" >&2; exit 2; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The jobs take their shape from the command lines below, nothing else.
unset $(compgen -e | grep -E '^(COMPAS_|OMP_)') 2>/dev/null || true

job=("$bin/compas" run cg --class "$class")
launchers=()
if [[ -n "$mpirun" ]] && timeout 30 "$mpirun" "${mpi_opts[@]}" -np 2 true >/dev/null 2>&1; then
  launchers+=("mpirun|$mpirun ${mpi_opts[*]} --bind-to none -np $procs")
else
  echo "(mpirun cannot start processes here: left out)"
fi
if [[ "$srun_mode" == 1 ]] || { [[ "$srun_mode" == auto ]] && command -v sinfo >/dev/null &&
     timeout 10 sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix)'; }; then
  launchers+=("srun|srun -n $procs --mpi=pmix --cpu-bind=none -t 10")
else
  echo "(no Slurm answers here: srun left out)"
fi
[[ ${#launchers[@]} -gt 0 ]] || { echo "launcher_binding.sh: no launcher to compare" >&2; exit 1; }
reference="$bin/compas-run -n $procs -t $threads"

# One timed run: prints "WALL_SECONDS KERNEL_SECONDS MOPS", or "WALL - -" when it failed (exit
# status, no verified line, unreadable JSON, or threads of the job sharing a cpu it did not need
# to share). The output goes to LOG, the JSON beside it.
timed() {  # LOG COMMAND...
  local log=$1 start end rc
  shift
  start=$EPOCHREALTIME
  COMPAS_THREADS=$threads COMPAS_REPORT_BINDING=1 timeout 600 "$@" --json "${log%.log}.json" \
    >"$log" 2>&1
  rc=$?
  end=$EPOCHREALTIME
  local wall
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }')
  if [[ $rc -ne 0 ]] || ! grep -q '^verified: ' "$log" || ! cpus_apart "$log"; then
    echo "$wall - -"
    return
  fi
  python3 - "${log%.log}.json" "$wall" <<'PY' 2>/dev/null || echo "$wall - -"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
print(sys.argv[2], r["seconds"], r["mops"])
PY
}

# Whether the binding lines in LOG put every thread on a cpu of its own (always true when the
# job has more threads than cpus).
cpus_apart() {  # LOG
  local cpus
  cpus=$(sed -n 's/^compas: binding rank [0-9]* on host [^ ]*: .*; threads \([^;]*\);.*/\1/p' "$1" |
    tr ',' '\n' | sed -n 's/.*->cpu \([0-9]*\)$/\1/p')
  [[ $(grep -c . <<<"$cpus") -eq $((procs * threads)) ]] || return 1
  [[ $((procs * threads)) -gt $(nproc) ]] && return 0
  [[ $(sort -u <<<"$cpus" | grep -c .) -eq $((procs * threads)) ]]
}

csv="$out/rounds.csv"
echo "launcher,round,wall_s,kernel_s,mops,ref_wall_s,ref_kernel_s,ref_mops" >"$csv"
echo "BUILD=$build ROUNDS=$rounds P=$procs T=$threads CLASS=$class; against: ${reference//$bin\//}"
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
for l in "${launchers[@]}"; do
  IFS='|' read -r name cmd <<<"$l"
  read -r -a lcmd <<<"$cmd"
  read -r -a rcmd <<<"$reference"
  echo "$name: ${lcmd[*]} ${job[*]//$bin\//}" >&2
  for ((r = 0; r < rounds; r++)); do
    if ((r % 2 == 0)); then
      a=$(timed "$out/${name}_$r.log" "${lcmd[@]}" "${job[@]}")
      b=$(timed "$out/${name}_ref_$r.log" "${rcmd[@]}" "${job[@]}")
    else
      b=$(timed "$out/${name}_ref_$r.log" "${rcmd[@]}" "${job[@]}")
      a=$(timed "$out/${name}_$r.log" "${lcmd[@]}" "${job[@]}")
    fi
    echo "$name,$r,${a// /,},${b// /,}" >>"$csv"
  done
done

python3 - "$csv" <<'EOF'
import csv, statistics, sys
med = statistics.median
rows = list(csv.reader(open(sys.argv[1])))[1:]
by = {}
for name, r, *v in rows:
    by.setdefault(name, []).append(v)
print()
print("| launcher | rounds | wall s | cg s | Mop/s | compas-run wall s | compas-run cg s "
      "| compas-run Mop/s | wall / compas-run | Mop/s / compas-run |")
print("|---|---|---|---|---|---|---|---|---|---|")
for name, runs in by.items():
    ok = [[float(x) for x in v] for v in runs if "-" not in v]
    note = f" ({len(runs) - len(ok)} failed round(s): see the logs)" if len(ok) < len(runs) else ""
    if not ok:
        print(f"| {name} | 0 | | | | | | | | |{note}")
        continue
    col = lambda i: med([v[i] for v in ok])
    wall_ratio = med([v[0] / v[3] for v in ok])
    mops_ratio = med([v[2] / v[5] for v in ok])
    print(f"| {name} | {len(ok)} | {col(0):.3f} | {col(1):.3f} | {col(2):.1f} | {col(3):.3f} "
          f"| {col(4):.3f} | {col(5):.1f} | {wall_ratio:.3f} | {mops_ratio:.3f} |{note}")
print()
print("ratios: the medians of the per-round ratios; wall / compas-run < 1 and Mop/s / compas-run "
      "> 1 mean the launcher's job was faster")
EOF
echo "load average before: ${load_before:-?}, after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" \
  "($(nproc) CPUs; other work on the host makes the rounds noisy)"
echo "per-round times, logs and JSON in $out"
