#!/bin/sh
# Every figure of a study, recomputed from its raw records by a second implementation
# (study_check.py): a small study whose runs of one point are made to do different work (run r of
# every point does r times the sweeps, multiplies or sorts: --vary-work), then report.md's kernel
# tables, study.json, study.csv, extrap/ and compas compare's output checked against the raw JSON.
# Usage: study_figures.sh COMPAS KERNELS
set -eu
compas=$1
kernels=$2
python=/usr/bin/python3
[ -x "$python" ] || python=python3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$compas" study --out "$dir/study" --kernels "$kernels" --budget 1 --repeats 3 --vary-work \
  --stream-size 16MiB --run-timeout 3600 --quiet
"$python" "$(dirname "$0")/study_check.py" "$dir/study" "$compas"
