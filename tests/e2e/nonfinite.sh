#!/usr/bin/env bash
# End to end: NaN/Inf in the data. A synthetic float32 dataset has NaN or Inf pixels in known
# training rows; with shuffling off we know which steps contain them (global batch 64: rows 5,
# 130-131, 300 and 639 are in steps 1, 3, 5 and 10 of each 10-step epoch). On 1 and 2 ranks:
# failure.on_nonfinite = "skip" finishes with skipped_steps = the bad batches and finite test loss
# (a NaN parameter would make it NaN); "stop" exits 4 at step 1 with one "diverged" message. A
# resume from the checkpoint right after a skipped step reproduces the uninterrupted losses.
source "$(dirname "$0")/lib/common.bash"
"$WT_BINARY_DIR/synthetic_dataset" --output "$dir/nan.h5" --train 640 --test 256 \
  --nan-rows 5,130,131,300 --inf-rows 639 >/dev/null
common=(--set "data.path=\"$dir/nan.h5\"" --set data.shuffle=false --set train.epochs=3
        --set lr_schedule.kind=constant --set lr_schedule.warmup_steps=0 --set optimizer.lr=0.05
        --set train.log_every_steps=5)

for ranks in 1 2; do
  run="$dir/skip$ranks"
  mpiexec -n $ranks "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" "${common[@]}" \
    --set failure.on_nonfinite=skip --run-dir "$run" >"$run.out" 2>&1 ||
    { cat "$run.out"; fail "skip on $ranks rank(s) exited $?"; }
  skipped=$(sed -n 's/.*"skipped_steps": \([0-9]*\).*/\1/p' "$run/summary.json")
  [[ $skipped == 12 ]] || { cat "$run.out"; fail "$ranks rank(s): skipped_steps $skipped, expected 12 (4 bad batches x 3 epochs)"; }
  [[ $(grep -c "skipped step" "$run.out") == 12 ]] || fail "$ranks rank(s): expected 12 'skipped step' lines (rank 0 only)"
  grep -q "skipped step 10: " "$run.out" || fail "the Inf row 639 is in step 10"
  loss=$(last_metric "$run/metrics.csv" eval loss)
  acc=$(last_metric "$run/metrics.csv" eval accuracy)
  echo "$ranks rank(s), skip: skipped $skipped, test loss $loss, accuracy $acc"
  awk -v l="$loss" -v a="$acc" 'BEGIN { exit !(l == l + 0 && l < 2.0 && a > 0.3) }' ||
    fail "$ranks rank(s): parameters not finite or not learning (test loss $loss, accuracy $acc)"
  grep -qi "nan\|inf" "$run/metrics.csv" && fail "$ranks rank(s): metrics.csv holds NaN/Inf"

  run="$dir/stop$ranks"
  set +e
  mpiexec -n $ranks "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" "${common[@]}" \
    --run-dir "$run" >"$run.out" 2>&1
  rc=$?
  set -e
  cat "$run.out"
  [[ $rc == 4 ]] || fail "stop on $ranks rank(s) exited $rc, expected 4"
  [[ $(grep -c "wavetrain: diverged: non-finite loss/gradient at step 1 " "$run.out") == 1 ]] ||
    fail "$ranks rank(s): expected one 'diverged ... at step 1' message"
done

# A resume right after a skipped step (step 3) trains on bitwise like the uninterrupted run: with
# AdamW the update count matters, and a skipped update is counted neither in memory nor in the
# checkpoint.
resume=("${common[@]}" --set optimizer.kind=adamw --set optimizer.lr=0.001
        --set failure.on_nonfinite=skip --set train.log_every_steps=1 --set train.eval_every_epoch=false)
for ranks in 1 2; do
  for cut in "full 12" "cut 3" "cut 12 --restart"; do
    read -r name steps restart <<<"$cut"
    mpiexec -n $ranks "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" "${resume[@]}" \
      --steps "$steps" $restart --run-dir "$dir/resume$ranks-$name" >"$dir/out" 2>&1 ||
      { cat "$dir/out"; fail "$ranks rank(s), $cut: exit $?"; }
  done
  full=$(awk -F, '$1=="train" { print $2, $4 }' "$dir/resume$ranks-full/metrics.csv")
  [[ $(wc -l <<<"$full") == 12 ]] || fail "$ranks rank(s): expected 12 train losses, got: $full"
  [[ $full == "$(awk -F, '$1=="train" { print $2, $4 }' "$dir/resume$ranks-cut/metrics.csv")" ]] ||
    fail "$ranks rank(s): the run resumed after a skipped step differs from the uninterrupted one"
  echo "$ranks rank(s): resumed after skipped step 3: 12 losses bitwise identical"
done

# NaN in the test split (rows 3, 100 and 101 of 256): reported with counts, never absorbed into
# the accuracy. "skip" leaves the 3 samples out (the test loss stays finite and is evaluated on
# 253 samples); "stop" ends every rank with exit 4 naming the file and the split.
"$WT_BINARY_DIR/synthetic_dataset" --output "$dir/testnan.h5" --train 640 --test 256 \
  --test-nan-rows 3,100,101 >/dev/null
for ranks in 1 2; do
  run="$dir/testskip$ranks"
  mpiexec -n $ranks "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" "${common[@]}" \
    --set "data.path=\"$dir/testnan.h5\"" --set train.epochs=1 --set failure.on_nonfinite=skip \
    --run-dir "$run" >"$run.out" 2>&1 || { cat "$run.out"; fail "test-split NaN, skip: exit $?"; }
  grep -q "the test split /test has 3 sample(s) with NaN or Inf inputs (3 values): left out" "$run.out" ||
    { cat "$run.out"; fail "$ranks rank(s): the test split's NaN samples were not reported"; }
  loss=$(last_metric "$run/metrics.csv" eval loss)
  awk -v l="$loss" 'BEGIN { exit !(l == l + 0) }' || fail "$ranks rank(s): test loss $loss is not finite"
  grep -q '"test_samples": 253\|253 samples' "$run.out" "$run/summary.json" ||
    { cat "$run.out"; fail "$ranks rank(s): the evaluation did not leave out exactly 3 samples"; }
  echo "$ranks rank(s), test-split NaN, skip: $(grep -m1 'test split' "$run.out")"

  run="$dir/teststop$ranks"
  set +e
  mpiexec -n $ranks "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" "${common[@]}" \
    --set "data.path=\"$dir/testnan.h5\"" --set train.epochs=1 --run-dir "$run" >"$run.out" 2>&1
  rc=$?
  set -e
  [[ $rc == 4 ]] || { cat "$run.out"; fail "test-split NaN, stop, $ranks rank(s): exit $rc, expected 4"; }
  [[ $(grep -c "diverged: .*testnan.h5: the test split /test has 3 sample(s) with NaN or Inf" "$run.out") == 1 ]] ||
    { cat "$run.out"; fail "$ranks rank(s): expected one message naming the test split's NaN samples"; }
  echo "$ranks rank(s), test-split NaN, stop: exit $rc"
done
