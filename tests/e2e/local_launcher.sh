#!/usr/bin/env bash
# End to end: jobscripts/local.sh on 2 ranks. SIGUSR1 to one rank (as a cluster's or a user's
# timer would send it) makes wavetrain save a checkpoint and exit 75; the launcher, which was not
# signalled itself, must start wavetrain again, and the second run must resume and finish.
# The first run cannot end before the signal: lib/chain.bash gives it a step count it cannot reach,
# and the second one 200 steps past the checkpoint it resumes from.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
source "$(dirname "$0")/lib/chain.bash"
data=$(fashion_mnist_h5)
cd "$dir"
trap 'kill_matching "$dir/"; rm -rf "$dir"' EXIT  # a run that cannot end must not outlive the test
WT_RANKS=2 WAVETRAIN=$(chain_wavetrain 200) bash "$WT_SOURCE_DIR/jobscripts/local.sh" \
  "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" \
  --set train.log_every_steps=50 --run-dir run >out.txt 2>&1 &
launcher=$!
# A training row: the ranks have installed their signal handlers and are training.
(wait_for_line run/metrics.csv '^train,' 120 "$launcher") || { cat out.txt; fail "no training"; }
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
steps=$(chain_final_steps run)
[[ $(last_metric run/metrics.csv train step) == "$steps" ]] || fail "metrics.csv does not end at step $steps"
