"""What plot.py's figures show, from its --describe output on hand-made compas reports: scales,
labelled ticks, axis labels, error bars, bars, legends over data points, overlapping texts.

usage: python3 check_plot_figures.py PLOT_PY   (run by test_plot_figures.sh)
"""

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

PLOT = sys.argv[1]
FAILURES = []
MACHINE = {"cpu_model": "test cpu", "cores": 4, "pus": 4, "hostname": "test-host", "caches": []}


def check(cond, what):
    if not cond:
        FAILURES.append(what)


def report(command, results, params=None, **extra):
    r = {"command": command, "version": "0.1.0", "machine": dict(MACHINE),
         "params": params or {}, "results": results}
    r.update(extra)
    return r


def plot(tmp, name, reports, path=None):
    """Runs plot.py on the reports (file name -> report) and returns {png name: description}."""
    files = []
    for fname, rep in reports.items():
        p = os.path.join(tmp, fname)
        with open(p, "w", encoding="utf-8") as f:
            json.dump(rep, f)
        files.append(p)
    out = os.path.join(tmp, name)
    desc = os.path.join(tmp, name + ".json")
    env = dict(os.environ)
    if path is not None:
        env["PATH"] = path
    res = subprocess.run([sys.executable, PLOT, *files, "--out", out, "--describe", desc],
                         env=env, capture_output=True, text=True, check=False)
    if res.returncode != 0:
        FAILURES.append(f"plot.py on {name} exited {res.returncode}: {res.stderr}")
        return {}
    with open(desc, encoding="utf-8") as f:
        figs = {d["file"]: d for d in json.load(f)}
    for fname in figs:
        check(os.path.isfile(os.path.join(out, fname)), f"{fname} described but not written")
    return figs


def figure(figs, fname):
    if fname not in figs:
        FAILURES.append(f"{fname} not drawn (drawn: {sorted(figs)})")
        return None
    return figs[fname]


def no_legend_over_points(fig):
    for ax in fig.get("axes", []):
        check(ax["overlapping_ticklabels"] == 0,
              f"{fig['file']} '{ax['title']}': {ax['overlapping_ticklabels']} tick labels overlap")
        check(ax["points_under_legends"] == 0,
              f"{fig['file']} '{ax['title']}': a legend covers {ax['points_under_legends']} points")


# ---- 1. pingpong -------------------------------------------------------------------------------

PINGPONG_OPS = [("put", "one_way", "one way (half a ping-pong round trip)", 1.0),
                ("get", "round_trip",
                 "one blocking get (same host: a copy; across hosts: a round trip)", 2.0),
                ("put_bw", "stream", "per put in a stream (32 in flight, one flush)", 0.3)]


def pingpong_records():
    recs = []
    for op, measure, text, base in PINGPONG_OPS:
        for e in range(3, 23, 2):
            b = 1 << e
            lat = base + b / 10000.0
            recs.append({"op": op, "bytes": b, "measure": measure, "measure_text": text,
                         "latency_us": lat, "min_latency_us": 0.9 * lat,
                         "max_latency_us": 1.2 * lat, "bandwidth_mbs": b / lat,
                         "iterations": 1000, "transport": "sysv/memory.0 (amo), cma/memory.0"})
    return recs


def check_pingpong(tmp):
    figs = plot(tmp, "pingpong", {"pingpong.json": report("pingpong", pingpong_records())})
    fig = figure(figs, "pingpong.png")
    if not fig:
        return
    axes = fig["axes"]
    check(len(axes) == 2, f"pingpong.png: {len(axes)} panels, not latency and MB/s")
    if len(axes) != 2:
        return
    lat, bw = axes
    for ax in axes:
        check(ax["xscale"] == "log" and ax["yscale"] == "log",
              f"pingpong.png '{ax['title']}': axes {ax['xscale']} x {ax['yscale']}, not log-log")
        check(len([t for t in ax["xticks"] if t < 2 << 20]) >= 4,
              f"pingpong.png '{ax['title']}': x ticks under 2 MiB: {ax['xticks']}")
        check(ax["errorbars"] == len(PINGPONG_OPS),
              f"pingpong.png '{ax['title']}': {ax['errorbars']} error-bar series, not "
              f"{len(PINGPONG_OPS)}")
    check("bytes" in lat["xlabel"], f"pingpong.png: x label '{lat['xlabel']}'")
    check("MB/s" in bw["ylabel"], f"pingpong.png: second panel's y label '{bw['ylabel']}'")
    labels = " | ".join(lbl for ax in axes for lbl in ax["legend_labels"])
    if fig["figure_legends"]:
        labels += " | ".join(fig.get("figure_legend_labels", []))
    for op, _, text, _ in PINGPONG_OPS:
        check(text in labels, f"pingpong.png: no legend entry says '{text}' for {op}: {labels}")
    check(not any(ax["title"] in ("min_latency_us", "max_latency_us") for ax in axes),
          "pingpong.png: min/max drawn as panels")
    no_legend_over_points(fig)


# ---- 2. barriers -------------------------------------------------------------------------------

def check_barriers(tmp):
    procs = [{"scope": "process", "algorithm": a, "chosen": a == "dissemination",
              "policy": "spin", "processes": 2, "threads": 1, "ns_per_barrier": ns,
              "min_ns_per_barrier": 0.8 * ns, "max_ns_per_barrier": 1.5 * ns}
             for a, ns in (("dissemination", 520.0), ("host", 3400.0))]
    threads = [{"scope": "thread", "algorithm": a, "policy": p, "threads": t,
                "ns_per_barrier": ns * t, "min_ns_per_barrier": 0.9 * ns * t,
                "max_ns_per_barrier": 1.3 * ns * t}
               for a, p, ns in (("central", "spin", 20.0), ("tree", "block", 90.0))
               for t in (1, 2, 4)]
    figs = plot(tmp, "barrier", {"barrier_p2.json": report("barrier", procs),
                                 "barrier_threads.json": report("barrier", threads)})
    fig = figure(figs, "barrier-barrier_p2.png")
    if fig:
        ax = fig["axes"][0]
        check("processes" in ax["xlabel"] or "algorithm" in ax["xlabel"],
              f"barrier_p2: x label '{ax['xlabel']}' does not say processes")
        check("threads" not in ax["xlabel"], f"barrier_p2: x label '{ax['xlabel']}' says threads")
        check(ax["bars"] >= 1 and ax["lines"] == 0,
              f"barrier_p2: one process count drawn with {ax['bars']} bar groups and "
              f"{ax['lines']} lines")
        check(ax["errorbars"] >= 1, "barrier_p2: no error bars for min..max")
        check(any("2" in t for t in [ax["title"], ax["xlabel"]] + ax["xticklabels"]),
              "barrier_p2: the process count is not shown")
    fig = figure(figs, "barrier-barrier_threads.png")
    if fig:
        ax = fig["axes"][0]
        check(ax["xlabel"] == "threads", f"barrier_threads: x label '{ax['xlabel']}'")
        check(ax["errorbars"] == 2, f"barrier_threads: {ax['errorbars']} error-bar series, not 2")
        check(all(float(t).is_integer() for t in ax["xticks"]),
              f"barrier_threads: x ticks {ax['xticks']}")
        no_legend_over_points(fig)


# ---- 3, 4, 5. the study ------------------------------------------------------------------------

def study_report():
    rows = []
    for kernel in ("laplace n=640", "gemm n=256"):
        for p, t in ((1, 1), (1, 2), (2, 1), (2, 2), (1, 3), (2, 4)):
            s = p * t * 0.9 if (p, t) != (1, 1) else 1.0
            rows.append({"kernel_size": kernel, "procs": p, "threads": t,
                         "oversubscribed": p * t > 4, "seconds": 1.0 / s, "speedup": s,
                         "speedup_min": 0.9 * s, "speedup_max": 1.1 * s, "efficiency": s / (p * t),
                         "wide_spread": False})
    kernels = []
    for i, name in enumerate(("cg class=T", "cg class=W", "sort keys=4M", "sort keys=8M",
                              "laplace n=640")):
        for p in (1, 2):
            gbs = 3.0 + 0.15 * i + p if name != "cg class=T" else 110.0 * p  # from cache
            kernels.append({"kernel_size": name, "kernel": name.split()[0], "p": p, "gbs": gbs,
                            "gbs_min": 0.9 * gbs, "gbs_max": 1.1 * gbs,
                            "stream": "load" if name.startswith("cg") else "copy"})
    curve = [{"mix": "read", "idle": b == 0, "bandwidth_gbs": b, "latency_ns": 100 + b * 5,
              "latency_min_ns": 95 + b * 5, "latency_max_ns": 110 + b * 5}
             for b in (0.0, 1.0, 3.0, 6.0, 9.0)]
    bus = {"streams": {"load": [[1, 10.0, 9.0, 11.0], [2, 18.0, 16.0, 19.0], [3, 20.0, 19, 21]],
                       "copy": [[1, 8.0, 7.5, 8.5], [2, 14.0, 13.0, 15.0], [3, 15, 14, 16]]},
           "curve": curve, "idle_latency_ns": 100.0, "kernels": kernels}
    return report("study", rows, {"scaling": "strong"}, bus=bus)


def integer_ticks(fig, ax, allowed):
    ticks = ax["xticks"]
    check(ticks and all(float(t).is_integer() and int(t) in allowed for t in ticks),
          f"{fig['file']} '{ax['title']}': x ticks {ticks}, not among the P x T counts "
          f"{sorted(allowed)}")


def check_study(tmp):
    figs = plot(tmp, "study", {"study.json": study_report()})
    products = {1, 2, 3, 4, 8}
    for fname in ("study.png", "study-laplace_n640.png", "study-gemm_n256.png"):
        fig = figure(figs, fname)
        if not fig:
            continue
        for ax in fig["axes"]:
            integer_ticks(fig, ax, products)
            check(ax["errorbars"] >= 2, f"{fname} '{ax['title']}': {ax['errorbars']} error bars")
            # No ideal speedup past the machine's cores (it drew up to the 8 of an
            # oversubscribed point on 4 cores).
            ideal = ax["line_x_max"].get("ideal", 0)
            check(ideal == MACHINE["cores"],
                  f"{fname} '{ax['title']}': the ideal line ends at {ideal}, not at the "
                  f"{MACHINE['cores']} cores")
    fig = figure(figs, "study-bus.png")
    if fig:
        check(fig["overlapping_texts"] == 0,
              f"study-bus.png: {fig['overlapping_texts']} pairs of labels overlap")
        no_legend_over_points(fig)
        integer_ticks(fig, fig["axes"][0], products)
        for ax in fig["axes"]:
            check(ax["errorbars"] >= 1, f"study-bus.png '{ax['title']}': no error bars")
        names = " ".join(lbl for ax in fig["axes"] for lbl in ax["legend_labels"] + ax["texts"])
        check("sort keys=8M" in names, "study-bus.png: a kernel's best bandwidth is not named")
        # A cache-resident kernel's 220 GB/s is named, not drawn: the streams (at most 21 GB/s)
        # keep their scale on the left and the latency curve (to 9 GB/s) on the right.
        left, right = fig["axes"][0], fig["axes"][-1]
        check(left["ylim"][1] < 40, f"study-bus.png: the bandwidth axis runs to {left['ylim'][1]}")
        check(right["xlim"][1] < 40, f"study-bus.png: the curve's axis runs to {right['xlim'][1]}")
        check("220 GB/s" in names and "cache" in names,
              "study-bus.png: the off-scale cache-resident point is not named")


# ---- 5. error bars on the other probes ---------------------------------------------------------

def check_error_bars(tmp):
    membw = [{"kernel": k, "threads": t, "bandwidth_gbs": g * t, "per_thread_gbs": g,
              "min_bandwidth_gbs": 0.9 * g * t, "max_bandwidth_gbs": 1.1 * g * t}
             for k, g in (("load", 15.0), ("copy", 10.0)) for t in (1, 2)]
    cache = [{"size_bytes": s, "pattern": pat, "ns_per_load": ns * (1 + s / 65536),
              "min_ns_per_load": 0.9 * ns * (1 + s / 65536),
              "max_ns_per_load": 1.2 * ns * (1 + s / 65536),
              **({"bandwidth_gbs": 8 / (ns * (1 + s / 65536))} if pat == "stream" else {})}
             for s in (4096, 16384, 65536, 262144) for pat, ns in (("chase", 1.3), ("stream", 0.1))]
    other = [{"bytes": b, "seconds": b / 1e9, "min_seconds": 0.9 * b / 1e9,
              "max_seconds": 1.1 * b / 1e9} for b in (1024, 4096, 16384)]
    figs = plot(tmp, "probes", {"membw.json": report("membw", membw),
                                "cache.json": report("cache", cache),
                                "other.json": report("other", other)})
    for fname, want in (("membw.png", 2), ("cache.png", 2), ("cache-bandwidth.png", 1),
                        ("other.png", 1)):
        fig = figure(figs, fname)
        if fig:
            for ax in fig["axes"]:
                check(ax["errorbars"] >= want,
                      f"{fname} '{ax['title']}': {ax['errorbars']} error-bar series, not {want}")
    fig = figure(figs, "other.png")
    if fig:
        titles = [ax["title"] for ax in fig["axes"]]
        check(titles == ["seconds"], f"other.png: panels {titles}, not one for seconds")


# ---- 6. topology -------------------------------------------------------------------------------

def check_topology(tmp):
    recs = [{"thread": i, "cpu": i, "core": i, "socket": 0, "numa_node": 0, "smt": 0}
            for i in range(2)]
    here = report("topology", recs)
    here["machine"]["hostname"] = socket.gethostname()
    elsewhere = report("topology", recs)
    elsewhere["machine"]["hostname"] = "not-" + socket.gethostname()
    empty = os.path.join(tmp, "empty-path")
    os.makedirs(empty, exist_ok=True)
    cases = [("topo-nolstopo", here, empty, "table")]
    lstopo = shutil.which("lstopo")
    if lstopo:
        cases += [("topo-lstopo", here, None, "lstopo"), ("topo-other", elsewhere, None, "table")]
    else:
        print("note: lstopo not installed: hwloc's picture not checked")
    for name, rep, path, want in cases:
        figs = plot(tmp, name, {"topology.json": rep}, path)
        if want == "lstopo":
            fig = figure(figs, "topology.png")
            check(fig is not None and fig.get("source") == "lstopo",
                  f"{name}: topology.png is not lstopo's picture: {fig}")
            check("topology-placement.png" not in figs, f"{name}: a table beside lstopo's picture")
        else:
            fig = figure(figs, "topology-placement.png")
            check(fig is not None and fig.get("tables") == 1,
                  f"{name}: the placement table was not drawn: {fig}")
            check("topology.png" not in figs, f"{name}: a topology.png without lstopo's picture")


def main():
    tmp = tempfile.mkdtemp()
    try:
        for c in (check_pingpong, check_barriers, check_study, check_error_bars,
              check_topology):
            c(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for f in FAILURES:
        print("FAIL:", f)
    if FAILURES:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
