#!/usr/bin/python3
"""DeepPool's multiplexing on this machine: cluster throughput (foreground + background samples/s)
against foreground slowdown, on 2 ranks (research/seeds-next.md §2.5 c).

For each foreground model (global batch 32) and schedule, the same run alone and with a local
background job on every rank (the same model, as in the paper, batch --bg-batch, in the
foreground's idle time):
  gang               data parallel: almost no idle time (the null case)
  pipeline           one microbatch: each rank idle while the other computes
  burst              as the planner plans it, and (lenet) forced: fc1..loss on rank 0 alone
plus the static partition (the foreground on 1 rank and the background alone on the other, two
processes side by side; its ratios against the pipeline alone on 2 ranks), the background alone on both ranks, and for pipeline the ablation
ladder of the paper's Fig. 11: an equal-priority stream (priority, pacing and feedback off), then
+ priority, + pacing, + feedback (all on), then a smaller background batch, and (not in the
paper) fit_to_wait at the deck's batch.

Rates are taken over the same steps of every run: the foreground's samples between its metrics
rows at steps --skip and --steps (after warm-up and profiling), and the background's samples
whose steps ended inside that wall-time window (both jobs' metrics share one clock). fg waits:
the foreground's fraction of rank time spent in Waits in that run (its trace, steps
--skip..+20): alone, the idle time there is to fill; with a background, it includes the waits
the background's tasklets lengthened.

Every row is run --reps times (a row alone and with the background in turn) and the median of
each figure is shown: this machine's runs vary by 10-30 % from one to the next.

    bench/background_multiplex.py [--models "lenet mlp"] [--steps 300] [--skip 50] [--bg-batch 8]
                                  [--reps 3]

--pairs (issue 35): the foreground's whole-run slowdown and the cluster's throughput for the
pairs "lenet+lenet mlp+lenet mlp+mlp" (foreground+background; --pair-list), pipeline with one
microbatch on 2 ranks, under background.policy = "deeppool" (the paper's multiplexing) and
"foreground_first" (the default), every figure from the whole run: samples between the
foreground's first and last metrics rows over that wall time (a stall counts, where a median
step rate would hide it), the background's samples inside it. Each round runs the foreground
alone and then with each policy, and the rounds are interleaved pair by pair, so a slow spell of
a loaded machine hits every row alike; each row prints its median and [min, max] over rounds.
"ceiling" is the cluster a perfect filling would reach in that round: the foreground alone's
idle time (its trace over 20 steps: each rank's time outside compute, in cores summed over the
ranks) times the background deck's own rate alone on one rank (its batch unsplit), over the
foreground alone: 1 + idle cores x bg alone / fg alone. It depends on the machine (how fast a
small background batch trains against the foreground's), and no policy reaches it: the
foreground's slowdown and its steps alone come off it.

    bench/background_multiplex.py --pairs [--steps 300] [--mlp-steps 3000] [--reps 5]
                                  [--pair-list "lenet+lenet mlp+lenet mlp+mlp"] [--fg-log-every 50]
The foreground writes a metrics row every --fg-log-every steps (the deck default, 50; every row
is a collective at its step's end, which the multiplexer's background work never runs into), so
its rates run from step 50 on (the warm-up and the background's profiling fall before: 0.2 % of
a 1000-step lenet run, charged to the run budget all the same).
Environment: WT_BUILD_DIR (default build). Open MPI runs with
OMPI_MCA_btl_vader_single_copy_mechanism=none (tools/run-default.sh's setting: copy-in/copy-out
shared memory, whose large messages progress only inside MPI calls).
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import types

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(os.environ.get("WT_BUILD_DIR", os.path.join(REPO, "build")), "wavetrain")
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")
DEEPPOOL = 'policy = "deeppool"\nfeedback = true'  # the paper's multiplexing, all its gates
LENET_FC_ON_RANK0 = "burst.ranks=[2,2,2,2,2,2,2,1,1,1,1]"


def deck(path, name, model, batch, out, extra="", log_every=1):
    with open(path, "w") as f:
        f.write(f'[run]\nname = "{name}"\noutput_dir = "{out}"\n'
                f'[data]\npath = "{REPO}/data/fashion_mnist.h5"\npreload = false\n'
                f'[model]\nfile = "{REPO}/models/{model}.toml"\n'
                f'[optimizer]\nkind = "sgd"\nlr = 0.01\n'
                f'[train]\nglobal_batch = {batch}\neval_every_epoch = false\n'
                f'log_every_steps = {log_every}\n[checkpoint]\nevery_steps = 0\n{extra}')


def metrics(run_dir):
    with open(os.path.join(run_dir, "metrics.csv")) as f:
        return [(int(r["step"]), float(r["wall_s"])) for r in csv.DictReader(f)
                if r["kind"] == "train"]


def window_rate(rows, batch, first, last):
    """(samples/s between the rows of steps first and last, (t_first, t_last))."""
    t = dict(rows)
    return batch * (last - first) / (t[last] - t[first]), (t[first], t[last])


def samples_in(rows, batch, window):
    """Samples of the steps done inside the wall-time window, interpolated between metrics rows
    (a background writes one every 10 steps: a row per step would cost it more than its step)."""
    def steps_done(t):
        before = [(step, wall) for step, wall in rows if wall <= t]
        after = [(step, wall) for step, wall in rows if wall > t]
        if not before:
            return 0.0
        if not after:
            return float(before[-1][0])
        (s0, w0), (s1, w1) = before[-1], after[0]
        return s0 + (s1 - s0) * (t - w0) / (w1 - w0)
    return batch * (steps_done(window[1]) - steps_done(window[0]))


def idle_fraction(run_dir, first, last):
    import h5py
    with h5py.File(os.path.join(run_dir, "trace.h5"), "r") as f:
        fractions = []
        for name in f:
            if not name.startswith("rank_"):
                continue
            ev, st = f[name]["events"], f[name]["steps"]
            names = [n.decode() if isinstance(n, bytes) else n for n in ev["name"][()]]
            waits = sum(e - b for n, b, e in zip(names, ev["begin"][()], ev["end"][()])
                        if n == "Wait")
            fractions.append(waits / sum(st["end"][()] - st["begin"][()]))
    return sum(fractions) / len(fractions)


def idle_cores(run_dir):
    """Rank time in no compute (waits, transfers, the step's end), summed over ranks, over the
    traced steps' wall time: the cores a background could fill."""
    import h5py
    comm = ("Wait", "Send", "Recv", "AllReduce", "Broadcast", "Reduce", "AllGather")
    with h5py.File(os.path.join(run_dir, "trace.h5"), "r") as f:
        idle = 0.0
        for name in f:
            if not name.startswith("rank_"):
                continue
            ev, st = f[name]["events"], f[name]["steps"]
            names = [n.decode() if isinstance(n, bytes) else n for n in ev["name"][()]]
            busy = sum(e - b for n, b, e in zip(names, ev["begin"][()], ev["end"][()])
                       if not n.startswith(comm))
            idle += 1 - busy / sum(st["end"][()] - st["begin"][()])
    return idle


def warm_page_cache():
    """Reads the dataset once: a VM that reclaims the page cache between runs (this one does:
    `fincore` showed 41 of its 53 MB resident after a few idle minutes) would otherwise charge
    whichever run comes first for disk reads (a 2.2 ms LoadBatch where 0.08 ms is usual)."""
    with open(os.path.join(REPO, "data", "fashion_mnist.h5"), "rb") as f:
        while f.read(1 << 22):
            pass


def launch(args, ranks, run_dir, deck_path, sets, env=ENV):
    warm_page_cache()
    cmd = ["mpirun", "-np", str(ranks), BINARY, deck_path, "--steps", str(args.steps), "--quiet",
           "--run-dir", run_dir, "--overwrite"]  # a repeat replaces its earlier round
    for s in sets:
        cmd += ["--set", s]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True)


def finish(p, what):
    out, _ = p.communicate()
    if p.returncode != 0:
        sys.exit(f"background_multiplex: {what} exited {p.returncode}:\n{out}")


def measure(args, tmp, model, label, sets, background=None, bg_batch=None):
    """One 2-rank foreground run; background: extra [background] lines, or None for alone."""
    bg_batch = bg_batch or args.bg_batch
    run_dir = os.path.join(tmp, f"{model}_{label}")
    path = os.path.join(tmp, f"{model}_{label}.toml")
    extra = (f'[trace]\nenabled = true\nstart_step = {args.skip}\nend_step = {args.skip + 20}\n')
    if background is not None:
        extra += f'[background]\ndeck = "{tmp}/bg_{model}_{bg_batch}.toml"\n{background}\n'
    deck(path, label, model, 32, tmp, extra)
    finish(launch(args, 2, run_dir, path, sets), f"{model} {label}")
    fg_rate, window = window_rate(metrics(run_dir), 32, args.skip, args.steps)
    row = {"fg": fg_rate, "bg": 0.0, "idle": idle_fraction(run_dir, args.skip, args.skip + 20)}
    if background is not None:
        for r in (0, 1):
            bg_dir = os.path.join(run_dir, "background", f"rank_{r}")
            row["bg"] += samples_in(metrics(bg_dir), bg_batch, window) / (window[1] - window[0])
    return row


def static_partition(args, tmp, model):
    """The foreground on 1 rank and the background alone on the other, side by side."""
    fg_path = os.path.join(tmp, f"{model}_static.toml")
    bg_path = f"{tmp}/bg_{model}_{args.bg_batch}.toml"
    deck(fg_path, "static", model, 32, tmp)
    fg = launch(args, 1, os.path.join(tmp, f"{model}_static"), fg_path, [])
    bg = subprocess.Popen([BINARY, bg_path, "--steps", str(args.steps * 40), "--quiet",
                           "--run-dir", os.path.join(tmp, f"{model}_static_bg")], env=ENV,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finish(fg, f"{model} static")
    bg.terminate()  # it checkpoints and stops (75)
    bg.wait()
    fg_rate, _ = window_rate(metrics(os.path.join(tmp, f"{model}_static")), 32, args.skip,
                             args.steps)
    bg_rows = metrics(os.path.join(tmp, f"{model}_static_bg"))
    bg_rate, _ = window_rate(bg_rows, args.bg_batch, bg_rows[len(bg_rows) // 4][0],
                             bg_rows[-1][0])
    return {"fg": fg_rate, "bg": bg_rate, "idle": float("nan")}


def median_row(rows):
    import statistics
    return {k: statistics.median(r[k] for r in rows) for k in rows[0]}


def repeated(args, run):
    return median_row([run() for _ in range(args.reps)])


def print_row(name, row, alone):
    cluster = row["fg"] + row["bg"]
    print(f"| {name} | {row['fg']:.0f} | {row['bg']:.0f} | {cluster:.0f} | "
          f"{cluster / alone['fg']:.2f} | {alone['fg'] / row['fg']:.3f} | "
          f"{row['idle']:.0%} |", flush=True)


# The cause check (issue 35): Open MPI's default shared memory, whose single copy moves a large
# message while its receiver computes, against the copy-in/copy-out ENV sets.
SINGLE_COPY_ENV = {k: v for k, v in ENV.items() if k != "OMPI_MCA_btl_vader_single_copy_mechanism"}


def whole_run(args, tmp, fg_model, bg_model, label, policy_lines, env=ENV):
    """One 2-rank pipeline run of fg_model; policy_lines None = alone (traced over 20 steps).
    Whole-run rates (fg, bg), and alone the foreground's idle fraction."""
    run_dir = os.path.join(tmp, f"pair_{fg_model}_{bg_model}_{label.replace(', ', '_')}")
    path = run_dir + ".toml"
    extra = "[trace]\nenabled = true\nstart_step = 50\nend_step = 70\n"
    if policy_lines is not None:
        bg_deck = f"{tmp}/bg_{bg_model}_{args.bg_batch}.toml"
        extra = f'[background]\ndeck = "{bg_deck}"\n{policy_lines}\n'
    deck(path, label, fg_model, 32, tmp, extra, log_every=args.fg_log_every)
    sets = ["schedule.kind=pipeline", "schedule.microbatches=1", "schedule.balance=flops"]
    # mlp's 0.6 ms steps: a run of --steps would last less than the background's one-off
    # profiling (two of its steps, tens of ms), which a whole-run figure must amortize.
    steps = args.mlp_steps if fg_model == "mlp" else args.steps
    finish(launch(types.SimpleNamespace(steps=steps), 2, run_dir, path, sets, env),
           f"{fg_model}+{bg_model} {label}")
    rows = metrics(run_dir)
    fg_rate, window = window_rate(rows, 32, rows[0][0], rows[-1][0])
    if policy_lines is None:
        return fg_rate, idle_cores(run_dir)
    bg_rate = 0.0
    for r in (0, 1):
        bg_rows = metrics(os.path.join(run_dir, "background", f"rank_{r}"))
        bg_rate += samples_in(bg_rows, args.bg_batch, window) / (window[1] - window[0])
    return fg_rate, bg_rate


def background_alone(args, tmp, bg_model):
    """The background deck alone on one rank: samples/s over its second half."""
    run_dir = os.path.join(tmp, f"bg_{bg_model}_alone")
    steps = args.mlp_steps if bg_model == "mlp" else args.steps
    finish(launch(types.SimpleNamespace(steps=steps), 1, run_dir,
                  f"{tmp}/bg_{bg_model}_{args.bg_batch}.toml", []), f"{bg_model} alone")
    rows = metrics(run_dir)
    return window_rate(rows, args.bg_batch, rows[len(rows) // 2][0], rows[-1][0])[0]


def spread(values, fmt):
    import statistics
    return (f"{fmt.format(statistics.median(values))} "
            f"[{fmt.format(min(values))}, {fmt.format(max(values))}]")


def pairs(args, tmp):
    """Each pair's rows; the first pair's also under Open MPI's single-copy shared memory (its
    own alone run), the cause check."""
    known = {"deeppool": DEEPPOOL, "foreground_first": "",
             # foreground first with the paper's per-wait feedback on top of its run budget
             "foreground_first_with_feedback": "feedback = true",
             # the ablation of split_backward: a convolution's backward as one node
             "foreground_first_whole_backward": "split_backward = false"}
    names = args.policies.split()
    for name in names:
        if name not in known:
            raise SystemExit(f"background_multiplex.py: error: --policies: unknown policy '{name}' "
                             f"(known: {', '.join(known)})")
    policies = [(name, known[name], ENV) for name in names]
    print("| pair (fg+bg) | policy | fg slowdown, median [min, max] | cluster / fg alone | "
          "ceiling | fg alone samples/s | bg samples/s |\n|---|---|---:|---:|---:|---:|---:|",
          flush=True)
    for i, pair in enumerate(args.pair_list.split()):
        fg_model, bg_model = pair.split("+")
        rows = policies + ([("deeppool, single copy", DEEPPOOL, SINGLE_COPY_ENV)]
                           if i == 0 and "deeppool" in names else [])
        alone = {"copy-in/out": [], "single copy": []}
        ceiling = {"copy-in/out": [], "single copy": []}
        withs = {name: [] for name, _, _ in rows}
        for _ in range(args.reps):
            single = i == 0 and "deeppool" in names
            bg_alone = background_alone(args, tmp, bg_model)
            for shm, env in (("copy-in/out", ENV), ("single copy", SINGLE_COPY_ENV))[:1 + single]:
                label = "alone" if env is ENV else "alone_single_copy"
                fg_alone, idle = whole_run(args, tmp, fg_model, bg_model, label, None, env)
                alone[shm].append(fg_alone)
                ceiling[shm].append(1 + idle * bg_alone / fg_alone)
            for name, lines, env in rows:
                withs[name].append(whole_run(args, tmp, fg_model, bg_model, name, lines, env))
        for name, _, env in rows:
            shm = "single copy" if env is SINGLE_COPY_ENV else "copy-in/out"
            base = alone[shm]
            slow = [a / fg for a, (fg, _) in zip(base, withs[name])]
            cluster = [(fg + bg) / a for a, (fg, bg) in zip(base, withs[name])]
            print(f"| {pair} | {name} | {spread(slow, '{:.3f}')} | {spread(cluster, '{:.2f}')} | "
                  f"{spread(ceiling[shm], '{:.2f}')} | {spread(base, '{:.0f}')} | "
                  f"{spread([bg for _, bg in withs[name]], '{:.0f}')} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", default="lenet mlp")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--skip", type=int, default=50)
    parser.add_argument("--bg-batch", type=int, default=8)
    parser.add_argument("--small-batch", type=int, default=4)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--pairs", action="store_true",
                        help="the whole-run slowdown of foreground+background pairs, by policy")
    parser.add_argument("--pair-list", default="lenet+lenet mlp+lenet mlp+mlp")
    parser.add_argument("--fg-log-every", type=int, default=50,
                        help="--pairs: the foreground's train.log_every_steps (the deck default; "
                        "every metrics row is a collective at a step's end)")
    parser.add_argument("--policies", default="deeppool foreground_first",
                        help="--pairs rows: deeppool, foreground_first, foreground_first_with_feedback "
                             "(foreground first with the paper's per-wait feedback on top of its "
                             "run budget)")
    parser.add_argument("--mlp-steps", type=int, default=3000,
                        help="--pairs: the steps of an mlp foreground's runs")
    parser.add_argument("--keep", action="store_true",
                        help="keep the runs' temporary directory (its path is printed)")
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="wt-multiplex-")
    try:
        run(args, tmp)
    finally:  # each round's runs and checkpoints: up to 100 MB a call
        if args.keep:
            print(f"runs kept in {tmp}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


def run(args, tmp):
    if args.pairs:
        for model in {m for pair in args.pair_list.split() for m in pair.split("+")}:
            deck(f"{tmp}/bg_{model}_{args.bg_batch}.toml", f"bg_{model}", model, args.bg_batch,
                 tmp, log_every=10)
        return pairs(args, tmp)
    for model in args.models.split():
        for b in {args.bg_batch, args.small_batch}:
            deck(f"{tmp}/bg_{model}_{b}.toml", f"bg_{model}_{b}", model, b, tmp, log_every=10)
    print("| row | fg samples/s | bg samples/s | cluster samples/s | cluster / fg alone | "
          "fg slowdown | fg waits |\n|---|---:|---:|---:|---:|---:|---:|")
    for model in args.models.split():
        rows = [("gang", ["schedule.kind=gang"]),
                ("pipeline", ["schedule.kind=pipeline", "schedule.microbatches=1"]),
                ("burst (planned)", ["schedule.kind=burst"])]
        if model == "lenet":
            rows.append(("burst (fc on rank 0)", ["schedule.kind=burst", LENET_FC_ON_RANK0]))
        for label, sets in rows:
            key = label.split()[0] + ("_fc" if "fc" in label else "")
            alones, withs = [], []
            for _ in range(args.reps):  # in turn, so slow spells of the machine hit both
                alones.append(measure(args, tmp, model, key, sets))
                withs.append(measure(args, tmp, model, key + "_bg", sets, ""))
            alone = median_row(alones)
            if label == "pipeline":
                pipeline_alone = alone
            print_row(f"{model} {label} alone", alone, alone)
            print_row(f"{model} {label} + background", median_row(withs), alone)
            if label != "pipeline":
                continue
            paper = 'policy = "deeppool"\n'  # the ladder turns the paper's gates on one by one
            ladder = [("equal priority",
                       paper + "priority = false\npacing = false\nfeedback = false"),
                      ("+ priority", paper + "pacing = false\nfeedback = false"),
                      ("+ pacing", paper + "feedback = false"),
                      ("+ feedback (all)", paper + "feedback = true"),
                      (f"+ background batch {args.small_batch}", paper + "feedback = true"),
                      ("+ fit to the expected wait (ours)",
                       paper + "feedback = true\nfit_to_wait = true"),
                      ("foreground first (ours, the default)", "")]
            for i, (name, lines) in enumerate(ladder):
                batch = args.small_batch if name.startswith("+ background batch") else args.bg_batch
                row = repeated(args, lambda: measure(args, tmp, model, f"ladder{i}", sets, lines,
                                                     batch))
                print_row(f"{model} pipeline ladder: {name}", row, pipeline_alone)
        print_row(f"{model} static partition (fg 1 rank, bg 1 rank)",
                  repeated(args, lambda: static_partition(args, tmp, model)), pipeline_alone)


if __name__ == "__main__":
    main()
