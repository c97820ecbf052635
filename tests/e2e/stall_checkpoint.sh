#!/usr/bin/env bash
# End to end: a rank stopped inside a checkpoint write (issue 10 §1). The write's collectives are
# HDF5's and MPI-IO's, not the communicator's; the checkpointer marks the write on the heartbeat
# board, so the stall watchdog reports it like a training collective. Two ranks checkpoint every
# step with failure.stall_seconds = 3; a watcher stops rank 1 (SIGSTOP) the moment a checkpoint's
# temporary file appears, i.e. after both ranks created it together and before they finish it.
# The MLP is widened (2048 units, 5.8 M parameters: a write of about 50 MB) so that the write
# lasts far longer than the watcher takes to react on a busy machine.
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
  --set checkpoint.keep=2 --steps 1000000 --run-dir "$dir/run" >"$dir/out.txt" 2>&1 &
job=$!
wait_lines "$dir/run/log.txt" 4 60  # a few checkpoints written: training is under way
victim=$(rank_pid "$dir/run" 1)
[[ -n $victim ]] || fail "rank 1 not found"
# Polls without sleeping: a write lasts tens of milliseconds.
"$py" - "$dir/run/checkpoints" "$victim" <<'PY' || fail "no checkpoint write seen within 30 s"
import os, signal, sys, time
ck, pid = sys.argv[1], int(sys.argv[2])
end = time.monotonic() + 30
while time.monotonic() < end:
    if any(n.endswith(".h5.tmp") for n in os.listdir(ck)):
        os.kill(pid, signal.SIGSTOP)
        sys.exit(0)
sys.exit(1)
PY
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
