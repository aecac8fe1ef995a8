#!/usr/bin/env bash
# The communication hot path of two builds side by side, in the latency mode each run met: the
# check to run before a change to comm/ or threads/ lands (bench/README.md, hotpath_ab.sh).
#
#   figure          what runs (the minimum over its repeats, like `compas pingpong`'s min_us)
#   put_8           compas pingpong put 8 B, one way            compas-run -n 2 -t 1
#   get_8           compas pingpong get 8 B                     compas-run -n 2 -t 1
#   put_signal_8    compas pingpong put_signal 8 B, one way     compas-run -n 2 -t 1
#   atomic_8        atomic_latency: a blocking 8-byte fetch_add compas-run -n 2 -t 1
#   put_bw_2m       compas pingpong put_bw 2 MiB, per put       compas-run -n 2 -t 1
#   process_barrier compas barrier --threads 1, the chosen one  compas-run -n 2 -t 1
#   team_barrier    compas barrier --threads 2 (dissemination, auto wait), one process
#   and, unless BASELINE=0, ucx_perftest -t ucp_put_lat -s 8 (typical) on compas's lanes
#
# Every figure is a time (lower is better; put_bw_2m's MB/s are 2 MiB over it), so B / A > 1
# says B is slower. atomic_latency is compiled by this script from bench/atomic_latency.cpp
# against each build's comm (its headers from the build's source tree): both run the same loop.
#
# Latency modes: this kind of machine (2 vCPUs under KVM) switches, for minutes at a time,
# between latencies between its CPUs (0.07, 0.13 and 0.25 us one way have been seen), which moves
# every figure here far more than any change does. Right before and after each figure's run, a
# probe (a cache line bounced between two threads pinned on CPUs 0 and 1, in 200 batches of 500
# round trips; the fastest batch, which no other load can make faster) gives the mode: "fast" below the first bound
# of MODES, "mid" below the second, "slow" above; "mixed" when the two probes disagree. Rounds
# alternate A and B (A B, then B A, ...); a round's A and B samples of a figure are paired only
# when both ran in the same mode, and the table gives per figure and mode the pairs' median
# B / A (and A / baseline, B / baseline for put_8).
#
# Each latency figure is the minimum over REPEATS short repeats (ITERS operations each; barriers
# about 1 ms): a repeat that a preemption hit is left out, where compas pingpong's default of
# 20000 operations per repeat lets a busy machine into every repeat.
#
# Usage: bench/hotpath_ab.sh BIN_A BIN_B [OUTDIR]
#   BIN_A, BIN_B: builds' bin/ directories with compas and compas-run (their libraries are taken
#   from BIN/../lib; an older build needs only those two targets). OUTDIR (default a new
#   directory under /tmp) keeps every raw output, samples.jsonl and table.md.
# Environment: ROUNDS (default 8), REPEATS (default 31), ITERS (default 1000), BASELINE (1, the
#   default: ucx_perftest too), MODES (bounds in us, default "0.10 0.19"), LABEL_A, LABEL_B
#   (default: the git commit of each build's source tree, +dirty when it has changes).
# Run it niced up on a shared machine (sudo nice -n -10 bench/hotpath_ab.sh ...) and read the
# load it prints. A measurement, not a test: it never fails on a number.
set -uo pipefail

if [[ $# -lt 2 || $# -gt 3 || "$1" == -h || "$1" == --help ]]; then
  sed -n '2,41p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
bin_a="$(cd "$1" && pwd)" || exit 2
bin_b="$(cd "$2" && pwd)" || exit 2
out="${3:-$(mktemp -d /tmp/hotpath_ab.XXXXXX)}"
rounds="${ROUNDS:-8}"
repeats="${REPEATS:-31}"
iters="${ITERS:-1000}"
baseline="${BASELINE:-1}"
read -r bound1 bound2 <<<"${MODES:-0.10 0.19}"
limit=180  # seconds any one command may take
mkdir -p "$out" || exit 2
raw="$out/raw"
mkdir -p "$raw"
samples="$out/samples.jsonl"
: >"$samples"
for bin in "$bin_a" "$bin_b"; do
  for exe in compas compas-run; do
    [[ -x "$bin/$exe" ]] || { echo "hotpath_ab.sh: $bin/$exe not found" >&2; exit 2; }
  done
done
[[ "$rounds" =~ ^[1-9][0-9]*$ && "$repeats" =~ ^[1-9][0-9]*$ && "$iters" =~ ^[1-9][0-9]*$ ]] ||
  { echo "hotpath_ab.sh: ROUNDS, REPEATS and ITERS are positive integers" >&2; exit 2; }
[[ "$bound1" =~ ^[0-9.]+$ && "${bound2:-}" =~ ^[0-9.]+$ ]] ||
  { echo "hotpath_ab.sh: MODES is two bounds in us, e.g. \"0.10 0.19\"" >&2; exit 2; }
if [[ "$baseline" == 1 ]] && ! command -v ucx_perftest >/dev/null; then
  echo "hotpath_ab.sh: ucx_perftest not found: BASELINE=0 to go without" >&2
  exit 2
fi
while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(COMPAS_|UCX_TLS$)')

log() { echo "[$(date +%T)] $*" >&2; }

# cache_value BIN VAR: a variable of the build's CMakeCache.txt.
cache_value() {
  sed -n "s/^$2:[A-Z]*=//p" "$1/../CMakeCache.txt" 2>/dev/null | head -1
}
# label BIN: the commit its source tree is at (+dirty), or the directory.
label() {
  local src
  src="$(cache_value "$1" CMAKE_HOME_DIRECTORY)"
  if [[ -n "$src" ]] && git -C "$src" rev-parse --short HEAD >/dev/null 2>&1; then
    echo "$(git -C "$src" rev-parse --short HEAD)$(git -C "$src" diff --quiet HEAD -- . \
      2>/dev/null || echo +dirty)"
  else
    echo "$1"
  fi
}
label_a="${LABEL_A:-$(label "$bin_a")}"
label_b="${LABEL_B:-$(label "$bin_b")}"

# build_atomic SIDE BIN: compiles atomic_latency against the build's comm into $raw.
build_atomic() {
  local src cxx
  src="$(cache_value "$2" CMAKE_HOME_DIRECTORY)"
  cxx="$(cache_value "$2" CMAKE_CXX_COMPILER)"
  [[ -n "$src" && -d "$src/comm/include" ]] || { log "no source tree for $2"; return 1; }
  "${cxx:-c++}" -std=c++20 -O3 -DNDEBUG -pthread -I"$src/comm/include" -I"$src/base/include" \
    "$here/atomic_latency.cpp" -L"$2/../lib" -lcompas_comm -Wl,-rpath,"$(cd "$2/../lib" && pwd)" \
    -o "$raw/atomic_latency_$1" 2>"$raw/atomic_latency_$1.err" ||
    { log "compiling atomic_latency against $2 failed (see $raw/atomic_latency_$1.err)"; return 1; }
}

# The mode probe: one-way latency of a cache line between CPUs 0 and 1, in us.
cat >"$raw/mode_probe.c" <<'EOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
enum { kBatch = 500, kBatches = 200 };
static _Alignas(64) _Atomic uint64_t ping;
static _Alignas(64) _Atomic uint64_t pong;
static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}
static void* answer(void* unused) {
  (void)unused;
  pin(1);
  for (uint64_t i = 1; i <= (uint64_t)kBatch * kBatches; ++i) {
    while (atomic_load_explicit(&ping, memory_order_acquire) != i) __builtin_ia32_pause();
    atomic_store_explicit(&pong, i, memory_order_release);
  }
  return 0;
}
int main(void) {
  static double us[kBatches];
  pthread_t other;
  pin(0);
  pthread_create(&other, 0, answer, 0);
  for (uint64_t b = 0, i = 1; b < kBatches; ++b) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int k = 0; k < kBatch; ++k, ++i) {
      atomic_store_explicit(&ping, i, memory_order_release);
      while (atomic_load_explicit(&pong, memory_order_acquire) != i) __builtin_ia32_pause();
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    us[b] = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / kBatch / 2 / 1e3;
  }
  pthread_join(other, 0);
  for (int b = 1; b < kBatches; ++b)
    if (us[b] < us[0]) us[0] = us[b];
  printf("%.4f\n", us[0]); /* the batches other load slowed are left out */
  return 0;
}
EOF
cc -O2 -pthread -o "$raw/mode_probe" "$raw/mode_probe.c" ||
  { echo "hotpath_ab.sh: could not compile the mode probe" >&2; exit 2; }

atomic_ok=1
build_atomic a "$bin_a" || atomic_ok=0
build_atomic b "$bin_b" || atomic_ok=0

probe() { "$raw/mode_probe" 2>/dev/null || echo 99; }

# record FIGURE SIDE ROUND VALUE PROBE_BEFORE PROBE_AFTER: one sample.
record() {
  [[ -n "$4" ]] || { log "  no value for $1 ($2, round $3)"; return; }
  printf '{"figure":"%s","side":"%s","round":%s,"value":%s,"probe_before":%s,"probe_after":%s}\n' \
    "$1" "$2" "$3" "$4" "$5" "$6" >>"$samples"
}

# run NAME CMD...: a command with a time limit, its output in $raw/NAME.{out,err}.
run() {
  local name="$1" rc=0
  shift
  timeout -k 5 "$limit" "$@" >"$raw/$name.out" 2>"$raw/$name.err" || rc=$?
  ((rc == 0)) || log "  FAILED (exit $rc): $* (see $raw/$name.err)"
  return "$rc"
}

# json_value FILE KIND KEY...: one number from a compas JSON file.
json_value() {
  python3 - "$@" <<'EOF'
import json, sys
path, kind, *key = sys.argv[1:]
try:
    doc = json.load(open(path))
except (OSError, ValueError):
    sys.exit(0)
for r in doc.get("results", []):
    if kind == "pp" and r.get("op") == key[0] and r.get("bytes") == int(key[1]):
        print(r["min_latency_us"]); break
    if kind == "process" and r.get("scope") == "process" and r.get("chosen"):
        print(r["min_ns_per_barrier"] / 1e3); break
    if kind == "thread" and r.get("scope") == "thread":
        print(r["min_ns_per_barrier"] / 1e3); break
EOF
}

# measure SIDE BIN ROUND: every figure of one build, each between two probes.
measure() {
  local side="$1" bin="$2" r="$3" f p0 p1 op
  local lib
  lib="$(cd "$bin/../lib" && pwd)"
  local -a launch=(env "LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    "$bin/compas-run" -n 2 -t 1)
  f="$raw/pp_${side}_r$r.json"
  p0="$(probe)"
  run "pp_${side}_r$r" "${launch[@]}" "$bin/compas" pingpong --ops put,get,put_signal --sizes 8 \
    --iters "$iters" --repeats "$repeats" --quiet --json "$f"
  p1="$(probe)"
  for op in put get put_signal; do
    record "${op}_8" "$side" "$r" "$(json_value "$f" pp "$op" 8)" "$p0" "$p1"
  done
  if ((atomic_ok)); then
    p0="$(probe)"
    run "atomic_${side}_r$r" "${launch[@]}" "$raw/atomic_latency_$side" --iters "$iters" \
      --repeats "$repeats"
    p1="$(probe)"
    record atomic_8 "$side" "$r" "$(python3 -c 'import json,sys
try: print(json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])["min_us"])
except Exception: pass' "$raw/atomic_${side}_r$r.out")" "$p0" "$p1"
  fi
  f="$raw/bw_${side}_r$r.json"
  p0="$(probe)"
  run "bw_${side}_r$r" "${launch[@]}" "$bin/compas" pingpong --ops put_bw --sizes 2MiB \
    --max-size 2MiB --repeats "$repeats" --quiet --json "$f"
  p1="$(probe)"
  record put_bw_2m "$side" "$r" "$(json_value "$f" pp put_bw 2097152)" "$p0" "$p1"
  f="$raw/pbar_${side}_r$r.json"
  p0="$(probe)"
  run "pbar_${side}_r$r" "${launch[@]}" "$bin/compas" barrier --threads 1 --omp none \
    --repeats "$repeats" --target-ms 1 --quiet --json "$f"
  p1="$(probe)"
  record process_barrier "$side" "$r" "$(json_value "$f" process)" "$p0" "$p1"
  f="$raw/tbar_${side}_r$r.json"
  p0="$(probe)"
  run "tbar_${side}_r$r" env "LD_LIBRARY_PATH=$lib" "$bin/compas" barrier --threads 2 \
    --algorithms dissemination --wait auto --omp none --repeats "$repeats" --target-ms 1 --quiet --json "$f"
  p1="$(probe)"
  record team_barrier "$side" "$r" "$(json_value "$f" thread)" "$p0" "$p1"
}

# The baseline's UCX_TLS: the transports of compas's lanes (build B's pingpong report).
shm_tls=""
ucx_port=$((20000 + RANDOM % 20000))
measure_ucx() {
  local r="$1" p0 p1 spid name="ucx_r$1"
  if [[ -z "$shm_tls" ]]; then
    shm_tls="$(python3 -c 'import json,re,sys
t = json.load(open(sys.argv[1]))["params"]["transport"]
print(",".join(sorted(set(re.findall(r"([a-z0-9_]+)/", t)))))' "$raw/pp_b_r$r.json" 2>/dev/null)"
    [[ -n "$shm_tls" ]] || { log "  no lanes known for ucx_perftest"; return; }
  fi
  ucx_port=$((ucx_port + 1))
  p0="$(probe)"
  UCX_TLS="$shm_tls" timeout -k 5 "$limit" ucx_perftest -t ucp_put_lat -p "$ucx_port" -c 0 \
    >"$raw/$name.server" 2>&1 &
  spid=$!
  for _ in $(seq 100); do
    grep -q "Waiting for connection" "$raw/$name.server" 2>/dev/null && break
    sleep 0.05
  done
  for _ in $(seq 20); do
    UCX_TLS="$shm_tls" timeout -k 5 "$limit" ucx_perftest localhost -t ucp_put_lat -p "$ucx_port" \
      -c 1 -s 8 -n 100000 -w 10000 -f -v >"$raw/$name.out" 2>"$raw/$name.err" && break
    grep -q refused "$raw/$name.out" "$raw/$name.err" || break
    sleep 0.1
  done
  for _ in $(seq 50); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
  kill "$spid" 2>/dev/null
  wait "$spid" 2>/dev/null
  p1="$(probe)"
  # The last CSV line of -f -v: iterations, typical latency (us), ...
  record put_8 ucx "$r" "$(awk -F, 'NF == 8 && $1 ~ /^[0-9]+$/ {v = $2} END {print v}' \
    "$raw/$name.out")" "$p0" "$p1"
}

load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
start=$SECONDS
log "hotpath_ab: A=$label_a ($bin_a) B=$label_b ($bin_b), $rounds rounds, load $load_start"
log "raw output in $raw; mode probe now $(probe) us (modes split at $bound1 and $bound2 us)"
for ((r = 0; r < rounds; ++r)); do
  if ((r % 2 == 0)); then order=(a b); else order=(b a); fi
  log "round $((r + 1))/$rounds: ${order[*]}, load $(cut -d' ' -f1 /proc/loadavg)"
  for side in "${order[@]}"; do
    if [[ $side == a ]]; then measure a "$bin_a" "$r"; else measure b "$bin_b" "$r"; fi
  done
  [[ "$baseline" == 1 ]] && measure_ucx "$r"
done
load_end="$(cut -d' ' -f1-3 /proc/loadavg)"
log "done in $((SECONDS - start)) s, load $load_end"

python3 - "$samples" "$out/table.md" "$label_a" "$label_b" "$bound1 $bound2" "$load_start" "$load_end" \
  "$rounds" "$shm_tls" <<'EOF'
import json, statistics, sys
path, table, la, lb, bounds, load0, load1, rounds, tls = sys.argv[1:10]
b1, b2 = (float(x) for x in bounds.split())
samples = [json.loads(l) for l in open(path) if l.strip()]

def mode(s):
    m = ["fast" if p < b1 else "mid" if p < b2 else "slow"
         for p in (s["probe_before"], s["probe_after"])]
    return m[0] if m[0] == m[1] else "mixed"

by = {(s["figure"], s["side"], s["round"]): s for s in samples}
figures = ["put_8", "get_8", "put_signal_8", "atomic_8", "put_bw_2m", "process_barrier",
           "team_barrier"]
what = {"put_8": "put 8 B one way (us)", "get_8": "get 8 B (us)",
        "put_signal_8": "put_signal 8 B one way (us)", "atomic_8": "fetch_add 8 B (us)",
        "put_bw_2m": "put 2 MiB in a stream (us per put)",
        "process_barrier": "process barrier, 2 processes (us)",
        "team_barrier": "team barrier, 2 threads (us)"}
med = statistics.median
lines = [f"A = {la}, B = {lb}; {rounds} rounds (A B, B A, ...); load {load0} at the start, "
         f"{load1} at the end; modes: fast < {b1} us < mid < {b2} us < slow (the probe)",
         "",
         "| figure | mode | pairs | A | B | B / A (median) | B / A range |",
         "|---|---|---|---|---|---|---|"]

def pair_rows(fig, x, y, label):
    rows = []
    for m in ("fast", "mid", "slow"):
        pairs = []
        for r in range(int(rounds)):
            sx, sy = by.get((fig, x, r)), by.get((fig, y, r))
            if sx and sy and mode(sx) == m and mode(sy) == m and sx["value"] > 0:
                pairs.append((sx["value"], sy["value"]))
        if not pairs:
            continue
        ratios = [b / a for a, b in pairs]
        rows.append(f"| {label} | {m} | {len(pairs)} | {med([a for a, _ in pairs]):.4f} | "
                    f"{med([b for _, b in pairs]):.4f} | **{med(ratios):.3f}** | "
                    f"{min(ratios):.3f}-{max(ratios):.3f} |")
    if not rows:
        rows.append(f"| {label} | - | 0 | | | n/a (no pair in one mode) | |")
    return rows

for fig in figures:
    lines += pair_rows(fig, "a", "b", what[fig])
if any(s["side"] == "ucx" for s in samples):
    lines += pair_rows("put_8", "ucx", "a", f"put 8 B: A against ucx_perftest ({tls})")
    lines += pair_rows("put_8", "ucx", "b", f"put 8 B: B against ucx_perftest ({tls})")
lines += ["", "Runs (round, side, figure, value, probe before/after in us, mode):", ""]
for s in samples:
    lines.append(f"    r{s['round']} {s['side']:<3} {s['figure']:<16} {s['value']:<10.4f} "
                 f"{s['probe_before']:.3f}/{s['probe_after']:.3f} {mode(s)}")
text = "\n".join(lines) + "\n"
open(table, "w").write(text)
print(text.split("\nRuns")[0])
EOF
echo "table: $out/table.md (every run's mode there), samples: $samples"
