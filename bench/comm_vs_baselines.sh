#!/usr/bin/env bash
# comm_vs_baselines.sh: compas's communication against the tools people already trust, measured
# in the same run on this host. Each round runs every compas measurement and its baseline; odd
# rounds run the round's steps in reverse order, so that compas and baselines alternate and
# neither always goes first. The table gives medians over the rounds and compas / baseline.
#
#   metric                          compas                          baseline
#   put 8 B half round trip         pingpong put (compas-run -n 2)  ucx_perftest ucp_put_lat, same
#                                   and with COMPAS_DIRECT=0        UCX_TLS as compas's lanes
#   put 1 MiB bandwidth             pingpong put_bw                 ucx_perftest ucp_put_bw
#   put+flush 8 B                   pingpong put_flush (mpirun and  mpi_put_flush (MPI_Put +
#                                   compas-run)                     MPI_Win_flush, same mpirun job)
#   process barrier P = 2, 4        compas barrier (mpirun)         MPI_Barrier (same job)
#   tcp 8 B half round trip         put_signal, UCX_TLS=tcp,self    OpenMPI ob1/tcp send/recv, and
#                                                                   ucx_perftest ucp_put_lat tcp
#
# ucx_perftest's latency is already half a round trip for *_lat tests (libperf divides ping-pong
# times by 2); its "typical" column is the median of per-iteration samples, "overall" the average
# (compas reports the median over repeats of per-repeat averages, so both are kept). Its MB/s are
# MiB/s and are converted to 1e6 B/s as compas reports them.
#
# A measurement, not a test. Usage:
#   bench/comm_vs_baselines.sh SUMMARY.json
# Environment: BUILD (default build/release), ROUNDS (default 5), RAW (directory for every raw
# output; default SUMMARY without .json, plus .raw). COMPAS_* and UCX_TLS of the caller are unset.
set -uo pipefail

if [[ $# -ne 1 || "$1" == -h || "$1" == --help ]]; then
  sed -n '2,28p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
fi
summary="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="${BUILD:-$root/build/release}"
bin="$build/bin"
rounds="${ROUNDS:-5}"
raw="${RAW:-${summary%.json}.raw}"
for exe in "$bin/compas" "$bin/compas-run"; do
  [[ -x "$exe" ]] || { echo "comm_vs_baselines.sh: $exe not found: build first" >&2; exit 2; }
done
for tool in ucx_perftest mpirun python3 timeout; do
  command -v "$tool" >/dev/null || { echo "comm_vs_baselines.sh: $tool not found" >&2; exit 2; }
done
[[ "$rounds" =~ ^[1-9][0-9]*$ ]] || { echo "comm_vs_baselines.sh: ROUNDS=$rounds" >&2; exit 2; }
mkdir -p "$raw" "$(dirname "$summary")"
samples="$raw/samples.jsonl"
: >"$samples"

while read -r v; do unset "$v"; done < <(compgen -e | grep -E '^(COMPAS_|UCX_TLS$)')
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
ncpu="$(nproc)"
port=$((20000 + RANDOM % 20000))
limit=180  # seconds any one command may take

log() { echo "[$(date +%T)] $*" >&2; }

# record METRIC SIDE ROUND VALUE UNIT: one sample.
record() {
  [[ -n "$4" ]] || { log "  no value for $1 ($2)"; return; }
  printf '{"metric":"%s","side":"%s","round":%s,"value":%s,"unit":"%s"}\n' "$1" "$2" "$3" "$4" \
    "$5" >>"$samples"
}

# pp_value FILE OP BYTES FIELD: a field of a compas pingpong record.
pp_value() {
  python3 - "$@" <<'EOF'
import json, sys
path, op, size, field = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
try:
    doc = json.load(open(path))
except (OSError, ValueError):
    sys.exit(0)
for r in doc.get("results", []):
    if r.get("op") == op and r.get("bytes") == size:
        print(r[field])
        break
EOF
}

# barrier_value FILE ALGORITHM: ns_per_barrier of the process record of ALGORITHM ("chosen": the
# algorithm comm's barrier() runs in that job).
barrier_value() {
  python3 - "$@" <<'EOF'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    sys.exit(0)
for r in doc.get("results", []):
    if r.get("scope") == "process" and (r.get("algorithm") == sys.argv[2] or
                                        (sys.argv[2] == "chosen" and r.get("chosen"))):
        print(r["ns_per_barrier"])
        break
EOF
}

# perftest_value FILE COLUMN: a column of ucx_perftest's final CSV line (-f -v).
perftest_value() {
  python3 - "$@" <<'EOF'
import sys
col = {"typical_lat": 1, "avg_lat": 2, "overall_lat": 3, "avg_bw": 4, "overall_bw": 5}[sys.argv[2]]
try:
    lines = [l for l in open(sys.argv[1]) if l[:1].isdigit() and l.count(",") == 7]
except OSError:
    sys.exit(0)
if lines:
    v = float(lines[-1].split(",")[col])
    print(v * 1.048576 if sys.argv[2].endswith("_bw") else v)  # MiB/s -> MB/s
EOF
}

# transport_of FILE: the UCX lanes a compas report names.
transport_of() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["params"]["transport"])' "$1" \
    2>/dev/null
}

# run NAME CMD...: runs a command with a time limit, output in $raw/NAME.{out,err}.
run() {
  local name="$1"
  shift
  local rc=0
  timeout -k 5 "$limit" "$@" >"$raw/$name.out" 2>"$raw/$name.err" || rc=$?
  if ((rc != 0)); then
    log "  FAILED (exit $rc$( ((rc == 124)) && echo ", timed out after $limit s")): $* (see $raw/$name.err)"
    return 1
  fi
}

# perftest NAME TLS TEST SIZE ITERS WARMUP: server on cpu 0, client on cpu 1 (when there are two).
perftest() {
  local name="$1" tls="$2" test="$3" size="$4" iters="$5" warmup="$6"
  local c0=0 c1=$((ncpu > 1 ? 1 : 0)) spid try
  port=$((port + 1))
  UCX_TLS="$tls" timeout -k 5 "$limit" ucx_perftest -t "$test" -p "$port" -c "$c0" \
    >"$raw/$name.server" 2>&1 &
  spid=$!
  for try in $(seq 100); do
    grep -q "Waiting for connection" "$raw/$name.server" 2>/dev/null && break
    sleep 0.05
  done
  for try in $(seq 20); do
    if UCX_TLS="$tls" timeout -k 5 "$limit" ucx_perftest localhost -t "$test" -p "$port" \
      -c "$c1" -s "$size" -n "$iters" -w "$warmup" -f -v >"$raw/$name.out" 2>"$raw/$name.err"; then
      break
    fi
    grep -q "refused" "$raw/$name.out" "$raw/$name.err" || {
      log "  FAILED: ucx_perftest $test (see $raw/$name.err)"
      break
    }
    sleep 0.1
  done
  # The server ends by itself after the test; it is ended here only if the client never came.
  for try in $(seq 50); do kill -0 "$spid" 2>/dev/null || break; sleep 0.1; done
  kill "$spid" 2>/dev/null
  wait "$spid" 2>/dev/null
  return 0
}

pp=("$bin/compas" pingpong --repeats 5)
shm_tls=""
tcp_tls="tcp"

# ---- one step per measurement; each records its samples ----
step_compas_shm() {  # put 8 B, put_flush 8 B, put_bw 1 MiB under compas-run (direct load/store)
  local f="$raw/compas_shm_r$r.json"
  run "compas_shm_r$r" "$bin/compas-run" -n 2 -t 1 "${pp[@]}" --ops put,put_flush,put_bw \
    --sizes 8,1MiB --max-size 1MiB --json "$f" || return
  record put_lat_8 compas "$r" "$(pp_value "$f" put 8 latency_us)" us
  record put_flush_8_compas_run compas "$r" "$(pp_value "$f" put_flush 8 latency_us)" us
  record put_bw_1m compas "$r" "$(pp_value "$f" put_bw 1048576 bandwidth_mbs)" MB/s
  [[ -n "$shm_tls" ]] || shm_tls="$(transport_of "$f" | grep -o '[a-z0-9_]*/' | tr -d / |
    sort -u | paste -sd, -)"
}
step_compas_rma() {  # put 8 B through UCX RMA instead of load/store
  local f="$raw/compas_rma_r$r.json"
  COMPAS_DIRECT=0 run "compas_rma_r$r" "$bin/compas-run" -n 2 -t 1 "${pp[@]}" --ops put \
    --sizes 8 --json "$f" || return
  record put_lat_8_rma compas "$r" "$(pp_value "$f" put 8 latency_us)" us
}
step_ucx_put_lat() {
  perftest "ucx_put_lat_r$r" "$shm_tls" ucp_put_lat 8 100000 10000
  local v t
  t="$(perftest_value "$raw/ucx_put_lat_r$r.out" typical_lat)"
  v="$(perftest_value "$raw/ucx_put_lat_r$r.out" overall_lat)"
  for m in put_lat_8 put_lat_8_rma; do record "$m" baseline "$r" "$t" us; done
  record put_lat_8 baseline_overall "$r" "$v" us
  record put_lat_8_rma baseline_overall "$r" "$v" us
}
step_ucx_put_bw() {
  perftest "ucx_put_bw_r$r" "$shm_tls" ucp_put_bw 1048576 5000 500
  record put_bw_1m baseline "$r" "$(perftest_value "$raw/ucx_put_bw_r$r.out" overall_bw)" MB/s
}
step_mpi_put_flush() {  # compas put_flush and MPI_Put + MPI_Win_flush in one mpirun job
  local f="$raw/mpi_pp_r$r.json"
  run "mpi_pp_r$r" mpirun -np 2 --bind-to core "${pp[@]}" --ops put_flush,mpi_put_flush \
    --sizes 8 --json "$f" || return
  record put_flush_8 compas "$r" "$(pp_value "$f" put_flush 8 latency_us)" us
  local m
  m="$(pp_value "$f" mpi_put_flush 8 latency_us)"
  record put_flush_8 baseline "$r" "$m" us
  record put_flush_8_compas_run baseline "$r" "$m" us
}
step_barrier() {  # P: compas process barrier and MPI_Barrier in one mpirun job
  local p="$1" f="$raw/barrier_p${1}_r$r.json" bind=core
  ((p > ncpu)) && bind=none
  run "barrier_p${p}_r$r" mpirun -np "$p" --bind-to "$bind" "$bin/compas" barrier \
    --json "$f" || return
  record "barrier_p$p" compas "$r" "$(barrier_value "$f" chosen)" ns
  record "barrier_p$p" baseline "$r" "$(barrier_value "$f" mpi)" ns
}
step_compas_tcp() {
  local f="$raw/compas_tcp_r$r.json"
  UCX_TLS=tcp,self run "compas_tcp_r$r" "$bin/compas-run" -n 2 -t 1 "${pp[@]}" \
    --ops put_signal --sizes 8 --json "$f" || return
  if ! transport_of "$f" | grep -q tcp; then
    log "  compas with UCX_TLS=tcp,self did not report tcp lanes: $(transport_of "$f")"
    return
  fi
  record tcp_put_signal_8 compas "$r" "$(pp_value "$f" put_signal 8 latency_us)" us
  record tcp_put_signal_8_vs_ucx compas "$r" "$(pp_value "$f" put_signal 8 latency_us)" us
}
step_mpi_tcp() {  # OpenMPI send/recv ping-pong over the ob1 pml and the tcp btl on loopback
  local f="$raw/mpi_tcp_r$r.json"
  run "mpi_tcp_r$r" mpirun -np 2 --bind-to core --mca pml ob1 --mca btl tcp,self \
    --mca btl_tcp_if_include lo "${pp[@]}" --ops mpi_sendrecv --sizes 8 --json "$f" || return
  record tcp_put_signal_8 baseline "$r" "$(pp_value "$f" mpi_sendrecv 8 latency_us)" us
}
step_ucx_tcp() {
  perftest "ucx_tcp_lat_r$r" "$tcp_tls" ucp_put_lat 8 20000 2000
  record tcp_put_signal_8_vs_ucx baseline "$r" \
    "$(perftest_value "$raw/ucx_tcp_lat_r$r.out" typical_lat)" us
  record tcp_put_signal_8_vs_ucx baseline_overall "$r" \
    "$(perftest_value "$raw/ucx_tcp_lat_r$r.out" overall_lat)" us
}

steps=(step_compas_shm step_ucx_put_lat step_compas_rma step_ucx_put_bw step_mpi_put_flush
  "step_barrier 2" "step_barrier 4" step_compas_tcp step_mpi_tcp step_ucx_tcp)

start=$SECONDS
load_start="$(cut -d' ' -f1-3 /proc/loadavg)"
log "comm_vs_baselines: $rounds rounds on $ncpu cpus, load $load_start; raw output in $raw"
for ((r = 0; r < rounds; ++r)); do
  order=("${steps[@]}")
  if ((r % 2)); then
    order=()
    for ((i = ${#steps[@]} - 1; i >= 0; --i)); do order+=("${steps[i]}"); done
  fi
  # The shared-memory transports of the baselines follow compas's lanes, known after its first
  # run: the first round starts with it whatever the order.
  if [[ -z "$shm_tls" ]]; then
    step_compas_shm
    order=("${order[@]/step_compas_shm/}")
  fi
  log "round $((r + 1))/$rounds: ${order[*]}"
  for s in "${order[@]}"; do
    [[ -n "$s" ]] && $s
  done
done
log "done in $((SECONDS - start)) s; UCX_TLS for the shared-memory baselines: ${shm_tls:-?}"

python3 - "$samples" "$summary" "$rounds" "${shm_tls:-}" "$((SECONDS - start))" "$load_start" \
  "$(cut -d' ' -f1-3 /proc/loadavg)" "$ncpu" <<'EOF'
import json, statistics, sys, platform, subprocess

samples_path, summary_path, rounds, shm_tls, seconds, load_start, load_end, ncpu = sys.argv[1:9]
samples = [json.loads(l) for l in open(samples_path) if l.strip()]

def values(metric, side):
    return [s["value"] for s in samples if s["metric"] == metric and s["side"] == side]

def med(v):
    return statistics.median(v) if v else None

def round_ratios(metric, side):
    # compas / baseline within each round that has both: the machine's state (where the
    # hypervisor placed the two vCPUs, other load) moves between rounds and cancels within one.
    c = {s["round"]: s["value"] for s in samples if s["metric"] == metric and s["side"] == "compas"}
    b = {s["round"]: s["value"] for s in samples if s["metric"] == metric and s["side"] == side}
    return [c[r] / b[r] for r in sorted(c) if r in b and b[r]]

# metric, label, unit, baseline label, higher is better, target (bound, aim), baseline side
rows_def = [
    ("put_lat_8", "put 8 B half RTT, load/store", "us", f"ucx_perftest ucp_put_lat typical ({shm_tls})",
     False, (1.0, 0.5), "baseline"),
    ("put_lat_8", "  same, vs ucx_perftest overall avg", "us", "ucx_perftest ucp_put_lat overall",
     False, None, "baseline_overall"),
    ("put_lat_8_rma", "put 8 B half RTT, COMPAS_DIRECT=0", "us",
     f"ucx_perftest ucp_put_lat typical ({shm_tls})", False, (1.0, None), "baseline"),
    ("put_lat_8_rma", "  same, vs ucx_perftest overall avg", "us",
     "ucx_perftest ucp_put_lat overall", False, None, "baseline_overall"),
    ("put_bw_1m", "put 1 MiB bandwidth", "MB/s", f"ucx_perftest ucp_put_bw ({shm_tls})",
     True, (0.90, None), "baseline"),
    ("put_flush_8", "put+flush 8 B (mpirun)", "us", "MPI_Put+MPI_Win_flush (same job)",
     False, (1.0, None), "baseline"),
    ("put_flush_8_compas_run", "put+flush 8 B (compas-run)", "us", "MPI_Put+MPI_Win_flush (mpirun)",
     False, (1.0, None), "baseline"),
    ("barrier_p2", "process barrier P=2 (mpirun)", "ns", "MPI_Barrier (same job)",
     False, (1.0, None), "baseline"),
    ("barrier_p4", "process barrier P=4 (mpirun)", "ns", "MPI_Barrier (same job)",
     False, (1.0, None), "baseline"),
    ("tcp_put_signal_8", "tcp put_signal 8 B half RTT", "us", "OpenMPI ob1/tcp send/recv half RTT",
     False, (1.0, None), "baseline"),
    ("tcp_put_signal_8_vs_ucx", "tcp put_signal 8 B vs ucx_perftest", "us",
     "ucx_perftest ucp_put_lat typical (tcp)", False, None, "baseline"),
    ("tcp_put_signal_8_vs_ucx", "  same, vs ucx_perftest overall avg", "us",
     "ucx_perftest ucp_put_lat overall (tcp)", False, None, "baseline_overall"),
]

rows = []
for metric, label, unit, base_label, higher, target, side in rows_def:
    c, b = values(metric, "compas"), values(metric, side)
    cm, bm = med(c), med(b)
    ratio = cm / bm if cm is not None and bm else None
    if target is None:
        tgt, status = "-", "info"
    else:
        bound, aim = target
        tgt = (f">={bound:.2f}x" if higher else f"<={bound:.1f}x") + (f" (aim <={aim:.1f}x)" if aim else "")
        if ratio is None:
            status = "n/a"
        else:
            ok = ratio >= bound if higher else ratio <= bound
            status = "ok" if ok else "MISSED"
            if ok and aim is not None:
                status = "ok, aim met" if ratio <= aim else "ok, aim missed"
    per_round = round_ratios(metric, side)
    rows.append({"metric": metric, "label": label, "unit": unit, "baseline": base_label,
                 "compas_median": cm, "baseline_median": bm, "ratio": ratio,
                 "round_ratios": per_round, "round_ratio_median": med(per_round), "target": tgt,
                 "status": status, "compas_samples": c, "baseline_samples": b,
                 "higher_is_better": higher})

def fmt(v, unit):
    if v is None:
        return "n/a"
    return f"{v:.0f}" if unit in ("ns", "MB/s") else f"{v:.3f}"

print()
print(f"compas vs baselines: medians of {rounds} alternating rounds (n = samples per side), "
      f"{seconds} s; load average {load_start} at start, {load_end} at end, {ncpu} cpus")
head = (f"{'metric':<38} {'unit':>5} {'compas':>10} {'baseline':>10} {'ratio':>7} "
        f"{'rounds':>7} {'n':>5} {'target':<22} {'status':<15} baseline")
print(head)
print("-" * (len(head) + 30))
for r in rows:
    ratio = f"{r['ratio']:.2f}" if r["ratio"] is not None else "n/a"
    rr = f"{r['round_ratio_median']:.2f}" if r["round_ratio_median"] is not None else "n/a"
    n = f"{len(r['compas_samples'])}/{len(r['baseline_samples'])}"
    print(f"{r['label']:<38} {r['unit']:>5} {fmt(r['compas_median'], r['unit']):>10} "
          f"{fmt(r['baseline_median'], r['unit']):>10} {ratio:>7} {rr:>7} {n:>5} {r['target']:<22} "
          f"{r['status']:<15} {r['baseline']}")
print("ratio = compas median / baseline median; rounds = median over rounds of compas / baseline "
      "within the round (the status follows ratio).")
print("ratio = compas / baseline (latency, ns: lower is better; MB/s: higher is better). compas "
      "figures are per-repeat averages; ucx_perftest typical is a median of single iterations, "
      "which hides preemption: with other work on the machine, read the overall rows too.")

def version(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip().splitlines()[0]
    except Exception:
        return None

summary = {
    "command": "comm_vs_baselines.sh",
    "rounds": int(rounds),
    "seconds": int(seconds),
    "load_average_start": load_start,
    "load_average_end": load_end,
    "cpus": int(ncpu),
    "ucx_tls_shm_baselines": shm_tls,
    "host": platform.node(),
    "ucx": version(["ucx_info", "-v"]),
    "mpirun": version(["mpirun", "--version"]),
    "rows": rows,
}
for r in rows:
    r["label"] = r["label"].strip()
with open(summary_path, "w") as fh:
    json.dump(summary, fh, indent=2)
print(f"summary written to {summary_path}")
EOF
