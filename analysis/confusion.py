#!/usr/bin/python3
"""The confusion matrix and per-class precision and recall that `wavetrain --evaluate` wrote.

Reads the evaluation CSV (columns quantity,true_class,predicted_class,value) and draws the
confusion matrix as a heat map with each cell's count, the classes' precision and recall beside
it, and the test loss and accuracy as the title. Writes a PNG next to the CSV (same name,
.png) unless -o says otherwise.
"""

import argparse
import csv
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wtrun  # noqa: E402

PROG = "confusion.py"


def load(path):
    """(classes in order, {(true, predicted): count}, {(quantity, class): value})."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise wtrun.RunError(f"{path}: cannot read: {e.strerror or e}") from None
    if not rows or set(rows[0]) != {"quantity", "true_class", "predicted_class", "value"}:
        raise wtrun.RunError(f"{path}: not an evaluation CSV of wavetrain --evaluate (columns "
                             "quantity,true_class,predicted_class,value)")
    classes, counts, values = [], {}, {}
    try:
        for line, r in enumerate(rows, start=2):
            if r["quantity"] == "count":
                counts[r["true_class"], r["predicted_class"]] = int(r["value"])
            else:
                values[r["quantity"], r["true_class"]] = \
                    float(r["value"]) if r["value"] else math.nan
            if r["quantity"] == "precision":
                classes.append(r["true_class"])
    except ValueError:
        raise wtrun.RunError(f"{path}:{line}: value: not a number: '{r['value']}'") from None
    if not classes or len(counts) != len(classes) ** 2:
        raise wtrun.RunError(f"{path}: expected a count row for every pair of the "
                             f"{len(classes)} classes, found {len(counts)}")
    return classes, counts, values


def draw(path, out):
    classes, counts, values = load(path)
    plt = wtrun.use_agg()
    n = len(classes)
    matrix = [[counts[t, p] for p in classes] for t in classes]
    size = max(4.0, 0.6 * n + 2.5)
    fig, ax = plt.subplots(figsize=(size + 2.0, size))
    image = ax.imshow(matrix, cmap="Blues")
    top = max(max(row) for row in matrix) or 1
    if n <= 30:  # counts stay readable up to about this many classes
        for t in range(n):
            for p in range(n):
                ax.text(p, t, matrix[t][p], ha="center", va="center", fontsize=8,
                        color="white" if matrix[t][p] > top / 2 else "black")
    labels = [f"{c}\nP {values['precision', c]:.3f} R {values['recall', c]:.3f}"
              for c in classes]
    ax.set_xticks(range(n), classes, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(n), labels, fontsize=8)
    ax.set_xlabel("predicted class")
    ax.set_ylabel("true class (P precision, R recall)")
    fig.colorbar(image, ax=ax, label="samples")
    ax.set_title(f"test loss {values['loss', '']:.4f}, accuracy {values['accuracy', '']:.4f} "
                 f"({int(values['samples', ''])} samples)")
    fig.tight_layout()
    wtrun.save_figure(fig, out, PROG)


def main():
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  analysis/confusion.py runs/own_data/evaluation_step_00000120.csv")
    parser.add_argument("csv", help="an evaluation CSV written by wavetrain --evaluate")
    parser.add_argument("-o", "--output", metavar="PNG", help="figure to write (default: the "
                        "CSV's name with .png)")
    args = parser.parse_args()
    draw(args.csv, args.output or Path(args.csv).with_suffix(".png"))


if __name__ == "__main__":
    wtrun.run_main(main, PROG)
