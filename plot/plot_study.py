"""plot.py's figures of compas study's study.json: speedup against P x T per kernel size, and
the kernels against the bus (membw streams and the loaded-latency curve).
"""

from collections import OrderedDict

from plot_common import count_ticks, is_number, machine_title, yerr_of


def speedup_panel(ax, plt, name, rs, weak=False, cores=None):
    """One kernel size's speedups: a line per process count with the range over the runs as
    error bars, a red ring where the spread exceeds 10%, and the ideal line up to the machine's
    cores (no ideal speedup past them); x ticks at the P x T counts run."""
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
    ideal = min(top, cores) if is_number(cores) and cores >= 1 else top
    ax.plot([1, ideal], [1, ideal], linestyle=":", color="grey", label="ideal")
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
    tops = [q[3] for name in ("load", "copy") for q in streams.get(name) or []]
    # Cache-resident kernels move far more than memory delivers: the chart keeps the streams'
    # scale and names those points at its top edge instead of stretching to them.
    cap = 1.5 * max(tops) if tops else None
    for i, name in enumerate(sorted({k["kernel_size"] for k in kernels})):
        ks = [k for k in kernels if k["kernel_size"] == name]
        color = "C0" if ks[0].get("stream") == "load" else "C1"
        shown = [k for k in ks if cap is None or k["gbs"] <= cap]
        off = [k for k in ks if cap is not None and k["gbs"] > cap]
        label = f"{name} (vs {ks[0].get('stream')})"
        if shown:
            ax.errorbar([k["p"] for k in shown], [k["gbs"] for k in shown],
                        yerr=yerr_of(shown, "gbs"), marker=markers[i % len(markers)],
                        linestyle="none", color=color, markerfacecolor="white", capsize=2,
                        label=label)
        if off:
            ax.plot([k["p"] for k in off], [cap] * len(off), marker="^", linestyle="none",
                    color=color, label=label + ", off scale: " +
                    ", ".join(f"{k['gbs']:.0f} GB/s" for k in off) + " (cache)")
        best[name] = max(k["gbs"] for k in ks)
    if cap is not None:
        ax.set_ylim(0, cap * 1.05)
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
    reach = 1.5 * max((c["bandwidth_gbs"] for c in curve), default=0)
    for i, (name, gbs) in enumerate(sorted(best.items(), key=lambda kv: kv[1])):
        if reach > 0 and gbs > reach:  # from cache: no place on memory's latency curve
            ax.plot([], [], linestyle="none",
                    label=f"{name} best {gbs:.1f} GB/s (beyond the curve: cache-resident)")
            continue
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
        if all(is_number(r.get(k)) for k in ("speedup", "procs", "threads")):
            groups.setdefault(r.get("kernel_size", "?"), []).append(r)
    if not groups:
        print(f"plot.py: {report['_path']}: no speedups to plot; skipped")
        return
    plt = w.plt
    sub = machine_title(report)
    weak = (report.get("params") or {}).get("scaling") == "weak"
    cores = (report.get("machine") or {}).get("cores")
    ncols = min(3, len(groups))
    nrows = (len(groups) + ncols - 1) // ncols
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.5 * ncols, 3.6 * nrows), squeeze=False)
    for i, (name, rs) in enumerate(groups.items()):
        speedup_panel(axes[i // ncols][i % ncols], plt, name, rs, weak, cores)
    for i in range(len(groups), nrows * ncols):
        axes[i // ncols][i % ncols].axis("off")
    fig.suptitle(f"compas study: speedup ({STUDY_LEGEND})" + (f"\n{sub}" if sub else ""),
                 fontsize=10)
    w.save(fig, base)
    for name, rs in groups.items():
        fig, ax = plt.subplots(figsize=(5.5, 4))
        speedup_panel(ax, plt, name, rs, weak, cores)
        ax.set_title(f"{name}: speedup ({STUDY_LEGEND})" + (f"\n{sub}" if sub else ""),
                     fontsize=8)
        w.save(fig, base, file_name_of(name))
    plot_bus(report, w, base)
