#!/usr/bin/env bash
# The batch script of docs/SLURM.md, as written there: the bash block after the
# "sbatch-example" marker is submitted with `sbatch --wait` (a small study: --budget 0.1
# --kernels cg --grid 1x1,2x1), which must succeed, and the report it leaves in
# compas-study-JOBID/ must list both grid points as the study test requires.
# Usage: sbatch.sh COMPAS DOC
set -u
source "$(dirname "$0")/common.sh"
compas=$(realpath "$1") doc=$(realpath "$2")
name=compas-sbatch-$$
dir=$(mktemp -d)
trap 'scancel -n "$name" 2>/dev/null; rm -rf "$dir"' EXIT

awk '/<!-- sbatch-example/ {m = 1; next} m && /^```bash$/ {c = 1; next} c && /^```$/ {exit}
     c {print}' "$doc" >"$dir/compas-study.sbatch"
grep -q '^#SBATCH' "$dir/compas-study.sbatch" && grep -q 'compas study' "$dir/compas-study.sbatch" ||
  fail "no batch script after the sbatch-example marker in $doc"
echo "--- $doc's batch script:"
cat "$dir/compas-study.sbatch"
echo "---"

# The script calls `compas` from the PATH, which sbatch hands on to the job.
PATH="$(dirname "$compas"):$PATH"
export PATH
cd "$dir" || exit 1
out=$(timeout 300 sbatch --wait -J "$name" "$dir/compas-study.sbatch" \
        --budget 0.1 --kernels cg --grid 1x1,2x1 --stream-size 16MiB 2>&1)
rc=$?
echo "$out"
jobid=$(sed -n 's/^Submitted batch job \([0-9]*\).*/\1/p' <<<"$out")
[[ -n $jobid ]] || fail "sbatch submitted no job"
log=$dir/compas-study-$jobid.out
if [[ $rc -ne 0 ]]; then
  cat "$log" 2>/dev/null
  fail "sbatch --wait exited $rc (job $jobid)"
fi
[[ -s $log ]] || fail "no job output $log (the script's #SBATCH --output)"
echo "--- job output:"
tail -5 "$log"
source "$here/check_study.sh"
check_study "$dir/compas-study-$jobid" || exit 1
echo "PASS: the batch script of $doc ran the study (job $jobid)"
