#!/usr/bin/env bash
# SIGINT to one rank saves a checkpoint and stops the run with 75, like SIGTERM/SIGUSR1 (issue 17,
# minor). The job runs in the background of this script, where bash starts it with SIGINT
# ignored: wavetrain must still collect it. Rank 1 gets the signal (any rank's signal counts);
# the run has more steps than it can finish and is signalled once it has logged a training row.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
data=$(fashion_mnist_h5)
cd "$dir"
trap 'kill_matching "$dir/run"; rm -rf "$dir"' EXIT
train() {
  timeout 120 mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" \
    --set "data.path=\"$data\"" --set train.eval_every_epoch=false \
    --set train.log_every_steps=50 --run-dir "$dir/run" "$@"
}
train --steps 1000000 >out.txt 2>&1 &
job=$!
deadline=$((SECONDS + 60))
until [[ -f run/metrics.csv ]] && grep -q '^train,' run/metrics.csv; do
  kill -0 "$job" 2>/dev/null || { cat out.txt; fail "the run ended before training"; }
  ((SECONDS < deadline)) || { cat out.txt; fail "no training row in 60 s"; }
  sleep 0.1
done
rank1=$(rank_pid "$dir/run" 1)
[[ -n $rank1 ]] || fail "no rank 1"
grep -q "^SigIgn:" "/proc/$rank1/status" && echo "rank 1 $(grep '^SigIgn:' "/proc/$rank1/status")"
kill -INT "$rank1"
status=0
wait "$job" || status=$?
cat out.txt
echo "SIGINT to rank 1: exit $status"
[[ $status == 75 ]] || fail "exit status $status, expected 75"
grep -q "wavetrain: stopped at step [0-9]* .*with a checkpoint" out.txt || fail "no 'stopped with a checkpoint' line"
latest=$(cat run/checkpoints/latest)
step=$(sed 's/^step_0*\([0-9]*\)\.h5$/\1/' <<<"$latest")
((step > 0)) || fail "no checkpoint after SIGINT"
status=0
train --steps $((step + 10)) --restart --quiet >out2.txt 2>&1 || status=$?
cat out2.txt
[[ $status == 0 ]] || fail "the resume exited $status"
grep -qF "resumed from $dir/run/checkpoints/$latest at step $step" run/log.txt || fail "did not resume at step $step"
echo "ok: SIGINT saved step $step and exited 75; the resume carried on"
