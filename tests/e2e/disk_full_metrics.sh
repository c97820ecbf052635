#!/usr/bin/env bash
# A full disk under the run directory stops the run with the file and the system's reason, on
# every rank within seconds, instead of training on without metrics (issue 10 §2). The run
# directory is a small tmpfs that this test fills while the run is training (skipped, 77, where a
# tmpfs cannot be mounted). Checkpoints go elsewhere, and the message says which one to resume from.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
data=$(fashion_mnist_h5)
mnt="$dir/mnt"
mkdir -p "$mnt"
mount -t tmpfs -o size=4m tmpfs "$mnt" 2>/dev/null || { echo "skip: cannot mount a tmpfs"; exit 77; }
trap 'kill_matching "$run"; umount -l "$mnt" 2>/dev/null; rm -rf "$dir"' EXIT

run="$mnt/run"
mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" \
  --set train.log_every_steps=1 --set train.eval_every_epoch=false --set checkpoint.every_steps=2 \
  --set "checkpoint.dir=\"$dir/checkpoints\"" \
  --set run.progress_seconds=3600 --set failure.stall_seconds=300 --steps $ENDLESS_STEPS \
  --run-dir "$run" >"$dir/out" 2>"$dir/err" &
job=$!
# Three train rows: training and its metrics writes are under way (the run has no reachable end).
(wait_for_line "$run/metrics.csv" '^train,3,' 120 $job) || { cat "$dir/err"; fail "no training before the disk filled"; }
dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null || true  # until No space left on device
filled=$SECONDS
rc=0
wait $job || rc=$?
took=$((SECONDS - filled))
cat "$dir/err"
[[ $rc == 1 ]] || fail "exit status $rc, expected 1"
((took <= 30)) || fail "took $took s after the disk filled"
grep -q "cannot write $run/metrics.csv: No space left on device (the last checkpoint, $dir/checkpoints/step_[0-9]*.h5, is intact" \
  "$dir/err" || fail "message"
[[ $(grep -c "wavetrain:" "$dir/err") == 1 ]] || fail "expected one message"
echo "ok disk full during metrics: status $rc $took s after the disk filled"
