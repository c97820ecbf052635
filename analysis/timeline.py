#!/usr/bin/python3
"""Timeline of a traced wavetrain run: per rank and stream, what ran when.

One lane per (rank, stream) holds compute (Forward, Backward, Step), data loading and
waits; communication (AllReduce, Send, Recv, ...) sits in its own lane under it, since it is
in flight while compute goes on. When several batches are in flight (pipelines, waves),
compute bars are labelled with their batch where there is room, the way the GPipe and Wavelet
papers draw their schedules. Step boundaries are dotted.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import wtrun  # noqa: E402

PROG = "timeline.py"

COLOURS = {
    "Forward": "#4c8bd6",
    "Backward": "#1f4e8c",
    "Step": "#7b5ea7",
    "LoadBatch": "#e0a030",
    "Wait": "#c8c8c8",
    "communication": "#d9534f",
    "other": "#8fbc8f",
}


def parse_steps(text):
    """'A:B' -> (A, B); either side may be empty."""
    try:
        a, b = text.split(":")
        return (int(a) if a else None, int(b) if b else None)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A:B (e.g. 3:5), got {text!r}") from None


def colour(name):
    cls = wtrun.op_class(name)
    if cls == "communication":
        return COLOURS["communication"]
    return COLOURS.get(name, COLOURS["other"])


def lanes(trace, first, last):
    """[(label, events)] top to bottom: per rank and stream, then its communication lane."""
    result = []
    for rank, rt in trace.ranks.items():
        ev = rt.events_in_steps(first, last)
        is_comm = wtrun.np.array([wtrun.op_class(n) == "communication" for n in ev["name"]],
                                 dtype=bool)
        for stream in sorted(set(int(s) for s in ev["stream"])):
            on_stream = ev["stream"] == stream
            for comm, suffix in ((False, ""), (True, " comm")):
                keep = on_stream & (is_comm if comm else ~is_comm)
                if keep.any():
                    result.append((f"rank {rank} s{stream}{suffix}",
                                   {c: v[keep] for c, v in ev.items()}))
    return result


def device_clock(rows):
    """The lanes with each instruction at its device times, where it has them."""
    timed = []
    for label, ev in rows:
        ev = dict(ev)
        has = wtrun.np.isfinite(ev["device_begin"]) & wtrun.np.isfinite(ev["device_end"])
        ev["begin"] = wtrun.np.where(has, ev["device_begin"], ev["begin"])
        ev["end"] = wtrun.np.where(has, ev["device_end"], ev["end"])
        timed.append((label, ev))
    return timed


def uses_device_clock(trace, clock):
    """--clock auto: a GPU's device times (host times there say when work was issued)."""
    return clock == "device" or (clock == "auto" and trace.attrs.get("device_clock") == "cuda")


def draw(trace, first, last, out, clock="auto"):
    plt = wtrun.use_agg()
    from matplotlib.patches import Patch

    rows = lanes(trace, first, last)
    on_device = uses_device_clock(trace, clock)
    if on_device:
        rows = device_clock(rows)
    if not rows:
        raise wtrun.RunError(f"{trace.path}: no events in steps [{first}, {last}) "
                             f"(traced steps are [{trace.attrs['start_step']}, "
                             f"{trace.attrs['end_step']}))")
    t0 = min(float(ev["begin"].min()) for _, ev in rows)
    t1 = max(float(ev["end"].max()) for _, ev in rows)
    span_ms = max((t1 - t0) * 1e3, 1e-6)
    fig, ax = plt.subplots(figsize=(12, 1.0 + 0.55 * len(rows)))
    # Batch numbers tell pipelined schedules' batches apart; with one batch they are noise.
    batches = set(int(b) for _, ev in rows for b in ev["batch"] if b >= 0)
    label_batches = len(batches) > 1
    for y, (_, ev) in enumerate(rows):
        begins = (ev["begin"] - t0) * 1e3
        widths = (ev["end"] - ev["begin"]) * 1e3
        ax.broken_barh(list(zip(begins, widths)), (y - 0.4, 0.8),
                       facecolors=[colour(n) for n in ev["name"]], edgecolor="white",
                       linewidth=0.3)
        for b, w, name, batch in zip(begins, widths, ev["name"], ev["batch"]):
            wide = w > span_ms / 60
            if label_batches and wide and name in ("Forward", "Backward") and batch >= 0:
                ax.text(b + w / 2, y, str(int(batch)), ha="center", va="center", fontsize=7,
                        color="white")
    # Step boundaries from the first rank that recorded steps in the window.
    for rt in trace.ranks.values():
        keep = (rt.steps["step"] >= first) & (rt.steps["step"] < last)
        if keep.any():
            for b in rt.steps["begin"][keep]:
                ax.axvline((b - t0) * 1e3, color="black", linestyle=":", linewidth=0.6)
            break
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label for label, _ in rows])
    ax.invert_yaxis()
    ax.set_xlim(0, span_ms)
    ax.set_xlabel("time (ms) from the first event shown, "
                  + (f"when the device ran it ({trace.attrs.get('device_clock')})" if on_device
                     else "when the host issued it"))
    attrs = trace.attrs
    ax.set_title(f"{attrs.get('model', '?')}, schedule {attrs.get('schedule', '?')} on "
                 f"{trace.world_size} rank(s), steps {first}-{last - 1}")
    legend = [Patch(color=COLOURS[k], label=k) for k in
              ("Forward", "Backward", "Step", "LoadBatch", "Wait", "communication")]
    ax.legend(handles=legend, loc="upper center", bbox_to_anchor=(0.5, -0.12 - 0.4 / len(rows)),
              ncol=6, fontsize=8, frameon=False)
    fig.tight_layout()
    wtrun.save_figure(fig, out, PROG)


def main():
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__.split("\n\n")[0] + "\n\n" + __doc__.split("\n\n")[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  analysis/timeline.py runs/fashion_mlp --steps 12:14 -o tl.png")
    parser.add_argument("run", metavar="RUN", help="run directory (holding trace.h5) or a trace.h5")
    parser.add_argument("-o", "--output", metavar="PNG",
                        help="figure to write (default: timeline.png beside trace.h5)")
    parser.add_argument("--steps", metavar="A:B", type=parse_steps, default=(None, None),
                        help="show steps A <= step < B (default: every traced step)")
    parser.add_argument("--clock", choices=("auto", "issue", "device"), default="auto",
                        help="place instructions when the host issued them or when the device "
                             "ran them (a GPU's or the strict device's times); auto: the device's "
                             "on a GPU (default: auto)")
    args = parser.parse_args()

    trace_path, _ = wtrun.trace_argument(args.run)
    trace = wtrun.load_trace(trace_path)
    first = args.steps[0] if args.steps[0] is not None else int(trace.attrs["start_step"])
    last = args.steps[1] if args.steps[1] is not None else int(trace.attrs["end_step"])
    if last <= first:
        raise wtrun.RunError(f"--steps {first}:{last}: empty range")
    out = args.output or trace_path.parent / "timeline.png"
    draw(trace, first, last, out, args.clock)


if __name__ == "__main__":
    wtrun.run_main(main, PROG)
