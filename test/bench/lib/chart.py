"""Draw bench.png from bench.csv (written by test/bench/run.sh).

    python3 chart.py bench.csv bench.png "title"

Two bars per query: gpuagg's speedup over native serial PostgreSQL (light) and over
native parallel PostgreSQL (solid), each native time / gpuagg time, coloured by suite.
The scale is the ratio's logarithm, centred on 1x: every bar starts at 1x, a gain
rises above it and a loss falls below it, by the same height for 2x as for 0.5x.
Queries whose gpuagg plan the planner does not pick unforced (the CSV's
gpuagg_in_plan "forced": run.sh times gpuagg with gpuagg.force on) are cross-hatched
and starred; queries whose gpuagg plan has no gpuagg node (they run natively) are
grey and hatched; a bar without both times is marked n/a. Needs matplotlib; run.sh
falls back to gnuplot, or skips the chart, when it cannot be imported.
"""
import csv
import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"groupby": "#1f77b4", "join": "#2ca02c", "tpch": "#d62728"}
NATIVE_COLOUR = "#b0b0b0"
BASELINES = (("speedup_vs_serial", 0.45, "vs native serial"),
             ("speedup_vs_parallel", 1.0, "vs native parallel"))
WIDTH = 0.38


def ratio(row, column):
    """The row's ratio in column, or None when it has none."""
    try:
        v = float(row[column])
    except (KeyError, ValueError):
        return None
    return v if v > 0 and math.isfinite(v) else None


def label(v):
    """A ratio as printed above (or below) its bar."""
    if v is None:
        return "n/a"
    return "%.2f" % v if v < 10 else "%.0f" % v


def main(src, dst, title):
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise SystemExit("chart.py: no rows in " + src)
    fig, ax = plt.subplots(figsize=(max(6, 0.8 * len(rows) + 2) + 3, 5.2))
    ax.set_yscale("log")
    values = [v for r in rows for column, _, _ in BASELINES
              for v in [ratio(r, column)] if v is not None]
    span = max([max(v, 1 / v) for v in values] + [2.0]) * 1.6
    ax.set_ylim(1 / span, span)
    names = []
    for i, r in enumerate(rows):
        plan = r.get("gpuagg_in_plan", "")
        native = plan == "no"
        forced = plan == "forced"
        colour = NATIVE_COLOUR if native else COLOURS.get(r.get("suite"), "#7f7f7f")
        names.append(r["query"] + (" *" if forced else ""))
        for k, (column, alpha, _) in enumerate(BASELINES):
            x = i + (k - 0.5) * WIDTH
            v = ratio(r, column)
            if v is None:
                ax.text(x, 1.0, "n/a", ha="center", va="bottom", fontsize=6, rotation=90)
                continue
            ax.bar(x, v - 1.0, bottom=1.0, width=WIDTH, color=colour, alpha=alpha,
                   edgecolor="black", linewidth=0.5,
                   hatch="//" if native else ("xx" if forced else ""))
            ax.text(x, v * 1.04 if v >= 1 else v / 1.04, label(v), ha="center",
                    va="bottom" if v >= 1 else "top", fontsize=6, rotation=90)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ticks = [t * m for m in (0.001, 0.01, 0.1, 1, 10, 100, 1000) for t in (1, 2, 5)
             if 1 / span <= t * m <= span]
    ax.set_yticks(ticks)
    ax.set_yticklabels(["%gx" % t for t in ticks])
    ax.minorticks_off()
    ax.set_xticks(range(len(rows)))
    ax.set_xticklabels(names, rotation=60, ha="right", fontsize=8)
    ax.set_xlim(-0.7, len(rows) - 0.3)
    ax.set_ylabel("gpuagg speedup (native time / gpuagg time, log scale)")
    ax.set_title(title, fontsize=9)
    handles, texts = [], []
    for suite, colour in COLOURS.items():
        if any(r.get("suite") == suite for r in rows):
            handles.append(plt.Rectangle((0, 0), 1, 1, color=colour))
            texts.append(suite)
    for _, alpha, text in BASELINES:
        handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="#606060", alpha=alpha,
                                     edgecolor="black"))
        texts.append(text)
    handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="white", hatch="xx", edgecolor="black"))
    texts.append("* forced: unforced, the planner keeps the native plan")
    handles.append(plt.Rectangle((0, 0), 1, 1, facecolor=NATIVE_COLOUR, hatch="//",
                                 edgecolor="black"))
    texts.append("no gpuagg node (native)")
    ax.legend(handles, texts, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(dst, dpi=120)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit("usage: chart.py bench.csv bench.png [title]")
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "gpuagg benchmark")
