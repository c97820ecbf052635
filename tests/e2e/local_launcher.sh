#!/usr/bin/env bash
# End to end: jobscripts/local.sh on 2 ranks. SIGUSR1 to one rank (as a cluster's or a user's
# timer would send it) makes wavetrain save a checkpoint and exit 75; the launcher, which was not
# signalled itself, must start wavetrain again, and the second run must resume and finish.
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
cd "$dir"
steps=3000
WT_RANKS=2 WAVETRAIN=$WAVETRAIN bash "$WT_SOURCE_DIR/jobscripts/local.sh" \
  "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" --steps $steps \
  --set train.log_every_steps=50 --run-dir run >out.txt 2>&1 &
launcher=$!
deadline=$((SECONDS + 60))
until [[ -f run/metrics.csv ]] && grep -q '^train,' run/metrics.csv; do
  ((SECONDS < deadline)) || { cat out.txt; fail "no metrics in 60 s"; }
  sleep 0.1
done
mpirun_pid=$(pgrep -P "$launcher" mpirun) || fail "no mpirun under the launcher"
rank=$(pgrep -P "$mpirun_pid" wavetrain | head -n 1) || fail "no wavetrain rank under mpirun"
kill -USR1 "$rank"
status=0
wait "$launcher" || status=$?
cat out.txt
[[ $status == 0 ]] || fail "local.sh exited with status $status"
grep -q "wavetrain exited with status 75" out.txt || fail "the first run did not stop with 75"
grep -q "run 2" out.txt || fail "the launcher did not start a second run"
grep -q "resumed from" out.txt || fail "the second run did not resume from the checkpoint"
[[ $(last_metric run/metrics.csv train step) == "$steps" ]] || fail "metrics.csv does not end at step $steps"
