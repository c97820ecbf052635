#!/usr/bin/env bash
# End to end: a rank stopped inside a checkpoint write (issue 10 §1). The write's collectives are
# HDF5's and MPI-IO's, not the communicator's; the checkpointer marks the write on the heartbeat
# board, so the stall watchdog reports it like a training collective. Two ranks checkpoint every
# step with failure.stall_seconds = 3; a watcher stops rank 1 (SIGSTOP) the moment a checkpoint's
# temporary file appears, i.e. after both ranks entered the write (rank 0 creates the file to
# reserve its space after the write's first allreduce) and before they finish it.
# The MLP is widened (2048 units, 5.8 M parameters: a write of about 50 MB) so that the write
# lasts far longer than the watcher takes to react on a busy machine (below).
# Rank 0 must report that rank 1 is not responding in "checkpoint write", and the job must end
# with status 5 within 30 s. Rank 0 itself waits either in the same write or, when rank 1 was
# stopped after the write's last collective but before it left the write, in the next step's
# allreduce: both are right, so the check does not insist on where rank 0 waits.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
trap 'kill_matching "$dir/run"; rm -rf "$dir"' EXIT
py=${WT_PYTHON:-/usr/bin/python3}
data=$(fashion_mnist_h5)
sed 's/out_features = 256/out_features = 2048/' "$WT_SOURCE_DIR/models/mlp.toml" >"$dir/wide.toml"
mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" \
  --set "model.file=\"$dir/wide.toml\"" \
  --set failure.stall_seconds=3 --set train.eval_every_epoch=false --set checkpoint.every_steps=1 \
  --set checkpoint.keep=2 --steps $ENDLESS_STEPS --run-dir "$dir/run" >"$dir/out.txt" 2>&1 &
job=$!
wait_lines "$dir/run/log.txt" 4 60  # a few checkpoints written: training is under way
victim=$(rank_pid "$dir/run" 1)
[[ -n $victim ]] || fail "rank 1 not found"
# lib/signal_when.py blocks in inotify (at real-time priority where allowed) and stops rank 1 within
# about a millisecond of the temporary file's creation, even beside a CPU hog; a polling loop
# could be descheduled past the end of a write.
"$py" "$(dirname "$0")/lib/signal_when.py" --pid "$victim" --signal STOP --timeout 60 \
  --dir "$dir/run/checkpoints" --file-suffix .h5.tmp || fail "rank 1 was not stopped in a checkpoint write"
start=$SECONDS
wait_gone "$job" 30 || fail "the job did not end within 30 s of stopping rank 1"
set +e
wait "$job"
rc=$?
set -e
cat "$dir/out.txt" | grep -v "written" | tail -20
echo "case: rank 1 stopped in a checkpoint write: exit $rc after $((SECONDS - start)) s"
[[ $rc == 5 ]] || fail "exit status $rc, expected 5"
grep -E "wavetrain: rank 0: stalled: waited [0-9.]+ s in [a-z -]+ \(group 0, collective #[0-9]+\) at step [0-9]+; late: rank 1 \(pid $victim\): not responding .* in checkpoint write" \
  "$dir/out.txt" || fail "rank 0's watchdog did not report the checkpoint write and rank 1"
