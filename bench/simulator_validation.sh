#!/usr/bin/env bash
# The simulator against measured runs on this machine: for gang, pipeline (microbatches 1 and 4),
# waves and ticktock on 2 ranks, the step time wavetrain --simulate predicts next to the median
# step time of a real run of the same deck. The device file comes from tools/probe_device (GEMM,
# memory bandwidth, ping-pong on these cores) and the layer times from the profiling step
# (profile.h5, written by the first model-parallel run). Target: within 20%.
#   bench/simulator_validation.sh [--deck inputs/text_transformer.toml] [--steps 60] [--out DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BUILD_DIR:-$here/build}
deck=$here/inputs/text_transformer.toml steps=60 out=""
while (($#)); do
  case $1 in
    --deck) deck=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "simulator_validation.sh: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done
out=${out:-$(mktemp -d "${TMPDIR:-/tmp}/wt-simval.XXXXXX")}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mpiexec -n 2 "$build/probe_device" > "$out/this_machine.toml"
declare -A configs=(
  [pipeline_M1]="--set schedule.kind=pipeline --set schedule.microbatches=1"
  [pipeline_M4]="--set schedule.kind=pipeline --set schedule.microbatches=4"
  [waves]="--set schedule.kind=waves"
  [ticktock]="--set schedule.kind=ticktock"
  [gang]="--set schedule.kind=gang"
)
order="waves pipeline_M1 pipeline_M4 ticktock gang"  # waves first: its run writes profile.h5
echo "deck $deck, 2 ranks, $steps steps per run, results in $out"
printf '%-12s %14s %14s %8s\n' schedule measured_ms simulated_ms error
for k in $order; do
  # shellcheck disable=SC2086
  mpiexec -n 2 "$build/wavetrain" "$deck" --run-dir "$out/run_$k" --steps "$steps" --quiet \
    --set train.eval_every_epoch=false --set train.log_every_steps=10 ${configs[$k]} \
    > "$out/run_$k.log" 2>&1
  measured=$(/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['samples_per_s_median'])" "$out/run_$k/summary.json")
  # shellcheck disable=SC2086
  "$build/wavetrain" "$deck" --simulate --ranks 2 --device "$out/this_machine.toml" \
    --profile "$out/run_waves/profile.h5" ${configs[$k]} > "$out/sim_$k.txt"
  step_s=$(awk '/^  step:/ {v=$2; u=$3; print (u=="ms" ? v/1e3 : (u=="us" ? v/1e6 : v))}' "$out/sim_$k.txt")
  samples=$(awk '/^  step:/ {for (i=1;i<=NF;i++) if ($i=="for") print $(i+1)}' "$out/sim_$k.txt")
  awk -v k="$k" -v rate="$measured" -v s="$step_s" -v n="$samples" 'BEGIN {
    m = n / rate; printf "%-12s %14.2f %14.2f %+7.1f%%\n", k, 1e3 * m, 1e3 * s, 100 * (s - m) / m }'
done
