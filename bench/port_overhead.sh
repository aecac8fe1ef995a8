#!/usr/bin/env bash
# port_overhead.sh: what the porting layer (DistArray, exchange_halos()) costs against the same
# program written without it, on this host. Each pair runs the layer's program and its baseline
# ALTERNATELY (the order flips every round), ROUNDS rounds, same size and job shape, and times
# the whole process (launcher included) with bash's monotonic EPOCHREALTIME:
#
#   heat      1 x 2, 2 x 1  heat_hybrid      vs heat_window     (compas-run -n P -t T)
#   jacobi2d  1 x 2, 2 x 1  jacobi2d_hybrid  vs jacobi2d_window (compas-run -n P -t T)
#   jacobi2d  mpirun 2 x 1, 1 x 2  jacobi2d_hybrid (COMPAS_THREADS=T) vs jacobi2d_mpi
#                                  (OMP_NUM_THREADS=T), both under mpirun -np P, for each
#                                  MPI_BIND mode: none (--bind-to none) and/or cores
#                                  (--map-by slot:PE=T --bind-to core: T cores per process)
#
# Per pair: the median seconds of each, the median of the per-round ratios layer / baseline
# (time) and baseline / layer (the layer's speed ratio), against the target (>= 0.95 of the
# hand-written window version's speed, >= 1.0 of MPI's). Every run must exit 0 and print the
# "result = " line; the two programs of a pair must print the same value. A measurement, not a
# test: it never fails on a number. Usage:
#   bench/port_overhead.sh [OUTDIR]          # about 3 minutes with ROUNDS=5 on 2 cores
# Environment: BUILD (default build/release), ROUNDS (7), HEAT ("4000000 1000": n steps),
# JACOBI ("2000 300"), MPIRUN (mpirun), MPIRUN_OPTS ("--oversubscribe --allow-run-as-root"),
# MPI_BIND ("none cores": both; or one), PAIRS (a regex over the pair names in the table).
set -uo pipefail

if [[ $# -gt 1 || "${1:-}" == -h || "${1:-}" == --help ]]; then
  sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="${BUILD:-build/release}"
[[ "$build" = /* ]] || build="$root/$build"
bin="$build/bin"
rounds="${ROUNDS:-7}"
read -r -a heat_args <<<"${HEAT:-4000000 1000}"
read -r -a jacobi_args <<<"${JACOBI:-2000 300}"
mpirun="${MPIRUN:-$(command -v mpirun || true)}"
read -r -a mpi_opts <<<"${MPIRUN_OPTS:---oversubscribe --allow-run-as-root}"
read -r -a mpi_binds <<<"${MPI_BIND:-none cores}"
for mode in "${mpi_binds[@]}"; do
  [[ "$mode" == none || "$mode" == cores ]] ||
    { echo "port_overhead.sh: MPI_BIND mode '$mode' is not none or cores" >&2; exit 2; }
done
filter="${PAIRS:-.}"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
for exe in compas-run heat_hybrid heat_window jacobi2d_hybrid jacobi2d_window; do
  [[ -x "$bin/$exe" ]] || { echo "port_overhead.sh: $bin/$exe not found: build first" >&2; exit 2; }
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The programs take their shape from the command line below, nothing else.
unset $(compgen -e | grep -E '^(COMPAS_|OMP_NUM_THREADS$)') 2>/dev/null || true

# Pairs: NAME|TARGET|LAYER COMMAND|BASELINE COMMAND (commands split on spaces; @BIN@ = $bin).
crun="@BIN@/compas-run"
mrun="${mpirun} ${mpi_opts[*]}"
bind_opts() {  # MODE T: mpirun's placement options
  case $1 in
    none) echo "--bind-to none" ;;
    cores) echo "--map-by slot:PE=$2 --bind-to core" ;;
  esac
}
pairs=(
  "heat 1x2 window|0.95|$crun -n 1 -t 2 @BIN@/heat_hybrid ${heat_args[*]}|$crun -n 1 -t 2 @BIN@/heat_window ${heat_args[*]}"
  "heat 2x1 window|0.95|$crun -n 2 -t 1 @BIN@/heat_hybrid ${heat_args[*]}|$crun -n 2 -t 1 @BIN@/heat_window ${heat_args[*]}"
  "jacobi2d 1x2 window|0.95|$crun -n 1 -t 2 @BIN@/jacobi2d_hybrid ${jacobi_args[*]}|$crun -n 1 -t 2 @BIN@/jacobi2d_window ${jacobi_args[*]}"
  "jacobi2d 2x1 window|0.95|$crun -n 2 -t 1 @BIN@/jacobi2d_hybrid ${jacobi_args[*]}|$crun -n 2 -t 1 @BIN@/jacobi2d_window ${jacobi_args[*]}"
)
if [[ -n "$mpirun" && -x "$bin/jacobi2d_mpi" ]] &&
   timeout 30 $mrun -np 2 true >/dev/null 2>&1; then
  for mode in "${mpi_binds[@]}"; do
    for shape in "2 1" "1 2"; do
      set -- $shape
      m="$mrun $(bind_opts "$mode" "$2") -np $1"
      pairs+=("jacobi2d mpirun ${1}x$2 $mode|1.0|env COMPAS_THREADS=$2 OMP_NUM_THREADS=$2 $m @BIN@/jacobi2d_hybrid ${jacobi_args[*]}|env OMP_NUM_THREADS=$2 $m @BIN@/jacobi2d_mpi ${jacobi_args[*]}")
    done
  done
else
  echo "(no usable mpirun or no jacobi2d_mpi (built with COMPAS_WITH_MPI): the MPI pairs are left out)"
fi

# One timed run: prints "SECONDS VALUE" (VALUE "-" when it failed); the output goes to LOG.
timed() {  # LOG COMMAND...
  local log=$1 start end rc value
  shift
  start=$EPOCHREALTIME
  timeout 300 "$@" >"$log" 2>&1
  rc=$?
  end=$EPOCHREALTIME
  value=$(sed -n 's/.*result = \([^,]*\),.*/\1/p' "$log" | head -1)
  [[ $rc -eq 0 && -n "$value" ]] || value=-
  echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }') $value"
}

csv="$out/rounds.csv"
echo "pair,round,layer_s,baseline_s,layer_value,baseline_value" >"$csv"
echo "BUILD=$build ROUNDS=$rounds HEAT='${heat_args[*]}' JACOBI='${jacobi_args[*]}'" \
  "MPIRUN_OPTS='${mpi_opts[*]}' MPI_BIND='${mpi_binds[*]}'"
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
for p in "${pairs[@]}"; do
  IFS='|' read -r name target layer base <<<"$p"
  [[ "$name" =~ $filter ]] || continue
  read -r -a lcmd <<<"${layer//@BIN@/$bin}"
  read -r -a bcmd <<<"${base//@BIN@/$bin}"
  tag=${name// /_}
  echo "$name: ${lcmd[*]//$bin\//}  vs  ${bcmd[*]//$bin\//}" >&2
  for ((r = 0; r < rounds; r++)); do
    if ((r % 2 == 0)); then
      l=$(timed "$out/${tag}_layer_$r.log" "${lcmd[@]}")
      b=$(timed "$out/${tag}_base_$r.log" "${bcmd[@]}")
    else
      b=$(timed "$out/${tag}_base_$r.log" "${bcmd[@]}")
      l=$(timed "$out/${tag}_layer_$r.log" "${lcmd[@]}")
    fi
    read -r lt lv <<<"$l"
    read -r bt bv <<<"$b"
    echo "$name,$r,$lt,$bt,$lv,$bv" >>"$csv"
  done
  echo "$name,target,$target,,," >>"$csv"
done

python3 - "$csv" <<'EOF'
import csv, statistics, sys
rows = list(csv.reader(open(sys.argv[1])))[1:]
pairs, targets = {}, {}
for name, r, lt, bt, lv, bv in rows:
    if r == "target":
        targets[name] = float(lt); continue
    pairs.setdefault(name, []).append((float(lt), float(bt), lv, bv))
med = statistics.median
print()
print(f"{'pair':26s} {'rounds':>6s} {'layer s':>8s} {'base s':>8s} {'layer/base':>10s} "
      f"{'speed ratio':>11s} {'target':>7s}")
print(f"{'':26s} {'':>6s} {'(median)':>8s} {'(median)':>8s} {'time':>10s} "
      f"{'base/layer':>11s}")
for name, runs in pairs.items():
    ok = [x for x in runs if x[2] != "-" and x[3] != "-"]
    bad = len(runs) - len(ok)
    note = f"  {bad} failed round(s), see the logs" if bad else ""
    if any(x[2] != x[3] for x in ok):
        note += "  RESULTS DIFFER"
    if not ok:
        print(f"{name:26s} {0:6d}  no successful round{note}"); continue
    lt = med([x[0] for x in ok]); bt = med([x[1] for x in ok])
    time_ratio = med([x[0] / x[1] for x in ok]); speed = med([x[1] / x[0] for x in ok])
    t = targets.get(name, 1.0)
    verdict = "ok" if speed >= t else "below"
    print(f"{name:26s} {len(ok):6d} {lt:8.3f} {bt:8.3f} {time_ratio:10.3f} {speed:11.3f} "
          f"{'>= ' + format(t, '.2f'):>7s} {verdict}{note}")
print()
print("speed ratio (baseline time / layer time): the median of the per-round ratios; >= target "
      "means the layer is at least that fast")
EOF
echo "load average before: ${load_before:-?}, after: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)" \
  "($(nproc) CPUs; other work on the host makes the rounds noisy)"
echo "per-round times and logs in $out"
