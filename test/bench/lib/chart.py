"""Draw bench.png from bench.csv (written by test/bench/run.sh).

    python3 chart.py bench.csv bench.png "title"

One bar per query: gpuagg's speedup over native parallel PostgreSQL (native parallel
time / gpuagg time, log scale), coloured by suite; queries whose gpuagg plan has no
gpuagg node (they run natively) are grey and hatched, queries without both times are
marked n/a. Needs matplotlib; run.sh falls back to gnuplot, or skips the chart, when
it cannot be imported.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"groupby": "#1f77b4", "join": "#2ca02c", "tpch": "#d62728"}


def main(src, dst, title):
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit("chart.py: no rows in " + src)
    names, values, colours, hatches, labels = [], [], [], [], []
    for r in rows:
        names.append(r["query"])
        native = r.get("gpuagg_in_plan") == "no"
        try:
            v = float(r["speedup_vs_parallel"])
        except (KeyError, ValueError):
            v = None
        values.append(v if v and v > 0 else 0)
        colours.append("#b0b0b0" if native else COLOURS.get(r["suite"], "#7f7f7f"))
        hatches.append("//" if native else "")
        labels.append("n/a" if v is None else ("%.2f" % v if v < 10 else "%.0f" % v))
    fig, ax = plt.subplots(figsize=(max(6, 0.55 * len(rows) + 2), 4.8))
    x = range(len(rows))
    bars = ax.bar(x, [v if v > 0 else float("nan") for v in values], color=colours,
                  edgecolor="black", linewidth=0.5)
    for b, h in zip(bars, hatches):
        b.set_hatch(h)
    positive = [v for v in values if v > 0]
    ax.set_yscale("log")
    lo = min(positive + [1.0]) / 1.6
    hi = max(positive + [1.0]) * 1.8
    ax.set_ylim(lo, hi)
    ticks = [t * m for m in (0.01, 0.1, 1, 10, 100, 1000) for t in (1, 2, 5) if lo <= t * m <= hi]
    ax.set_yticks(ticks)
    ax.set_yticklabels(["%gx" % t for t in ticks])
    ax.minorticks_off()
    for i, (v, lab) in enumerate(zip(values, labels)):
        ax.text(i, v * 1.05 if v > 0 else lo * 1.1, lab, ha="center", va="bottom", fontsize=7)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(list(x))
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=8)
    ax.set_ylabel("speedup vs native parallel (x, log scale)")
    ax.set_title(title, fontsize=9)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLOURS.values()]
    handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="#b0b0b0", hatch="//", edgecolor="black"))
    ax.legend(handles, list(COLOURS) + ["no gpuagg node (native)"], fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(dst, dpi=120)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit("usage: chart.py bench.csv bench.png [title]")
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "gpuagg benchmark")
