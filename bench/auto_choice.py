#!/usr/bin/env python3
"""Proof of schedule.kind = "auto"'s choice: every candidate of each deck measured on 2 ranks,
side by side (each repetition runs every candidate once, in turn), against auto's pick.

  /usr/bin/python3 bench/auto_choice.py [--decks "inputs/fashion_lenet.toml ..."] [--steps 60]
      [--skip 10] [--reps 3] [--memory-limit BYTES]

Per deck: auto picks (its own profile and link probe, auto.csv), then every candidate trains
--steps steps by name (the `set` column of auto.csv); a row's figure is the median over --reps
of the median samples/s of its steps after --skip, with the range over the repetitions. Prints one
table per deck and whether auto's pick passes: it ran within the memory limit, and it is within 5%
of the measured best or tied with it. The tie rule: two candidates are tied when their ranges over
the repetitions overlap (the pick's fastest repetition at least the best's slowest), the
measurement's own noise on this machine, stated in each table.
"""
import argparse, csv, os, statistics, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_MCA_btl_vader_single_copy_mechanism="none")


def run(deck, sets, steps, run_dir, args):
    cmd = ["mpirun", "-n", "2", os.path.join(ROOT, "build", "wavetrain"), deck, "--quiet",
           "--steps", str(steps), "--run-dir", run_dir, "--set", "train.eval_every_epoch=false",
           # a metrics row per step: the decks log every 50 or 100, which over 40 steps left one
           # row whose rate spans the whole run, start-up included, whatever --skip said
           "--set", "train.log_every_steps=1"]
    if args.data:  # else the deck's own (each deck names its dataset)
        cmd += ["--set", f'data.path="{args.data}"']
    if args.memory_limit:
        cmd += ["--set", f"device.memory_limit={args.memory_limit}"]
    for s in sets:
        cmd += ["--set", s]
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def auto_pick(run_dir):
    with open(os.path.join(run_dir, "log.txt")) as f:
        chosen = [l for l in f if 'schedule.kind = "auto" chose' in l]
    return chosen[0].split(" chose ")[1].split(":")[0] if chosen else "?"


def samples_per_s(run_dir, skip):
    with open(os.path.join(run_dir, "metrics.csv")) as f:
        rows = [r for r in csv.DictReader(f) if r["kind"] == "train" and int(r["step"]) > skip]
    return statistics.median(float(r["samples_per_s"]) for r in rows)


def without_schedule_options(deck):
    """The deck with its [schedule] keys other than kind commented out (auto refuses a deck that
    fixes an option of one schedule, as fashion_resnet's bucket_bytes), written beside it so that
    its relative paths still resolve; the caller removes it. The deck itself when it has none."""
    lines, section, dropped = [], "", False
    with open(deck) as f:
        for line in f:
            stripped = line.strip()
            if stripped.startswith("["):
                section = stripped
            elif section == "[schedule]" and stripped and not stripped.startswith(("#", "kind")):
                line, dropped = "# (auto_choice) " + line, True
            lines.append(line)
    if not dropped:
        return deck
    copy = os.path.join(os.path.dirname(deck), ".auto_choice." + os.path.basename(deck))
    with open(copy, "w") as f:
        f.writelines(lines)
    return copy


def prove(deck, args, scratch):
    name = os.path.basename(deck)
    runnable = without_schedule_options(deck)
    try:
        return prove_deck(runnable, name, args, scratch)
    finally:
        if runnable != deck:
            os.remove(runnable)


def prove_deck(deck, name, args, scratch):
    auto_dir = os.path.join(scratch, name + ".auto")
    rc, out = run(deck, ['schedule.kind="auto"'], 2, auto_dir, args)
    if rc != 0:
        print(f"{name}: auto exited {rc}\n{out}")
        return False
    with open(os.path.join(auto_dir, "auto.csv")) as f:
        ranking = [r for r in csv.DictReader(f) if not r["why_not"] and r["fits"] == "yes"
                   and r["lossy"] == "no"]
    pick = auto_pick(auto_dir)
    measure_dir = os.path.join(scratch, name + ".measure")
    rc, out = run(deck, ['schedule.kind="auto"', "auto.measure=true"], 2, measure_dir, args)
    measured_pick = auto_pick(measure_dir) if rc == 0 else f"exit {rc}"
    measured = {r["candidate"]: [] for r in ranking}
    failed = {}
    for rep in range(args.reps):
        for r in ranking:
            sets = [s if "=" not in s or s.split("=", 1)[0] != "schedule.kind"
                    else 'schedule.kind="%s"' % s.split("=", 1)[1] for s in r["set"].split()]
            sets = [s.replace("compress.weights=scalednn", 'compress.weights="scalednn"') for s in sets]
            d = os.path.join(scratch, f"{name}.{len(failed)}.{rep}.{r['candidate'].replace(' ', '_')}")
            rc, out = run(deck, sets, args.steps, d, args)
            if rc != 0:
                failed[r["candidate"]] = f"exit {rc}: " + out.strip().splitlines()[0]
                continue
            measured[r["candidate"]].append(samples_per_s(d, args.skip))
    rates = {c: statistics.median(v) for c, v in measured.items() if v}
    best = max(rates, key=rates.get)
    spread = {c: (min(v), max(v)) for c, v in measured.items() if v}
    print(f"\n{name} on 2 ranks (median of {args.reps}, {args.steps} steps, skip {args.skip})"
          + (f", device.memory_limit {args.memory_limit}" if args.memory_limit else ""))
    print(f"| candidate | predicted samples/s | measured samples/s | range over reps | / best |")
    print(f"|---|---:|---:|---:|---:|")
    for r in ranking:
        c = r["candidate"]
        m = rates.get(c)
        mark = (" (auto)" if c == pick else "") + (" (auto.measure)" if c == measured_pick else "")
        print(f"| {c}{mark} | {float(r['predicted_samples_per_s']):.0f} | "
              + (f"{m:.0f} | {spread[c][0]:.0f}-{spread[c][1]:.0f} | {m / rates[best]:.3f} |"
                 if m else f"{failed.get(c, '-')} | | |"))
    within = pick in rates and rates[pick] >= 0.95 * rates[best]
    tied = pick in spread and spread[pick][1] >= spread[best][0]
    ok = (within or tied) and pick not in failed
    noise = statistics.median((hi - lo) / statistics.median(measured[c])
                              for c, (lo, hi) in spread.items())
    why = "within 5%" if within else ("tied (ranges overlap)" if tied else "neither within 5% nor tied")
    print(f"auto picked {pick}: {rates.get(pick, 0) / rates[best]:.3f} of the measured best "
          f"({best}), {why}; goal (within 5% or tied, ran): {'met' if ok else 'NOT met'}; "
          f"the median candidate's range over the repetitions: {100 * noise:.1f}% of its rate")
    print(f"auto.measure picked {measured_pick}: {rates.get(measured_pick, 0) / rates[best]:.3f} "
          "of the measured best")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--decks", default="inputs/fashion_lenet.toml inputs/fashion_mlp.toml "
                    "inputs/fashion_vgg.toml inputs/fashion_resnet.toml inputs/text_transformer.toml")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--skip", type=int, default=10)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--memory-limit", type=int, default=0)
    ap.add_argument("--data", default="", help="every deck's data.path (default: each deck's own)")
    args = ap.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as scratch:
        for deck in args.decks.split():
            results.append(prove(os.path.join(ROOT, deck), args, scratch))
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
