#!/usr/bin/python3
"""Device memory over time of a traced wavetrain run, per rank (the Wavelet Figure 1/2 view).

Plots the caching allocator's bytes in use and bytes reserved against time, one panel per
rank, and prints per rank: peak in use, time-average in use, peak reserved, and the
time-average utilisation = average in use / peak reserved (how much of the memory the rank
holds is doing work, on average). When the deck sets device.memory_limit, the utilisation of
that budget (average in use / limit) is printed too and the limit is drawn.
"""

import argparse
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wtrun  # noqa: E402

PROG = "memory.py"
MB = 1024.0 * 1024.0


def rank_stats(rt, limit):
    """Peak and time-averaged figures of one rank's memory samples (bytes)."""
    mem = rt.memory
    if mem["time"].size == 0:
        return None
    end = float(rt.steps["end"].max()) if rt.steps["end"].size else float(mem["time"][-1])
    avg = wtrun.time_average(mem["time"], mem["in_use"], end)
    peak_reserved = float(mem["reserved"].max())
    return {
        "peak_in_use": float(mem["in_use"].max()),
        "avg_in_use": avg,
        "peak_reserved": peak_reserved,
        "util_reserved": avg / peak_reserved if peak_reserved > 0 else math.nan,
        "util_limit": avg / limit if limit else None,
        "end": end,
    }


def print_table(trace, stats, limit):
    header = ["rank", "peak in use MB", "avg in use MB", "peak reserved MB",
              "avg use / peak reserved"]
    if limit:
        header.append(f"avg use / limit ({limit / MB:.1f} MB)")
    rows = []
    for rank, s in stats.items():
        if s is None:
            rows.append([str(rank), "no samples"] + [""] * (len(header) - 2))
            continue
        row = [str(rank), f"{s['peak_in_use'] / MB:.2f}", f"{s['avg_in_use'] / MB:.2f}",
               f"{s['peak_reserved'] / MB:.2f}", f"{100 * s['util_reserved']:.1f}%"]
        if limit:
            row.append(f"{100 * s['util_limit']:.1f}%")
        rows.append(row)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    print(f"memory of {trace.path} (steps {trace.attrs['start_step']}-"
          f"{int(trace.attrs['end_step']) - 1})")
    print("  ".join(h.rjust(w) for h, w in zip(header, widths)))
    for r in rows:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths)))


def draw(trace, stats, limit, out):
    plt = wtrun.use_agg()
    ranks = list(trace.ranks)
    t0 = min((float(rt.memory["time"].min()) for rt in trace.ranks.values()
              if rt.memory["time"].size), default=0.0)
    fig, axes = plt.subplots(len(ranks), 1, sharex=True, squeeze=False,
                             figsize=(10, 1.2 + 2.0 * len(ranks)))
    for ax, rank in zip(axes[:, 0], ranks):
        rt, s = trace.ranks[rank], stats[rank]
        if s is None:
            ax.text(0.5, 0.5, "no memory samples", transform=ax.transAxes, ha="center")
            ax.set_ylabel(f"rank {rank}")
            continue
        t = (wtrun.np.append(rt.memory["time"], s["end"]) - t0) * 1e3
        in_use = wtrun.np.append(rt.memory["in_use"], rt.memory["in_use"][-1]) / MB
        reserved = wtrun.np.append(rt.memory["reserved"], rt.memory["reserved"][-1]) / MB
        ax.fill_between(t, in_use, step="post", alpha=0.35, color="#4c8bd6")
        ax.step(t, in_use, where="post", color="#1f4e8c", linewidth=1, label="in use")
        ax.step(t, reserved, where="post", color="#d9534f", linewidth=1, label="reserved")
        share = f"{100 * s['util_reserved']:.0f}% of peak reserved"
        ax.hlines(s["avg_in_use"] / MB, t[0], t[-1], color="#1f4e8c", linestyle="--",
                  linewidth=0.8, label=f"time-average in use ({share})")
        if limit:
            ax.axhline(limit / MB, color="black", linestyle=":", linewidth=1,
                       label="device.memory_limit")
        ax.set_ylabel(f"rank {rank}\nMB")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7, loc="upper right")
    axes[-1, 0].set_xlabel("time (ms) from the first memory sample")
    axes[0, 0].set_title(f"{trace.attrs.get('model', '?')}, schedule "
                         f"{trace.attrs.get('schedule', '?')}: allocator memory per rank")
    fig.tight_layout()
    wtrun.save_figure(fig, out, PROG)


def main():
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  analysis/memory.py runs/fashion_mlp -o runs/fashion_mlp/mem.png")
    parser.add_argument("run", metavar="RUN", help="run directory (holding trace.h5) or a trace.h5")
    parser.add_argument("-o", "--output", metavar="PNG",
                        help="figure to write (default: memory.png beside trace.h5)")
    args = parser.parse_args()

    trace_path, run = wtrun.trace_argument(args.run)
    trace = wtrun.load_trace(trace_path)
    limit = int(run.deck_value("device", "memory_limit", 0) or 0) if run else 0
    stats = {rank: rank_stats(rt, limit) for rank, rt in trace.ranks.items()}
    print_table(trace, stats, limit)
    draw(trace, stats, limit, args.output or trace_path.parent / "memory.png")


if __name__ == "__main__":
    wtrun.run_main(main, PROG)
