#!/usr/bin/env python3
"""Turn bench_kernels' CSV into a markdown report, a PNG chart and a summary.

    report.py KERNELS.csv KERNELS_META.json OUTDIR
    report.py --tuning TUNING.csv

The second form reads `bench_kernels --tuning`'s CSV and prints, per shape
(uniform and Zipf, 2^gmin .. 2^gmax groups), the defaults, the best of the
exhaustive search over the kernel family's candidates and the tuned
parameters' times (medians of the same interleaved rounds), the contention
level the probe gave the shape's classes (lvl: 0 or 1), with the launch
tuner's criteria and whether the shape meets them: tuned within 1.1x of the
best, never slower than the defaults by more than 2%, and the tuner's search
ended within its bound; then the range per kernel family.  The exit status
is 1 when a shape misses one or had an error or checksum mismatch.

Writes OUTDIR/kernel-benchmarks.md and OUTDIR/kernel-benchmarks.png (when matplotlib is
importable) and prints a short summary to stdout.  Rates are G rows/s from
the aggregation's own device time (every phase included); the bound is the
streaming read of the same bytes measured by the benchmark ("read") and the
memory's theoretical peak ("peak").  A forced strategy counts only where it
ran as itself (where it does not apply the device chooses as auto does, and
the CSV's `ran` column says so).

The kernels' criteria, checked here:
  1. for g <= 2^12 (int32 dense keys) the best strategy reaches half the
     bound and is at least 5x the plain global-atomics kernel;
  2. auto is within 1.3x of the best forced strategy at every g;
  3. nothing (auto, or a forced strategy where it ran) is slower than
     global by more than 10%.
"""
import csv
import json
import math
import os
import sys

STRATEGIES = ["perfect", "shared", "global", "partitioned"]
ALL = STRATEGIES + ["auto"]


def load(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            for k in ("log2_groups", "groups", "rows", "bytes_per_row", "retries",
                      "growths", "device_estimate"):
                r[k] = int(float(r[k])) if r[k] not in ("", "nan") else 0
            for k in ("device_ms", "wall_ms", "grows_device", "grows_wall", "plain_grows",
                      "bound_read_grows", "bound_peak_grows"):
                try:
                    r[k] = float(r[k])
                except ValueError:
                    r[k] = float("nan")
            rows.append(r)
    return rows


def ok(x):
    return x is not None and not math.isnan(x) and x > 0


def series_of(rows):
    """{(key_type, dist, layout): {log2_groups: {strategy: row}}}"""
    out = {}
    for r in rows:
        key = (r["key_type"], r["dist"], r["layout"])
        out.setdefault(key, {}).setdefault(r["log2_groups"], {})[r["strategy"]] = r
    return out


def rate(r, which="grows_device"):
    if r is None or r.get("error"):
        return None
    v = r[which]
    return v if ok(v) else None


def forced_rate(point, s):
    """A forced strategy's rate where it ran as itself."""
    r = point.get(s)
    if r is None or r["ran"] != s:
        return None
    return rate(r)


def best_forced(point):
    best = None
    for s in STRATEGIES:
        v = forced_rate(point, s)
        if v is not None and (best is None or v > best[1]):
            best = (s, v)
    return best


def fmt(v, digits=1):
    return "—" if v is None else f"{v:.{digits}f}"


def evaluate(series):
    """The three criteria: (name, passed, detail lines)."""
    results = []

    # 1. few groups: half the bound, 5x plain atomics (int32 dense series)
    lines, passed, seen = [], True, False
    for (kt, dist, layout), points in sorted(series.items()):
        if kt != "int32" or layout != "dense":
            continue
        for lg in sorted(points):
            if lg > 12:
                continue
            b = best_forced(points[lg])
            any_row = next(iter(points[lg].values()))
            if b is None:
                continue
            seen = True
            bound = any_row["bound_read_grows"]
            peak = any_row["bound_peak_grows"]
            plain = any_row["plain_grows"]
            half = ok(bound) and b[1] >= 0.5 * bound
            fivex = ok(plain) and b[1] >= 5 * plain
            if not (half and fivex):
                passed = False
                lines.append(f"{dist} g=2^{lg}: best {b[0]} {b[1]:.1f} G rows/s = "
                             f"{b[1] / bound:.2f} of read bound ({b[1] / peak:.2f} of peak), "
                             f"{b[1] / plain:.1f}x plain atomics")
    results.append(("best strategy for g <= 2^12 reaches half the bound and 5x plain atomics",
                    passed and seen, lines if seen else ["no int32 dense data"]))

    # 2. auto within 1.3x of the best forced strategy
    lines, passed = [], True
    for (kt, dist, layout), points in sorted(series.items()):
        for lg in sorted(points):
            b = best_forced(points[lg])
            a = rate(points[lg].get("auto"))
            if b is None or a is None:
                continue
            if b[1] > 1.3 * a:
                passed = False
                lines.append(f"{kt} {dist} {layout} g=2^{lg}: auto ({points[lg]['auto']['ran']}) "
                             f"{a:.1f} vs {b[0]} {b[1]:.1f} G rows/s ({b[1] / a:.2f}x)")
    results.append(("auto within 1.3x of the best forced strategy at every g", passed, lines))

    # 3. nothing slower than global by more than 10%
    lines, passed = [], True
    for (kt, dist, layout), points in sorted(series.items()):
        for lg in sorted(points):
            g = forced_rate(points[lg], "global")
            if g is None:
                continue
            for s in ALL:
                v = rate(points[lg].get(s)) if s == "auto" else forced_rate(points[lg], s)
                if v is not None and v * 1.1 < g:
                    passed = False
                    lines.append(f"{kt} {dist} {layout} g=2^{lg}: {s} {v:.1f} vs global "
                                 f"{g:.1f} G rows/s ({g / v:.2f}x slower)")
    results.append(("nothing slower than global by more than 10%", passed, lines))
    return results


def markdown(series, meta, results):
    out = []
    out.append("# Kernel benchmark: GPU aggregation strategies\n")
    out.append(f"Device: **{meta.get('gpu', '?')}**, {meta.get('sms', '?')} SMs, compute capability "
               f"{meta.get('cc', '?')}, L2 {int(meta.get('l2_bytes', 0)) >> 20} MB, "
               f"{int(meta.get('shared_per_sm', 0)) >> 10} KB shared memory per SM. "
               f"Memory: theoretical peak {meta.get('peak_gbs', 0):.0f} GB/s, measured streaming "
               f"read {meta.get('read_gbs_8b', 0):.0f} GB/s (8-byte rows) / "
               f"{meta.get('read_gbs_16b', 0):.0f} GB/s (16-byte rows).\n")
    out.append(f"Each point: {meta.get('rows', 0):,} rows already in GPU memory "
               f"(batches of {meta.get('batch', 0):,}), `SELECT k, sum(v) GROUP BY k` as the "
               f"executor sends it ({meta.get('aggregates', '')}), median of {meta.get('reps', '?')} "
               f"fresh aggregations; rate = rows / device time of the whole aggregation (probe, "
               f"partitioning, ids, accumulation, growth and gathering the groups included; "
               f"table allocation not). Zipf exponent {meta.get('zipf_s', 1.0)}. Keys are dense "
               f"(0 .. g-1) or sparse (a bijective hash of those). `plain` is one kernel of global "
               f"atomics indexed by the key (dense keys only), the floor every strategy is measured against. A forced "
               f"strategy is shown only where it ran as itself; `auto` names what it chose.\n")
    out.append("## Criteria\n")
    for name, passed, lines in results:
        out.append(f"- **{'PASS' if passed else 'FAIL'}**: {name}")
        for line in lines[:12]:
            out.append(f"  - {line}")
        if len(lines) > 12:
            out.append(f"  - … {len(lines) - 12} more")
    out.append("")
    out.append("![rows/s per strategy](kernel-benchmarks.png)\n")
    for (kt, dist, layout), points in sorted(series.items(), key=lambda kv: (kv[0][0], kv[0][2], kv[0][1])):
        any_row = next(iter(next(iter(points.values())).values()))
        out.append(f"## {kt} keys and values, {dist}, {layout} keys\n")
        out.append(f"G rows/s; bound {any_row['bound_read_grows']:.0f} (read) / "
                   f"{any_row['bound_peak_grows']:.0f} (peak) G rows/s at "
                   f"{any_row['bytes_per_row']} bytes a row.\n")
        out.append("| groups | plain | perfect | shared | global | partitioned | auto (chose) | "
                   "best/bound | auto/best |")
        out.append("|---|---|---|---|---|---|---|---|---|")
        for lg in sorted(points):
            p = points[lg]
            r0 = next(iter(p.values()))
            b = best_forced(p)
            a = rate(p.get("auto"))
            cells = [f"2^{lg}", fmt(r0["plain_grows"] if ok(r0["plain_grows"]) else None)]
            for s in STRATEGIES:
                cells.append(fmt(forced_rate(p, s)))
            cells.append(f"{fmt(a)} ({p['auto']['ran']})" if "auto" in p else "—")
            cells.append(fmt(b[1] / r0["bound_read_grows"], 2) if b and ok(r0["bound_read_grows"]) else "—")
            cells.append(fmt(a / b[1], 2) if a and b else "—")
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out) + "\n"


def plot(series, meta, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print(f"report.py: no PNG ({e})", file=sys.stderr)
        return False
    keys = sorted(series, key=lambda k: (k[0], k[2], k[1]))
    n = len(keys)
    cols = 2
    rows_n = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(13, 4.2 * rows_n), squeeze=False)
    styles = {"perfect": ("tab:green", "o"), "shared": ("tab:blue", "s"),
              "global": ("tab:red", "^"), "partitioned": ("tab:purple", "D"),
              "auto": ("black", "")}
    for i, key in enumerate(keys):
        ax = axes[i // cols][i % cols]
        points = series[key]
        lgs = sorted(points)
        r0 = next(iter(points[lgs[0]].values()))
        for s in STRATEGIES + ["auto"]:
            xs, ys = [], []
            for lg in lgs:
                v = rate(points[lg].get(s)) if s == "auto" else forced_rate(points[lg], s)
                if v is not None:
                    xs.append(2 ** lg)
                    ys.append(v)
            if xs:
                color, marker = styles[s]
                ax.plot(xs, ys, label=s, color=color, marker=marker, markersize=4,
                        linewidth=2.2 if s == "auto" else 1.2,
                        linestyle="--" if s == "auto" else "-")
        xs = [2 ** lg for lg in lgs if ok(next(iter(points[lg].values()))["plain_grows"])]
        ys = [next(iter(points[lg].values()))["plain_grows"] for lg in lgs
              if ok(next(iter(points[lg].values()))["plain_grows"])]
        if xs:
            ax.plot(xs, ys, label="plain atomics", color="gray", linestyle=":", marker="x",
                    markersize=4)
        if ok(r0["bound_read_grows"]):
            ax.axhline(r0["bound_read_grows"], color="gray", linewidth=0.8)
            ax.axhline(0.5 * r0["bound_read_grows"], color="gray", linewidth=0.8, linestyle="--")
            ax.text(2 ** lgs[0], r0["bound_read_grows"] * 1.05, "read bound", fontsize=7, color="gray")
            ax.text(2 ** lgs[0], 0.5 * r0["bound_read_grows"] * 1.05, "half", fontsize=7, color="gray")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(f"{key[0]}, {key[1]}, {key[2]} keys")
        ax.set_xlabel("groups")
        ax.set_ylabel("G rows/s")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="lower left")
    for j in range(n, rows_n * cols):
        axes[j // cols][j % cols].axis("off")
    fig.suptitle(f"gpuagg strategies on {meta.get('gpu', '?')}: {meta.get('rows', 0):,} rows in GPU "
                 f"memory, sum(v) GROUP BY k", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=110)
    return True


def summary(series, results):
    out = []
    for key in [("int32", "uniform", "dense"), ("int32", "zipf", "dense"),
                ("int32", "uniform", "sparse"), ("int64", "uniform", "dense")]:
        if key not in series:
            continue
        points = series[key]
        out.append(f"{key[0]} {key[1]} {key[2]}: groups -> best forced / auto (chose), G rows/s")
        cells = []
        for lg in sorted(points):
            b = best_forced(points[lg])
            a = rate(points[lg].get("auto"))
            chose = points[lg]["auto"]["ran"] if "auto" in points[lg] else "?"
            cells.append(f"  2^{lg:<2} {b[0] if b else '-':<11} {fmt(b[1] if b else None):>6}  "
                         f"auto {fmt(a):>6} ({chose})")
        out.extend(cells)
    for name, passed, lines in results:
        out.append(f"{'PASS' if passed else 'FAIL'}: {name}" +
                   (f" ({len(lines)} exceptions, see kernel-benchmarks.md)" if lines else ""))
    return "\n".join(out)


def tuning_report(path):
    """Print the launch tuner's table, the criteria per shape and the verdict; return the exit status."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        print("report.py: no tuning rows", file=sys.stderr)
        return 1
    print("Medians of the same interleaved rounds for defaults, best (the fastest of the scan's\n"
          "top candidates) and tuned; criteria: tuned/best <= 1.1, tuned/defaults <= 1.02.\n")
    print(f"{'dist':8} {'groups':>7} {'family':11} {'lvl':>3} {'defaults':>9} {'best':>9} {'tuned':>9} "
          f"{'/best':>6} {'/def':>6} {'spread':>6} {'batch ms':>8} {'explored':>13} "
          f"{'verdict':8} tuned parameters")
    bad = []
    by_family = {}
    for r in rows:
        shape = f"{r['dist']} 2^{r['log2_groups']}"
        if r["error"] or (r["check"] and r["check"] != "ok"):
            bad.append(f"{shape}: {r['error'] or r['check']}")
            print(f"{r['dist']:8} 2^{r['log2_groups']:>5} {r['family']:11} ERROR {r['error'] or r['check']}")
            continue
        vs_best = float(r["tuned_vs_best"])
        vs_def = float(r["tuned_vs_default"])
        misses = []
        if vs_best > 1.1:
            misses.append(">1.1x best")
            bad.append(f"{shape}: tuned {vs_best:.3f}x the best ({r['best_params']})")
        if vs_def > 1.02:
            misses.append(">1.02x defaults")
            bad.append(f"{shape}: tuned {vs_def:.3f}x the defaults")
        if r["converged"] != "1":
            misses.append("search not ended")
            bad.append(f"{shape}: the search did not end within {r['tuning_batches']} batches")
        fam = by_family.setdefault(r["family"], [])
        fam.append((vs_best, vs_def, not misses))
        explored = f"{r['explored_batches']}/{r['tuning_batches']}"
        print(f"{r['dist']:8} 2^{r['log2_groups']:>5} {r['family']:11} {r.get('contention', '-'):>3} "
              f"{float(r['default_ms']):9.3f} "
              f"{float(r['best_ms']):9.3f} {float(r['tuned_ms']):9.3f} {vs_best:6.3f} {vs_def:6.3f} "
              f"{float(r['tuned_spread']):6.3f} {float(r['batch_kernel_ms']):8.3f} {explored:>13} "
              f"{'ok' if not misses else 'MISS':8} {r['tuned_params']} ({r['tuned_source']})"
              + (f"  [{', '.join(misses)}]" if misses else ""))
    print("\nby family: shapes, met, tuned/best (range), tuned/defaults (range)")
    for fam, vals in by_family.items():
        print(f"  {fam:11} {len(vals):3} shapes, {sum(v[2] for v in vals):3} met, "
              f"{min(v[0] for v in vals):.3f} - {max(v[0] for v in vals):.3f}, "
              f"{min(v[1] for v in vals):.3f} - {max(v[1] for v in vals):.3f}")
    ok_rows = [r for r in rows if not r["error"]]
    worst_best = max((float(r["tuned_vs_best"]) for r in ok_rows), default=float("nan"))
    worst_def = max((float(r["tuned_vs_default"]) for r in ok_rows), default=float("nan"))
    print(f"\nlaunch tuner: {len(rows)} shapes; worst tuned/best {worst_best:.3f} (criterion 1.1), "
          f"worst tuned/defaults {worst_def:.3f} (criterion 1.02)")
    if bad:
        print("NOT MET:\n  " + "\n  ".join(bad))
        return 1
    print("met on every shape")
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--tuning":
        sys.exit(tuning_report(sys.argv[2]))
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    rows = load(sys.argv[1])
    with open(sys.argv[2]) as f:
        meta = json.load(f)
    outdir = sys.argv[3]
    if not rows:
        print("report.py: no benchmark rows", file=sys.stderr)
        sys.exit(1)
    series = series_of(rows)
    results = evaluate(series)
    with open(os.path.join(outdir, "kernel-benchmarks.md"), "w") as f:
        f.write(markdown(series, meta, results))
    plot(series, meta, os.path.join(outdir, "kernel-benchmarks.png"))
    print(summary(series, results))


if __name__ == "__main__":
    main()
