#!/bin/sh
# plot/plot.py, alone and through `compas cache --plot DIR` and `compas membw
# --loaded-latency --plot DIR`: PNG files appear and are PNGs; a file that is not a compas report
# exits 2.
# usage: test_plot.sh COMPAS_EXE PLOT_PY   (exit 77 = skipped: no python3 with matplotlib)
set -eu
compas=$1
plot=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# A python3 with matplotlib: the one on PATH, else Debian's (python3-matplotlib installs there).
py=""
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import matplotlib' >/dev/null 2>&1; then
    py=$(command -v "$p")
    break
  fi
done
if [ -z "$py" ]; then
  echo "SKIP: no python3 with matplotlib (Debian: apt-get install python3-matplotlib)"
  exit 77
fi
# compas --plot runs "python3" from PATH: make it this one.
mkdir "$dir/bin"
ln -s "$py" "$dir/bin/python3"
PATH="$dir/bin:$PATH"
export PATH

is_png() {
  [ -s "$1" ] || fail "$1 was not written"
  sig=$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')
  [ "$sig" = "89504e470d0a1a0a" ] || fail "$1 does not start with the PNG signature ($sig)"
}

# 1. compas cache --plot DIR: the JSON and the plots.
rc=0
"$compas" cache --min 4KiB --max 64KiB --repeats 1 --repeat-ms 0.5 --quiet --plot "$dir/cache" \
  >"$dir/cache.out" 2>&1 || rc=$?
[ "$rc" -eq 0 ] || { cat "$dir/cache.out"; fail "compas cache --plot exited $rc"; }
[ -s "$dir/cache/cache.json" ] || fail "compas cache --plot wrote no cache.json"
is_png "$dir/cache/cache.png"
is_png "$dir/cache/cache-bandwidth.png"
grep -q "cache.png" "$dir/cache.out" || fail "the written plot paths were not printed"

# 2. Hand-made barrier and membw reports.
cat >"$dir/barrier.json" <<'EOF'
{"command": "barrier", "version": "0.1.0",
 "machine": {"cpu_model": "test cpu", "cores": 2, "pus": 2, "caches": []},
 "params": {"threads": [1, 2]},
 "results": [
  {"algorithm": "central", "policy": "spin", "threads": 1, "ns_per_barrier": 6.5},
  {"algorithm": "central", "policy": "spin", "threads": 2, "ns_per_barrier": 180.0},
  {"algorithm": "tree", "policy": "auto", "threads": 1, "ns_per_barrier": 20.0},
  {"algorithm": "tree", "policy": "auto", "threads": 2, "ns_per_barrier": 210.0},
  {"algorithm": "omp", "policy": "active", "threads": 2, "ns_per_barrier": 2000.0}]}
EOF
cat >"$dir/membw.json" <<'EOF'
{"command": "membw", "version": "0.1.0", "machine": {"cores": 2, "pus": 2},
 "params": {},
 "results": [
  {"kernel": "load", "threads": 1, "bandwidth_gbs": 15.2, "per_thread_gbs": 15.2},
  {"kernel": "load", "threads": 2, "bandwidth_gbs": 19.0, "per_thread_gbs": 9.5},
  {"kernel": "triad", "threads": 1, "bandwidth_gbs": 11.0, "per_thread_gbs": 11.0},
  {"kernel": "triad", "threads": 2, "bandwidth_gbs": 12.1, "per_thread_gbs": 6.05}]}
EOF
"$py" "$plot" "$dir/barrier.json" "$dir/membw.json" --out "$dir/hand" >"$dir/hand.out" ||
  fail "plot.py on barrier.json membw.json exited $?"
is_png "$dir/hand/barrier.png"
is_png "$dir/hand/membw.png"
grep -q "barrier.png" "$dir/hand.out" || fail "plot.py did not print barrier.png"

# 2b. A hand-made `compas membw --loaded-latency` report: one curve per mix, a knee on one.
cat >"$dir/ll.json" <<'EOF'
{"command": "loaded-latency", "version": "0.1.0", "machine": {"cores": 2, "pus": 2},
 "params": {"idle_latency_ns": 100.0, "knee_factor": 2.0,
            "knees": {"read": {"reached": true, "bandwidth_gbs": 5.37, "threshold_ns": 200.0},
                      "rw": {"reached": false, "bandwidth_gbs": null, "max_bandwidth_gbs": 9.0}}},
 "results": [
  {"mix": "read", "delay_ns": null, "bandwidth_gbs": 0.0, "latency_ns": 100.0,
   "latency_min_ns": 98.0, "latency_max_ns": 103.0, "traffic_threads": 1},
  {"mix": "read", "delay_ns": 1000, "bandwidth_gbs": 3.0, "latency_ns": 110.0,
   "latency_min_ns": 105.0, "latency_max_ns": 115.0, "traffic_threads": 1},
  {"mix": "read", "delay_ns": 0, "bandwidth_gbs": 8.0, "latency_ns": 300.0,
   "latency_min_ns": 280.0, "latency_max_ns": 310.0, "traffic_threads": 1},
  {"mix": "rw", "delay_ns": null, "bandwidth_gbs": 0.0, "latency_ns": 101.0,
   "latency_min_ns": 99.0, "latency_max_ns": 104.0, "traffic_threads": 1},
  {"mix": "rw", "delay_ns": 0, "bandwidth_gbs": 9.0, "latency_ns": 150.0,
   "latency_min_ns": 140.0, "latency_max_ns": 160.0, "traffic_threads": 1}]}
EOF
"$py" "$plot" "$dir/ll.json" --out "$dir/ll" >"$dir/ll.out" || fail "plot.py on ll.json exited $?"
is_png "$dir/ll/loaded-latency.png"
# ... and from a real (tiny) run through --plot, where there is a core for the traffic thread.
if [ "$(nproc)" -ge 2 ]; then
  rc=0
  "$compas" membw --loaded-latency --size 1MiB --mix read --delays 0,1000 --repeats 1 \
    --min-repeat-ms 1 --quiet --plot "$dir/llrun" >"$dir/llrun.out" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || { cat "$dir/llrun.out"; fail "compas membw --loaded-latency --plot exited $rc"; }
  [ -s "$dir/llrun/loaded-latency.json" ] || fail "--loaded-latency --plot wrote no JSON"
  is_png "$dir/llrun/loaded-latency.png"
fi

# 3. Another command: the generic plot, or a message and no plot when there is no x variable.
cat >"$dir/other.json" <<'EOF'
{"command": "sweep", "results": [
  {"bytes": 8, "latency_us": 1.5, "verified": true},
  {"bytes": 4096, "latency_us": 3.0, "verified": true}]}
EOF
cat >"$dir/nox.json" <<'EOF'
{"command": "summary", "results": [{"seconds": 1.5}]}
EOF
"$py" "$plot" "$dir/other.json" "$dir/nox.json" --out "$dir/gen" >"$dir/gen.out" ||
  fail "plot.py on other commands exited $?"
is_png "$dir/gen/sweep.png"
[ ! -e "$dir/gen/summary.png" ] || fail "summary.png written without an x variable"
grep -q "skipped" "$dir/gen.out" || fail "no message for the skipped report"

# 4. Not a compas report: exit 2, with a message, nothing written.
printf 'this is { not json' >"$dir/garbage.json"
echo '[1, 2, 3]' >"$dir/array.json"
for bad in "$dir/garbage.json" "$dir/array.json" "$dir/missing.json"; do
  rc=0
  "$py" "$plot" "$bad" --out "$dir/bad" 2>"$dir/bad.err" || rc=$?
  [ "$rc" -eq 2 ] || fail "plot.py $bad exited $rc, not 2"
  grep -q "plot.py: " "$dir/bad.err" || fail "plot.py $bad gave no message"
done
[ -z "$(ls "$dir/bad" 2>/dev/null)" ] || fail "plot.py wrote files for bad input"

echo "ok"
