#!/usr/bin/env bash
# DeepPool's burst planner (wavetrain --show-plan) on VGG-16 and WideResNet-101-2 shapes, A100
# roofline: (1) its run time at 8 and 1024 ranks against DeepPool's Table 3 (single-threaded
# Python: VGG-16 0.01 s / 0.05 s, WRN-101-2 0.02 s / 0.11 s), the median of 5 runs, cost table
# included; (2) VGG-16 at global batch 32 on 8 ranks under amp_limit 1.5, 2, 2.5, 4 and 99:
# the plan's segments, predicted step, GPU-seconds and idle time, beside data parallelism.
#   bench/burst_planner.sh [build dir]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
wavetrain="${1:-$here/build}/wavetrain"
plan() { "$wavetrain" "$here/inputs/$1" --show-plan --device a100 --ranks "$2" "${@:3}"; }

echo "| model | ranks | units x counts | planner ms (median of 5) | DeepPool (Table 3) |"
echo "|---|---:|---|---:|---:|"
for spec in "vgg16_sim.toml:VGG-16:10:50" "wrn101_2_sim.toml:WRN-101-2:20:110"; do
  IFS=: read -r deck name paper8 paper1024 <<<"$spec"
  for ranks in 8 1024; do
    times=$(for _ in 1 2 3 4 5; do plan "$deck" "$ranks" | awk '/^planned/ { print $(NF-1) }'; done |
      sort -g | sed -n 3p)
    shape=$(plan "$deck" "$ranks" | awk '/^planned/ { print $2 " x " $5 }')
    paper=$([[ $ranks == 8 ]] && echo "$paper8" || echo "$paper1024")
    echo "| $name | $ranks | $shape | $times | $paper ms |"
  done
done

echo
echo "VGG-16, global batch 32, 8 A100 ranks:"
# The simulator runs the programs with their overlap (bucketed allreduces under backward), which
# the planner does not model: its step for burst and for gang, beside the planner's.
simulated() {  # ranks kind [--set ...]
  "$wavetrain" "$here/inputs/vgg16_sim.toml" --simulate --device a100 --ranks "$1" \
    --set "schedule.kind=$2" "${@:3}" | awk '/^  step:/ { print $2 }'
}
echo "| amp_limit | segments (nodes on ranks) | predicted step ms | GPU-ms | idle ms per rank | burst/DP | simulated burst ms | simulated gang ms |"
echo "|---:|---|---:|---:|---|---:|---:|---:|"
sim_gang=$(simulated 8 gang)
for limit in 1.5 2 2.5 4 99; do
  sim_burst=$(simulated 8 burst --set "burst.amp_limit=$limit")
  out=$(plan vgg16_sim.toml 8 --set "burst.amp_limit=$limit")
  segments=$(awk '/^segments:/ { sub(/^segments: /, ""); print }' <<<"$out")
  step=$(awk '/^predicted step/ { print $3 }' <<<"$out")
  gpu=$(awk '/^predicted step/ { print $5 }' <<<"$out")
  idle=$(awk -F': ' '/^predicted step/ { print $2 }' <<<"$out")
  ratio=$(awk '/^data parallel/ { print $NF }' <<<"$out")
  echo "| $limit | $segments | $step | $gpu | $idle | $ratio | $sim_burst | $sim_gang |"
done
plan vgg16_sim.toml 8 | awk '/^data parallel/ { print }'

echo
echo "VGG-16, global batch 1024, 1024 A100 ranks (the plan and the device time it leaves idle):"
out=$(plan vgg16_sim.toml 1024 --set train.global_batch=1024)
awk '/^segments:|^predicted step|^data parallel/' <<<"$out" | cut -c1-400
awk '/^predicted step/ { n = 0; s = 0; for (i = 1; i <= NF; i++) if ($i == "(ms):") f = i;
  for (i = f + 1; i <= NF; i++) { s += $i; n++ }
  printf "idle device time per step: %.1f ms on the %d ranks the plan uses, and %d ranks idle all step (%.0f ms): %.1f%% of 1024 ranks x step\n",
    s, n, 1024 - n, (1024 - n) * $3, 100 * (s + (1024 - n) * $3) / (1024 * $3) }' <<<"$out"
