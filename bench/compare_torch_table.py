#!/usr/bin/python3
"""compare_torch.sh's tables from its results.jsonl: every configuration's medians over rounds,
then issue 37's ratios: wavetrain 1 rank over PyTorch 1 thread, and wavetrain 2 ranks over
PyTorch's best 2-core setup (the fastest median of 1 thread, 2 threads and DDP 2x1; one thread
counts, since a second core it leaves idle is a setup too), each with the per-round ratios
(wavetrain's round r over PyTorch's round r, same configuration) to show the spread.

  compare_torch_table.py RESULTS.jsonl
"""
import json
import os
import statistics
import sys

LABELS = {"1core": "1 core: 1 rank / 1 thread", "2cores": "2 cores: 2 ranks / DDP gloo 2x1",
          "2cores-threads": "2 cores: 2 ranks / 1 process 2 threads"}
TORCH_2CORE = ("1core", "2cores", "2cores-threads")
TORCH_LABELS = {"1core": "1 thread", "2cores": "DDP gloo 2x1", "2cores-threads": "2 threads"}


def values(rows, impl, model, config, key="samples_per_s_median"):
    return [r[key] for r in rows if r["impl"] == impl and r["model"] == model and r["config"] == config]


def med(rows, impl, model, config, key="samples_per_s_median"):
    vals = values(rows, impl, model, config, key)
    return statistics.median(vals) if vals else None


def fmt(v, digits=0):
    return "n/a" if v is None else f"{v:,.{digits}f}"


def per_round(rows, model, wt_config, torch_config):
    """wavetrain's rate over PyTorch's, round by round (rounds both sides finished)."""
    def by_round(impl, config):
        return {r.get("round"): r["samples_per_s_median"] for r in rows
                if r["impl"] == impl and r["model"] == model and r["config"] == config}
    wt, th = by_round("wavetrain", wt_config), by_round("torch", torch_config)
    return [wt[k] / th[k] for k in sorted(wt, key=str) if k in th and th[k]]


def all_configs(rows):
    print("| model | config | wavetrain samples/s | torch samples/s | ratio wt/torch "
          "| wavetrain peak RSS MB | torch peak RSS MB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    seen = list(dict.fromkeys((r["model"], r["config"]) for r in rows))
    for model, config in seen:
        wt_config = "2cores" if config.startswith("2cores") else config
        wt = med(rows, "wavetrain", model, wt_config)
        th = med(rows, "torch", model, config)
        ratio = f"{wt / th:.2f}" if wt and th else "n/a"
        print(f"| {model} | {LABELS.get(config, config)} | {fmt(wt)} | {fmt(th)} | {ratio} | "
              f"{fmt(med(rows, 'wavetrain', model, wt_config, 'peak_rss_mb'))} | "
              f"{fmt(med(rows, 'torch', model, config, 'peak_rss_mb'))} |")


def issue_rows(rows):
    print("| model | wavetrain | PyTorch (its best on these cores) | wavetrain samples/s "
          "| PyTorch samples/s | ratio | per-round ratios (min-max) |")
    print("|---|---|---|---:|---:|---:|---|")
    for model in dict.fromkeys(r["model"] for r in rows):
        torch_meds = {c: med(rows, "torch", model, c) for c in TORCH_2CORE}
        torch_meds = {c: v for c, v in torch_meds.items() if v}
        best = max(torch_meds, key=torch_meds.get) if torch_meds else None
        for wt_config, torch_config, wt_label in (("1core", "1core", "1 rank"),
                                                  ("2cores", best, "2 ranks")):
            wt = med(rows, "wavetrain", model, wt_config)
            th = med(rows, "torch", model, torch_config) if torch_config else None
            rounds = per_round(rows, model, wt_config, torch_config) if torch_config else []
            spread = (", ".join(f"{x:.2f}" for x in rounds) +
                      f" ({min(rounds):.2f}-{max(rounds):.2f})") if rounds else "n/a"
            ratio = f"{wt / th:.2f}x" if wt and th else "n/a"
            torch_label = TORCH_LABELS.get(torch_config, "n/a")
            print(f"| {model} | {wt_label} | {torch_label} | {fmt(wt)} | {fmt(th)} | {ratio} "
                  f"| {spread} |")


def main():
    rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
    print()
    print(f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', '<unset>')}, "
          "OPENBLAS_NUM_THREADS=1, malloc trim/mmap thresholds 1e9; medians over rounds")
    print()
    all_configs(rows)
    print()
    issue_rows(rows)


if __name__ == "__main__":
    main()
