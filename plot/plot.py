#!/usr/bin/env python3
"""Turn compas JSON results into PNG plots.

usage: plot.py FILE.json [FILE2.json ...] --out DIR [--describe FILE]

Each file is one compas report, as every compas command writes with --json: an object with
"command" (the command's name), "version", "machine" (the host: cpu_model, cores, pus, caches,
hostname, ...), "params" (what the run was asked to do) and "results" (a list of records, one
object per measured point). The plot depends on the report's "command"; wherever a record holds
the range of a value over its repeats (min_F/max_F, F_min/F_max, NAME_min_UNIT/NAME_max_UNIT, or
an F_samples / F_range list) the plot draws it as error bars:

  barrier   ns per barrier (log y) against what varies, threads or processes (a process
            barrier under compas-run), one line per algorithm / wait policy, the legend beside
            the axes; with one thread or process count, a bar per algorithm / policy
  pingpong  time per operation and MB/s against message size (log2 x, log y), one line per op
            labelled with what it times (measure_text), the legend below the panels
  membw     total and per-thread GB/s vs threads, one line per kernel
  cache     ns per load vs working-set size (log2 x) for the chase and the stream, with hwloc's
            cache sizes and the detected knees as vertical lines; stream GB/s vs size
  topology  hwloc's picture of the machine (lstopo --of png) as topology.png when lstopo is
            installed and the report comes from this host; else the placement table (thread,
            cpu, core, socket) as topology-placement.png
  loaded-latency  (compas membw --loaded-latency) chase latency vs traffic bandwidth, one curve
            per mix with each point's min..max, the idle latency and 2x idle lines, and each
            mix's knee (where latency reaches 2x idle) marked
  study     (compas study's study.json) speedup against P x T per kernel size, and the kernels'
            bandwidth against the memory streams and the loaded-latency curve (study-bus)
  other     every numeric field vs the first of "threads", "size_bytes", "bytes" found in the
            records, one line per combination of the records' text fields; skipped (with a
            message) when the records have none of them

Writes DIR/<command>[-<name>].png (with the file's name added when two files hold the same
command) and prints each path written. --describe FILE also writes a JSON list describing each
figure (scales, labelled ticks, axis labels, error bars, legends and the data points they cover,
overlapping labels), which the tests read. Exits 2 when a file cannot be read or is not a compas
report, 1 when matplotlib is missing. Needs python3 and matplotlib only.
"""

import argparse
import json
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside an installed script
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from plot_common import Writer  # noqa: E402
from plot_probes import (plot_barrier, plot_cache, plot_generic,  # noqa: E402
                         plot_loaded_latency, plot_membw, plot_pingpong, plot_topology)
from plot_study import plot_study  # noqa: E402


class BadInput(Exception):
    pass


def load_report(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as e:
        raise BadInput(f"{path}: cannot read: {e.strerror or e}")
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BadInput(f"{path}: not valid JSON: {e}")
    if not isinstance(data, dict):
        raise BadInput(f"{path}: not a compas report (expected a JSON object)")
    command = data.get("command")
    if not isinstance(command, str) or not command:
        raise BadInput(f'{path}: not a compas report (no "command" string)')
    results = data.get("results")
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        raise BadInput(f'{path}: not a compas report ("results" must be a list of objects)')
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in command)
    data["command"] = safe
    return data


PLOTTERS = {"barrier": plot_barrier, "membw": plot_membw, "cache": plot_cache,
            "topology": plot_topology, "study": plot_study,
            "loaded-latency": plot_loaded_latency, "pingpong": plot_pingpong}


def main(argv):
    parser = argparse.ArgumentParser(
        prog="plot.py", description="Turn compas JSON results into PNG plots.")
    parser.add_argument("files", nargs="+", metavar="FILE.json", help="compas JSON reports")
    parser.add_argument("--out", required=True, metavar="DIR", help="directory for the PNGs")
    parser.add_argument("--describe", metavar="FILE",
                        help="also write FILE: a JSON list describing each figure drawn (axes "
                             "scales, labelled ticks, labels, error bars, legend), for tests")
    args = parser.parse_args(argv)

    reports = []
    try:
        for path in args.files:
            r = load_report(path)
            r["_path"] = path
            reports.append(r)
    except BadInput as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        print(f"plot.py: --out {args.out}: cannot create the directory: {e.strerror}",
              file=sys.stderr)
        return 2
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py: matplotlib is needed (Debian: apt-get install python3-matplotlib; "
              "elsewhere: python3 -m pip install matplotlib)", file=sys.stderr)
        return 1

    commands = [r["command"] for r in reports]
    w = Writer(plt, args.out, [] if args.describe else None)
    for r in reports:
        base = r["command"]
        if commands.count(base) > 1:
            stem = os.path.splitext(os.path.basename(r["_path"]))[0]
            base += "-" + "".join(c if c.isalnum() or c in "-_." else "_" for c in stem)
        PLOTTERS.get(r["command"], plot_generic)(r, w, base)
    if args.describe:
        with open(args.describe, "w", encoding="utf-8") as f:
            json.dump(w.describe, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
