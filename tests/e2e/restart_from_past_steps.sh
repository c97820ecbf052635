#!/usr/bin/env bash
# --restart-from a checkpoint at or past --steps (issue 33, minor): nothing is left to train, and
# the run says so instead of "done: 2 steps ..., median 0 samples/s"; summary.json has no rate
# (null) rather than a rate of 0.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
run=("$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\""
  --set train.eval_every_epoch=false)
"${run[@]}" --steps 4 --run-dir "$dir/first" --quiet >/dev/null || fail "the first run failed"
"${run[@]}" --steps 2 --run-dir "$dir/second" --restart-from "$dir/first/checkpoints/step_00000004.h5" \
  >"$dir/out" 2>&1 || { cat "$dir/out"; fail "the run from a checkpoint past --steps failed"; }
cat "$dir/out"
grep -q "^wavetrain: done: no step to run, the checkpoint at step 4 already completes the 2 steps (in " \
  "$dir/out" || fail "the final line does not say that no step was left to run"
! grep -q "samples/s" "$dir/out" || fail "a rate for a run that ran no step"
grep -q '"samples_per_s_median": null,' "$dir/second/summary.json" ||
  fail "summary.json: $(grep samples_per_s "$dir/second/summary.json")"
echo "ok: a checkpoint past --steps leaves nothing to run, and the run says so"
