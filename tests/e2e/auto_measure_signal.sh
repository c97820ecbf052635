#!/usr/bin/env bash
# A stop signal during schedule.kind = "auto"'s measurements (issue 33, minor): auto.measure's
# trials used to run to their end (auto.measure_steps each, three trials) before the run looked at
# the signal. Now the trial in hand ends after its step, the rest are skipped, auto chooses on the
# measurements so far, and the run stops at its first step with a checkpoint (exit 75), which a
# resubmission resumes with the same choice. The trials here are a million steps long: only the
# signal can end them within the bound.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
trap 'kill_matching "$dir/run"; rm -rf "$dir"' EXIT
data=$(fashion_mnist_h5)
run=("$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\""
  --set train.eval_every_epoch=false --set 'schedule.kind="auto"' --set auto.measure=true
  --set auto.measure_steps=1000000 --run-dir "$dir/run")
mpirun -n 2 "${run[@]}" --steps 20 >"$dir/out" 2>&1 &
job=$!
(wait_for_line "$dir/run/log.txt" 'auto.measure: .* for 1000001 steps' 300 $job) ||
  { cat "$dir/out"; fail "no trial began"; }
kill -USR1 $job  # mpirun forwards it to the ranks
start=$SECONDS
wait_gone $job 60 || { cat "$dir/out"; fail "the run did not stop within 60 s of the signal"; }
rc=0
wait $job || rc=$?
echo "stopped $((SECONDS - start)) s after the signal, exit $rc"
[[ $rc == 75 ]] || { cat "$dir/out"; fail "exit $rc, expected 75"; }
grep -q "auto.measure: stopped by signal 10: choosing on the measurements so far" "$dir/run/log.txt" ||
  { cat "$dir/run/log.txt"; fail "the log does not say the measurements stopped"; }
grep -q 'schedule.kind = "auto" chose ' "$dir/run/log.txt" || fail "no choice was made"
[[ -f $dir/run/checkpoints/step_00000001.h5 ]] || fail "no checkpoint at the first step"
[[ ! -e $dir/run/auto_measure ]] || fail "the trial runs were left behind"
mpirun -n 2 "${run[@]}" --steps 2 --restart --quiet >"$dir/resumed" 2>&1 ||
  { cat "$dir/resumed"; fail "the resubmission failed"; }
grep -q 'the choice of the checkpoint being resumed' "$dir/run/log.txt" ||
  fail "the resubmission did not keep the checkpoint's choice"
echo "ok: a stop signal ends auto.measure's trials at once; the run stops resumably at step 1"
