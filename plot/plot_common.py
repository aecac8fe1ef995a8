"""Shared pieces of plot.py: numbers, a record's range over its repeats as error bars, byte
sizes, axes, and the Writer that saves (and, for tests, describes) each figure.
"""

import math
import os

from plot_describe import describe_figure


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


def spaced(sizes, ratio=4):
    """The sizes to label on a log axis, from the largest down, each `ratio` below the last."""
    out = []
    for v in sorted(sizes, reverse=True):
        if not out or out[-1] >= ratio * v:
            out.append(v)
    return sorted(out)


def count_ticks(ax, plt, counts, most=12):
    """Integer x ticks at the counts drawn (P x T, threads), every k-th when there are many."""
    counts = sorted({int(c) for c in counts})
    step = max(1, -(-len(counts) // most))
    ticks = counts[::step]
    if counts and ticks[-1] != counts[-1]:
        ticks[-1] = counts[-1]
    ax.set_xticks(ticks)
    ax.xaxis.set_minor_locator(plt.NullLocator())


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


def finish(fig, ax, report, title):
    sub = machine_title(report)
    ax.set_title(title + (f"\n{sub}" if sub else ""), fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
