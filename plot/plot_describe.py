"""What a figure shows, for plot.py --describe: per axes its scales, labelled ticks, labels,
error-bar containers, bars and legend, the data points a legend covers, and how many labels
overlap. The tests read this instead of pixels.
"""


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
        "xlim": [float(v) for v in ax.get_xlim()], "ylim": [float(v) for v in ax.get_ylim()],
        "line_x_max": {ln.get_label(): float(max(ln.get_xdata(), default=0))
                       for ln in ax.lines if not ln.get_label().startswith("_")},
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
    overlapping = sum(1 for i in range(len(boxes)) for j in range(i)
                      if overlaps(boxes[i], boxes[j]))
    return {"file": fname, "source": "matplotlib",
            "axes": [describe_axes(ax, renderer, legends) for ax in axes],
            "figure_legends": len(fig.legends),
            "figure_legend_labels": [t.get_text() for leg in fig.legends for t in leg.get_texts()],
            "overlapping_texts": overlapping,
            "tables": sum(len(ax.tables) for ax in fig.axes)}
