"""plot.py's figures of the machine and communication probes: barrier, membw, cache, loaded
latency, pingpong, topology, and the generic plot of any other report.
"""

import os
import shutil
import socket
import subprocess
from collections import OrderedDict

from plot_common import (finish, format_bytes_long, is_number, machine_title, rate_range,
                         size_axis, spaced, spread_fields, yerr_of)


X_KEYS = ("threads", "size_bytes", "bytes")


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


def mbs_of(r):
    v = r.get("bandwidth_mbs")
    return v if is_number(v) else r["bytes"] / r["latency_us"]


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


LSTOPO_TIMEOUT_S = 60


def lstopo_picture(report, w, base):
    """hwloc's own picture of the machine (lstopo --of png) as DIR/<base>.png, when lstopo is
    installed and the report was made on this host (it draws the host it runs on). Returns
    whether it drew it."""
    exe = shutil.which("lstopo")
    machine = report.get("machine") if isinstance(report.get("machine"), dict) else {}
    if not exe or machine.get("hostname") != socket.gethostname():
        return False
    path = w.path(base)
    tmp = path + ".part"
    try:
        done = subprocess.run([exe, "--of", "png", "-f", tmp], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              timeout=LSTOPO_TIMEOUT_S, check=False)
        with open(tmp, "rb") as f:
            ok = done.returncode == 0 and f.read(8) == b"\x89PNG\r\n\x1a\n"
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    if not ok:
        print("plot.py: lstopo --of png failed; drawing the placement table instead")
        if os.path.exists(tmp):
            os.remove(tmp)
        return False
    os.replace(tmp, path)
    if w.describe is not None:
        w.describe.append({"file": os.path.basename(path), "source": "lstopo"})
    w.done(path, "hwloc's lstopo")
    return True


def plot_topology(report, w, base):
    """hwloc's lstopo picture of the machine as <base>.png when lstopo can draw it, else the
    placement table (which thread runs on which cpu, core, socket) as <base>-placement.png."""
    if lstopo_picture(report, w, base):
        return
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
    ax.set_title("placement (lstopo not available)" + (f"\n{sub}" if sub else ""), fontsize=10)
    w.save(fig, base, "placement")


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
