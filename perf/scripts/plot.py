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
  topology  the placement table as an image
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
import math
import os
import sys
from collections import OrderedDict

X_KEYS = ("threads", "size_bytes", "bytes")


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


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def spread_of(r, field):
    """(low, high) of `field` over a record's repeats: its min_F/max_F, F_min/F_max or, the unit
    kept last, NAME_min_UNIT/NAME_max_UNIT (latency_min_ns), else the range of its F_samples or
    F_range list; None when the record has none."""
    head, sep, unit = field.rpartition("_")
    pairs = [(f"min_{field}", f"max_{field}"), (f"{field}_min", f"{field}_max")]
    if sep and head:
        pairs.append((f"{head}_min_{unit}", f"{head}_max_{unit}"))
    for lo, hi in pairs:
        if is_number(r.get(lo)) and is_number(r.get(hi)):
            return r[lo], r[hi]
    for key in (f"{field}_samples", f"{field}_range"):
        v = r.get(key)
        if isinstance(v, list) and v and all(is_number(x) for x in v):
            return min(v), max(v)
    return None


def spread_fields(field):
    """The names spread_of reads for `field`: not plotted as values of their own."""
    head, sep, unit = field.rpartition("_")
    names = {f"min_{field}", f"max_{field}", f"{field}_min", f"{field}_max",
             f"{field}_samples", f"{field}_range"}
    if sep and head:
        names |= {f"{head}_min_{unit}", f"{head}_max_{unit}"}
    return names


def yerr_of(rs, field, scale=None):
    """Error bars (below, above) for errorbar() from each record's min..max of `field`, times
    scale(r) when given; None when no record has a spread."""
    lo, hi, any_spread = [], [], False
    for r in rs:
        s = spread_of(r, field)
        k = scale(r) if scale else 1.0
        v = r[field] * k
        any_spread |= s is not None
        lo.append(max(0.0, v - s[0] * k) if s else 0.0)
        hi.append(max(0.0, s[1] * k - v) if s else 0.0)
    return [lo, hi] if any_spread else None


def format_bytes(b):
    for unit, name in ((1 << 40, "T"), (1 << 30, "G"), (1 << 20, "M"), (1 << 10, "K")):
        if b >= unit:
            v = b / unit
            return f"{v:.0f}{name}" if abs(v - round(v)) < 1e-9 else f"{v:.3g}{name}"
    return f"{b:.0f}"


def format_bytes_long(b):
    for unit, name in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if b >= unit:
            v = b / unit
            return f"{v:.0f} {name}" if abs(v - round(v)) < 1e-9 else f"{v:.3g} {name}"
    return f"{b:.0f} B"


def machine_title(report):
    m = report.get("machine")
    if not isinstance(m, dict):
        return ""
    parts = []
    if isinstance(m.get("cpu_model"), str):
        parts.append(" ".join(m["cpu_model"].split()))
    if is_number(m.get("cores")) and is_number(m.get("pus")):
        parts.append(f"{m['cores']} cores, {m['pus']} PUs")
    if isinstance(m.get("hostname"), str):
        parts.append(m["hostname"])
    return ", ".join(parts)


def size_axis(ax, plt):
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: format_bytes(v)))


class Writer:
    def __init__(self, plt, out_dir, describe=None):
        self.plt = plt
        self.out_dir = out_dir
        self.written = []
        self.describe = describe  # a list the figures' descriptions go to, or None

    def path(self, base, name=None):
        return os.path.join(self.out_dir, base + (f"-{name}" if name else "") + ".png")

    def save(self, fig, base, name=None, rect=None):
        """Writes the figure; `rect` keeps room for a legend drawn outside the axes."""
        path = self.path(base, name)
        if rect:
            fig.tight_layout(rect=rect)
        else:
            fig.tight_layout()
        if self.describe is not None:
            self.describe.append(describe_figure(fig, os.path.basename(path)))
        fig.savefig(path, dpi=110)
        self.plt.close(fig)
        self.done(path)

    def done(self, path, what=None):
        print(path + (f" ({what})" if what else ""))
        self.written.append(path)


# ---- what a figure shows, for tests (--describe) ---------------------------------------------

def overlaps(a, b):
    return a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1


def labelled_ticks(axis):
    """The tick positions that carry a label, major and minor."""
    ticks = list(axis.get_major_ticks()) + list(axis.get_minor_ticks())
    lo, hi = sorted(axis.get_view_interval())
    return sorted({float(t.get_loc()) for t in ticks
                   if t.label1.get_visible() and t.label1.get_text()
                   and lo - 1e-9 * abs(hi) <= t.get_loc() <= hi + 1e-9 * abs(hi)})


def marker_points(ax):
    """The display positions of every data point drawn with a marker."""
    pts = []
    for line in ax.lines:
        if line.get_marker() in (None, "None", "", " ") or not line.get_visible():
            continue
        xy = line.get_xydata()
        if len(xy):
            pts.extend(line.get_transform().transform(xy))
    return pts


def describe_axes(ax, renderer, legends):
    from matplotlib.container import BarContainer, ErrorbarContainer
    points = marker_points(ax)
    covered = 0
    for leg in legends:
        box = leg.get_window_extent(renderer)
        covered += sum(1 for x, y in points if box.x0 <= x <= box.x1 and box.y0 <= y <= box.y1)
    leg = ax.get_legend()
    ticks = [t.get_window_extent(renderer) for t in ax.get_xticklabels() + ax.get_yticklabels()
             if t.get_visible() and t.get_text()]
    return {
        "title": ax.get_title(),
        "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
        "xscale": ax.get_xscale(), "yscale": ax.get_yscale(),
        "xticks": labelled_ticks(ax.xaxis), "yticks": labelled_ticks(ax.yaxis),
        "xticklabels": [t.get_text() for t in ax.get_xticklabels() if t.get_text()],
        "errorbars": sum(1 for c in ax.containers
                         if isinstance(c, ErrorbarContainer) and (c.has_yerr or c.has_xerr)),
        "bars": sum(1 for c in ax.containers if isinstance(c, BarContainer)),
        "lines": sum(1 for ln in ax.lines if not ln.get_label().startswith("_")),
        "legend_labels": [t.get_text() for t in leg.get_texts()] if leg else [],
        "points_under_legends": covered,
        "texts": [t.get_text() for t in ax.texts],
        "overlapping_ticklabels": sum(1 for i in range(len(ticks)) for j in range(i)
                                      if overlaps(ticks[i], ticks[j])),
    }


def describe_figure(fig, fname):
    """What the figure shows: per axes its scales, labelled ticks, labels, error-bar containers,
    bars, legend, the data points a legend covers, and how many text pairs overlap."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    axes = [ax for ax in fig.axes if ax.axison]
    legends = [ax.get_legend() for ax in axes if ax.get_legend()] + list(fig.legends)
    boxes = [t.get_window_extent(renderer) for ax in axes for t in ax.texts
             if t.get_visible() and t.get_text()]
    boxes += [leg.get_window_extent(renderer) for leg in legends]
    overlapping = sum(1 for i in range(len(boxes)) for j in range(i) if overlaps(boxes[i], boxes[j]))
    return {"file": fname, "source": "matplotlib",
            "axes": [describe_axes(ax, renderer, legends) for ax in axes],
            "figure_legends": len(fig.legends),
            "figure_legend_labels": [t.get_text() for leg in fig.legends for t in leg.get_texts()],
            "overlapping_texts": overlapping,
            "tables": sum(len(ax.tables) for ax in fig.axes)}


def finish(fig, ax, report, title):
    sub = machine_title(report)
    ax.set_title(title + (f"\n{sub}" if sub else ""), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)


# ---- barrier ---------------------------------------------------------------------------------

def barrier_x(recs):
    """What varies across a barrier report: "processes" for a process barrier (compas barrier
    under compas-run), "threads" otherwise."""
    def varies(k):
        return len({r.get(k) for r in recs}) > 1
    if any(is_number(r.get("processes")) for r in recs) and (
            varies("processes") or not varies("threads")):
        return "processes"
    return "threads"


def barrier_series(recs):
    series = OrderedDict()
    for r in recs:
        key = f"{r.get('algorithm', '?')} / {r.get('policy', '?')}"
        if r.get("chosen"):
            key += " (chosen)"
        series.setdefault(key, []).append(r)
    return series


def barrier_bars(ax, series, x):
    """One value of x (P=2, say): a bar per algorithm / policy with its min..max."""
    keys = list(series)
    rs = [series[k][0] for k in keys]
    ax.bar(range(len(keys)), [r["ns_per_barrier"] for r in rs],
           yerr=yerr_of(rs, "ns_per_barrier"), capsize=4,
           color=[f"C{i % 10}" for i in range(len(keys))])
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(keys, fontsize=8)
    value = rs[0].get(x)
    ax.set_xlabel(f"algorithm / wait policy, at {x} = {value}")
    ax.set_ylim(bottom=0)
    return f"{'process' if x == 'processes' else 'thread'} barrier latency, {x} = {value}"


def barrier_lines(ax, series, x, plt):
    algos = list(OrderedDict.fromkeys(r.get("algorithm", "?") for rs in series.values()
                                      for r in rs))
    policies = list(OrderedDict.fromkeys(r.get("policy", "?") for rs in series.values()
                                         for r in rs))
    styles = ["-", "--", ":", "-."]
    markers = ["o", "s", "^", "D", "v", "P", "X"]
    for key, rs in series.items():
        rs.sort(key=lambda r: r[x])
        ai, pi = algos.index(rs[0].get("algorithm", "?")), policies.index(rs[0].get("policy", "?"))
        ax.errorbar([r[x] for r in rs], [r["ns_per_barrier"] for r in rs],
                    yerr=yerr_of(rs, "ns_per_barrier"), label=key, capsize=2,
                    color=f"C{ai % 10}", linestyle=styles[pi % len(styles)],
                    marker=markers[pi % len(markers)])
    ax.set_xlabel(x)
    ax.set_xticks(sorted({r[x] for rs in series.values() for r in rs}))
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.set_yscale("log")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)
    return "barrier latency (bars: min..max over the repeats)"


def plot_barrier(report, w, base):
    """ns per barrier (log y) against what varies, threads or processes, one line per algorithm
    / wait policy; a bar per algorithm / policy when there is one thread or process count;
    min..max over the repeats as error bars."""
    recs = [r for r in report["results"] if is_number(r.get("ns_per_barrier"))]
    x = barrier_x(recs)
    recs = [r for r in recs if is_number(r.get(x))]
    if not recs:
        return plot_generic(report, w, base)
    series = barrier_series(recs)
    one = len({r[x] for r in recs}) == 1
    fig, ax = w.plt.subplots(figsize=(8 if one else 10, 5))
    title = barrier_bars(ax, series, x) if one else barrier_lines(ax, series, x, w.plt)
    ax.set_ylabel("ns per barrier")
    finish(fig, ax, report, title)
    w.save(fig, base)


# ---- membw -----------------------------------------------------------------------------------

def plot_membw(report, w, base):
    recs = [r for r in report["results"]
            if is_number(r.get("threads")) and is_number(r.get("bandwidth_gbs"))]
    if not recs:
        return plot_generic(report, w, base)
    plt = w.plt
    sizes = {r.get("working_set_bytes", r.get("size_bytes")) for r in recs}
    lines = OrderedDict()
    for r in recs:
        key = str(r.get("kernel", "?"))
        if len(sizes) > 1:
            s = r.get("working_set_bytes", r.get("size_bytes"))
            key += f" {format_bytes_long(s)}" if is_number(s) else ""
        lines.setdefault(key, []).append(r)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    for i, (key, rs) in enumerate(lines.items()):
        rs.sort(key=lambda r: r["threads"])
        x = [r["threads"] for r in rs]
        style = dict(marker="o", capsize=3, label=key, color=f"C{i % 10}")
        ax1.errorbar(x, [r["bandwidth_gbs"] for r in rs], yerr=yerr_of(rs, "bandwidth_gbs"),
                     **style)
        per = [r.get("per_thread_gbs") for r in rs]
        if not all(is_number(v) for v in per):
            per = [r["bandwidth_gbs"] / r["threads"] if r["threads"] else float("nan") for r in rs]
        share = {id(r): (v / r["bandwidth_gbs"] if r["bandwidth_gbs"] else 0.0)
                 for r, v in zip(rs, per)}
        ax2.errorbar(x, per, yerr=yerr_of(rs, "bandwidth_gbs", lambda r: share[id(r)]), **style)
    threads = sorted({r["threads"] for r in recs})
    for ax, what in ((ax1, "total GB/s"), (ax2, "GB/s per thread")):
        ax.set_xlabel("threads")
        ax.set_ylabel(what)
        ax.set_xticks(threads)
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=8)
        ax.grid(True, alpha=0.3)
    ax1.set_title("memory bandwidth (total)", fontsize=10)
    sub = machine_title(report)
    ax2.set_title("per thread" + (f"\n{sub}" if sub else ""), fontsize=10)
    w.save(fig, base)


# ---- cache -----------------------------------------------------------------------------------

def cache_levels(report):
    m = report.get("machine")
    out = []
    if not isinstance(m, dict) or not isinstance(m.get("caches"), list):
        return out
    pus_per_core = 1
    if is_number(m.get("pus")) and is_number(m.get("cores")) and m["cores"] > 0:
        pus_per_core = max(1, m["pus"] // m["cores"])
    for c in m["caches"]:
        if not isinstance(c, dict) or c.get("type") == "instruction":
            continue
        if not is_number(c.get("size_bytes")) or not is_number(c.get("level")):
            continue
        name = f"L{c['level']}" + ("d" if c.get("type") == "data" else "")
        label = f"{name} {format_bytes_long(c['size_bytes'])}"
        if is_number(c.get("shared_by")) and c["shared_by"] // pus_per_core > 1:
            label += f" shared by {c['shared_by'] // pus_per_core} cores"
        out.append((c["size_bytes"], label + " (hwloc)"))
    return out


def plot_cache(report, w, base):
    res = report["results"]
    series = OrderedDict()
    for r in res:
        if r.get("pattern") in ("chase", "stream") and is_number(r.get("size_bytes")) \
                and is_number(r.get("ns_per_load")):
            series.setdefault(r["pattern"], []).append(r)
    if not series:
        return plot_generic(report, w, base)
    knees = [r for r in res if r.get("pattern") == "knee" and is_number(r.get("size_bytes"))]
    plt = w.plt
    sizes = [r["size_bytes"] for rs in series.values() for r in rs]
    lo, hi = min(sizes), max(sizes)

    def marks(ax, with_labels):
        for size, label in cache_levels(report):
            if lo / 2 <= size <= hi * 2:
                ax.axvline(size, color="C2", linewidth=4, alpha=0.35,
                           label=label if with_labels else None)
        for k in knees:
            label = f"knee {format_bytes_long(k['size_bytes'])}"
            if isinstance(k.get("cache"), str) and k["cache"]:
                label += f" ↔ {k['cache']}"
            ax.axvline(k["size_bytes"], color="C3", linestyle="--", linewidth=1,
                       label=label if with_labels else None)

    fig, ax = plt.subplots(figsize=(9, 5.5))
    labels = {"chase": "random pointer chase (latency)",
              "stream": "sequential read (ns per 8-byte load)"}
    for i, (pattern, rs) in enumerate(series.items()):
        rs.sort(key=lambda r: r["size_bytes"])
        ax.errorbar([r["size_bytes"] for r in rs], [r["ns_per_load"] for r in rs],
                    yerr=yerr_of(rs, "ns_per_load"), marker=".", capsize=1.5,
                    label=labels.get(pattern, pattern), color=f"C{i}")
    size_axis(ax, plt)
    ax.set_yscale("log")
    ax.set_xlabel("working set")
    ax.set_ylabel("ns per load")
    marks(ax, True)
    ax.legend(fontsize=8)
    finish(fig, ax, report, "ns per load vs working-set size")
    w.save(fig, base)

    stream = [r for r in series.get("stream", []) if is_number(r.get("bandwidth_gbs"))]
    if stream:
        fig, ax = plt.subplots(figsize=(9, 4.5))
        gbs = [r["bandwidth_gbs"] for r in stream]
        ranges = [rate_range(r, "bandwidth_gbs", "ns_per_load") for r in stream]
        below = [v - q[0] if q else 0.0 for v, q in zip(gbs, ranges)]
        above = [q[1] - v if q else 0.0 for v, q in zip(gbs, ranges)]
        ax.errorbar([r["size_bytes"] for r in stream], gbs, marker=".", capsize=1.5, color="C1",
                    yerr=[below, above] if any(below) or any(above) else None,
                    label="sequential read")
        size_axis(ax, plt)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("working set")
        ax.set_ylabel("GB/s")
        marks(ax, True)
        ax.legend(fontsize=8)
        finish(fig, ax, report, "read bandwidth vs working-set size")
        w.save(fig, base, "bandwidth")


# ---- loaded latency --------------------------------------------------------------------------

def load_order(r):
    """Idle first, then the delays largest first: the order of rising offered load."""
    d = r.get("delay_ns")
    return (0, 0) if not is_number(d) else (1, -d)


def plot_loaded_latency(report, w, base):
    recs = [r for r in report["results"]
            if is_number(r.get("bandwidth_gbs")) and is_number(r.get("latency_ns"))]
    if not recs:
        return plot_generic(report, w, base)
    params = report.get("params") if isinstance(report.get("params"), dict) else {}
    knees = params.get("knees") if isinstance(params.get("knees"), dict) else {}
    factor = params.get("knee_factor") if is_number(params.get("knee_factor")) else 2
    curves = OrderedDict()
    for r in recs:
        curves.setdefault(str(r.get("mix", "?")), []).append(r)
    plt = w.plt
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for i, (mix, rs) in enumerate(curves.items()):
        rs.sort(key=load_order)
        x = [r["bandwidth_gbs"] for r in rs]
        y = [r["latency_ns"] for r in rs]
        color = f"C{i % 10}"
        ax.errorbar(x, y, yerr=yerr_of(rs, "latency_ns"), xerr=yerr_of(rs, "bandwidth_gbs"),
                    marker="o", markersize=4, capsize=2, color=color, label=mix)
        knee = knees.get(mix) if isinstance(knees.get(mix), dict) else {}
        if knee.get("reached") and is_number(knee.get("bandwidth_gbs")):
            ax.axvline(knee["bandwidth_gbs"], color=color, linestyle="--", linewidth=1,
                       label=f"{mix} knee {knee['bandwidth_gbs']:.2f} GB/s")
            if is_number(knee.get("threshold_ns")):
                ax.plot([knee["bandwidth_gbs"]], [knee["threshold_ns"]], marker="X",
                        markersize=11, color=color, linestyle="none")
        elif knee:
            top = knee.get("max_bandwidth_gbs")
            note = f" up to {top:.2f} GB/s" if is_number(top) else ""
            ax.plot([], [], color=color, marker="s", linestyle="none",
                    label=f"{mix}: no knee{note}")
    idle = params.get("idle_latency_ns")
    if is_number(idle) and idle > 0:
        ax.axhline(idle, color="grey", linestyle=":", label=f"idle {idle:.1f} ns")
        ax.axhline(factor * idle, color="grey", linestyle="--", alpha=0.6,
                   label=f"{factor:g}x idle {factor * idle:.1f} ns")
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("traffic bandwidth, GB/s (read + written, no write-allocate)")
    ax.set_ylabel("chase latency, ns per dependent load")
    ax.legend(fontsize=8)
    finish(fig, ax, report, "loaded latency: latency vs bandwidth drawn by the other threads")
    w.save(fig, base)


# ---- pingpong --------------------------------------------------------------------------------

def spaced(sizes, ratio=4):
    """The sizes to label on a log axis, from the largest down, each `ratio` below the last."""
    out = []
    for v in sorted(sizes, reverse=True):
        if not out or out[-1] >= ratio * v:
            out.append(v)
    return sorted(out)


def mbs_of(r):
    v = r.get("bandwidth_mbs")
    return v if is_number(v) else r["bytes"] / r["latency_us"]


def rate_range(r, rate, time, value=None):
    """The range of a record's rate (bytes per time): its own, else the one its time's range
    gives, the rate being inversely proportional to the time."""
    s = spread_of(r, rate)
    if s:
        return s
    t = spread_of(r, time)
    v = r.get(rate) if value is None else value
    if not t or t[0] <= 0 or not is_number(v) or not is_number(r.get(time)):
        return None
    return v * r[time] / t[1], v * r[time] / t[0]


def plot_pingpong(report, w, base):
    """compas pingpong: time per operation and MB/s against message size (log2 x, log y), one
    line per op labelled with what it times, each point's min..max as error bars; the legend
    below the panels, off the data."""
    recs = [r for r in report["results"] if is_number(r.get("bytes")) and r["bytes"] > 0
            and is_number(r.get("latency_us")) and r["latency_us"] > 0]
    if not recs:
        return plot_generic(report, w, base)
    ops = OrderedDict()
    for r in recs:
        ops.setdefault(str(r.get("op", "?")), []).append(r)
    plt = w.plt
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 5))
    for i, (op, rs) in enumerate(ops.items()):
        rs.sort(key=lambda r: r["bytes"])
        text = rs[0].get("measure_text")
        label = f"{op}: {text}" if isinstance(text, str) and text else op
        x = [r["bytes"] for r in rs]
        style = dict(marker="o", markersize=4, capsize=2, color=f"C{i % 10}", label=label)
        ax1.errorbar(x, [r["latency_us"] for r in rs], yerr=yerr_of(rs, "latency_us"), **style)
        mbs = [mbs_of(r) for r in rs]
        ranges = [rate_range(r, "bandwidth_mbs", "latency_us", m) for r, m in zip(rs, mbs)]
        lo = [m - q[0] if q else 0.0 for m, q in zip(mbs, ranges)]
        hi = [q[1] - m if q else 0.0 for m, q in zip(mbs, ranges)]
        ax2.errorbar(x, mbs, yerr=[lo, hi] if any(lo) or any(hi) else None, **style)
    sizes = sorted({r["bytes"] for r in recs})
    for ax, what in ((ax1, "us per operation (see legend)"), (ax2, "MB/s (bytes / time)")):
        size_axis(ax, plt)
        ax.set_xticks(spaced(sizes))
        ax.xaxis.set_minor_locator(plt.NullLocator())
        ax.set_yscale("log")
        ax.set_xlabel("message size, bytes")
        ax.set_ylabel(what)
        ax.grid(True, which="both", alpha=0.3)
    ax1.set_title("time per operation (bars: min..max over the repeats)", fontsize=9)
    ax2.set_title("bandwidth", fontsize=9)
    handles, labels = ax1.get_legend_handles_labels()
    rows = (len(labels) + 1) // 2
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    sub = machine_title(report)
    fig.suptitle("pingpong between two processes" + (f": {sub}" if sub else ""), fontsize=10)
    w.save(fig, base, rect=(0, min(0.4, 0.02 + 0.045 * rows), 1, 1))


# ---- topology --------------------------------------------------------------------------------

def plot_topology(report, w, base):
    res = report["results"]
    if not res:
        print(f"plot.py: {report['_path']}: topology report without records; skipped")
        return
    plt = w.plt
    cols = list(OrderedDict.fromkeys(k for r in res for k in r))
    rows = [["" if r.get(c) is None else str(r.get(c)) for c in cols] for r in res]
    fig, ax = plt.subplots(figsize=(max(5, 1.1 * len(cols)), 0.9 + 0.3 * (len(rows) + 1)))
    ax.axis("off")
    table = ax.table(cellText=rows, colLabels=cols, loc="center", cellLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    sub = machine_title(report)
    ax.set_title("placement" + (f"\n{sub}" if sub else ""), fontsize=10)
    w.save(fig, base)


# ---- anything else ---------------------------------------------------------------------------

def plot_generic(report, w, base):
    res = report["results"]
    xkey = next((k for k in X_KEYS if any(is_number(r.get(k)) for r in res)), None)
    if xkey is None:
        print(f"plot.py: {report['_path']}: command '{report['command']}': the records have no "
              f"x variable ({', '.join(X_KEYS)}); skipped")
        return
    recs = [r for r in res if is_number(r.get(xkey))]
    ykeys = list(OrderedDict.fromkeys(
        k for r in recs for k, v in r.items() if k != xkey and is_number(v)))
    companions = set().union(*(spread_fields(k) for k in ykeys)) if ykeys else set()
    ykeys = [k for k in ykeys if k not in companions]
    if not ykeys:
        print(f"plot.py: {report['_path']}: command '{report['command']}': no numeric field "
              f"to plot against {xkey}; skipped")
        return
    textkeys = list(OrderedDict.fromkeys(
        k for r in recs for k, v in r.items() if isinstance(v, str)))
    plt = w.plt
    ncols = min(3, len(ykeys))
    nrows = (len(ykeys) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.5 * ncols, 3.4 * nrows), squeeze=False)
    groups = OrderedDict()
    for r in recs:
        key = " / ".join(str(r.get(k, "")) for k in textkeys)
        groups.setdefault(key, []).append(r)
    for i, y in enumerate(ykeys):
        ax = axes[i // ncols][i % ncols]
        for j, (key, rs) in enumerate(groups.items()):
            pts = sorted((r for r in rs if is_number(r.get(y))), key=lambda r: r[xkey])
            if pts:
                ax.errorbar([r[xkey] for r in pts], [r[y] for r in pts], yerr=yerr_of(pts, y),
                            marker=".", capsize=2, label=key or None, color=f"C{j % 10}")
        if xkey != "threads":
            size_axis(ax, plt)
        ax.set_xlabel(xkey)
        ax.set_title(y, fontsize=9)
        ax.grid(True, alpha=0.3)
        if len(groups) > 1 and i == 0:
            ax.legend(fontsize=7)
    for i in range(len(ykeys), nrows * ncols):
        axes[i // ncols][i % ncols].axis("off")
    sub = machine_title(report)
    fig.suptitle(report["command"] + (f": {sub}" if sub else ""), fontsize=10)
    w.save(fig, base)


def count_ticks(ax, plt, counts, most=12):
    """Integer x ticks at the counts drawn (P x T, threads), every k-th when there are many."""
    counts = sorted({int(c) for c in counts})
    step = max(1, -(-len(counts) // most))
    ticks = counts[::step]
    if counts and ticks[-1] != counts[-1]:
        ticks[-1] = counts[-1]
    ax.set_xticks(ticks)
    ax.xaxis.set_minor_locator(plt.NullLocator())


def speedup_panel(ax, plt, name, rs, weak=False):
    """One kernel size's speedups: a line per process count with the range over the runs as
    error bars, a red ring where the spread exceeds 10%, and the ideal line; x ticks at the
    P x T counts run."""
    top = 1
    for j, p in enumerate(sorted({r["procs"] for r in rs})):
        mine = sorted((r for r in rs if r["procs"] == p), key=lambda r: r["procs"] * r["threads"])
        x = [r["procs"] * r["threads"] for r in mine]
        y = [r["speedup"] for r in mine]
        ax.errorbar(x, y, yerr=yerr_of(mine, "speedup"), marker="o", color=f"C{j % 10}",
                    capsize=3, label=f"P={p}")
        for xi, yi, r in zip(x, y, mine):
            if r.get("oversubscribed"):
                ax.annotate("over", (xi, yi), xytext=(-4, 6), textcoords="offset points",
                            ha="right", fontsize=6)
            if r.get("wide_spread"):
                ax.plot([xi], [yi], marker="o", markersize=12, fillstyle="none",
                        color="red", linestyle="none")
        top = max(top, max(x))
    ax.plot([1, top], [1, top], linestyle=":", color="grey", label="ideal")
    count_ticks(ax, plt, [r["procs"] * r["threads"] for r in rs] + [1])
    ax.set_xlabel("total threads (P x T)")
    ax.set_ylabel("scaled speedup (rate vs 1 x 1)" if weak else "speedup vs 1 x 1")
    ax.set_title(name, fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)


def file_name_of(kernel_size):
    """"laplace n=640" -> "laplace_n640", as the study names its files."""
    return "".join(c if c.isalnum() else "_" for c in kernel_size if c.isalnum() or c == " ")


STUDY_LEGEND = "bars: range over the runs; red ring: spread > 10%"


def bus_streams(ax, bus, kernels):
    """Left panel: membw's load and copy against threads, each kernel's GB/s at its P x T; the
    kernels' best GB/s by name, for the right panel."""
    streams = bus.get("streams") or {}
    counts = [k["p"] for k in kernels]
    for j, name in enumerate(["load", "copy"]):
        pts = sorted(streams.get(name) or [])
        if not pts:
            continue
        counts += [q[0] for q in pts]
        ax.errorbar([q[0] for q in pts], [q[1] for q in pts],
                    yerr=[[q[1] - q[2] for q in pts], [q[3] - q[1] for q in pts]],
                    color=f"C{j}", marker="s", capsize=3, label=f"membw {name}")
    markers = "o^vD*Px"
    best = {}
    for i, name in enumerate(sorted({k["kernel_size"] for k in kernels})):
        ks = [k for k in kernels if k["kernel_size"] == name]
        color = "C0" if ks[0].get("stream") == "load" else "C1"
        ax.errorbar([k["p"] for k in ks], [k["gbs"] for k in ks], yerr=yerr_of(ks, "gbs"),
                    marker=markers[i % len(markers)], linestyle="none", color=color,
                    markerfacecolor="white", capsize=2, label=f"{name} (vs {ks[0].get('stream')})")
        best[name] = max(k["gbs"] for k in ks)
    ax.set_xlabel("threads (membw) / P x T (kernels)")
    ax.set_ylabel("GB/s")
    ax.set_title("kernels' bandwidth (byte model) against their stream", fontsize=9)
    ax.grid(True, alpha=0.3)
    return counts, best


def bus_curve(ax, bus, curve, best):
    """Right panel: the loaded-latency curves, the idle and 2x idle lines, and each kernel's best
    bandwidth as a vertical line named in the legend (names written on the chart collide when
    two kernels reach about the same bandwidth)."""
    for j, mix in enumerate(sorted({c["mix"] for c in curve})):
        pts = [c for c in sorted(curve, key=lambda c: c["bandwidth_gbs"]) if c["mix"] == mix]
        ax.errorbar([c["bandwidth_gbs"] for c in pts], [c["latency_ns"] for c in pts],
                    yerr=yerr_of(pts, "latency_ns"), marker="o", capsize=2, color=f"C{j + 2}",
                    label=f"loaded latency, {mix}")
    idle = bus.get("idle_latency_ns")
    if is_number(idle):
        ax.axhline(idle, color="grey", linestyle=":", label=f"idle {idle:.0f} ns")
        ax.axhline(2 * idle, color="red", linestyle=":", label="2x idle (knee)")
    styles = ["--", "-.", ":", (0, (5, 1, 1, 1, 1, 1))]
    for i, (name, gbs) in enumerate(sorted(best.items(), key=lambda kv: kv[1])):
        ax.axvline(gbs, color=f"C{(i + 4) % 10}", linestyle=styles[i % len(styles)],
                   linewidth=1.2, label=f"{name} best {gbs:.1f} GB/s")
    ax.set_xlabel("bandwidth GB/s")
    ax.set_ylabel("dependent-load latency ns")
    ax.set_title("loaded latency, with each kernel's best bandwidth", fontsize=9)
    ax.grid(True, alpha=0.3)


def plot_bus(report, w, base):
    """The kernels against the bus: left, compas membw's load and copy bandwidth against threads
    with each kernel's bandwidth (byte model) at its P x T, marked by the stream it matches;
    right, the loaded-latency curve with each kernel's best bandwidth as a vertical line. The
    legends sit below the panels, off the data."""
    bus = report.get("bus") or {}
    kernels = bus.get("kernels") or []
    if not kernels:
        return
    plt = w.plt
    curve = [c for c in bus.get("curve") or [] if not c.get("idle")]
    fig, axes = plt.subplots(1, 2 if curve else 1, figsize=(12 if curve else 6.5, 6.5),
                             squeeze=False)
    counts, best = bus_streams(axes[0][0], bus, kernels)
    count_ticks(axes[0][0], plt, counts)
    if curve:
        bus_curve(axes[0][1], bus, curve, best)
    for ax in axes[0]:
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2)
    sub = machine_title(report)
    fig.suptitle("compas study: the kernels against the bus" + (f"\n{sub}" if sub else ""),
                 fontsize=10)
    w.save(fig, base, "bus")


def plot_study(report, w, base):
    """compas study: speedup against total threads, one line per process count, one panel per
    kernel and size (COMPaS Figs. 5-10), with the ideal line; all panels in one figure, and each
    kernel size in its own (base-KERNEL_SIZE.png) for the report to show beside its table."""
    groups = OrderedDict()
    for r in report["results"]:
        if is_number(r.get("speedup")) and is_number(r.get("procs")) and is_number(r.get("threads")):
            groups.setdefault(r.get("kernel_size", "?"), []).append(r)
    if not groups:
        print(f"plot.py: {report['_path']}: no speedups to plot; skipped")
        return
    plt = w.plt
    sub = machine_title(report)
    weak = (report.get("params") or {}).get("scaling") == "weak"
    ncols = min(3, len(groups))
    nrows = (len(groups) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.5 * ncols, 3.6 * nrows), squeeze=False)
    for i, (name, rs) in enumerate(groups.items()):
        speedup_panel(axes[i // ncols][i % ncols], plt, name, rs, weak)
    for i in range(len(groups), nrows * ncols):
        axes[i // ncols][i % ncols].axis("off")
    fig.suptitle(f"compas study: speedup ({STUDY_LEGEND})" + (f"\n{sub}" if sub else ""),
                 fontsize=10)
    w.save(fig, base)
    for name, rs in groups.items():
        fig, ax = plt.subplots(figsize=(5.5, 4))
        speedup_panel(ax, plt, name, rs, weak)
        ax.set_title(f"{name}: speedup ({STUDY_LEGEND})" + (f"\n{sub}" if sub else ""),
                     fontsize=8)
        w.save(fig, base, file_name_of(name))
    plot_bus(report, w, base)


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
