#!/usr/bin/env python3
"""An independent check of compas study's figures.

    study_check.py STUDY_DIR COMPAS_EXE

Recomputes, from the raw run records alone (runs.jsonl and raw/*.json), every figure of the
kernel sections of report.md, of study.json (rows, flat results, Summary, Amdahl fit, model data
and prediction), of study.csv, of the Extra-P files in extrap/, and of `compas compare`'s output
(the study against itself, and two raw runs of one point that did different work). It is a
second implementation, small and written apart from compas's: a run's work comes from the
kernel's own fields (sweeps, n, iter_seconds, ...), not from the work record (which it checks).
Prints every difference and exits 1 when there is one; 0 when every figure agrees.
"""

import csv
import glob
import io
import itertools
import json
import math
import os
import re
import statistics
import subprocess
import sys

REL = 1e-9  # figures kept as doubles
CSV_REL = 2e-5  # figures printed with 6 significant digits
problems = []


def fail(where, what):
    problems.append(f"{where}: {what}")


def close(a, b, rel=REL):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def expect(where, got, want, rel=REL):
    if not close(got, want, rel):
        fail(where, f"{got!r}, recomputed {want!r}")


# ---- the raw records ---------------------------------------------------------------------------

def done_runs(study):
    last = {}
    with open(os.path.join(study, "runs.jsonl")) as f:
        for line in f:
            if line.strip():
                rec = json.loads(line)
                last[rec["id"]] = rec
    return {i for i, r in last.items() if not r.get("failed")}


def kernel_work(res):
    """(unit, units, seconds, rate per unit, bytes per unit or None) from the kernel's own
    fields."""
    k = res["kernel"]
    if k == "laplace":
        n = res["n"]
        return "sweep", res["sweeps"], res["seconds"], n * n / 1e6, 16.0 * n * n
    if k == "gemm":
        t = res["iter_seconds"]
        return "multiply", len(t), math.fsum(t), 2.0 * res["n"] ** 3 / 1e9, None
    if k == "sort":
        t = res["iteration_seconds"]
        return "sort", len(t), math.fsum(t), res["keys"] / 1e6, res["model_bytes"]
    if k == "cg":
        units = res["niter"] * res["repetitions"]
        return "iteration", units, res["seconds"], res["mops"] * res["seconds"] / units, None
    raise ValueError(k)


def run_figures(rid, res):
    unit, units, secs, amount, bytes_per = kernel_work(res)
    where = f"raw/{rid}.json work"
    w = res.get("work")
    if not isinstance(w, dict):
        fail(where, "no work record")
        w = {}
    if w.get("unit") != unit:
        fail(where, f"unit {w.get('unit')!r}, the kernel's fields say {unit!r}")
    expect(where + ".units", w.get("units"), units)
    expect(where + ".seconds", w.get("seconds"), secs, 1e-12)
    expect(where + ".rate_per_unit", w.get("rate_per_unit"), amount, 1e-12)
    expect(where + ".seconds_per_unit", w.get("seconds_per_unit"), secs / units)
    expect(where + ".rate", w.get("rate"), amount * units / secs, 1e-12)
    if res["kernel"] == "laplace":
        expect(where + ".rate (against mlups)", amount * units / secs, res["mlups"], 1e-9)
    if bytes_per is not None:
        expect(where + ".bytes_per_unit", w.get("bytes_per_unit"), bytes_per, 1e-12)
    regions = res.get("regions", {})

    def per_unit(name):
        return regions.get(name, {}).get("mean_seconds", 0.0) / units

    comp, comm, sync = per_unit("compute"), per_unit("communicate"), per_unit("synchronize")
    if bytes_per is None:  # CG's byte model is the kernel's own: taken from its record
        bytes_per = w.get("bytes_per_unit")
    return {
        "unit": unit, "units": units, "per_unit": secs / units, "rate": amount * units / secs,
        "gbs": None if not bytes_per else bytes_per * units / secs / 1e9,
        "compute": comp, "communicate": comm, "synchronize": sync,
        "cpu_per_wall": res["cpu_seconds"] / secs, "verified": bool(res["verified"]),
    }


def spread(values):
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def load_points(study, name, done):
    prefix = name.replace(" ", "_").replace("=", "")
    points = {}
    for path in sorted(glob.glob(os.path.join(study, "raw", prefix + "_p*.json"))):
        rid = os.path.basename(path)[:-5]
        m = re.fullmatch(re.escape(prefix) + r"_p(\d+)t(\d+)(?:_r(\d+))?", rid)
        if not m or rid not in done:
            continue
        res = json.load(open(path))["results"][0]
        points.setdefault((int(m[1]), int(m[2])), []).append((int(m[3] or 1), rid, res))
    out = {}
    for pt, runs in points.items():
        runs.sort()
        figs = [run_figures(rid, res) for _, rid, res in runs]
        p = {"runs": figs, "ids": [rid for _, rid, _ in runs]}
        for key in ("per_unit", "rate"):
            p[key] = spread([f[key] for f in figs])
        p["gbs"] = spread([f["gbs"] for f in figs]) if figs[0]["gbs"] else None
        for key in ("compute", "communicate", "synchronize", "cpu_per_wall"):
            p[key] = statistics.median([f[key] for f in figs])
        p["verified"] = all(f["verified"] for f in figs)
        out[pt] = p
    return out


def add_speedups(points):
    base = points.get((1, 1))
    for (procs, threads), p in points.items():
        if base is None:
            p["speedup"] = None
            continue
        b, t = base["per_unit"], p["per_unit"]
        if (procs, threads) == (1, 1):
            p["speedup"] = {"median": 1.0, "min": 1.0, "max": 1.0, "n": t["n"]}
        else:
            p["speedup"] = {"median": b["median"] / t["median"], "min": b["min"] / t["max"],
                            "max": b["max"] / t["min"], "n": min(b["n"], t["n"])}
        p["efficiency"] = p["speedup"]["median"] / (procs * threads)


# ---- formatting as the report prints ------------------------------------------------------------

def significant(v, digits=4):
    if v == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(v))))
    return f"{v:.{decimals}f}"


def with_range(s, decimals):
    if s["n"] < 2:
        return f"{s['median']:.{decimals}f}"
    return f"{s['median']:.{decimals}f} ({s['min']:.{decimals}f}-{s['max']:.{decimals}f})"


# ---- the checks --------------------------------------------------------------------------------

def check_rows(name, kernel, points):
    rows = {(r["procs"], r["threads"]): r for r in kernel["rows"]}
    if set(rows) != set(points):
        fail(name, f"rows {sorted(rows)}, raw points {sorted(points)}")
    for pt, p in points.items():
        r = rows.get(pt)
        if r is None:
            continue
        where = f"study.json {name} {pt[0]} x {pt[1]}"
        expect(where + " runs", r.get("runs"), len(p["runs"]))
        expect(where + " seconds_per_unit", r.get("seconds_per_unit"), p["per_unit"]["median"])
        expect(where + " seconds_per_unit_min", r.get("seconds_per_unit_min"), p["per_unit"]["min"])
        expect(where + " seconds_per_unit_max", r.get("seconds_per_unit_max"), p["per_unit"]["max"])
        for got, want in zip(r.get("seconds_per_unit_samples", []), [f["per_unit"] for f in p["runs"]]):
            expect(where + " seconds_per_unit_samples", got, want)
        if [f["units"] for f in p["runs"]] != r.get("units"):
            fail(where + " units", f"{r.get('units')}, raw {[f['units'] for f in p['runs']]}")
        expect(where + " rate", r.get("rate"), p["rate"]["median"])
        expect(where + " rate_min", r.get("rate_min"), p["rate"]["min"])
        expect(where + " rate_max", r.get("rate_max"), p["rate"]["max"])
        if p["gbs"]:
            expect(where + " gbs", r.get("gbs"), p["gbs"]["median"])
        for key in ("compute", "communicate", "synchronize"):
            expect(where + " " + key, r.get(key + "_seconds_per_unit"), p[key])
        expect(where + " cpu_per_wall", r.get("cpu_per_wall"), p["cpu_per_wall"])
        s = p["speedup"]
        if s:
            expect(where + " speedup", r.get("speedup"), s["median"])
            rng = r.get("speedup_range") or [None, None]
            expect(where + " speedup_range lo", rng[0], s["min"])
            expect(where + " speedup_range hi", rng[1], s["max"])
            expect(where + " efficiency", r.get("efficiency"), p["efficiency"])
        spr = (p["per_unit"]["max"] - p["per_unit"]["min"]) / p["per_unit"]["median"]
        expect(where + " spread", r.get("spread"), spr)
        if r.get("verified") != p["verified"]:
            fail(where + " verified", f"{r.get('verified')}, raw {p['verified']}")


def check_flat_results(name, study, points):
    flat = [r for r in study["results"] if r.get("kernel_size") == name]
    for r in flat:
        p = points[(r["procs"], r["threads"])]
        where = f"study.json results {name} {r['procs']} x {r['threads']}"
        expect(where + " seconds_per_unit", r.get("seconds_per_unit"), p["per_unit"]["median"])
        if p["speedup"]:
            expect(where + " speedup", r.get("speedup"), p["speedup"]["median"])
    if len(flat) != len(points):
        fail(f"study.json results {name}", f"{len(flat)} rows, {len(points)} points")


def table_lines(md, name):
    start = md.find(f"\n## {name}\n")
    if start < 0:
        fail("report.md", f"no section '## {name}'")
        return None, {}
    end = md.find("\n## ", start + 1)
    section = md[start:end if end > 0 else len(md)]
    header = next((l for l in section.splitlines() if l.startswith("| P x T |")), "")
    unit = re.search(r"\| time per \w+ (s|ms|us) \|", header)
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\| (\d+) x (\d+)", line)
        if m:
            rows[(int(m[1]), int(m[2]))] = [c.strip() for c in line.strip().strip("|").split("|")]
    return (unit[1] if unit else None), rows


def check_table(md, name, points):
    unit, rows = table_lines(md, name)
    scale = {"s": 1, "ms": 1e3, "us": 1e6}.get(unit)
    if scale is None:
        fail(f"report.md {name}", "no 'time per UNIT s|ms|us' column")
        return
    smallest = min(p["per_unit"]["min"] for p in points.values())
    want_unit = "s" if smallest >= 1 else "ms" if smallest >= 1e-3 else "us"
    if unit != want_unit:
        fail(f"report.md {name}", f"unit {unit}, the smallest time per unit asks {want_unit}")
    for pt, p in points.items():
        c = rows.get(pt)
        where = f"report.md {name} {pt[0]} x {pt[1]}"
        if c is None:
            fail(where, "no row")
            continue
        u = [f["units"] for f in p["runs"]]
        units = f"{min(u):.15g}" if min(u) == max(u) else f"{min(u):.15g} - {max(u):.15g}"
        want = {1: str(len(p["runs"])), 2: units, 3: significant(p["per_unit"]["median"] * scale),
                4: significant(p["per_unit"]["min"] * scale) + " - " +
                significant(p["per_unit"]["max"] * scale),
                8: significant(p["rate"]["median"]), 13: f"{p['cpu_per_wall']:.2f}"}
        for key in ("compute", "communicate", "synchronize"):
            want[{"compute": 10, "communicate": 11, "synchronize": 12}[key]] = \
                significant(p[key] * scale)
        if p["speedup"]:
            want[6] = with_range(p["speedup"], 2)
        for i, text in want.items():
            if c[i] != text:
                fail(where, f"column {i + 1} '{c[i]}', recomputed '{text}'")


def num(row, col):
    v = row.get(col)
    return float(v) if v not in (None, "") else None


def check_csv(study_dir, name, points):
    kernel, size = name.split(" ", 1)
    with open(os.path.join(study_dir, "study.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["kernel"] == kernel and r["size"] == size]
    for r in rows:
        pt = (int(r["procs"]), int(r["threads"]))
        p = points[pt]
        where = f"study.csv {name} {pt[0]} x {pt[1]}"
        if r.get("units") != ";".join(f"{f['units']:.15g}" for f in p["runs"]):
            fail(where + " units", r.get("units"))
        for col, want in (("seconds_per_unit", p["per_unit"]["median"]),
                          ("seconds_per_unit_min", p["per_unit"]["min"]),
                          ("seconds_per_unit_max", p["per_unit"]["max"]),
                          ("rate", p["rate"]["median"]), ("rate_min", p["rate"]["min"]),
                          ("rate_max", p["rate"]["max"]), ("compute_s_per_unit", p["compute"]),
                          ("communicate_s_per_unit", p["communicate"]),
                          ("synchronize_s_per_unit", p["synchronize"])):
            expect(f"{where} {col}", num(r, col), want, CSV_REL)
        if p["speedup"]:
            expect(where + " speedup", float(r.get("speedup")), p["speedup"]["median"], CSV_REL)
            expect(where + " efficiency", float(r.get("efficiency")), p["efficiency"], CSV_REL)
        if int(r.get("runs")) != len(p["runs"]):
            fail(where + " runs", r.get("runs"))
    if len(rows) != len(points):
        fail(f"study.csv {name}", f"{len(rows)} rows, {len(points)} points")


def amdahl(points):
    pts = [(pp * tt, p["speedup"]["median"]) for (pp, tt), p in points.items()
           if pp * tt > 1 and p["speedup"] and not p.get("over")]
    if not pts:
        return None, 0
    sxy = sum((1 - 1 / n) * (1 / s - 1 / n) for n, s in pts)
    sxx = sum((1 - 1 / n) ** 2 for n, s in pts)
    return min(1.0, max(0.0, sxy / sxx)), len(pts)


def check_models(name, kernel, points, over):
    f, n = amdahl({k: v for k, v in points.items() if k not in over})
    if n >= 3:
        expect(f"study.json {name} amdahl_serial_fraction", kernel["amdahl_serial_fraction"], f)
    model = kernel.get("model", {})
    data = sorted((pp * tt, p["per_unit"]["median"]) for (pp, tt), p in points.items()
                  if (pp, tt) not in over)
    got = sorted(tuple(x) for x in model.get("data", []))
    if len(got) != len(data) or any(not close(a[1], b[1]) or a[0] != b[0]
                                    for a, b in zip(got, data)):
        fail(f"study.json {name} model.data", f"{got}, recomputed {data}")
    if "formula" in model:
        expr = model["formula"].replace("^", "**").replace("log2(p)", "math.log2(p)")
        p = model["prediction"]["p"]
        expect(f"study.json {name} model prediction p", p, 2 * max(x for x, _ in data))
        value = eval(expr, {"math": math, "p": p})  # the formula as printed, 4 digits
        expect(f"study.json {name} model prediction (formula at p)",
               model["prediction"]["seconds_per_unit"], value, 2e-2)


def exact_u_cdf(m, n):
    """P(U <= u) by counting every arrangement of m a's among m + n places."""
    counts = {}
    for pos in itertools.combinations(range(m + n), m):
        u = sum(sum(1 for q in range(m + n) if q > a and q not in pos) for a in pos)
        counts[u] = counts.get(u, 0) + 1
    total = math.comb(m + n, m)
    return lambda u: sum(c for k, c in counts.items() if k <= u) / total


def mann_whitney(a, b, confidence=0.9):
    ratios = sorted(y / x for x in a for y in b)
    cdf = exact_u_cdf(len(a), len(b))
    k = 0
    while k < len(a) * len(b) and cdf(k) <= (1 - confidence) / 2 + 1e-12:
        k += 1
    if k == 0:
        return None
    return ratios[k - 1], ratios[len(ratios) - k]


def check_summary(study, md, all_points, over_by_name):
    for entry in study.get("summary", []):
        name, cores = entry["kernel_size"], entry["cores"]
        points = all_points.get(name, {})
        over = over_by_name.get(name, set())
        splits = sorted(((p["per_unit"]["median"], pt, [f["per_unit"] for f in p["runs"]])
                         for pt, p in points.items()
                         if pt[0] * pt[1] == cores and pt not in over), key=lambda s: s[0])
        where = f"study.json summary {name}"
        fastest = entry.get("fastest")
        if not splits:
            if fastest:
                fail(where, "a fastest split where none was measured")
            continue
        best = splits[0]
        if len(splits) > 1:
            nxt = splits[1]
            cell = (f"| {name} | {best[1][0]} x {best[1][1]}, {nxt[0] / best[0]:.2f}x faster than "
                    f"{nxt[1][0]} x {nxt[1][1]} |")
            if cell not in md:
                fail("report.md Summary", f"no line starting '{cell}'")
        if (fastest["procs"], fastest["threads"]) != best[1]:
            fail(where, f"fastest {fastest['procs']} x {fastest['threads']}, recomputed {best[1]}")
        if len(splits) > 1:
            nxt = splits[1]
            expect(where + " faster_by", fastest["faster_by"], nxt[0] / best[0])
            iv = mann_whitney(best[2], nxt[2]) if min(len(best[2]), len(nxt[2])) >= 3 else None
            if iv:
                expect(where + " interval lo", fastest["interval"][0], iv[0])
                expect(where + " interval hi", fastest["interval"][1], iv[1])
                if fastest["beyond_noise"] != (iv[0] > 1):
                    fail(where, f"beyond_noise {fastest['beyond_noise']}")


def extrap_text_data(text):
    return [[float(x) for x in l.split()[1:]] for l in text.splitlines() if l.startswith("DATA ")]


def check_extrap(study_dir, name, points, over):
    file = os.path.join(study_dir, "extrap", name.replace(" ", "_").replace("=", "") + ".txt")
    order = [pt for pt in points if pt not in over]
    if not os.path.exists(file):
        fail(name, f"no {file}")
        return
    data = extrap_text_data(open(file).read())
    want = {tuple(f["per_unit"] for f in points[pt]["runs"]) for pt in order}
    got = {tuple(d) for d in data}
    if len(data) != len(order) or any(
            not any(len(g) == len(w) and all(close(x, y, 1e-5) for x, y in zip(g, w))
                    for g in got) for w in want):
        fail(file, f"DATA {sorted(got)}, recomputed {sorted(want)}")


def check_extrap_lines(study_dir, all_points, over_by_name):
    for path in glob.glob(os.path.join(study_dir, "extrap", "*.jsonl")):
        kernel = os.path.basename(path)[:-6]
        lines = [json.loads(l) for l in open(path) if l.strip()]
        names = [n for n in all_points if n.split(" ")[0] == kernel]
        seen = set()
        for l in lines:
            procs, threads = l["params"]["processes"], l["params"]["threads"]
            matches = []
            for n in names:
                p = all_points[n].get((procs, threads))
                if p and (procs, threads) not in over_by_name[n] and all(
                        close(a, f["per_unit"], 1e-12) for a, f in zip(l["value"], p["runs"])) \
                        and len(l["value"]) == len(p["runs"]):
                    matches.append(n)
            if len(matches) != 1:
                fail(path, f"line {l} matches {matches} (want one point's times per unit)")
            key = (l["callpath"], json.dumps(l["params"], sort_keys=True))
            if key in seen:
                fail(path, f"two lines for one point: {key}")
            seen.add(key)
            unit = all_points[matches[0]][(procs, threads)]["runs"][0]["unit"] if matches else "?"
            if l["metric"] != "time_per_" + unit:
                fail(path, f"metric {l['metric']}, want time_per_{unit}")


def compare_json(compas, a, b):
    out = subprocess.run([compas, "compare", a, b, "--json", "-"], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"compas compare {a} {b}", f"exit {out.returncode}: {out.stderr}")
        return None
    return json.loads(out.stdout)


def check_compare_study(compas, study_dir, all_points):
    doc = compare_json(compas, study_dir, study_dir)
    if doc is None:
        return
    for row in doc["results"]:
        k = row["key"]
        p = all_points.get(k["kernel"], {}).get((k["procs"], k["threads"]))
        where = f"compare {row['point']}"
        if p is None:
            fail(where, "no such point in the raw records")
            continue
        expect(where + " a.value", row["a"]["value"], p["rate"]["median"])
        expect(where + " a.min", row["a"]["min"], p["rate"]["min"])
        expect(where + " a.max", row["a"]["max"], p["rate"]["max"])
        expect(where + " a.runs", row["a"]["runs"], len(p["runs"]))
        expect(where + " ratio", row["ratio"], 1.0)


def check_compare_runs(compas, study_dir, all_points):
    for name, points in all_points.items():
        p = points.get((1, 1))
        if not p or len(p["runs"]) < 2 or p["runs"][0]["units"] == p["runs"][1]["units"]:
            continue
        a, b = (os.path.join(study_dir, "raw", i + ".json") for i in p["ids"][:2])
        doc = compare_json(compas, a, b)
        if doc is None:
            continue
        rows = {r["measurement"]: r for r in doc["results"]}
        where = f"compare {a} {b}"
        if "seconds_per_unit" not in rows:
            fail(where, "no seconds_per_unit point (the runs did not pair)")
            continue
        ra, rb = p["runs"][0], p["runs"][1]
        expect(where + " seconds_per_unit ratio", rows["seconds_per_unit"]["ratio"],
               rb["per_unit"] / ra["per_unit"])
        if "timed_seconds" in rows and rows["timed_seconds"]["verdict"] != "different work":
            fail(where, f"timed_seconds of different work judged: {rows['timed_seconds']}")


def guard(check, *args):
    """Runs one check; a figure it cannot even find is a mismatch, not a crash."""
    try:
        check(*args)
    except (KeyError, TypeError, ValueError, IndexError, ZeroDivisionError) as e:
        fail(check.__name__, f"{type(e).__name__}: {e}")


def main(argv):
    study_dir, compas = argv[1], argv[2]
    done = done_runs(study_dir)
    study = json.load(open(os.path.join(study_dir, "study.json")))
    md = open(os.path.join(study_dir, "report.md")).read()
    all_points, over_by_name = {}, {}
    for name, kernel in study["kernels"].items():
        points = load_points(study_dir, name, done)
        if not points:
            fail(name, "no raw run")
            continue
        add_speedups(points)
        over = {(r["procs"], r["threads"]) for r in kernel["rows"] if r.get("oversubscribed")}
        all_points[name], over_by_name[name] = points, over
        guard(check_rows, name, kernel, points)
        guard(check_flat_results, name, study, points)
        guard(check_table, md, name, points)
        guard(check_csv, study_dir, name, points)
        guard(check_models, name, kernel, points, over)
        guard(check_extrap, study_dir, name, points, over)
    guard(check_summary, study, md, all_points, over_by_name)
    guard(check_extrap_lines, study_dir, all_points, over_by_name)
    guard(check_compare_study, compas, study_dir, all_points)
    guard(check_compare_runs, compas, study_dir, all_points)
    varied = sum(1 for pts in all_points.values() for p in pts.values()
                 if len({f["units"] for f in p["runs"]}) > 1)
    for p in problems:
        print("MISMATCH", p)
    print(f"study_check: {len(all_points)} kernel sizes, "
          f"{sum(len(v) for v in all_points.values())} points ({varied} with runs of different "
          f"work), {len(problems)} mismatches")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
