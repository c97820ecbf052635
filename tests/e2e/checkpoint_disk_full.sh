#!/usr/bin/env bash
# Out of space during a parallel checkpoint write (issue 10 §1, §2): checkpoint.dir is on a small
# real tmpfs that holds the step-10 checkpoint (about 2.2 MB for the MLP) but not the step-20 one
# beside it. The job must end within 30 s (not hang in a collective), exit 1, say which file and
# the system's reason once, leave no *.tmp and keep `latest` at step 10; once there is room,
# resuming from it works. Skips (77) where a tmpfs cannot be mounted.
source "$(dirname "$0")/lib/common.bash"
source "$(dirname "$0")/lib/processes.bash"
small_tmpfs 3m "$dir/run"

data=$(fashion_mnist_h5)
deck="$WT_SOURCE_DIR/inputs/fashion_mlp.toml"
ck="$mnt/checkpoints"
common=(--set "data.path=\"$data\"" --set train.eval_every_epoch=false
  --set checkpoint.every_steps=10 --set "checkpoint.dir=\"$ck\"" --run-dir "$dir/run")

start=$SECONDS
rc=0
timeout 120 mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps 30 >"$dir/out.txt" 2>&1 ||
  rc=$?
took=$((SECONDS - start))
cat "$dir/out.txt"
df -k "$mnt" | tail -1
ls -la "$ck"
echo "case: out of space at the step-20 checkpoint: exit $rc after $took s"
[[ $rc != 124 ]] || fail "the job hung (killed after 120 s)"
((took <= 30)) || fail "the job took $took s to end, more than 30 s"
[[ $rc == 1 ]] || fail "exit status $rc, expected 1"
pattern="wavetrain: error: cannot write checkpoint $ck/step_00000020.h5.tmp: No space left on device"
grep -qF "$pattern" "$dir/out.txt" || fail "no message naming the file and the system's reason"
grep -q "the previous checkpoint step_00000010.h5 is kept as latest" "$dir/out.txt" ||
  fail "the message does not say which checkpoint is kept"
[[ $(grep -c "^wavetrain: .*error" "$dir/out.txt") == 1 ]] || fail "not exactly one error message"
! grep -q "internal error\|stalled\|MPI_ABORT" "$dir/out.txt" || fail "a second, wrong diagnosis"
! ls "$ck" | grep -q '\.tmp$' || fail "a temporary file was left behind"
[[ $(cat "$ck/latest") == step_00000010.h5 ]] || fail "latest is $(cat "$ck/latest")"
[[ ! -e "$ck/step_00000020.h5" ]] || fail "a step-20 checkpoint exists after the failure"

# Room again: the run resumes from step 10 and finishes.
mount -o remount,size=32m "$mnt"
mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps 30 --restart --quiet ||
  fail "resuming after the failure did not succeed"
grep -q "resumed from $ck/step_00000010.h5 at step 10" "$dir/run/log.txt" ||
  fail "did not resume from step 10"
[[ $(cat "$ck/latest") == step_00000030.h5 ]] || fail "latest is $(cat "$ck/latest") after resuming"
echo "ok: out of space reported in $took s with status 1; resumed from step 10 afterwards"

# Not even the first checkpoint fits: the same error, and no checkpoint is claimed.
rm -rf "$ck" "$dir/run"
mount -o remount,size=1m "$mnt"
start=$SECONDS
rc=0
timeout 120 mpiexec -n 2 "$WAVETRAIN" "$deck" "${common[@]}" --steps 20 >"$dir/out.txt" 2>&1 ||
  rc=$?
took=$((SECONDS - start))
grep "^wavetrain: .*error" "$dir/out.txt" || true
echo "case: out of space at the first checkpoint: exit $rc after $took s"
((took <= 30)) || fail "the job took $took s to end"
[[ $rc == 1 ]] || fail "exit status $rc, expected 1"
grep -q "cannot write checkpoint $ck/step_00000010.h5.tmp: No space left on device.*there is no earlier checkpoint" \
  "$dir/out.txt" || fail "no message naming the file, the reason and the absence of a checkpoint"
[[ -z $(ls "$ck") ]] || fail "files left in $ck: $(ls "$ck")"

# A checkpoint directory that cannot be created is bad input, reported before training.
rc=0
timeout 60 mpiexec -n 2 "$WAVETRAIN" "$deck" --set "data.path=\"$data\"" --steps 20 \
  --set 'checkpoint.dir="/proc/self/checkpoints"' --run-dir "$dir/run2" >"$dir/out.txt" 2>&1 || rc=$?
grep "^wavetrain: .*error" "$dir/out.txt" || true
echo "case: uncreatable checkpoint.dir: exit $rc"
[[ $rc == 2 ]] || fail "exit status $rc, expected 2"
grep -q "checkpoint.dir: cannot create the checkpoint directory /proc/self/checkpoints: " \
  "$dir/out.txt" || fail "no message naming the directory and the reason"
! grep -q "checkpoint .* written" "$dir/out.txt" || fail "trained anyway"
echo "ok: first checkpoint out of space, uncreatable directory"
