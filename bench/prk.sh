#!/usr/bin/env bash
# prk.sh: compas's ports of the Parallel Research Kernels (apps/examples/prk/) against PRK's own
# MPI1 and MPI+OpenMP versions of the same kernels, on this host. A measurement, not a test.
#
# PRK is built from a checkout (PRK_CHECKOUT: its common/, include/, MPI1/ and MPIOPENMP/ are
# copied to a temporary directory and built there with mpicc and PRK_FLAGS, default -O3, the flags
# of compas's release preset: the same flags for both, or -march=native's AVX-512 code alone
# makes PRK's nstream 12% faster here; nothing is written to the checkout). compas's ports are taken from BUILD/bin
# (built there first when missing). Each pair runs the same problem, ROUNDS times, ALTERNATING the
# two programs (the order flips every round):
#
#   2x1  compas-run -n 2 -t 1 prk_K_compas  vs  mpirun -np 2 MPI1/K  and  vs  MPIOPENMP/K (1 thread)
#   1x2  compas-run -n 1 -t 2 prk_K_compas  vs  mpirun -np 1 MPIOPENMP/K with 2 threads
#
# A kernel PRK has no MPIOPENMP version of (reduce, sparse, random, dgemm, pic) is compared with MPI1 at 2
# processes in both shapes: the same cores, PRK's own best way to use them.
#
# PRK's processes are bound by mpirun to T cores each (--map-by slot:PE=T --bind-to core; its
# OpenMP threads with OMP_PROC_BIND=close OMP_PLACES=cores); compas-run pins compas's. Every run
# must exit 0 and print "Solution validates"; the rate is PRK's "Rate (MB/s)" (nstream,
# transpose), "Rate (MFlops/s)" (stencil, p2p, reduce, sparse, dgemm), "Rate (GUPS/s)" (random)
# or "Rate (Mparticles_moved/s)" (pic, against MPI1/PIC-static) line, which both print. The table gives the median rate of each and the ratio compas / PRK of the
# medians. PRK's MPI versions have the stencil's radius at compile time and the MPI1 one only the
# star shape: the stencil pairs are star stencils of RADIUS.
#
# Then the lines of code of each kernel: the OpenMP original, the port, the header both share
# (prk_common.hpp: arguments, verification, output; pic's pair also prk_pic.hpp: its placing,
# move and check) and PRK's MPIOPENMP and MPI1 sources, all by
# one rule (scripts/code-lines.sh): a line counts when something other than white space and
# comments is left on it; //, ///, //! and /* ... */ blocks are comments; preprocessor lines
# count (PRK's #if VERBOSE blocks included, as written).
#
# Usage: bench/prk.sh PRK_CHECKOUT [KERNELS...]
#   (KERNELS: nstream stencil p2p reduce transpose sparse random dgemm pic; default all)
# Environment: BUILD (build/release), ROUNDS (5), NSTREAM ("20 20000000": iterations length),
#   STENCIL ("10 4000": iterations n), RADIUS (2), P2P ("20 4000 4000": iterations m n),
#   REDUCE ("20 4000000": iterations length), TRANSPOSE ("20 4000": iterations order; PRK's MPI
#   versions need an order the process count divides), SPARSE ("20 10 2": iterations lsize
#   radius; PRK's default scrambled indexing, for both), RANDOMACCESS ("16 20": update_ratio
#   log2_tablesize; PRK's MPI1 needs 2^k processes), DGEMM ("10 1000 32": iterations order
#   tile; PRK's MPI1 gets the tile as its outer block, with its local blocking on), PIC ("20 1000
#   1000000 1 1": iterations grid_size particles k m; PRK's MPI1 needs 2k and m within a part),
#   PIC_INIT ("SINUSOIDAL": the initialisation mode and its parameters, e.g. "GEOMETRIC 0.99"),
#   PRK_FLAGS
#   ("-O3"), MPIRUN (mpirun), OUTDIR (logs and per-round rates; default a new temporary
#   directory).
set -uo pipefail

usage() { sed -n '2,/^set -uo/{/^#/p;}' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
bad() { echo "prk.sh: $*" >&2; exit 2; }
[[ $# -ge 1 && "$1" != -h && "$1" != --help ]] || { usage; exit 2; }
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
prk_src=$1
shift
for d in common include MPI1 MPIOPENMP; do
  [[ -d "$prk_src/$d" ]] || bad "PRK_CHECKOUT '$prk_src' has no $d/ (a checkout of PRK is needed)"
done
# Each kernel: PRK's folder, the variable of its sizes, their default and names, its rate's unit,
# and whether PRK has an MPIOPENMP version of it.
declare -A DIR=([nstream]=Nstream [stencil]=Stencil [p2p]=Synch_p2p [reduce]=Reduce
         [transpose]=Transpose [sparse]=Sparse [random]=Random
         [dgemm]=DGEMM [pic]=PIC-static)
declare -A VAR=([nstream]=NSTREAM [stencil]=STENCIL [p2p]=P2P [reduce]=REDUCE [transpose]=TRANSPOSE
                [sparse]=SPARSE [random]=RANDOMACCESS [dgemm]=DGEMM [pic]=PIC)
declare -A DEFAULT=([nstream]="20 20000000" [stencil]="10 4000" [p2p]="20 4000 4000"
                    [reduce]="20 4000000" [transpose]="20 4000" [sparse]="20 10 2"
                    [random]="16 20" [dgemm]="10 1000 32" [pic]="20 1000 1000000 1 1")
declare -A NAMES=([nstream]="iterations length" [stencil]="iterations n" [p2p]="iterations m n"
                  [reduce]="iterations length" [transpose]="iterations order"
                  [sparse]="iterations lsize radius" [random]="update_ratio log2_tablesize"
                  [dgemm]="iterations order tile" [pic]="iterations grid_size particles k m")
declare -A UNIT=([nstream]=MB/s [stencil]=MFlops/s [p2p]=MFlops/s [reduce]=MFlops/s
                 [transpose]=MB/s [sparse]=MFlops/s [random]=GUPS/s [dgemm]=MFlops/s
                 [pic]=Mparticles_moved/s)
declare -A HYBRID=([nstream]=1 [stencil]=1 [p2p]=1 [reduce]=0 [transpose]=1 [sparse]=0
                   [random]=0 [dgemm]=0 [pic]=0)
known="nstream stencil p2p reduce transpose sparse random dgemm pic"
kernels=("$@")
[[ ${#kernels[@]} -gt 0 ]] || read -r -a kernels <<<"$known"
for k in "${kernels[@]}"; do
  [[ -n "$k" && " $known " == *" $k "* ]] || bad "kernel '$k': one of $known is needed"
done
rounds=${ROUNDS-5}
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || bad "ROUNDS '$rounds': a positive integer is needed"
radius=${RADIUS-2}
[[ "$radius" =~ ^[1-5]$ ]] || bad "RADIUS '$radius': 1 to 5 is needed"
declare -A SIZES  # each kernel's sizes, checked: as many positive integers as it has names
for k in "${kernels[@]}"; do
  v=${VAR[$k]}
  SIZES[$k]=${!v-${DEFAULT[$k]}}
  read -r -a given <<<"${SIZES[$k]}"
  read -r -a names <<<"${NAMES[$k]}"
  ok=$([[ ${#given[@]} -eq ${#names[@]} ]] && echo 1)
  for x in "${given[@]}"; do [[ "$x" =~ ^[1-9][0-9]*$ ]] || ok=; done
  [[ -n "$ok" ]] || bad "$v '${SIZES[$k]}': '${NAMES[$k]}', ${#names[@]} positive integers, is needed"
done
for v in BUILD PRK_FLAGS MPIRUN OUTDIR PIC_INIT; do
  [[ -v $v && -z "${!v}" ]] && bad "$v is empty: leave it unset for the default, or give a value"
done
build="${BUILD:-build/release}"
[[ "$build" = /* ]] || build="$root/$build"
bin="$build/bin"
mpirun="${MPIRUN:-$(command -v mpirun || true)}"
[[ -n "$mpirun" && -x "$mpirun" ]] || bad "MPIRUN '${mpirun}': no mpirun to run PRK's versions"
command -v mpicc >/dev/null || bad "mpicc not found: PRK's MPI versions cannot be built"
out="${OUTDIR:-$(mktemp -d)}"
mkdir -p "$out" || bad "OUTDIR '$out' cannot be made"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
unset $(compgen -e | grep -E '^(COMPAS_|OMP_)') 2>/dev/null || true

# ---- PRK, built in a copy ----
prk=$(mktemp -d)
trap 'rm -rf "$prk"' EXIT
cp -r "$prk_src"/{common,include,MPI1,MPIOPENMP} "$prk"/
printf 'CC=gcc -std=c11 -pthread\nMPICC=mpicc\nDEFAULT_OPT_FLAGS=%s\nOPENMPFLAG=-fopenmp\n' \
  "${PRK_FLAGS:--O3}" >"$prk/common/make.defs"
for k in "${kernels[@]}"; do
  dir=${DIR[$k]}
  versions=(MPI1)
  [[ ${HYBRID[$k]} == 1 ]] && versions+=(MPIOPENMP)
  for v in "${versions[@]}"; do
    make -C "$prk/$v/$dir" "$k" RADIUS="$radius" STAR=1 >"$out/build_${v}_$k.log" 2>&1 ||
      bad "building PRK's $v/$dir failed: see $out/build_${v}_$k.log"
  done
done

# ---- compas's ports ----
targets=(compas-run)
for k in "${kernels[@]}"; do targets+=("prk_${k}_compas"); done
for t in "${targets[@]}"; do
  [[ -x "$bin/$t" ]] && continue
  echo "building ${targets[*]} in $build" >&2
  cmake --build "$build" --target "${targets[@]}" >"$out/build_compas.log" 2>&1 ||
    bad "building compas's ports failed: see $out/build_compas.log"
  break
done

# ---- the runs ----
# One run: prints its rate, or "-" when it failed or did not validate; its output goes to LOG.
rate() {  # LOG COMMAND...
  local log=$1
  shift
  timeout 600 "$@" >"$log" 2>&1 && grep -q '^Solution validates$' "$log" &&
    sed -n 's/^Rate ([A-Za-z_]*\/s): *\([0-9.]*\).*/\1/p' "$log" | head -1 | grep . || echo -
}
prk_run() {  # P T: the command that starts PRK's P processes, T cores (and threads) each
  echo "env OMP_NUM_THREADS=$2 OMP_PROC_BIND=close OMP_PLACES=cores $mpirun --allow-run-as-root" \
    "--oversubscribe --map-by slot:PE=$2 --bind-to core -np $1"
}
csv="$out/rounds.csv"
echo "kernel,shape,baseline,round,prk,compas" >"$csv"
load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)
for k in "${kernels[@]}"; do
  dir=${DIR[$k]}
  read -r -a args <<<"${SIZES[$k]}"
  prk_args=("${args[@]}")
  case $k in  # compas's arguments beyond PRK's, and PRK's beyond compas's
    nstream) prk_args+=(0) ;;  # PRK's nstream takes an offset: none
    stencil) args+=("$radius" star) ;;  # PRK's has them at compile time
    dgemm) prk_args+=(1) ;;  # PRK's local block flag: on
    pic) read -r -a init <<<"${PIC_INIT:-SINUSOIDAL}"  # the mode, for both
         args+=("${init[@]}") prk_args+=("${init[@]}") ;;
  esac
  pairs=("2x1|MPI1|$(prk_run 2 1) $prk/MPI1/$dir/$k ${prk_args[*]}|$bin/compas-run -n 2 -t 1")
  if [[ ${HYBRID[$k]} == 1 ]]; then
    pairs+=("2x1|MPIOPENMP|$(prk_run 2 1) $prk/MPIOPENMP/$dir/$k 1 ${prk_args[*]}|$bin/compas-run -n 2 -t 1"
            "1x2|MPIOPENMP|$(prk_run 1 2) $prk/MPIOPENMP/$dir/$k 2 ${prk_args[*]}|$bin/compas-run -n 1 -t 2")
  else
    pairs+=("1x2|MPI1|$(prk_run 2 1) $prk/MPI1/$dir/$k ${prk_args[*]}|$bin/compas-run -n 1 -t 2")
  fi
  for pair in "${pairs[@]}"; do
    IFS='|' read -r shape base pcmd ccmd <<<"$pair"
    read -r -a pcmd <<<"$pcmd"
    read -r -a ccmd <<<"$ccmd"
    ccmd+=("$bin/prk_${k}_compas" "${args[@]}")
    echo "$k $shape: ${pcmd[*]#"$prk"/}  vs  ${ccmd[*]#"$bin"/}" >&2
    for ((r = 0; r < rounds; r++)); do
      tag="$out/${k}_${shape}_${base}_$r"
      order=(prk compas)
      ((r % 2 == 1)) && order=(compas prk)
      for who in "${order[@]}"; do
        case $who in
          prk) a=$(rate "${tag}_prk.log" "${pcmd[@]}") ;;
          compas) b=$(rate "${tag}_compas.log" "${ccmd[@]}") ;;
        esac
      done
      echo "$k,$shape,$base,$r,$a,$b" >>"$csv"
    done
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)

described=()  # kernel|unit|size, for the table
for k in "${kernels[@]}"; do
  d="${NAMES[$k]} ${SIZES[$k]}"
  [[ $k == stencil ]] && d="$d, star radius $radius"
  [[ $k == pic ]] && d="$d, ${PIC_INIT:-SINUSOIDAL}"
  described+=("$k|${UNIT[$k]}|$d")
done
python3 - "$csv" "${described[@]}" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
units, sizes = {}, {}
for d in sys.argv[2:]:
    k, units[k], sizes[k] = d.split("|")
groups = {}
for r in rows:
    groups.setdefault((r["kernel"], r["shape"], r["baseline"]), []).append(r)
print()
print(f"{'kernel':8s} {'shape':5s} {'PRK version':11s} {'rounds':>6s} {'PRK median':>12s} "
      f"{'compas median':>13s} {'compas/PRK':>10s}  unit, size")
for (k, shape, base), rs in groups.items():
    ok = [(float(r["prk"]), float(r["compas"])) for r in rs if "-" not in (r["prk"], r["compas"])]
    note = f"  ({len(rs) - len(ok)} failed round(s): see the logs)" if len(ok) < len(rs) else ""
    if not ok:
        print(f"{k:8s} {shape:5s} {base:11s} {0:6d}  no successful round{note}")
        continue
    p, c = statistics.median(x[0] for x in ok), statistics.median(x[1] for x in ok)
    d = 4 if units[k] == "GUPS/s" else 1  # GUPS are small numbers
    print(f"{k:8s} {shape:5s} {base:11s} {len(ok):6d} {p:12.{d}f} {c:13.{d}f} {c / p:10.3f}  "
          f"{units[k]}, {sizes[k]}{note}")
EOF
echo "load average before: ${load_before:-?}, after: ${load_after:-?} ($(nproc) CPUs; other" \
  "work on the host makes the rounds noisy)"

# ---- lines of code, one rule ----
count() { "$root/scripts/code-lines.sh" "$1" | cut -d' ' -f1; }
echo
printf '%-8s %8s %6s %7s %10s %6s   %s\n' kernel original port shared MPIOPENMP MPI1 \
  "port/original  port/MPIOPENMP  port/MPI1  (port+shared)/MPI1"
for k in "${kernels[@]}"; do
  dir=${DIR[$k]}
  shared=$(count "$root/apps/examples/prk/prk_common.hpp")
  own="$root/apps/examples/prk/prk_$k.hpp"  # a kernel's own shared header (pic)
  [[ -f "$own" ]] && shared=$((shared + $(count "$own")))
  o=$(count "$root/apps/examples/prk/prk_${k}_openmp.cpp")
  c=$(count "$root/apps/examples/prk/prk_${k}_compas.cpp")
  m1=$(count "$prk_src/MPI1/$dir/$k.c")
  mo=- per_mo=-
  if [[ ${HYBRID[$k]} == 1 ]]; then
    mo=$(count "$prk_src/MPIOPENMP/$dir/$k.c")
    per_mo=$(printf '%.2f' "$(bc -l <<<"$c/$mo")")
  fi
  printf '%-8s %8d %6d %7d %10s %6d   %13.2f  %14s  %9.2f  %18.2f\n' "$k" "$o" "$c" "$shared" \
    "$mo" "$m1" "$(bc -l <<<"$c/$o")" "$per_mo" "$(bc -l <<<"$c/$m1")" \
    "$(bc -l <<<"($c+$shared)/$m1")"
done
echo "(shared: prk_common.hpp, used by both the original and the port of every kernel, and pic's" \
  "prk_pic.hpp)"
echo "per-round rates and logs in $out"
