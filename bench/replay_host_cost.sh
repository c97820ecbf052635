#!/usr/bin/env bash
# The host's cost of a replayed whole-step graph (device.cuda_graphs), per model at issue 31's
# batches, without a GPU: each replay's device time is PyTorch's whole-step graph time on an H100
# (issue 31's table: 64 / 512,000 samples/s for mlp, and so on), spun on the host while the batch
# preloader works beside it. Each row runs with device.overlap_steps off (the host waits for each
# step's read-back before it issues the next: its time adds to the device's) and on (it issues the
# next step while the device runs this one), side by side in one run
# (bench/replay_host_cost.cpp says what is and is not in it).
#
#   bench/replay_host_cost.sh [--steps N] [--rounds R]     (needs a configured build/)
#
# Prints one JSON line per run and a table of medians over rounds: the wall microseconds per
# replayed step, and the share of it the device has (the most of PyTorch's graph rate a rank
# reaches whose graph takes PyTorch's device time), without and with overlap.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
STEPS=1000 ROUNDS=3
while (($#)); do
  case "$1" in
    --steps) STEPS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
build=${BUILD_DIR:-build}
cmake --build "$build" --target replay_host_cost >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
# model deck batch PyTorch-graph-samples/s (issue 31, H100) [more --set]. Tick-tock trains two
# batches a step (one per wave): its device time is two of gang's, PyTorch's rate halved.
rows=("mlp fashion_mlp.toml 64 512000" "lenet fashion_lenet.toml 64 135000"
  "resnet fashion_resnet.toml 128 55500" "transformer_small text_transformer.toml 32 18300"
  "lenet-ticktock fashion_lenet_ticktock_gpu.toml 64 67500 device.kind=\"host\"")
out=$(mktemp -d "${TMPDIR:-/tmp}/wt-replay.XXXXXX")
for ((round = 1; round <= ROUNDS; round++)); do
  for row in "${rows[@]}"; do
    read -r name deck batch torch_rate extra <<<"$row"
    device_us=$(awk -v b="$batch" -v r="$torch_rate" 'BEGIN { printf "%.1f", 1e6 * b / r }')
    for overlap in false true; do
      output=$(mpiexec -n 1 "$build/replay_host_cost" "inputs/$deck" "$STEPS" "$device_us" \
        "train.global_batch=$batch" checkpoint.every_steps=0 train.eval_every_epoch=false \
        train.log_every_steps=100000 "device.overlap_steps=$overlap" ${extra:+"$extra"} 2>&1) ||
        true
      line=$(tail -1 <<<"$output")
      echo "$line"
      [[ $line == '{'* ]] || { echo "$output" >&2; echo "error: $name failed" >&2; exit 1; }
      echo "$name $overlap $line" >>"$out/runs.txt"
    done
  done
done
/usr/bin/python3 - "$out/runs.txt" <<'EOF'
import json, statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, overlap, js = line.split(" ", 2)
    runs.setdefault(name, {}).setdefault(overlap, []).append(json.loads(js))
print("\n| model (batch) | device us (PyTorch's graph step) | us per replayed step, overlap off | on |"
      " device share, off | on |")
print("|---|---:|---:|---:|---:|---:|")
for name, modes in runs.items():
    step = {o: statistics.median(r["replay_step_us_median"] for r in rs) for o, rs in modes.items()}
    first = modes["false"][0]
    dev = first["device_us"]
    print(f"| {name} ({first['batch']}) | {dev:.0f} | {step['false']:.1f} | {step['true']:.1f} |"
          f" {dev / step['false']:.2f} | {dev / step['true']:.2f} |")
EOF
