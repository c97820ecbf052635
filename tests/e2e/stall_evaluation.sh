#!/usr/bin/env bash
# A collective inside an evaluation is watched like a training one (issue 10 §1): two ranks
# evaluate a long split (the 60000 training samples, 8 at a time) after their last step; rank 1
# is stopped (SIGSTOP) while they do, so rank 0 finishes its share and waits for rank 1 in the
# evaluation's allreduce. Its watchdog must report rank 1 as late and the job end with status 5.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
trap 'kill_matching "$dir/run"; rm -rf "$dir"' EXIT
data=$(fashion_mnist_h5)
mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" \
  --set failure.stall_seconds=3 --set data.test_split=train --set train.eval_batch=8 \
  --set train.log_every_steps=1 --set checkpoint.every_steps=0 --steps 2 \
  --run-dir "$dir/run" >"$dir/out.txt" 2>&1 &
job=$!
wait_lines "$dir/run/metrics.csv" 3 60  # header + the two train rows: evaluation has begun
victim=$(rank_pid "$dir/run" 1)
[[ -n $victim ]] || fail "rank 1 not found"
kill -STOP "$victim"
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
