#!/bin/sh
# What plot/plot.py's figures show (axes, ticks, error bars, legends, overlaps), read from
# its --describe output by check_plot_figures.py on hand-made compas reports.
# usage: test_plot_figures.sh PLOT_PY   (exit 77 = skipped: no python3 with matplotlib)
set -eu
here=$(dirname "$0")
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import matplotlib' >/dev/null 2>&1; then
    exec "$p" "$here/check_plot_figures.py" "$1"
  fi
done
echo "SKIP: no python3 with matplotlib (Debian: apt-get install python3-matplotlib)"
exit 77
