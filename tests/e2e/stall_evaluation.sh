#!/usr/bin/env bash
# A collective inside an evaluation is watched like a training one (issue 10 §1): two ranks
# evaluate a long split (the 60000 training samples, 8 at a time) at an epoch's end; rank 1
# is stopped (SIGSTOP) while they do, so rank 0 finishes its share and waits for rank 1 in the
# evaluation's allreduce. Its watchdog must report rank 1 as late and the job end with status 5.
# The run has no reachable end and evaluates at every epoch's end; metrics.csv gets a train row
# only there (log_every_steps is out of reach too). lib/signal_when.py stops rank 1 the moment a
# train row appears that was not there when it started watching: that epoch's evaluation has just
# begun, however fast the machine is or however late the watch began. (Stopping it after a fixed
# --steps 2 raced the evaluation, which takes a fraction of a second.)
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
trap 'kill_matching "$dir/run"; rm -rf "$dir"' EXIT
data=$(fashion_mnist_h5)
mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" \
  --set failure.stall_seconds=3 --set data.test_split=train --set train.eval_batch=8 \
  --set train.log_every_steps=$ENDLESS_STEPS --set checkpoint.every_steps=0 --steps $ENDLESS_STEPS \
  --run-dir "$dir/run" >"$dir/out.txt" 2>&1 &
job=$!
wait_lines "$dir/run/log.txt" 1 60  # the ranks are up
victim=$(rank_pid "$dir/run" 1)
[[ -n $victim ]] || fail "rank 1 not found"
"${WT_PYTHON:-/usr/bin/python3}" "$(dirname "$0")/lib/signal_when.py" --pid "$victim" --signal STOP \
  --timeout 120 --dir "$dir/run" --new-line metrics.csv '^train,' || fail "rank 1 was not stopped"
start=$SECONDS
wait_gone "$job" 60 || fail "the job did not end within 60 s of stopping rank 1"
rc=0
wait "$job" || rc=$?
cat "$dir/out.txt"
echo "job ended with status $rc $((SECONDS - start)) s after rank 1 was stopped"
[[ $rc == 5 ]] || fail "exit status $rc, expected 5"
grep -qE "wavetrain: rank 0: stalled: waited [0-9.]+ s in allreduce .*late: rank 1 \(pid $victim\): not responding" \
  "$dir/out.txt" || fail "rank 0's watchdog did not name rank 1 as late in the evaluation's allreduce"
((SECONDS - start <= 30)) || fail "took $((SECONDS - start)) s"
