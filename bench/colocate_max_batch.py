#!/usr/bin/python3
"""Waterwave's Table 1 on this machine: the largest per-job batch two identical jobs can train
together under one memory budget, by way of sharing, against one job alone; and the split sweep
(Figure 8), three and four jobs (section 5.5), a mixed pair (Table 2) and throughput against
temporal sharing, measured here and simulated on device models.

For each model a budget M is set to one job's peak reserved bytes at a solo batch of --solo-batch
times the model's scale (so the solo maximum is about that batch; the scales put one job's
weights, gradients and optimizer state W at a few percent of M, as the paper's models are on a
32 GB GPU). Then, for each way of sharing, the largest per-job batch that runs --steps steps under
M is found by bisection on multiples of 8 (a batch that fits, the next that exits 3 with
out-of-memory):
  solo         one job alone
  temporal     the jobs' whole steps in turn (every job's weights and state resident)
  unordered    the jobs' instructions in turn, no node groups (spatial sharing's stand-in)
  waterwave-s  paired rounds of two node groups a job, cut at its memory peak or at the
               forward/backward turn (the better of the two), paired by Algorithm 1's index
  index        paired rounds of node groups of M/16 paired by Algorithm 1's index (the pairing
               before issue 34)
  waterwave    paired rounds, node groups paired by bytes, split_bytes = 0 (chosen by simulation)
and the ratio waterwave / solo. W/M: the share of the budget that does not grow with the batch.

    bench/colocate_max_batch.py [--models "mlp lenet"] [--modes "solo waterwave"] [--steps 4]
    bench/colocate_max_batch.py --sweep lenet        split sweep: waterwave and index at 1/64..1/2 of M
    bench/colocate_max_batch.py --jobs 3 --models lenet
    bench/colocate_max_batch.py --mixed lenet:transformer_small
    bench/colocate_max_batch.py --throughput lenet   samples/s: temporal vs waterwave, here and simulated
Environment: WT_BUILD_DIR (default build).
"""
import argparse
from fractions import Fraction
import json
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(os.environ.get("WT_BUILD_DIR", os.path.join(REPO, "build")), "wavetrain")
MODELS = {  # model file, dataset, optimizer, solo batch scale
    "mlp": ("mlp.toml", "fashion_mnist.h5", "sgd", 16),
    "lenet": ("lenet.toml", "fashion_mnist.h5", "sgd", 1),
    "vgg_small": ("vgg_small.toml", "fashion_mnist.h5", "sgd", 1),
    "resnet": ("resnet.toml", "fashion_mnist.h5", "sgd", 1),
    "transformer_small": ("transformer_small.toml", "kjv.h5", "adamw", 0.25),
}


def job_deck(path, name, model, batch, out, extra=""):
    model_file, data, optimizer, _ = MODELS[model]
    with open(path, "w") as f:
        f.write(f'[run]\nname = "{name}"\noutput_dir = "{out}"\n'
                f'[data]\npath = "{REPO}/data/{data}"\npreload = false\n'
                f'[model]\nfile = "{REPO}/models/{model_file}"\n'
                f'[optimizer]\nkind = "{optimizer}"\nlr = 0.001\n'
                f'[train]\nglobal_batch = {batch}\neval_every_epoch = false\n{extra}'
                f'[checkpoint]\nevery_steps = 0\n')


def run(deck, steps, limit, run_dir, extra=()):
    cmd = [BINARY, deck, "--steps", str(steps), "--quiet", "--run-dir", run_dir,
           "--set", f"device.memory_limit={limit}", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 3):
        sys.exit(f"colocate_max_batch: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
    return p.returncode == 0


# Each way of sharing: the [colocate] keys of the pair's deck (None: one job alone). waterwave-s
# is the better of its two cuts, each paired by Algorithm 1's index as the paper's is.
MODES = {
    "solo": [None],
    "temporal": [{"sharing": "temporal"}],
    "unordered": [{"sharing": "unordered"}],
    "waterwave-s": [{"partition": "peak", "pairing": "index"},
                    {"partition": "turn", "pairing": "index"}],
    "index": [{"partition": "split", "pairing": "index"}],
    "waterwave": [{"partition": "split", "pairing": "bytes"}],
}
_runs = [0]


def pair_deck(tmp, out, names, keys):
    deck = os.path.join(tmp, "pair.toml")
    colocate = {"decks": "[" + ", ".join(f'"{n}.toml"' for n in names) + "]"}
    colocate.update({k: f'"{v}"' if isinstance(v, str) else str(v) for k, v in keys.items()})
    with open(deck, "w") as f:
        f.write(f'[run]\nname = "pair"\noutput_dir = "{out}"\n[colocate]\n' +
                "".join(f"{k} = {v}\n" for k, v in colocate.items()))
    return deck


def fits(tmp, jobs, mode, steps, limit, split=0):
    """Whether `mode` runs `steps` steps of `jobs` ([(model, batch)], one: solo) under `limit`
    bytes. split: split_bytes for waterwave and index (0: waterwave chooses, index M/16)."""
    out = os.path.join(tmp, "runs")
    names = [chr(ord("a") + j) for j in range(len(jobs))]
    for name, (model, batch) in zip(names, jobs):
        job_deck(os.path.join(tmp, f"{name}.toml"), name, model, batch, out)
    for keys in MODES[mode]:
        _runs[0] += 1
        run_dir = os.path.join(out, f"r{_runs[0]}")
        if keys is None:
            ok = run(os.path.join(tmp, "a.toml"), steps, limit, run_dir)
        else:
            keys = dict(keys)
            if mode == "index" or (mode == "waterwave" and split):
                keys["split_bytes"] = split or max(1, limit // 16)
            ok = run(pair_deck(tmp, out, names, keys), steps, limit, run_dir)
        shutil.rmtree(run_dir, ignore_errors=True)
        if ok:
            return True
    return False


def largest(fits_at, start, most=None):
    """The largest multiple of 8 for which fits_at(batch) holds, 0 if 8 does not: at most `most`
    when given (tried first), else by doubling from `start`; then bisection."""
    if most and fits_at(most):
        return most
    if not fits_at(8):
        return 0
    lo, hi = 8, most or max(16, start)
    if not most:
        while fits_at(hi):
            lo, hi = hi, hi * 2
    while hi - lo > 8:
        mid = (lo + hi) // 2 // 8 * 8
        if fits_at(mid):
            lo = mid
        else:
            hi = mid
    return lo


def peak_reserved(tmp, model, batch, steps):
    out = os.path.join(tmp, "runs")
    deck = os.path.join(tmp, "solo.toml")
    job_deck(deck, "solo", model, batch, out)
    run_dir = os.path.join(out, f"{model}_peak_{batch}")
    run(deck, steps, 0, run_dir)
    with open(os.path.join(run_dir, "summary.json")) as f:
        return int(json.load(f)["peak_device_mb"] * 1048576)


def budget_for(tmp, model, args):
    """(b0, M, W): the model's solo batch, the budget (its solo peak reserved at b0) and the bytes
    that do not grow with the batch (a two-point line through the peaks at b0 and b0 / 2)."""
    b0 = max(8, int(args.solo_batch * MODELS[model][3]) // 8 * 8)
    limit = peak_reserved(tmp, model, b0, args.steps)
    w = max(0, 2 * peak_reserved(tmp, model, b0 // 2, args.steps) - limit)
    return b0, limit, w


def max_batches(tmp, model, modes, args, limit, b0, jobs=2, split=0):
    """Per mode, the largest per-job batch of `jobs` copies of `model`; sharing modes are searched
    up to the solo maximum (no sharing beats one job alone)."""
    solo = largest(lambda b: fits(tmp, [(model, b)], "solo", args.steps, limit), b0)
    found = {"solo": solo}
    for m in modes:
        if m != "solo":
            found[m] = largest(lambda b: fits(tmp, [(model, b)] * jobs, m, args.steps, limit, split),
                               b0, solo)
    return found


def table(args):
    modes = args.modes.split()
    print(f"{args.jobs} jobs of each model, {args.steps} steps, solo batch {args.solo_batch} x scale")
    print("| model | budget MB | W/M | " + " | ".join(modes) + " | waterwave/solo |")
    print("|---|---:|---:|" + "---:|" * len(modes) + "---:|")
    ratios = []
    for model in args.models.split():
        with tempfile.TemporaryDirectory() as tmp:
            b0, limit, w = budget_for(tmp, model, args)
            split = max(1, int(limit * args.split_fraction)) if args.split_fraction else 0
            found = max_batches(tmp, model, modes, args, limit, b0, args.jobs, split)
            ratio = found.get("waterwave", 0) / found["solo"] if found["solo"] else 0
            ratios.append(ratio)
            print(f"| {model} | {limit / 1048576:.1f} | {w / limit:.1%} | " +
                  " | ".join(str(found[m]) for m in modes) + f" | {ratio:.1%} |", flush=True)
    print(f"mean waterwave/solo: {sum(ratios) / len(ratios):.1%}")


def sweep(args):
    """Figure 8's shape: waterwave's (bytes) and index's max batch at split fractions of M."""
    fractions = [1 / 64, 1 / 32, 1 / 16, 1 / 8, 3 / 16, 1 / 4, 3 / 8, 1 / 2]
    for model in args.sweep.split():
        with tempfile.TemporaryDirectory() as tmp:
            b0, limit, _ = budget_for(tmp, model, args)
            solo = largest(lambda b: fits(tmp, [(model, b)], "solo", args.steps, limit), b0)
            print(f"{model}: budget {limit / 1048576:.1f} MB, solo {solo}")
            print("| split / M | split MB | waterwave (bytes) | index (Algorithm 1) |")
            print("|---:|---:|---:|---:|")
            for fr in fractions:
                split = max(1, int(limit * fr))
                row = [largest(lambda b: fits(tmp, [(model, b)] * 2, m, args.steps, limit, split),
                               b0, solo) for m in ("waterwave", "index")]
                print(f"| {Fraction(fr).limit_denominator(64)} | {split / 1e6:.1f} | {row[0]} | "
                      f"{row[1]} |", flush=True)


def mixed(args):
    """Table 2's shape: two different models under the larger of their budgets, each at the same
    fraction f of its own solo maximum there; the largest f (in 1/32) for each way of sharing."""
    a, b = args.mixed.split(":")
    with tempfile.TemporaryDirectory() as tmp:
        limit = max(budget_for(tmp, m, args)[1] for m in (a, b))
        solo = {m: largest(lambda x: fits(tmp, [(m, x)], "solo", args.steps, limit),
                           max(8, int(args.solo_batch * MODELS[m][3]) // 8 * 8)) for m in (a, b)}
        print(f"{a} + {b}: budget {limit / 1048576:.1f} MB; solo {solo[a]} and {solo[b]}")
        print(f"| sharing | {a} | {b} | fraction of solo |")
        print("|---|---:|---:|---:|")
        at = lambda f: [(m, max(8, int(f * solo[m]) // 8 * 8)) for m in (a, b)]
        for mode in ("temporal", "unordered", "waterwave-s", "waterwave"):
            lo, hi = 0, 32
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if fits(tmp, at(mid / 32), mode, args.steps, limit):
                    lo = mid
                else:
                    hi = mid
            if fits(tmp, at(1.0), mode, args.steps, limit):
                lo = 32
            jobs = at(lo / 32) if lo else [(a, 0), (b, 0)]
            print(f"| {mode} | {jobs[0][1]} | {jobs[1][1]} | {lo}/32 |", flush=True)


def throughput(args):
    """Samples/s of two jobs, temporal sharing against paired rounds (no budget and a budget 1.5x
    the one-at-a-time peak), measured here (the rounds' steps, after the two solo ones), and the
    simulator's prediction for a100 and h100 at the same batches."""
    print("| model | batch per job | temporal samples/s | waterwave samples/s | measured ratio | "
          "a100 simulated | h100 simulated |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for model in args.throughput.split():
        for batch in (32, max(32, int(args.solo_batch * MODELS[model][3]) // 2)):
            with tempfile.TemporaryDirectory() as tmp:
                out = os.path.join(tmp, "runs")
                for name in ("a", "b"):
                    job_deck(os.path.join(tmp, f"{name}.toml"), name, model, batch, out,
                             "log_every_steps = 1\n")
                rates = {}
                for label, keys in (("temporal", {"sharing": "temporal"}),
                                    ("waterwave", {})):
                    deck = pair_deck(tmp, out, ["a", "b"], keys)
                    run_dir = os.path.join(out, label)
                    run(deck, args.steps + 8, 0, run_dir)
                    rates[label] = pair_rate(run_dir, ["a", "b"])
                sim = {}
                for device in ("a100", "h100"):
                    p = subprocess.run([BINARY, pair_deck(tmp, out, ["a", "b"], {}), "--simulate",
                                        "--device", device], capture_output=True, text=True)
                    line = [l for l in p.stdout.splitlines() if "co-location:" in l]
                    sim[device] = line[0].split("co-location:")[1].strip() if line else "?"
                print(f"| {model} | {batch} | {rates['temporal']:.0f} | {rates['waterwave']:.0f} | "
                      f"{rates['waterwave'] / rates['temporal']:.2f} | {sim['a100']} | "
                      f"{sim['h100']} |", flush=True)


def pair_rate(run_dir, names):
    """Samples/s of the jobs together over their steps from the third on: each job's metrics rate
    is its samples over the wall time between its rows (the other jobs' work included), so the
    jobs' medians add up."""
    import statistics
    total = 0
    for name in names:
        with open(os.path.join(run_dir, name, "metrics.csv")) as f:
            lines = f.read().splitlines()
        column = lines[0].split(",").index("samples_per_s")
        rates = [float(r.split(",")[column]) for r in lines[1:] if r.startswith("train,")]
        total += statistics.median(rates[2:])
    return total


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=" ".join(MODELS))
    p.add_argument("--modes", default="solo temporal unordered waterwave-s index waterwave")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--solo-batch", type=int, default=512)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--split-fraction", type=float, default=0,
                   help="waterwave's split_bytes as a fraction of M (0: split_bytes = 0, chosen "
                        "by simulation; index: 1/16)")
    p.add_argument("--sweep", default="", help="models for the split sweep")
    p.add_argument("--mixed", default="", help="MODEL_A:MODEL_B for the mixed pair")
    p.add_argument("--throughput", default="", help="models for the throughput comparison")
    args = p.parse_args()
    if args.sweep:
        sweep(args)
    elif args.mixed:
        mixed(args)
    elif args.throughput:
        throughput(args)
    else:
        table(args)


if __name__ == "__main__":
    main()
