# Sourced by the test scripts of this directory: a clean environment that points at the one-node
# Slurm of slurm_node.sh, or exit 77 (CTest's skip) when none is up.
# shellcheck shell=bash
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
slurm_dir=${COMPAS_SLURM_DIR-}
# Nothing left from the caller may select another bootstrap or another Slurm.
# shellcheck disable=SC2046
unset $(compgen -e | grep -E '^(COMPAS_|OMPI_|PMI_|PMIX_|SLURM_)') 2>/dev/null || true
[[ -n $slurm_dir ]] && export COMPAS_SLURM_DIR=$slurm_dir
if ! env_line=$("$here/slurm_node.sh" env); then
  echo "SKIP: no Slurm node is up (the slurm.node.start fixture was skipped or failed)"
  exit 77
fi
eval "$env_line"

fail() {
  echo "FAIL: $*"
  exit 1
}

# json_check FILE PYTHON-EXPR: the expression, over the parsed file as `d`, must be true.
json_check() {
  python3 - "$1" "$2" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"cannot read {sys.argv[1]}: {e}")
    sys.exit(1)
ok = eval(sys.argv[2], {"d": d})
if not ok:
    print(f"{sys.argv[1]}: not true: {sys.argv[2]}")
sys.exit(0 if ok else 1)
PY
}

# job_pids JOBID: pids of the processes (on this host) that belong to Slurm job JOBID: its tasks
# carry SLURM_JOB_ID in their environment.
job_pids() {
  local pid
  for pid in /proc/[0-9]*; do
    pid=${pid#/proc/}
    [[ $pid == "$$" || $pid == "$BASHPID" ]] && continue
    { tr '\0' '\n' <"/proc/$pid/environ"; } 2>/dev/null | grep -qxF "SLURM_JOB_ID=$1" && echo "$pid"
  done
}
