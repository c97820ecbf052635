#!/usr/bin/env bash
# End to end: divergence that is not NaN yet. The MLP at a constant learning rate of 0.5 has a
# mean training loss of 2.9 over its first 10 steps and 1371 over the next 10 (still finite: NaN
# gradients come only at step 26). failure.on_explosion = "stop" ends every rank with exit 4 at
# step 20, before any NaN; "warn" (the default) reports it and trains on; a bad value is exit 2.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
common=("$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" --set optimizer.lr=0.5
        --set lr_schedule.kind=constant --set lr_schedule.warmup_steps=0
        --set train.log_every_steps=10 --set checkpoint.every_steps=0 --quiet)

run="$dir/stop"
set +e
mpiexec -n 2 "$WAVETRAIN" "${common[@]}" --set failure.on_explosion=stop --steps 40 \
  --run-dir "$run" >"$run.out" 2>&1
rc=$?
set -e
[[ $rc == 4 ]] || { cat "$run.out"; fail "on_explosion = stop: exit $rc, expected 4"; }
[[ $(grep -c "wavetrain: diverged: loss exploded at step 20: the mean training loss over the last 10 steps, [0-9.e+]*, is [0-9.]* times its running average" "$run.out") == 1 ]] ||
  { cat "$run.out"; fail "expected one 'diverged: loss exploded at step 20' message"; }
grep -q "NaN" "$run.out" && { cat "$run.out"; fail "the run got as far as a NaN"; }
echo "stop: exit 4 at step 20: $(grep -m1 'loss exploded' "$run.out")"

run="$dir/warn"
"$WAVETRAIN" "${common[@]}" --set failure.on_nonfinite=skip --steps 30 --run-dir "$run" \
  >"$run.out" 2>&1 || { cat "$run.out"; fail "on_explosion = warn: exit $?"; }
grep -q "wavetrain: warning: loss exploded at step 20:" "$run.out" ||
  { cat "$run.out"; fail "warn: no warning at step 20"; }
grep -q "done: 30 steps" "$run.out" || fail "warn: the run did not train on"
echo "warn: reported at step 20, trained on to step 30"

run="$dir/off"
"$WAVETRAIN" "${common[@]}" --set failure.on_explosion=off --set failure.on_nonfinite=skip \
  --steps 30 --run-dir "$run" >"$run.out" 2>&1 || fail "on_explosion = off: exit $?"
grep -q "exploded" "$run.out" && fail "off: still reported"

for bad in "failure.on_explosion=\"maybe\"|failure.on_explosion" "failure.explosion_factor=1|failure.explosion_factor"; do
  set +e
  "$WAVETRAIN" "${common[@]}" --set "${bad%%|*}" --steps 1 --run-dir "$dir/bad" >"$dir/bad.out" 2>&1
  rc=$?
  set -e
  [[ $rc == 2 ]] || { cat "$dir/bad.out"; fail "${bad%%|*}: exit $rc, expected 2"; }
  grep -q "wavetrain: error: command line: ${bad#*|}: " "$dir/bad.out" ||
    { cat "$dir/bad.out"; fail "${bad%%|*}: the message does not name the key"; }
done
echo "bad values: exit 2 naming the key"
