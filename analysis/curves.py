#!/usr/bin/python3
"""Training curves of one or several wavetrain runs, from their metrics.csv.

A 2 x 2 figure: loss and accuracy (rows) against step and against wall time (columns). Each
run is one colour, labelled by its directory name; training rows (one every
train.log_every_steps steps, averaged over that window) are solid lines, evaluation rows
(test split, once per epoch) are dashed with markers.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wtrun  # noqa: E402

PROG = "curves.py"


def draw(runs, labels, out):
    plt = wtrun.use_agg()
    fig, axes = plt.subplots(2, 2, sharex="col", figsize=(11, 7))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (run, label) in enumerate(zip(runs, labels)):
        c = colours[i % len(colours)]
        for kind, style in (("train", dict(linestyle="-")),
                            ("eval", dict(linestyle="--", marker="o", markersize=3))):
            m = run.metrics[kind]
            if m["step"].size == 0:
                continue
            for row, column in enumerate(("loss", "accuracy")):
                for col, x in enumerate(("step", "wall_s")):
                    axes[row, col].plot(m[x], m[column], color=c, label=f"{label} {kind}",
                                        **style)
    for col, xlabel in enumerate(("step", "wall time (s)")):
        axes[1, col].set_xlabel(xlabel)
    for row, ylabel in enumerate(("loss", "accuracy")):
        for col in range(2):
            axes[row, col].set_ylabel(ylabel)
            axes[row, col].grid(alpha=0.3)
    axes[0, 0].set_yscale("log")
    axes[0, 1].set_yscale("log")
    handles, names = axes[0, 0].get_legend_handles_labels()
    if not handles:
        raise wtrun.RunError(f"{runs[0].path}: metrics.csv holds no rows yet")
    fig.legend(handles, names, loc="lower center", ncol=min(4, len(names)), fontsize=8,
               frameon=False)
    fig.suptitle("train (solid) and test (dashed) loss and accuracy")
    fig.tight_layout(rect=(0, 0.04 + 0.025 * ((len(names) - 1) // 4), 1, 1))
    wtrun.save_figure(fig, out, PROG)


def main():
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  analysis/curves.py runs/fashion_mlp\n"
               "  analysis/curves.py runs/lr01 runs/lr03 runs/lr10 -o lr_sweep.png")
    parser.add_argument("runs", metavar="RUN", nargs="+", help="run directories")
    parser.add_argument("-o", "--output", metavar="PNG",
                        help="figure to write (default: RUN/curves.png for one run, "
                             "./curves.png for several)")
    args = parser.parse_args()

    runs = [wtrun.load_run(p) for p in args.runs]
    out = args.output or (runs[0].path / "curves.png" if len(runs) == 1 else Path("curves.png"))
    draw(runs, wtrun.run_label(args.runs), out)


if __name__ == "__main__":
    wtrun.run_main(main, PROG)
