#!/usr/bin/python3
"""Summary table of one or several wavetrain runs, and a bar chart of where step time goes.

Per run: ranks, schedule, samples/s (median over the run, from summary.json or metrics.csv),
and from the trace when the run wrote one (else n/a):
  step p50/p90/p99  step time percentiles in ms; a step lasts as long as its slowest rank
  comm %            time with communication in flight (union of intervals) / step time
  exposed comm %    time waiting on communication with no compute or data load running
                    (Wait rows, and blocking collectives) / step time
  data wait %       time in LoadBatch (waiting for the input batch) / step time
Percentages are summed over the traced steps and averaged over ranks. peak mem MB is the
caching allocator's peak over the whole run (summary.json, else metrics.csv).

The chart shows samples/s per run and the mean step split into compute, data, exposed
communication and other (nothing traced running: host overhead, idle).
"""

import argparse
import csv
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wtrun  # noqa: E402
from wtrun import np  # noqa: E402

PROG = "summary.py"
PARTS = ("compute", "data", "exposed comm", "other")
PART_COLOURS = ("#1f4e8c", "#e0a030", "#d9534f", "#c8c8c8")


def coverage(segments_mid, begins, ends):
    """For each elementary segment (by its midpoint), whether any [begin, end) covers it."""
    if begins.size == 0:
        return np.zeros(segments_mid.size, dtype=bool)
    return ((segments_mid[:, None] >= begins[None, :]) &
            (segments_mid[:, None] < ends[None, :])).any(axis=1)


def step_breakdown(ev, lo, hi):
    """Seconds of one rank's step [lo, hi) per part, plus comm and data-load union times."""
    classes = np.array([wtrun.op_class(n) for n in ev["name"]], dtype=object)
    b, e = np.clip(ev["begin"], lo, hi), np.clip(ev["end"], lo, hi)
    edges = np.unique(np.concatenate(([lo, hi], b, e)))
    mids, widths = (edges[:-1] + edges[1:]) / 2, np.diff(edges)

    def covered(*names):
        keep = np.isin(classes, names)
        return coverage(mids, b[keep], e[keep])

    compute = covered("compute")
    data = covered("data") & ~compute
    exposed = covered("communication", "waiting") & ~compute & ~data
    other = ~(compute | data | exposed)
    parts = {name: float(widths[mask].sum())
             for name, mask in zip(PARTS, (compute, data, exposed, other))}
    comm = wtrun.union_length(b[classes == "communication"], e[classes == "communication"])
    load = wtrun.union_length(b[classes == "data"], e[classes == "data"])
    return parts, comm, load


def trace_figures(trace):
    """Step-time percentiles (ms), shares (%) and the mean per-step breakdown (ms)."""
    per_step = {}  # step -> slowest rank's duration
    totals = {"step": 0.0, "comm in flight": 0.0, "load": 0.0, **{p: 0.0 for p in PARTS}}
    for rt in trace.ranks.values():
        for step, lo, hi in zip(rt.steps["step"], rt.steps["begin"], rt.steps["end"]):
            step = int(step)
            per_step[step] = max(per_step.get(step, 0.0), hi - lo)
            in_step = rt.events["step"] == step
            parts, comm, load = step_breakdown({c: v[in_step] for c, v in rt.events.items()},
                                               lo, hi)
            totals["step"] += hi - lo
            totals["comm in flight"] += comm
            totals["load"] += load
            for p in PARTS:
                totals[p] += parts[p]
    if not per_step or totals["step"] <= 0:
        return None
    durations = np.array(sorted(per_step.values())) * 1e3
    share = {k: 100.0 * totals[k] / totals["step"] for k in totals}
    steps_x_ranks = sum(rt.steps["step"].size for rt in trace.ranks.values())
    return {
        "p50": float(np.percentile(durations, 50)),
        "p90": float(np.percentile(durations, 90)),
        "p99": float(np.percentile(durations, 99)),
        "steps": len(per_step),
        "comm_pct": share["comm in flight"],
        "exposed_pct": share["exposed comm"],
        "data_pct": share["load"],
        "breakdown_ms": {p: 1e3 * totals[p] / steps_x_ranks for p in PARTS},
    }


def run_row(run, label):
    s = run.summary or {}
    train = run.metrics["train"]
    samples = s.get("samples_per_s_median")
    if samples is None and train["samples_per_s"].size:
        samples = float(np.median(train["samples_per_s"]))
    peak = s.get("peak_device_mb")
    if peak is None:
        both = np.concatenate((train["peak_device_mb"], run.metrics["eval"]["peak_device_mb"]))
        peak = float(both.max()) if both.size else None
    figures = trace_figures(run.trace()) if run.trace_path else None
    return {
        "run": label,
        "ranks": s.get("ranks", "?"),
        "schedule": s.get("schedule") or run.deck_value("schedule", "kind", "?"),
        "samples_per_s": samples,
        "trace": figures,
        "peak_mem_mb": peak,
    }


COLUMNS = (  # header, key in the CSV, how to get and format the value
    ("run", "run", lambda r: r["run"], str),
    ("ranks", "ranks", lambda r: r["ranks"], str),
    ("schedule", "schedule", lambda r: r["schedule"], str),
    ("samples/s", "samples_per_s", lambda r: r["samples_per_s"], "{:.0f}".format),
    ("step p50 ms", "step_p50_ms", lambda r: r["trace"] and r["trace"]["p50"], "{:.3f}".format),
    ("p90 ms", "step_p90_ms", lambda r: r["trace"] and r["trace"]["p90"], "{:.3f}".format),
    ("p99 ms", "step_p99_ms", lambda r: r["trace"] and r["trace"]["p99"], "{:.3f}".format),
    ("comm %", "comm_pct", lambda r: r["trace"] and r["trace"]["comm_pct"], "{:.1f}".format),
    ("exposed comm %", "exposed_comm_pct", lambda r: r["trace"] and r["trace"]["exposed_pct"],
     "{:.1f}".format),
    ("data wait %", "data_wait_pct", lambda r: r["trace"] and r["trace"]["data_pct"],
     "{:.1f}".format),
    ("peak mem MB", "peak_mem_mb", lambda r: r["peak_mem_mb"], "{:.2f}".format),
)


def cell(row, get, fmt):
    value = get(row)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return fmt(value)


def print_table(rows):
    header = [c[0] for c in COLUMNS]
    cells = [[cell(r, get, fmt) for _, _, get, fmt in COLUMNS] for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(header)]
    left = {"run", "schedule"}
    fmt = lambda vals: "  ".join(v.ljust(w) if h in left else v.rjust(w)  # noqa: E731
                                 for v, w, h in zip(vals, widths, header)).rstrip()
    print(fmt(header))
    for c in cells:
        print(fmt(c))
    if any(r["trace"] is None for r in rows):
        print("(n/a: the run has no trace.h5; enable [trace] to get step times and shares)")


def write_csv(rows, path):
    def write(f):
        w = csv.writer(f)
        w.writerow([c[1] for c in COLUMNS])
        for r in rows:
            w.writerow(["" if cell(r, g, fm) == "n/a" else cell(r, g, fm)
                        for _, _, g, fm in COLUMNS])

    wtrun.write_atomically(path, write, newline="")
    print(f"{PROG}: wrote {path}")


def draw(rows, out):
    plt = wtrun.use_agg()
    labels = [r["run"] for r in rows]
    y = np.arange(len(rows))
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 1.6 + 0.6 * len(rows)),
                                      gridspec_kw={"width_ratios": (1, 2)})
    left.barh(y, [r["samples_per_s"] or 0 for r in rows], color="#4c8bd6")
    left.set_yticks(y, labels)
    left.invert_yaxis()
    left.set_xlabel("samples/s (median)")
    left.xaxis.set_major_locator(plt.MaxNLocator(4))  # wide numbers: keep the labels apart
    for i, r in enumerate(rows):
        t = r["trace"]
        if t is None:
            right.text(0, i, "  no trace", va="center", fontsize=8)
            continue
        start = 0.0
        for part, colour in zip(PARTS, PART_COLOURS):
            width = t["breakdown_ms"][part]
            right.barh(i, width, left=start, color=colour, label=part if i == 0 else None)
            start += width
        right.text(start, i, f"  comm in flight {t['comm_pct']:.0f}%", va="center", fontsize=8)
    right.set_yticks(y, labels)
    right.invert_yaxis()
    right.set_xlabel("mean time per step per rank (ms)")
    right.set_title("step time breakdown (traced steps)", fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in PART_COLOURS]
    right.legend(handles, PARTS, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    totals = [sum(r["trace"]["breakdown_ms"].values()) for r in rows if r["trace"]]
    right.set_xlim(0, 1.3 * max(totals, default=1.0))  # room for the "comm in flight" labels
    fig.tight_layout()
    wtrun.save_figure(fig, out, PROG)


def main():
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  analysis/summary.py runs/fashion_mlp\n"
               "  analysis/summary.py runs/gang2 runs/gang4 --csv scaling.csv -o scaling.png")
    parser.add_argument("runs", metavar="RUN", nargs="+", help="run directories")
    parser.add_argument("-o", "--output", metavar="PNG",
                        help="chart to write (default: RUN/summary.png for one run, "
                             "./summary.png for several)")
    parser.add_argument("--csv", metavar="FILE", help="also write the table as CSV")
    args = parser.parse_args()

    runs = [wtrun.load_run(p) for p in args.runs]
    rows = [run_row(run, label) for run, label in zip(runs, wtrun.run_label(args.runs))]
    print_table(rows)
    if args.csv:
        write_csv(rows, args.csv)
    draw(rows, args.output or (runs[0].path / "summary.png" if len(runs) == 1
                               else Path("summary.png")))


if __name__ == "__main__":
    wtrun.run_main(main, PROG)
