#!/usr/bin/python3
"""Export a wavetrain trace (trace.h5) to Chrome trace-event JSON.

The output loads in https://ui.perfetto.dev and chrome://tracing: one process per rank
(pid = rank), one thread per stream (tid = stream) holding every executed instruction as a
complete event ("ph": "X", ts and dur in microseconds on the clock all ranks share), with
stage, batch, wave, step and bytes as arguments; a "steps" thread per rank shows each
traced step, and the allocator's bytes in use and reserved are a counter track
("ph": "C"). Asynchronous communication is shown from issue to observed completion, so it
overlaps the compute on its stream; Perfetto draws such overlaps as nested or stacked slices.
Where the trace has device times (a GPU, the strict device), each stream also gets a
"device stream N" thread (tid = DEVICE_TID + stream) with the instructions when the device ran
them.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "analysis"))
import wtrun  # noqa: E402

PROG = "trace_to_chrome.py"
STEPS_TID = 1000  # a thread id no stream uses, for the step bars
DEVICE_TID = 2000  # + stream: the stream's instructions on the device's clock


def us(seconds):
    return round(float(seconds) * 1e6, 3)


def chrome_events(trace):
    events = []
    for rank, rt in trace.ranks.items():
        events.append({"ph": "M", "name": "process_name", "pid": rank, "tid": 0,
                       "args": {"name": f"rank {rank}"}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": rank, "tid": 0,
                       "args": {"sort_index": rank}})
        ev = rt.events
        for stream in sorted(set(int(s) for s in ev["stream"])):
            events.append({"ph": "M", "name": "thread_name", "pid": rank, "tid": stream,
                           "args": {"name": f"stream {stream}"}})
        timed = wtrun.np.isfinite(ev["device_begin"]) & wtrun.np.isfinite(ev["device_end"])
        for stream in sorted(set(int(s) for s in ev["stream"][timed])):
            events.append({"ph": "M", "name": "thread_name", "pid": rank,
                           "tid": DEVICE_TID + stream, "args": {"name": f"device stream {stream}"}})
        for i in range(ev["name"].size):
            spans = [(int(ev["stream"][i]), ev["begin"][i], ev["end"][i])]
            if timed[i]:
                spans.append((DEVICE_TID + int(ev["stream"][i]), ev["device_begin"][i],
                              ev["device_end"][i]))
            for tid, begin, end in spans:
                events.append({
                    "ph": "X", "name": ev["name"][i], "cat": wtrun.op_class(ev["name"][i]),
                    "pid": rank, "tid": tid, "ts": us(begin), "dur": max(us(end - begin), 0.0),
                    "args": {"stage": int(ev["stage"][i]), "batch": int(ev["batch"][i]),
                             "wave": int(ev["wave"][i]), "step": int(ev["step"][i]),
                             "bytes": int(ev["bytes"][i])},
                })
        if rt.steps["step"].size:
            events.append({"ph": "M", "name": "thread_name", "pid": rank, "tid": STEPS_TID,
                           "args": {"name": "steps"}})
        for step, b, e in zip(rt.steps["step"], rt.steps["begin"], rt.steps["end"]):
            events.append({"ph": "X", "name": f"step {int(step)}", "cat": "step", "pid": rank,
                           "tid": STEPS_TID, "ts": us(b), "dur": max(us(e - b), 0.0),
                           "args": {"step": int(step)}})
        mem = rt.memory
        for t, in_use, reserved in zip(mem["time"], mem["in_use"], mem["reserved"]):
            events.append({"ph": "C", "name": "memory (bytes)", "pid": rank, "tid": 0,
                           "ts": us(t), "args": {"in_use": int(in_use),
                                                 "reserved": int(reserved)}})
    return events


def main():
    parser = argparse.ArgumentParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="example:\n  tools/trace_to_chrome.py runs/fashion_mlp -o mlp.json\n"
               "  then open mlp.json in https://ui.perfetto.dev (Open trace file)")
    parser.add_argument("trace", metavar="TRACE.h5|RUN",
                        help="a trace file, or a run directory holding trace.h5")
    parser.add_argument("-o", "--output", metavar="JSON",
                        help="file to write (default: trace.json beside trace.h5)")
    args = parser.parse_args()

    trace_path, _ = wtrun.trace_argument(args.trace)
    trace = wtrun.load_trace(trace_path)
    document = {
        "traceEvents": chrome_events(trace),
        "displayTimeUnit": "ms",
        "otherData": {k: str(v) for k, v in trace.attrs.items()},
    }
    out = Path(args.output) if args.output else trace_path.parent / "trace.json"
    wtrun.write_atomically(out, lambda f: json.dump(document, f, separators=(",", ":")))
    count = sum(1 for e in document["traceEvents"] if e["ph"] == "X")
    print(f"{PROG}: wrote {out} ({count} slices from {len(trace.ranks)} rank(s))")


if __name__ == "__main__":
    wtrun.run_main(main, PROG)
