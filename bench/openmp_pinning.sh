#!/usr/bin/env bash
# OpenMP after compas::Runtime: the same `#pragma omp parallel for` (openmp_triad) timed
#   plain    OpenMP alone (OMP_NUM_THREADS=T, libgomp's default: unbound threads),
#   pinned   after a Runtime of T threads, which pins OpenMP's threads like its team (the default),
#   leave    after a Runtime with COMPAS_OPENMP=leave: OpenMP's threads inherit the one CPU of
#            the main thread (what every program got before the Runtime pinned them),
# alternating the three ROUNDS times, then the median seconds of each and the median over the
# rounds of the ratios pinned / plain and leave / plain. Not a test: it prints measurements.
#
#   bench/openmp_pinning.sh [BIN_DIR]        (default build/release/bin)
#   ROUNDS=5 THREADS=2 MIB=64 REPEATS=50 FLOPS=0  (FLOPS=K: K multiply-adds per element instead
#                                                  of the triad: bound by the cores, not memory)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../build/release/bin}
exe=$bin/openmp_triad
rounds=${ROUNDS:-5}
threads=${THREADS:-2}
args=(--mib "${MIB:-64}" --repeats "${REPEATS:-50}")
if [[ ${FLOPS:-0} != 0 ]]; then args+=(--flops "$FLOPS"); fi
if [[ ! -x $exe ]]; then
  echo "openmp_pinning.sh: $exe not found (build the release preset first)" >&2
  exit 2
fi

# Nothing from the caller's environment decides the binding or the thread count.
clean=(env -u OMP_PROC_BIND -u OMP_PLACES -u GOMP_CPU_AFFINITY -u OMP_NUM_THREADS
       -u COMPAS_THREADS -u COMPAS_OPENMP -u COMPAS_CPUS -u COMPAS_BIND)
seconds() { sed -n 's/^seconds=\([0-9.]*\) .*/\1/p'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

plain=() pinned=() leave=() r_pinned=() r_leave=()
echo "openmp_triad ${args[*]}, $threads threads, $rounds rounds on $(nproc) cpus"
printf '%-6s %10s %10s %10s\n' round plain pinned leave
for ((i = 1; i <= rounds; ++i)); do
  p=$("${clean[@]}" OMP_NUM_THREADS="$threads" "$exe" "${args[@]}" | seconds)
  q=$("${clean[@]}" COMPAS_THREADS="$threads" "$exe" --runtime "${args[@]}" | seconds)
  l=$("${clean[@]}" COMPAS_THREADS="$threads" COMPAS_OPENMP=leave "$exe" --runtime "${args[@]}" |
      seconds)
  plain+=("$p") pinned+=("$q") leave+=("$l")
  r_pinned+=("$(awk -v a="$q" -v b="$p" 'BEGIN { print a / b }')")
  r_leave+=("$(awk -v a="$l" -v b="$p" 'BEGIN { print a / b }')")
  printf '%-6s %10.4f %10.4f %10.4f\n' "$i" "$p" "$q" "$l"
done
m() { printf '%s\n' "$@" | median; }
printf '%-6s %10.4f %10.4f %10.4f\n' median "$(m "${plain[@]}")" "$(m "${pinned[@]}")" \
  "$(m "${leave[@]}")"
printf 'median ratio pinned / plain = %.3f   leave / plain = %.3f\n' "$(m "${r_pinned[@]}")" \
  "$(m "${r_leave[@]}")"
