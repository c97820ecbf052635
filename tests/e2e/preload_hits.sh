#!/usr/bin/env bash
# Preloading is driven by the program: the executor posts each step's LoadBatch instructions to
# the data source when the step before has loaded its own, so every load but the first step's is
# read ahead (issue 11 §9). Under the old guess ("same part, next sequence") the last waves rank
# missed every fetch. metrics.csv counts hits and misses over all ranks.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
steps=8

check() {  # name ranks schedule settings...
  local name=$1 ranks=$2; shift 2
  mpiexec -n "$ranks" "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" \
    --set train.eval_every_epoch=false --set checkpoint.every_steps=0 --set train.log_every_steps=$steps \
    --steps $steps --run-dir "$dir/$name" "$@" >"$dir/$name.out" 2>&1 || { cat "$dir/$name.out"; fail "$name failed"; }
  local hits misses
  hits=$(last_metric "$dir/$name/metrics.csv" train preload_hits)
  misses=$(last_metric "$dir/$name/metrics.csv" train preload_misses)
  # The first step's loads cannot have been planned; every later one was.
  ((misses > 0 && hits == (steps - 1) * misses)) ||
    fail "$name: $hits hits, $misses misses over $steps steps (expected only the first step's loads to miss)"
  echo "ok $name: $hits hits, $misses misses ($((100 * hits / (hits + misses)))% of $steps steps' loads)"
}

check gang 2 --set 'schedule.kind="gang"'
check pipeline 2 --set 'schedule.kind="pipeline"' --set schedule.microbatches=4
check waves4 4 --set 'schedule.kind="waves"'
check ticktock 2 --set 'schedule.kind="ticktock"'
# burst: rank 0 loads its input part and reads the loss's labels by runs of rows; rank 1 loads
# only its input part (it runs no fully connected layer); a middle-only rank would load nothing.
check burst 2 --set 'schedule.kind="burst"' --set 'burst.ranks=[2,2,2,1,1,1,1]'
check burst_scatter 2 --set 'data.distribution="scatter"'
