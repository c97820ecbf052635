#!/usr/bin/env bash
# A job killed inside a parallel file open leaves Open MPI's OMPIO semaphore for that file name
# held in /dev/shm (sem.OMPIO_<file name>, from its sharedfp "sm" component), and every later job
# on the node that opened a file of that name hung in MPI_File_open: a checkpoint
# step_00000036.h5.tmp in every run after e2e.checkpoint_restart's kill landed in that open (CI,
# 2026-11-28). wavetrain turns the component off (comm/open_mpi_defaults.cpp): with such a held
# semaphore planted (a glibc named semaphore is a 32-byte file; zeros: value 0, held), a 2-rank
# run writes that checkpoint and finishes. With the component on, it stalls (exit 5).
source "$(dirname "$0")/lib/common.bash"
data=$(fashion_mnist_h5)
[[ -d /dev/shm && -w /dev/shm ]] || { echo "skip: no writable /dev/shm"; exit 77; }
# A name no other test writes: its own checkpoint directory's temporary, step 5.
sem=/dev/shm/sem.OMPIO_step_00000005.h5.tmp
[[ -e $sem ]] && { echo "skip: $sem exists (another job's)"; exit 77; }
head -c 32 /dev/zero >"$sem"
trap 'rm -f "$sem"; rm -rf "$dir"' EXIT
rc=0
timeout 120 mpiexec -n 2 "$WAVETRAIN" "$WT_SOURCE_DIR/inputs/fashion_mlp.toml" --set "data.path=\"$data\"" \
  --set train.eval_every_epoch=false --set checkpoint.every_steps=5 --set failure.stall_seconds=20 \
  --steps 10 --run-dir "$dir/run" >"$dir/out.txt" 2>&1 || rc=$?
cat "$dir/out.txt"
[[ $rc == 0 ]] || fail "exit status $rc with a held OMPIO semaphore for step_00000005.h5.tmp, expected 0"
[[ -f $dir/run/checkpoints/step_00000005.h5 ]] || fail "no step-5 checkpoint"
echo "ok: step_00000005.h5 written beside a held $sem"
