# check_study DIR: what a finished `compas study --kernels cg --grid 1x1,2x1` run through srun
# must have left in DIR. Sourced by study.sh and sbatch.sh (after common.sh).
# shellcheck shell=bash
check_study() {
  local d=$1 p f
  [[ -s $d/report.md ]] || { echo "FAIL: no report at $d/report.md"; return 1; }
  [[ -s $d/runs.jsonl ]] || { echo "FAIL: no $d/runs.jsonl"; return 1; }
  # Every run finished, and the kernel runs of both grid points are among them.
  python3 - "$d/runs.jsonl" <<'PY' || return 1
import json, sys
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = [r["id"] for r in runs if r.get("exit") != 0]
ids = {r["id"] for r in runs}
need = [s for s in ("p1t1", "p2t1") if not any(i.startswith("cg_") and i.endswith(s) for i in ids)]
for r in runs:
    print(f"  run {r['id']}: exit {r.get('exit')}, {r.get('seconds', 0):.1f} s")
if bad or need:
    print(f"FAIL: runs not finished: {bad}; grid points without a cg run: {need}")
    sys.exit(1)
PY
  # The kernel runs went through srun: the mpi bootstrap, P processes (compas-run would say tcp).
  for p in 1 2; do
    for f in "$d"/raw/cg_*_p${p}t1.json; do
      [[ -e $f ]] || { echo "FAIL: no raw JSON for cg on $p x 1"; return 1; }
      json_check "$f" "d['params']['bootstrap'] == 'mpi' and d['params']['processes'] == $p" || {
        echo "FAIL: $f was not a $p-process job over the mpi bootstrap"; return 1; }
    done
  done
  # The report lists both grid points of every cg table, verified.
  grep -qE '^\| 1 x 1 \|.*\| yes \|$' "$d/report.md" && grep -qE '^\| 2 x 1 \|.*\| yes \|$' "$d/report.md" || {
    echo "FAIL: report.md lists no verified 1 x 1 and 2 x 1 rows:"; grep -E '^\| [0-9]+ x [0-9]+ \|' "$d/report.md"
    return 1; }
  if grep -q '^## Failed runs' "$d/report.md"; then
    echo "FAIL: report.md lists failed runs:"; sed -n '/^## Failed runs/,/^## /p' "$d/report.md"
    return 1
  fi
  grep -E '^\| [0-9]+ x [0-9]+ \|' "$d/report.md"
  return 0
}
