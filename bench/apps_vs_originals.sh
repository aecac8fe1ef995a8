#!/usr/bin/env bash
# The mini-applications' compas ports against their originals, on this host: the OpenMP original
# at 1 process x T threads and the plain MPI version at P processes x 1 thread, each beside the
# port at the same shape (compas-run). Rounds alternate which of the two runs first; the table
# gives the median over the rounds of each side's time and original / port (above 1: the port is
# faster). Not a test: it prints a table and never fails on a number.
#   sparse CG (apps/examples/sparse_cg): spcg_openmp, spcg_mpi, spcg_compas (C: spcg_openmp_c,
#     spcg_compas_c); the times are the solve's, the setup's ("time setup S s, solve T s") and
#     the program's (setup + solve of the same run).
#   multigrid (apps/examples/multigrid): mg_openmp, mg_mpi, mg_compas; the time is the V-cycles'
#     ("time = T s").
# The originals' threads and processes are pinned as compas pins the ports' (OpenMP threads
# OMP_PROC_BIND=close OMP_PLACES=cores, MPI processes --bind-to core).
# A program that is not built is left out with a line saying so.
# Usage: bench/apps_vs_originals.sh [BUILD_DIR]
#   ROUNDS=5 T=2 P=2 SPCG_ARGS="--nx 64 --ny 64 --nz 64 --iters 50" MG_ARGS="W"
set -u
build=${1:-build/release}
bin=$build/bin
rounds=${ROUNDS:-5}
threads=${T:-2}
procs=${P:-2}
spcg_args=${SPCG_ARGS:---nx 64 --ny 64 --nz 64 --iters 50}
mg_args=${MG_ARGS:-W}
run=$bin/compas-run
mpirun=$(command -v mpirun || true)
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT

median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

# The time FIELD ("solve", "setup", "program" or "mg") from one run's output on stdin.
time_of() {
  case $1 in
    solve) sed -nE 's/.*time setup [0-9.e+-]+ s, solve ([0-9.e+-]+) s.*/\1/p' ;;
    setup) sed -nE 's/.*time setup ([0-9.e+-]+) s, solve.*/\1/p' ;;
    program) sed -nE 's/.*time setup ([0-9.e+-]+) s, solve ([0-9.e+-]+) s.*/\1 \2/p' |
      awk '{printf "%.6f\n", $1 + $2}' ;;
    mg) sed -nE 's/.*time = *([0-9.eE+-]+) s.*/\1/p' ;;
  esac | tail -1
}

# One pair: NAME, FIELDS, then the original's command and the port's, separated by "--".
pair() {
  local name=$1 fields=$2
  shift 2
  local -a orig=() port=()
  while [[ $1 != -- ]]; do orig+=("$1"); shift; done
  shift
  port=("$@")
  for prog in "${orig[@]}" "${port[@]}"; do
    if [[ $prog == */bin/* && ! -x $prog ]]; then
      echo "| $name | (not built: $(basename "$prog")) | | | |"
      return
    fi
  done
  : >"$raw/o" && : >"$raw/p"
  for ((r = 0; r < rounds; r++)); do
    local first=o
    ((r % 2)) && first=p
    for side in $first $([[ $first == o ]] && echo p || echo o); do
      if [[ $side == o ]]; then out=$("${orig[@]}" 2>&1) || { echo "| $name | original failed | | | |"; return; }
      else out=$("${port[@]}" 2>&1) || { echo "| $name | port failed | | | |"; return; }; fi
      for f in $fields; do echo "$f $(time_of "$f" <<<"$out")" >>"$raw/$side"; done
    done
  done
  for f in $fields; do
    local to tp
    to=$(awk -v f="$f" '$1 == f {print $2}' "$raw/o" | median)
    tp=$(awk -v f="$f" '$1 == f {print $2}' "$raw/p" | median)
    echo "| $name ($f) | $to | $tp | $(awk -v a="$to" -v b="$tp" 'BEGIN {printf "%.3f", a / b}') | $rounds |"
  done
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cpus; T=$threads P=$procs"
echo
echo "| pair | original (s) | port (s) | original / port | rounds |"
echo "|---|---|---|---|---|"
# 1 process x T threads: the OpenMP originals.
omp=(env OMP_NUM_THREADS="$threads" OMP_PROC_BIND=close OMP_PLACES=cores)
pair "spcg C++ 1x$threads vs OpenMP" "solve setup program" "${omp[@]}" "$bin/spcg_openmp" \
  $spcg_args -- "$run" -n 1 -t "$threads" "$bin/spcg_compas" $spcg_args
pair "spcg C 1x$threads vs OpenMP" "solve setup program" "${omp[@]}" "$bin/spcg_openmp_c" \
  $spcg_args -- "$run" -n 1 -t "$threads" "$bin/spcg_compas_c" $spcg_args
pair "mg 1x$threads vs OpenMP" "mg" "${omp[@]}" "$bin/mg_openmp" $mg_args \
  -- "$run" -n 1 -t "$threads" "$bin/mg_compas" $mg_args
# P processes x 1 thread: the plain MPI versions.
if [[ -z $mpirun ]]; then
  echo "| P x 1 pairs | (no mpirun) | | | |"
else
  [[ $(id -u) -eq 0 ]] && mpirun+=" --allow-run-as-root"
  mpi=($mpirun --oversubscribe --bind-to core -n "$procs" -x OMP_NUM_THREADS=1)
  pair "spcg ${procs}x1 vs MPI" "solve setup program" "${mpi[@]}" "$bin/spcg_mpi" $spcg_args \
    -- "$run" -n "$procs" -t 1 "$bin/spcg_compas" $spcg_args
  pair "mg ${procs}x1 vs MPI" "mg" "${mpi[@]}" "$bin/mg_mpi" $mg_args \
    -- "$run" -n "$procs" -t 1 "$bin/mg_compas" $mg_args
fi
