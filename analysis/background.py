#!/usr/bin/python3
"""How a background job filled a traced foreground run's idle time (DeepPool multiplexing).

Reads RUN/trace.h5 (the foreground's instructions, [trace] enabled = true) and each rank's
RUN/background/rank_<r>/tasklets.csv, lines them up on the rank's trace clock (its /rank_<r>
attribute clock_origin_ns), and
prints per rank, over the traced steps:
  tasklets       background tasklets run
  runnable       of them, those that began while a foreground stream could issue (not inside a
                 Wait of every stream that still had work in that step): 0 under priority
  in_allreduce   of them, those that overlapped a foreground AllReduce in flight: 0 under
                 block_during_allreduce
  in_send        of them, those that overlapped a foreground send in flight (issued, not yet
                 complete): 0 under block_during_send
  over_bound     multi-node tasklets whose planned time exceeds background.tasklet_ms
  slow           multi-node tasklets that took more than 1.5 x tasklet_ms measured
  held           idle checks the gate held, by reason (first of each per wait and step)
and where each rank's time went over the traced steps, as shares of their wall time:
  foreground     the foreground's own work (its compute and data loading; not its transfers,
                 traced until seen complete, nor its Waits)
  background     inside tasklets
  held idle      idle after the gate held (a node too long for the expected idle time left, a
                 send or allreduce in flight, ...): the background could not fill it
  idle alone     idle in the steps the run budget ran alone (every solo_every-th and its own)
  other idle     the rest (the gaps between tasklets, a wait before the first one)
--json prints the same as one JSON object (per rank), for scripts.
"""

import argparse
import bisect
import csv
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wtrun  # noqa: E402

PROG = "background.py"
TOLERANCE_S = 1e-6  # the trace's times and the tasklets' are read off the same clock


TASKLET_COLUMNS = {"kind": str, "fg_step": int, "begin_s": float, "end_s": float,
                   "planned_ms": float, "bg_instructions": int}


def read_tasklets(path):
    """The rows of a tasklets.csv, the columns used here converted; RunError naming the line."""
    if not path.is_file():
        raise wtrun.RunError(f"{path}: no tasklets.csv (was the run's [background] deck set?)")
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            missing = sorted(set(TASKLET_COLUMNS) - set(reader.fieldnames or ()))
            if missing:
                raise wtrun.RunError(f"{path}: not a tasklets.csv (no column {', '.join(missing)})")
            return [tasklet_row(path, reader.line_num, row) for row in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise wtrun.RunError(f"{path}: cannot read: {e}") from None


def tasklet_row(path, line, row):
    try:
        return {c: kind(row[c]) for c, kind in TASKLET_COLUMNS.items()}
    except (TypeError, ValueError):  # a short row (None) or a value that is not a number
        text = ",".join(str(v) for v in row.values() if v is not None)
        raise wtrun.RunError(f"{path}:{line}: malformed tasklet row {text!r}") from None


def stream_spans(events, step):
    """Per stream: its Wait intervals and the span of its instructions in `step`."""
    spans = {}
    for name, stream, s, b, e in zip(events["name"], events["stream"], events["step"],
                                     events["begin"], events["end"]):
        if s != step:
            continue
        entry = spans.setdefault(int(stream), {"waits": [], "first": b, "last": e})
        entry["first"], entry["last"] = min(entry["first"], b), max(entry["last"], e)
        if name == "Wait":
            entry["waits"].append((b, e))
    return spans


def blocked(spans, t):
    """Every stream with work left at t is inside a Wait."""
    for entry in spans.values():
        if t > entry["last"] + TOLERANCE_S:
            continue  # the stream is done with this step
        if not any(b - TOLERANCE_S <= t <= e + TOLERANCE_S for b, e in entry["waits"]):
            return False
    return True


def spans_named(events, wanted):
    """The (begin, end) of every event whose name `wanted` accepts."""
    return [(b, e) for name, b, e in zip(events["name"], events["begin"], events["end"])
            if wanted(name)]


def overlaps(spans, begin, end):
    return any(b + TOLERANCE_S < end and begin < e - TOLERANCE_S for b, e in spans)


def rank_report(events, rows, origin, tasklet_ms, window):
    allreduces = spans_named(events, lambda name: name == "AllReduce")
    sends = spans_named(events, lambda name: name.startswith("Send"))
    report = {"tasklets": 0, "runnable": 0, "in_allreduce": 0, "in_send": 0, "over_bound": 0,
              "slow": 0, "held": {}, "tasklet_s": 0.0}
    cache = {}
    for row in rows:
        step = row["fg_step"]
        if not window[0] <= step < window[1]:
            continue
        if not row["kind"].startswith("tasklet"):
            report["held"][row["kind"]] = report["held"].get(row["kind"], 0) + 1
            continue
        begin, end = row["begin_s"] - origin, row["end_s"] - origin
        report["tasklets"] += 1
        report["tasklet_s"] += end - begin
        if step not in cache:
            cache[step] = stream_spans(events, step)
        spans = cache[step]
        report["runnable"] += not blocked(spans, begin)
        report["in_allreduce"] += overlaps(allreduces, begin, end)
        report["in_send"] += overlaps(sends, begin, end)
        several = row["bg_instructions"] > 1
        report["over_bound"] += several and row["planned_ms"] > tasklet_ms
        report["slow"] += several and (end - begin) * 1e3 > 1.5 * tasklet_ms
    return report


def time_shares(rank_trace, rows, origin, window):
    """Shares of the traced steps' wall time: foreground, background, held (by the reason of the
    hold before the gap), alone, other. Tasklets count by when they ran, not by fg_step: one may
    run on past its step's end into the next step's first receive."""
    events = rank_trace.events
    rows = sorted(rows, key=lambda r: r["begin_s"])
    begins = [r["begin_s"] - origin for r in rows]
    alone_steps = {r["fg_step"] for r in rows if r["kind"] == "held_run_budget"}
    # Transfers and Waits are not work: a send or an allreduce is traced until it is seen
    # complete, so its span is mostly waiting, which tasklets may fill.
    work = {}  # step -> its foreground work's (begin, end, "foreground"), grouped once
    for name, es, eb, ee in zip(events["name"], events["step"], events["begin"], events["end"]):
        if window[0] <= es < window[1] and wtrun.op_class(name) in ("compute", "data", "other"):
            work.setdefault(int(es), []).append((eb, ee, "foreground"))
    spent = {"foreground": 0.0, "background": 0.0, "held": {}, "alone": 0.0, "other": 0.0}
    wall = 0.0
    for step, b, e in zip(rank_trace.steps["step"], rank_trace.steps["begin"],
                          rank_trace.steps["end"]):
        if not window[0] <= step < window[1]:
            continue
        wall += e - b
        items = list(work.get(int(step), []))
        first = bisect.bisect_left(begins, b)
        if first > 0 and rows[first - 1]["end_s"] - origin > b:
            first -= 1  # a tasklet begun in the step before, still running at this one's start
        for i in range(first, bisect.bisect_left(begins, e)):
            kind = rows[i]["kind"]
            items.append((begins[i], rows[i]["end_s"] - origin,
                          "background" if kind.startswith("tasklet") else kind))
        cursor, before = b, None
        for ib, ie, kind in sorted(items) + [(e, e, None)]:
            gap = min(ib, e) - cursor
            if gap > 0:
                if step in alone_steps:
                    spent["alone"] += gap
                elif before is not None and before.startswith("held"):
                    spent["held"][before] = spent["held"].get(before, 0.0) + gap
                else:
                    spent["other"] += gap
            if kind in ("foreground", "background"):
                spent[kind] += max(0.0, min(ie, e) - max(ib, cursor))
            cursor, before = max(cursor, min(ie, e)), kind
    share = (lambda v: v / wall) if wall > 0 else (lambda v: 0.0)
    shares = {k: ({h: share(t) for h, t in v.items()} if k == "held" else share(v))
              for k, v in spent.items()}
    shares["wall_s"] = wall
    return shares


def main():
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  analysis/background.py runs/pipeline_bg")
    parser.add_argument("run", metavar="RUN", help="run directory of the foreground job")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args()

    run = wtrun.load_run(args.run)
    trace = run.trace()
    tasklet_ms = float(run.deck_value("background", "tasklet_ms", 0.5))
    window = (int(trace.attrs["start_step"]), int(trace.attrs["end_step"]))
    reports = {}
    origins = wtrun.rank_clock_origins(trace.path)
    for rank, rt in trace.ranks.items():
        origin = origins.get(rank, 0) * 1e-9
        if not origin:
            raise wtrun.RunError(f"{trace.path}: rank {rank} has no clock_origin_ns (written by an "
                                 "older wavetrain): cannot line it up with the tasklets")
        rows = read_tasklets(Path(run.path) / "background" / f"rank_{rank}" / "tasklets.csv")
        reports[rank] = rank_report(rt.events, rows, origin, tasklet_ms, window)
        reports[rank]["time"] = time_shares(rt, rows, origin, window)
    if args.json:
        print(json.dumps(reports))
        return
    print(f"steps [{window[0]}, {window[1]}), tasklet_ms = {tasklet_ms}")
    print("rank  tasklets  runnable  in_allreduce  in_send  over_bound  slow  held")
    for rank, r in reports.items():
        held = ", ".join(f"{k} {v}" for k, v in sorted(r["held"].items())) or "-"
        print(f"{rank:4d}  {r['tasklets']:8d}  {r['runnable']:8d}  {r['in_allreduce']:12d}  "
              f"{r['in_send']:7d}  {r['over_bound']:10d}  {r['slow']:4d}  {held}")
    print("rank time: foreground  background  held idle  idle alone  other idle  (held by reason)")
    for rank, r in reports.items():
        t = r["time"]
        why = ", ".join(f"{k} {v:.1%}" for k, v in sorted(t["held"].items())) or "-"
        print(f"{rank:4d}       {t['foreground']:10.1%}  {t['background']:10.1%}  "
              f"{sum(t['held'].values()):9.1%}  {t['alone']:10.1%}  {t['other']:10.1%}  ({why})")


if __name__ == "__main__":
    wtrun.run_main(main, PROG)
