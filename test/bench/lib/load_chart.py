"""Draw load.png from load.csv (written by test/bench/load.sh).

    python3 load_chart.py load.csv load.png "title"

Left: transactions per second against pgbench clients, one line per mode (log x axis);
points with failed transactions or stopped clients are circled in red and labelled.
Right, when GPU memory was sampled: the peak GPU memory of each point (all GPUs
together), one line per mode. A line under the plots gives pgbench -C's tps and the
first query's median time on a new connection per mode. Needs matplotlib; load.sh falls
back to gnuplot, or skips the chart, when it cannot be imported.
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"native": "#7f7f7f", "gpuagg": "#1f77b4", "gpuagg-backend": "#ff7f0e"}


def number(text):
    """Return text as a float, or None when it is not a number."""
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def main(src, dst, title):
    with open(src, newline="") as f:
        rows = list(csv.DictReader(f))
    points = [r for r in rows if r["kind"] == "pgbench"]
    if not points:
        raise SystemExit("load_chart.py: no pgbench rows in " + src)
    modes = list(dict.fromkeys(r["mode"] for r in points))
    clients = sorted({int(r["clients"]) for r in points})
    memory = any(number(r["gpu_peak_total_mib"]) for r in points)
    fig, axes = plt.subplots(1, 2 if memory else 1, figsize=(11 if memory else 7, 4.8), squeeze=False)
    ax = axes[0][0]
    for m in modes:
        mine = [r for r in points if r["mode"] == m and number(r["tps"]) is not None]
        xs = [int(r["clients"]) for r in mine]
        ys = [number(r["tps"]) for r in mine]
        ax.plot(xs, ys, marker="o", linewidth=2, label=m, color=COLOURS.get(m))
        for r, x, y in zip(mine, xs, ys):
            bad = (number(r["failed"]) or 0) + (number(r["aborted_clients"]) or 0)
            if bad or r["status"] != "ok":
                ax.scatter([x], [y], s=160, facecolors="none", edgecolors="red", linewidths=1.5)
                ax.annotate("%d failed" % bad if bad else r["status"], (x, y), textcoords="offset points",
                            xytext=(4, 6), fontsize=7, color="red")
    ax.set_xscale("log", base=2)
    ax.set_xticks(clients)
    ax.set_xticklabels([str(c) for c in clients])
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ax.set_xlabel("pgbench clients")
    ax.set_ylabel("transactions per second")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    if memory:
        ax2 = axes[0][1]
        for m in modes:
            mine = [r for r in points if r["mode"] == m and number(r["gpu_peak_total_mib"]) is not None]
            ax2.plot([int(r["clients"]) for r in mine], [number(r["gpu_peak_total_mib"]) / 1024 for r in mine],
                     marker="o", linewidth=2, label=m, color=COLOURS.get(m))
        ax2.set_xscale("log", base=2)
        ax2.set_xticks(clients)
        ax2.set_xticklabels([str(c) for c in clients])
        ax2.minorticks_off()
        ax2.set_ylim(bottom=0)
        ax2.set_xlabel("pgbench clients")
        ax2.set_ylabel("peak GPU memory, all GPUs (GiB)")
        ax2.grid(True, alpha=0.3)
        ax2.legend(fontsize=8, loc="upper left")
    notes = []
    for r in rows:
        if r["kind"] == "connect" and number(r["tps"]) is not None:
            notes.append("-C %s clients, %s: %.1f tps" % (r["clients"], r["mode"], number(r["tps"])))
        elif r["kind"] == "first" and number(r["first_median_ms"]) is not None:
            notes.append("first query, %s: median %.0f ms" % (r["mode"], number(r["first_median_ms"])))
    fig.suptitle(title, fontsize=9)
    if notes:
        fig.text(0.5, 0.01, ";  ".join(notes), ha="center", fontsize=7)
    fig.tight_layout(rect=(0, 0.04 if notes else 0, 1, 0.95))
    fig.savefig(dst, dpi=120)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        raise SystemExit("usage: load_chart.py load.csv load.png [title]")
    main(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "gpuagg load benchmark")
