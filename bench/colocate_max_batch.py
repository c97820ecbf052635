#!/usr/bin/python3
"""Waterwave's Table 1 on this machine: the largest per-job batch two identical jobs can train
together under one memory budget, by way of sharing, against one job alone.

For each model a budget M is set to one job's peak reserved bytes at a solo batch of --solo-batch
(so the solo maximum is about that batch). Then, for each way of sharing, the largest per-job
batch that runs --steps steps under M is found by bisection on multiples of 8 (a batch that fits,
the next that exits 3 with out-of-memory):
  solo        one job alone
  temporal    two jobs, whole steps in turn (every job's weights and state resident)
  unordered   two jobs' instructions in turn, no node groups (spatial sharing's stand-in)
  waterwave-s two jobs in paired rounds of two node groups each (forward, backward)
  waterwave   two jobs in paired rounds of node groups of --split-fraction of M
and the ratio waterwave / solo. W: one job's bytes that do not scale with the batch (weights,
gradients, optimizer state), as measured; the ratio can reach 1 only when W is small against M.

    bench/colocate_max_batch.py [--models "mlp lenet"] [--steps 5] [--solo-batch 256]
Environment: WT_BUILD_DIR (default build).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(os.environ.get("WT_BUILD_DIR", os.path.join(REPO, "build")), "wavetrain")
MODELS = {  # model file, dataset, optimizer, solo batch scale
    "mlp": ("mlp.toml", "fashion_mnist.h5", "sgd", 1),
    "lenet": ("lenet.toml", "fashion_mnist.h5", "sgd", 1),
    "vgg_small": ("vgg_small.toml", "fashion_mnist.h5", "sgd", 1),
    "resnet": ("resnet.toml", "fashion_mnist.h5", "sgd", 1),
    "transformer_small": ("transformer_small.toml", "kjv.h5", "adamw", 0.25),
}


def job_deck(path, name, model, batch, out):
    model_file, data, optimizer, _ = MODELS[model]
    with open(path, "w") as f:
        f.write(f'[run]\nname = "{name}"\noutput_dir = "{out}"\n'
                f'[data]\npath = "{REPO}/data/{data}"\npreload = false\n'
                f'[model]\nfile = "{REPO}/models/{model_file}"\n'
                f'[optimizer]\nkind = "{optimizer}"\nlr = 0.001\n'
                f'[train]\nglobal_batch = {batch}\neval_every_epoch = false\n'
                f'[checkpoint]\nevery_steps = 0\n')


def run(deck, steps, limit, run_dir, extra=()):
    cmd = [BINARY, deck, "--steps", str(steps), "--quiet", "--run-dir", run_dir,
           "--set", f"device.memory_limit={limit}", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode not in (0, 3):
        sys.exit(f"colocate_max_batch: {' '.join(cmd)} exited {p.returncode}:\n{p.stderr}")
    return p.returncode == 0


def fits(tmp, model, mode, batch, steps, limit, split):
    """Whether `mode` runs `steps` steps at per-job `batch` under `limit` bytes."""
    out = os.path.join(tmp, "runs")
    a, b = os.path.join(tmp, "a.toml"), os.path.join(tmp, "b.toml")
    job_deck(a, "a", model, batch, out)
    job_deck(b, "b", model, batch, out)
    tag = f"{model}_{mode}_{batch}"
    if mode == "solo":
        return run(a, steps, limit, os.path.join(out, tag))
    sharing = {"temporal": "temporal", "unordered": "unordered"}.get(mode, "nodegroups")
    group = split if mode == "waterwave" else 1 << 40  # one group per phase: forward, backward
    deck = os.path.join(tmp, "pair.toml")
    with open(deck, "w") as f:
        f.write(f'[run]\nname = "pair"\noutput_dir = "{out}"\n'
                f'[colocate]\ndecks = ["a.toml", "b.toml"]\nsharing = "{sharing}"\n'
                f'split_bytes = {min(group, limit)}\n')
    return run(deck, steps, limit, os.path.join(out, tag))


def largest(tmp, model, mode, steps, limit, split, start):
    """The largest multiple of 8 that fits (bisection from `start`), 0 if 8 does not."""
    if not fits(tmp, model, mode, 8, steps, limit, split):
        return 0
    lo, hi = 8, max(16, start)
    while fits(tmp, model, mode, hi, steps, limit, split):
        lo, hi = hi, hi * 2
    while hi - lo > 8:
        mid = (lo + hi) // 2 // 8 * 8
        if fits(tmp, model, mode, mid, steps, limit, split):
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


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--models", default=" ".join(MODELS))
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--solo-batch", type=int, default=256)
    p.add_argument("--split-fraction", type=float, default=0.0625)
    args = p.parse_args()
    modes = ["solo", "temporal", "unordered", "waterwave-s", "waterwave"]
    print("| model | budget MB | W MB | " + " | ".join(modes) + " | waterwave/solo |")
    print("|---|---:|---:|" + "---:|" * len(modes) + "---:|")
    for model in args.models.split():
        with tempfile.TemporaryDirectory() as tmp:
            b0 = max(8, int(args.solo_batch * MODELS[model][3]) // 8 * 8)
            limit = peak_reserved(tmp, model, b0, args.steps)
            # W: the part of the peak that does not grow with the batch (two-point line).
            w = max(0, 2 * peak_reserved(tmp, model, b0 // 2, args.steps) - limit)
            split = max(1, int(limit * args.split_fraction))
            batches = {m: largest(tmp, model, m, args.steps, limit, split, b0) for m in modes}
            ratio = batches["waterwave"] / batches["solo"] if batches["solo"] else 0
            print(f"| {model} | {limit / 1048576:.1f} | {w / 1048576:.1f} | " +
                  " | ".join(str(batches[m]) for m in modes) + f" | {ratio:.1%} |", flush=True)


if __name__ == "__main__":
    main()
