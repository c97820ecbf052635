#!/usr/bin/env bash
# Throughput with the stall detector on (failure.stall_seconds = 600, the default: heartbeat marks
# around every communication call plus a watchdog thread) against off (0), side by side in
# interleaved rounds on the mlp deck (the model with the shortest steps, so any per-call cost
# shows most). Prints each round and the median ratio on/off of samples/s.
# Usage: bench/stall_overhead.sh [ranks] [rounds] [steps]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$here/.."
bin="${WT_BUILD_DIR:-$root/build}/wavetrain"
ranks="${1:-2}" rounds="${2:-5}" steps="${3:-3000}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rate() {  # stall_seconds
  mpiexec -n "$ranks" "$bin" "$root/inputs/fashion_mlp.toml" --quiet \
    --set "data.path=\"$root/data/fashion_mnist.h5\"" --set train.eval_every_epoch=false \
    --set failure.stall_seconds="$1" --steps "$steps" --run-dir "$tmp/run" >/dev/null
  sed -n 's/.*"samples_per_s_median": \([0-9.e+]*\).*/\1/p' "$tmp/run/summary.json"
}
echo "mlp, $ranks rank(s), $steps steps, OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-<unset>}"
ratios=()
for ((r = 1; r <= rounds; ++r)); do
  off=$(rate 0)
  on=$(rate 600)
  ratio=$(awk -v a="$on" -v b="$off" 'BEGIN { printf "%.3f", a / b }')
  ratios+=("$ratio")
  echo "round $r: off $off samples/s, on $on samples/s, on/off $ratio"
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{ v[NR] = $1 } END { print "median on/off: " v[int((NR + 1) / 2)] }'
