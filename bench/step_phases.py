#!/usr/bin/python3
"""Where a training step's time goes, per phase, from one traced run (bench/step_phases.sh runs
it). Three views of the same steps, 1 rank:

  trace  (trace.h5, steps in the [trace] window): wall time per step of each instruction kind
         (LoadBatch: waiting for the preloaded batch; Forward; Backward; Step: the optimizer),
         the time inside a step no instruction covers (issuing, the step's read-back, the
         non-finite guard) and the time between steps (observers, the loop's bookkeeping).
  perf   (`perf script` of a `perf record -k CLOCK_MONOTONIC` of the same run, optional): the
         main thread's CPU time per step inside the trace window, by what the sampled code is
         (GEMM/convolution, elementwise kernels, optimizer, allocator, executor, MPI, kernel),
         and the CPU the rank's other threads (the batch preloader) spent meanwhile.
  layers (`wavetrain --show-stages`): each layer's forward+backward, measured alone.

  step_phases.py summarize --trace T --label L --model M [--perf P] [--stages S]  -> one JSON line
  step_phases.py table RESULTS.jsonl   -> markdown tables, medians over rounds, per label
"""
import argparse
import json
import re
import statistics
import sys

# First match wins: (phase, dso pattern, symbol pattern).
PERF_PHASES = [
    ("GEMM and convolution (oneDNN JIT / BLAS)", r"\[JIT\]|perf-\d+\.map|libdnnl|openblas|libblas|libmkl", None),
    ("kernel (page faults, futex, scheduler)", r"kernel\.kallsyms|\[kernel", None),
    ("MPI (progress, allreduce)", r"libmpi|open-pal|open-rte|mca_|pmix|libevent|hwloc", None),
    ("optimizer update", None, r"sgd|adamw|Optimizer|Sgd::|AdamW"),
    ("non-finite gradient check", None, r"all_finite|nonfinite|NonFinite|count_nonfinite"),
    ("allocator (caching allocator, malloc)", None,
     r"CachingAllocator|BlockPool|malloc|_int_free|cfree|tcache|operator new|operator delete"),
    ("data fetch (reader, batch source)", None, r"DatasetReader|DatasetBatchSource|BatchSampler"),
    ("memset / memcpy (fills, copies)", None, r"memset|memcpy|memmove"),
    ("elementwise kernels (ReLU, bias, softmax, fill)", None, r"wt::ops::|wt::kern::|HostOps|Kokkos"),
    ("executor, layers, tensors (host code)", None, r"^wt::|^std::"),
]
OTHER = "other (libc, libstdc++, ld.so, HDF5)"
TRACE_PHASES = {
    b"LoadBatch": "data fetch (LoadBatch: takes the preloaded batch)",
    b"Forward": "forward (all layers)",
    b"Backward": "backward (all layers)",
    b"Step": "optimizer (Step: non-finite count + update)",
    b"AllReduce": "gradient allreduce",
}
UNCOVERED = "in the step, no instruction (issue loop, read-back, guard)"
BETWEEN = "between steps (observers, metrics, loop)"
PERIOD = "step period (begin to next begin)"


def perf_phase(sym, dso):
    for name, dso_re, sym_re in PERF_PHASES:
        if dso_re and re.search(dso_re, dso):
            return name
        if sym_re and re.search(sym_re, sym):
            return name
    return OTHER


def read_trace(path):
    import h5py
    import numpy as np
    with h5py.File(path, "r") as f:
        g = f["rank_0"]
        ev = {k: g["events"][k][:] for k in ("name", "step", "begin", "end")}
        steps = {k: g["steps"][k][:] for k in ("step", "begin", "end")}
        origin = float(g.attrs["clock_origin_ns"]) * 1e-9
    return np, ev, steps, origin


def trace_phases(path):
    """Median per step (us) of each phase; and the window on the monotonic clock."""
    np, ev, steps, origin = read_trace(path)
    order = np.argsort(steps["step"])
    sid, sb, se = steps["step"][order], steps["begin"][order], steps["end"][order]
    per = {}
    covered = np.zeros(len(sid))
    index = {int(s): i for i, s in enumerate(sid)}
    for name, step, b, e in zip(ev["name"], ev["step"], ev["begin"], ev["end"]):
        i = index.get(int(step))
        if i is None:
            continue
        phase = TRACE_PHASES.get(bytes(name).rstrip(b"\0"), bytes(name).decode(errors="replace"))
        per.setdefault(phase, np.zeros(len(sid)))[i] += e - b
        covered[i] += e - b
    out = {phase: float(np.median(v)) * 1e6 for phase, v in per.items()}
    out[UNCOVERED] = float(np.median(se - sb - covered)) * 1e6
    out[BETWEEN] = float(np.median(sb[1:] - se[:-1])) * 1e6
    out[PERIOD] = float(np.median(np.diff(sb))) * 1e6
    window = (origin + float(sb[0]), origin + float(se[-1]))
    return out, window, len(sid)


def perf_phases(path, window, steps, period_ns):
    """Main thread's CPU us per step by phase, and the other threads' CPU us per step."""
    line_re = re.compile(r"^\s*(\d+)/(\d+)\s+([\d.]+):\s+(?:[0-9a-f]+\s+)?(.*)$")
    main, others, other_syms = {}, 0, {}
    with open(path, errors="replace") as f:
        for line in f:
            m = line_re.match(line)
            if not m:
                continue
            pid, tid, t, rest = int(m.group(1)), int(m.group(2)), float(m.group(3)), m.group(4).rstrip()
            if not window[0] <= t <= window[1]:
                continue
            cut = rest.rfind(" (")
            sym, dso = (rest[:cut], rest[cut + 2:-1]) if cut >= 0 else (rest, "")
            if tid == pid:
                phase = perf_phase(sym, dso)
                main[phase] = main.get(phase, 0) + 1
            else:
                others += 1
                other_syms[sym] = other_syms.get(sym, 0) + 1
    us = period_ns * 1e-3 / steps
    out = {phase: n * us for phase, n in main.items()}
    top = sorted(other_syms.items(), key=lambda kv: -kv[1])[:3]
    return out, others * us, [s for s, _ in top]


def layer_times(path):
    """{layer: ms} from --show-stages' table (forward+backward of the batch, measured alone)."""
    out = {}
    row = re.compile(r"^\d+\s+(\S+)\s+(\S+)\s+\[.*\]\s+\d+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s*$")
    with open(path) as f:
        for line in f:
            m = row.match(line)
            if m:
                out[f"{m.group(1)} ({m.group(2)})"] = float(m.group(3)) * 1e3
    return out


def summarize(args):
    trace, window, steps = trace_phases(args.trace)
    result = {"label": args.label, "model": args.model, "steps": steps, "trace": trace}
    if args.perf:
        cpu, others, top = perf_phases(args.perf, window, steps, args.period_ns)
        result.update(perf=cpu, other_threads=others, other_threads_top=top)
    if args.stages:
        result["layers"] = layer_times(args.stages)
    print(json.dumps(result))


def median_of(rows, label, view, phase):
    vals = [r[view].get(phase) for r in rows if r["label"] == label and view in r]
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def print_view(rows, labels, view, phases, title):
    print(f"\n{title}\n")
    print("| phase | " + " | ".join(f"{label} us/step" for label in labels) + " |")
    print("|---|" + "---:|" * len(labels))
    for phase in phases:
        cells = [median_of(rows, label, view, phase) for label in labels]
        print(f"| {phase} | " + " | ".join("-" if c is None else f"{c:,.1f}" for c in cells) + " |")


def table(args):
    rows = [json.loads(line) for line in open(args.results) if line.strip()]
    for model in dict.fromkeys(r["model"] for r in rows):
        mine = [r for r in rows if r["model"] == model]
        labels = list(dict.fromkeys(r["label"] for r in mine))
        rounds = len(mine) // max(1, len(labels))
        print(f"\n### {model}: medians of {rounds} round(s)")
        phases = list(dict.fromkeys(p for r in mine for p in r["trace"] if p != PERIOD)) + [PERIOD]
        print_view(mine, labels, "trace", phases, "Wall time per step, from trace.h5:")
        if any("perf" in r for r in mine):
            names = [p for p, _, _ in PERF_PHASES] + [OTHER]
            present = [p for p in names if any(p in r.get("perf", {}) for r in mine)]
            for r in mine:
                r["perf"]["(main thread CPU, all)"] = sum(r["perf"].values())
                r["perf"]["other threads of the rank (preloader) CPU"] = r["other_threads"]
            present += ["(main thread CPU, all)", "other threads of the rank (preloader) CPU"]
            print_view(mine, labels, "perf", present,
                       "CPU time per step inside the trace window, from perf (main thread by phase):")
        if any("layers" in r for r in mine):
            names = list(dict.fromkeys(p for r in mine for p in r.get("layers", {})))
            print_view(mine, labels, "layers", names,
                       "Each layer's forward+backward alone (--show-stages), batch 64:")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("summarize")
    s.add_argument("--trace", required=True)
    s.add_argument("--label", required=True)
    s.add_argument("--model", required=True)
    s.add_argument("--perf")
    s.add_argument("--period-ns", type=float, default=50000)
    s.add_argument("--stages")
    t = sub.add_parser("table")
    t.add_argument("results")
    args = p.parse_args()
    summarize(args) if args.cmd == "summarize" else table(args)


if __name__ == "__main__":
    sys.exit(main())
