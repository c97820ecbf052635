#!/usr/bin/env bash
# Issue 18: the strict device's peak memory against the host device's, for every schedule. Each
# deck runs on 2 ranks under gang, gang with gang_sync = "master", pipeline with microbatches = 4,
# waves, ticktock and burst, once with device.kind = "host" and once with "strict": same steps,
# same seed, data.preload = false (a background read cannot land in a peak) and no evaluation
# (train.eval_every_epoch = false: the peaks are the training's, after the stage planner's profile
# has been dropped). Burst on strict runs the host run's burst plan (burst.ranks), so both run
# the same schedule. Each rank's peaks come from summary.json (rank_peak_device_in_use_mb: the
# allocator's peak bytes in use; rank_peak_device_mb: its peak reserved). Printed: one row per
# deck, schedule and rank with both peaks on both devices, the ratios strict / host, and whether
# both are within 5%. Exit status 1 when a row is not (or a run failed).
#
#   bench/strict_peak_memory.sh [--steps N] [--decks "inputs/a.toml ..."] [--schedules "..."]
#                               [--data FILE] [--out DIR]
#
# Schedules: gang gang_master pipeline4 waves ticktock burst (all by default). The decks' data path
# is replaced by --data (default data/fashion_mnist.h5 in this checkout, else /work/main/data's).
# A deck with its own dataset (bench/decks/transformer_waves_bench.toml) keeps it with --data "".
# WT_BUILD_DIR (default build) holds wavetrain. Runs are sequential; 2 decks x 6 schedules x 2
# devices at 20 steps take about 75 s on the 2-core development VM.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$PWD

STEPS=20 DECKS="inputs/fashion_mlp.toml inputs/fashion_lenet.toml" OUT=""
SCHEDULES="gang gang_master pipeline4 waves ticktock burst"
DATA=""
for candidate in "$REPO/data/fashion_mnist.h5" /work/main/data/fashion_mnist.h5; do
  if [[ -f $candidate ]]; then DATA=$candidate; break; fi
done
while (($#)); do
  case "$1" in
    --steps) STEPS=$2; shift 2 ;;
    --decks | --deck) DECKS=$2; shift 2 ;;
    --schedules) SCHEDULES=$2; shift 2 ;;
    --data) DATA=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[[ $STEPS =~ ^[1-9][0-9]*$ ]] || { echo "error: --steps must be a positive integer" >&2; exit 2; }
for s in $SCHEDULES; do
  case $s in gang | gang_master | pipeline4 | waves | ticktock | burst) ;;
    *) echo "error: unknown schedule '$s' (gang gang_master pipeline4 waves ticktock burst)" >&2
       exit 2 ;;
  esac
done
for deck in $DECKS; do [[ -f $deck ]] || { echo "error: no deck $deck" >&2; exit 2; }; done
[[ -z $DATA || -f $DATA ]] || { echo "error: no dataset $DATA (--data)" >&2; exit 2; }

BUILD=${WT_BUILD_DIR:-build}
[[ $BUILD == /* ]] || BUILD=$REPO/$BUILD
WAVETRAIN=$BUILD/wavetrain
[[ -x $WAVETRAIN ]] || { echo "error: $WAVETRAIN is not built" >&2; exit 1; }

export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export MALLOC_TRIM_THRESHOLD_=${MALLOC_TRIM_THRESHOLD_:-1000000000}
export MALLOC_MMAP_THRESHOLD_=${MALLOC_MMAP_THRESHOLD_:-1000000000}
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-none}
[[ $(id -u) -eq 0 ]] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/wt-strict-peak.XXXXXX")}
mkdir -p "$OUT"
RESULTS=$OUT/results.tsv
: >"$RESULTS"

schedule_args() {  # schedule name -> the array sched_args of --set arguments
  case $1 in
    gang_master) sched_args=(--set 'schedule.kind="gang"' --set 'schedule.gang_sync="master"') ;;
    pipeline4) sched_args=(--set 'schedule.kind="pipeline"' --set schedule.microbatches=4) ;;
    *) sched_args=(--set "schedule.kind=\"$1\"") ;;
  esac
}

failed=0
for deck in $DECKS; do
  name=$(basename "$deck" .toml)
  for schedule in $SCHEDULES; do
    for device in host strict; do
      run=$OUT/$name.$schedule.$device
      rm -rf "$run"
      args=(--quiet --steps "$STEPS" --run-dir "$run" --set run.seed=1 --set data.preload=false
            --set train.eval_every_epoch=false --set "device.kind=\"$device\"")
      [[ -n $DATA ]] && args+=(--set "data.path=\"$DATA\"")
      schedule_args "$schedule"
      args+=("${sched_args[@]}")
      # The burst planner prices layers it times on this device and a link it measures, so the
      # strict run could pick another plan (mlp: once all nodes on 1 rank against 2 on the
      # host); it runs the host run's plan instead (burst.ranks, one count per node).
      if [[ $schedule == burst && $device == strict ]]; then
        counts=$(sed -n 's/^wavetrain: burst segments://p' "$OUT/$name.$schedule.host/log.txt" |
          /usr/bin/python3 -c 'import re, sys
c = [str(n) for a, b, n in re.findall(r"\[(\d+)\.\.(\d+)\] on (\d+)", sys.stdin.read())
     for _ in range(int(a), int(b) + 1)]
print(",".join(c))')
        [[ -n $counts ]] && args+=(--set "burst.ranks=[$counts]")
      fi
      if ! mpiexec -n 2 --oversubscribe "$WAVETRAIN" "$deck" "${args[@]}" >"$OUT/$name.$schedule.$device.log" 2>&1; then
        echo "error: $name $schedule on $device failed (see $OUT/$name.$schedule.$device.log)" >&2
        printf '%s\t%s\t%s\t-\n' "$name" "$schedule" "$device" >>"$RESULTS"
        failed=1
        continue
      fi
      printf '%s\t%s\t%s\t%s\n' "$name" "$schedule" "$device" "$run/summary.json" >>"$RESULTS"
    done
  done
done

echo "# strict against host peak memory, 2 ranks, $STEPS steps, seed 1, data.preload = false, no evaluation"
echo "# $WAVETRAIN"
/usr/bin/python3 - "$RESULTS" <<'EOF' || failed=1
import json, sys
runs = {}
for line in open(sys.argv[1]):
    deck, schedule, device, path = line.rstrip("\n").split("\t")
    runs.setdefault((deck, schedule), {})[device] = None if path == "-" else json.load(open(path))
print("| deck | schedule | rank | host in use MB | strict in use MB | ratio | host reserved MB "
      "| strict reserved MB | ratio | within 5%? |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
bad = 0
for (deck, schedule), by in runs.items():
    h, s = by.get("host"), by.get("strict")
    if not h or not s:
        which = " and ".join(d for d in ("host", "strict") if not by.get(d))
        print(f"| {deck} | {schedule} | - | | | | | | | {which} run failed |")
        continue
    # A build from before the per-rank peaks (WT_BUILD_DIR) gives rank 0's, the top-level ones.
    for run in (h, s):
        run.setdefault("rank_peak_device_mb", [run["peak_device_mb"]])
        run.setdefault("rank_peak_device_in_use_mb", [run["peak_device_in_use_mb"]])
    for r in range(len(h["rank_peak_device_mb"])):
        hu, su = h["rank_peak_device_in_use_mb"][r], s["rank_peak_device_in_use_mb"][r]
        hr, sr = h["rank_peak_device_mb"][r], s["rank_peak_device_mb"][r]
        ru = su / hu if hu else float("nan")
        rr = sr / hr if hr else float("nan")
        ok = abs(ru - 1) <= 0.05 and abs(rr - 1) <= 0.05
        bad += not ok
        print(f"| {deck} | {schedule} | {r} | {hu:.2f} | {su:.2f} | {ru:.3f} | {hr:.2f} | {sr:.2f} "
              f"| {rr:.3f} | {'yes' if ok else 'NO'} |")
print(f"# {bad} row(s) outside 5%")
sys.exit(1 if bad else 0)
EOF
echo "# runs in $OUT"
exit $failed
