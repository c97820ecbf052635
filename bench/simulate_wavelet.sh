#!/usr/bin/env bash
# Wavelet's model-parallel result, predicted: waves against vanilla model parallelism (pipeline,
# microbatches = 1) and GPipe (microbatches = 4) for BERT-base (inputs/bert_base_sim.toml) on 8
# ranks of a device model, at several global batch sizes. Wavelet §4.2 reports 6.7x over vanilla
# MP and 4.15x over GPipe-style pipelining on 8 V100s (DGX-1, NVLink). Runs in seconds, no GPU.
#   bench/simulate_wavelet.sh [--device v100|a100|h100|FILE] [--ranks 8] [--batches "8 16 32 64"]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$here/build}
device=v100 ranks=8 batches="8 16 32 64" deck=$here/inputs/bert_base_sim.toml
while (($#)); do
  case $1 in
    --device) device=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --batches) batches=$2; shift 2 ;;
    --deck) deck=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "simulate_wavelet.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
throughput() {  # deck overrides... -> samples/s
  "$build/wavetrain" "$deck" --simulate --ranks "$ranks" --device "$device" "$@" |
    awk '/throughput:/ {print $2}'
}
echo "deck $deck, $ranks ranks of $device (samples/s as simulated)"
printf '%-7s %12s %12s %12s %10s %10s\n' batch vanilla_MP gpipe_M4 waves waves/MP waves/GPipe
for b in $batches; do
  mp=$(throughput --set schedule.kind=pipeline --set schedule.microbatches=1 --set train.global_batch="$b")
  gp=$(throughput --set schedule.kind=pipeline --set schedule.microbatches=4 --set train.global_batch="$b")
  wv=$(throughput --set schedule.kind=waves --set train.global_batch="$b")
  awk -v b="$b" -v mp="$mp" -v gp="$gp" -v wv="$wv" \
    'BEGIN {printf "%-7s %12.1f %12.1f %12.1f %9.2fx %9.2fx\n", b, mp, gp, wv, wv / mp, wv / gp}'
done
