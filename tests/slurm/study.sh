#!/usr/bin/env bash
# A small study through srun: `compas study --launcher "srun -n {P} -c {T} --mpi=pmix" --kernels cg
# --grid 1x1,2x1` must exit 0, record every run as finished, launch the kernel runs through srun
# (their JSON shows the mpi bootstrap with P processes), and list both grid points, verified, in
# report.md.
# Usage: study.sh COMPAS
set -u
source "$(dirname "$0")/common.sh"
compas=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cmd=("$compas" study --launcher "srun -n {P} -c {T} --mpi=pmix" --out "$dir/study"
     --budget 0.2 --kernels cg --grid 1x1,2x1 --stream-size 16MiB)
echo "+ ${cmd[*]}"
COMPAS_TIMEOUT=30 timeout 300 "${cmd[@]}" 2>&1
rc=$?
[[ $rc -eq 0 ]] || fail "compas study exited $rc"
source "$here/check_study.sh"
check_study "$dir/study" || exit 1
echo "PASS: study through srun"
